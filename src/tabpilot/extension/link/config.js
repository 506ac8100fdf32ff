// @ts-check
// The link's persistent settings (chrome.storage.local) and the optional managed config file that
// `tabpilot browser launch` writes beside the manifest (docs/protocol.md §5).
import { DEFAULT_PORT } from "./protocol.js";

export const KEYS = Object.freeze({
  instanceId: "tp_instance_id",
  label: "tp_label",
  enabled: "tp_enabled",
  port: "tp_port",
  secret: "tp_secret",
  pendingCode: "tp_pending_code",
});

export const MANAGED_CONFIG_FILE = "tabpilot-config.json";
const INSTANCE_ID = /^[0-9a-f]{8}$/;
const SECRET = /^(?:[0-9a-f]{2})+$/;

/**
 * @typedef {{port: number | null, pairingCode: string | null, launchToken: string | null, label: string | null}} ManagedConfig
 * @typedef {{
 *   instanceId: string, label: string, enabled: boolean, port: number, secret: string | null,
 *   pendingCode: string | null, managedCode: string | null, launchToken: string | null, managed: boolean
 * }} Settings
 * @typedef {{
 *   get(keys: string[] | string): Promise<Record<string, unknown>>,
 *   set(items: Record<string, unknown>): Promise<void>,
 *   remove(keys: string[] | string): Promise<void>
 * }} StorageArea
 */

/** @param {unknown} value */
export function isValidPort(value) {
  return Number.isInteger(value) && /** @type {number} */ (value) >= 1 && /** @type {number} */ (value) <= 65535;
}

/** @param {unknown} value */
function nonEmptyString(value) {
  return typeof value === "string" && value.trim() !== "" ? value.trim() : null;
}

/**
 * Keeps only well-typed fields; a damaged file must not stop the extension from starting.
 * @param {unknown} raw
 * @returns {ManagedConfig | null}
 */
export function parseManagedConfig(raw) {
  if (typeof raw !== "object" || raw === null || Array.isArray(raw)) return null;
  const r = /** @type {Record<string, unknown>} */ (raw);
  return {
    port: isValidPort(r.port) ? /** @type {number} */ (r.port) : null,
    pairingCode: nonEmptyString(r.pairing_code),
    launchToken: nonEmptyString(r.launch_token),
    label: nonEmptyString(r.label),
  };
}

/**
 * Reads the managed config file packaged with the extension; null when there is none.
 * @param {{getURL(path: string): string}} runtime
 * @param {typeof fetch} fetchImpl
 */
export async function fetchManagedConfig(runtime, fetchImpl) {
  let response;
  try {
    response = await fetchImpl(runtime.getURL(MANAGED_CONFIG_FILE));
  } catch {
    return null; // the file is absent: an ordinary, unmanaged install
  }
  if (!response.ok) return null;
  try {
    return parseManagedConfig(await response.json());
  } catch {
    console.warn(`tabpilot: ${MANAGED_CONFIG_FILE} is not valid JSON; ignoring it`);
    return null;
  }
}

function randomInstanceId() {
  return Array.from(crypto.getRandomValues(new Uint8Array(4)), (b) => b.toString(16).padStart(2, "0")).join("");
}

/**
 * @param {{storage: StorageArea, loadManaged: () => Promise<ManagedConfig | null>, newInstanceId?: () => string}} deps
 */
export function createConfig({ storage, loadManaged, newInstanceId = randomInstanceId }) {
  /** @type {Promise<ManagedConfig | null> | null} */
  let managed = null;
  /** @type {Promise<string> | null} */
  let instanceId = null;

  // Memoised so two concurrent first loads cannot mint two different ids.
  function ensureInstanceId() {
    instanceId ??= (async () => {
      const stored = (await storage.get(KEYS.instanceId))[KEYS.instanceId];
      if (typeof stored === "string" && INSTANCE_ID.test(stored)) return stored;
      const fresh = newInstanceId();
      await storage.set({ [KEYS.instanceId]: fresh });
      return fresh;
    })();
    instanceId.catch(() => (instanceId = null));
    return instanceId;
  }

  /** @returns {Promise<Settings>} */
  async function load() {
    // The file ships with this copy of the extension and cannot change while it runs: read it once.
    managed ??= loadManaged().catch(() => null);
    const [config, id, raw] = await Promise.all([managed, ensureInstanceId(), storage.get(Object.values(KEYS))]);
    let label = typeof raw[KEYS.label] === "string" ? /** @type {string} */ (raw[KEYS.label]) : "";
    if (label === "" && config?.label) {
      label = config.label;
      await storage.set({ [KEYS.label]: label });
    }
    const secret = raw[KEYS.secret];
    const port = raw[KEYS.port];
    return {
      instanceId: id,
      label,
      enabled: raw[KEYS.enabled] !== false,
      port: config?.port ?? (isValidPort(port) ? /** @type {number} */ (port) : DEFAULT_PORT),
      secret: typeof secret === "string" && SECRET.test(secret) ? secret : null,
      pendingCode: nonEmptyString(raw[KEYS.pendingCode]),
      managedCode: config?.pairingCode ?? null,
      launchToken: config?.launchToken ?? null,
      managed: config !== null,
    };
  }

  return {
    load,
    /** @param {string} label */
    setLabel: (label) => storage.set({ [KEYS.label]: label }),
    /** @param {boolean} enabled */
    setEnabled: (enabled) => storage.set({ [KEYS.enabled]: enabled }),
    /** @param {number} port */
    setPort: (port) => storage.set({ [KEYS.port]: port }),
    /** @param {string} code */
    setPendingCode: (code) => storage.set({ [KEYS.pendingCode]: code }),
    clearPendingCode: () => storage.remove(KEYS.pendingCode),
    /** Pairing succeeded: keep the derived secret, forget the one-time code. */
    async storeSecret(/** @type {string} */ secret) {
      await storage.set({ [KEYS.secret]: secret });
      await storage.remove(KEYS.pendingCode);
    },
  };
}
