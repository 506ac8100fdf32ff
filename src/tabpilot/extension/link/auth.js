// @ts-check
// Pairing codes and the mutual HMAC proofs of the handshake (twin: src/tabpilot/auth.py).
// Both twins are checked against tests/vectors/auth.json.

const NONCE_BYTES = 16;
const encoder = new TextEncoder();

/** Uppercase, separators and spaces removed, so `abcd efgh` equals `ABCD-EFGH`. */
export function normalizeCode(/** @type {string} */ code) {
  return String(code).toUpperCase().replace(/[^A-Z0-9]/g, "");
}

/** @param {Uint8Array} bytes */
function toHex(bytes) {
  return Array.from(bytes, (b) => b.toString(16).padStart(2, "0")).join("");
}

/** @param {string} hex */
function fromHex(hex) {
  if (!/^(?:[0-9a-fA-F]{2})+$/.test(hex)) throw new Error("secret must be a non-empty hex string");
  const bytes = new Uint8Array(hex.length / 2);
  for (let i = 0; i < bytes.length; i++) bytes[i] = parseInt(hex.slice(2 * i, 2 * i + 2), 16);
  return bytes;
}

/** @param {Uint8Array} key @param {string} message */
async function hmacHex(key, message) {
  const cryptoKey = await crypto.subtle.importKey("raw", key, { name: "HMAC", hash: "SHA-256" }, false, ["sign"]);
  return toHex(new Uint8Array(await crypto.subtle.sign("HMAC", cryptoKey, encoder.encode(message))));
}

/** @param {string} code */
function codeKey(code) {
  const normalized = normalizeCode(code);
  // An empty HMAC key is both useless and rejected by WebCrypto; say so plainly instead.
  if (normalized === "") throw new Error("pairing code is empty");
  return encoder.encode(normalized);
}

export function newNonce() {
  return toHex(crypto.getRandomValues(new Uint8Array(NONCE_BYTES)));
}

/** What the extension sends to show it holds the code, without sending the code. */
export async function pairingCodeProof(/** @type {string} */ code, /** @type {string} */ instanceId, /** @type {string} */ extNonce) {
  return hmacHex(codeKey(code), `tabpilot-pair-proof|${instanceId}|${extNonce}`);
}

/** The per-browser secret both sides derive from a correct pairing code. */
export async function pairingSecret(/** @type {string} */ code, /** @type {string} */ instanceId, /** @type {string} */ extNonce) {
  return hmacHex(codeKey(code), `tabpilot-pair-secret|${instanceId}|${extNonce}`);
}

/**
 * @param {string} secret hex
 * @param {string} instanceId
 * @param {string} extNonce
 * @param {string} daemonNonce
 */
export async function daemonProof(secret, instanceId, extNonce, daemonNonce) {
  return hmacHex(fromHex(secret), `tabpilot-daemon|${instanceId}|${extNonce}|${daemonNonce}`);
}

/**
 * @param {string} secret hex
 * @param {string} instanceId
 * @param {string} extNonce
 * @param {string} daemonNonce
 */
export async function extensionProof(secret, instanceId, extNonce, daemonNonce) {
  return hmacHex(fromHex(secret), `tabpilot-extension|${instanceId}|${daemonNonce}|${extNonce}`);
}

/** Compares without an early exit so the time taken does not reveal the matching prefix. */
export function proofsEqual(/** @type {string} */ expected, /** @type {unknown} */ given) {
  if (typeof given !== "string" || given.length !== expected.length) return false;
  let diff = 0;
  for (let i = 0; i < expected.length; i++) diff |= expected.charCodeAt(i) ^ given.charCodeAt(i);
  return diff === 0;
}
