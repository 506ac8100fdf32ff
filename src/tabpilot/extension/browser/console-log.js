// @ts-check
// What the pages of each tab wrote to the console (console.*, uncaught exceptions, and the browser's own
// entries such as failed requests), with a per-tab sequence number that never goes back: not on
// navigation, not when the debugger attaches again, not after a service-worker restart (the counters
// and the latest entries are kept in storage.session). A re-attach makes Chrome send the page's stored
// messages again; those are recognised by when and where they were logged, and dropped.
import { readSaved } from "../state/saved.js";

export const STORAGE_KEY = "tp_console";
export const BUFFER_SIZE = 1000;
/** Entries per tab kept across a service-worker restart. */
export const SAVED_ENTRIES = 200;
const MAX_TEXT = 4000;
/** Severity, for "this level and above". */
export const LEVELS = Object.freeze({ debug: 0, log: 1, info: 1, warning: 2, error: 3 });

/**
 * @typedef {"debug" | "log" | "info" | "warning" | "error"} Level
 * @typedef {{seq: number, level: Level, source: "console" | "exception" | "browser", text: string,
 *            url?: string, line?: number, column?: number, time: number, frame?: string}} ConsoleEntry
 * @typedef {{entries: ConsoleEntry[], seen: Set<string>, nextSeq: number, floor: number}} TabLog
 *   floor: messages logged at or before this time were recorded once and are no longer kept
 */

/** @type {Record<string, Level>} */
const API_LEVEL = {
  debug: "debug", trace: "debug", info: "info", error: "error", assert: "error", warning: "warning",
  log: "log", dir: "log", dirxml: "log", table: "log", count: "log", timeEnd: "log", startGroup: "log",
  startGroupCollapsed: "log",
};
/** @type {Record<string, Level>} */
const BROWSER_LEVEL = { verbose: "debug", info: "info", warning: "warning", error: "error" };

/** A console.* argument as text. @param {any} arg CDP Runtime.RemoteObject */
export function argText(arg) {
  if (!arg) return "";
  if (arg.type === "string") return String(arg.value);
  if ("unserializableValue" in arg) return String(arg.unserializableValue);
  if (arg.type === "undefined") return "undefined";
  if (arg.subtype === "null") return "null";
  if ("value" in arg && arg.type !== "object") return String(arg.value);
  const preview = arg.preview;
  if (preview?.properties && arg.subtype !== "error") {
    const parts = preview.properties.map((/** @type {any} */ p) =>
      preview.subtype === "array" ? p.value : `${p.name}: ${p.type === "string" ? JSON.stringify(p.value) : p.value}`,
    );
    const more = preview.overflow ? ", …" : "";
    return preview.subtype === "array" ? `[${parts.join(", ")}${more}]` : `{${parts.join(", ")}${more}}`;
  }
  return arg.description ?? arg.className ?? arg.type ?? "";
}

/** @param {string} text */
function clip(text) {
  return text.length > MAX_TEXT ? `${text.slice(0, MAX_TEXT)}…(+${text.length - MAX_TEXT} chars)` : text;
}

/**
 * One CDP event as an entry (without its sequence number), or null if it is not a console entry.
 * @param {string} method @param {any} params
 * @returns {Omit<ConsoleEntry, "seq"> | null}
 */
export function entryOf(method, params) {
  if (method === "Runtime.consoleAPICalled") {
    const level = API_LEVEL[params.type];
    if (!level) return null;
    const top = params.stackTrace?.callFrames?.[0];
    return {
      level,
      source: "console",
      text: clip((params.args ?? []).map(argText).join(" ")),
      ...(top ? { url: top.url, line: top.lineNumber + 1, column: top.columnNumber + 1 } : {}),
      time: params.timestamp ?? Date.now(),
    };
  }
  if (method === "Runtime.exceptionThrown") {
    const d = params.exceptionDetails ?? {};
    const description = d.exception?.description;
    const text = typeof description === "string" && description ? description.split("\n", 1)[0] : d.text || "Uncaught exception";
    return {
      level: "error",
      source: "exception",
      text: clip(text.startsWith("Uncaught") || !d.text?.startsWith("Uncaught") ? text : `Uncaught ${text}`),
      ...(d.url ? { url: d.url, line: (d.lineNumber ?? 0) + 1, column: (d.columnNumber ?? 0) + 1 } : {}),
      time: params.timestamp ?? Date.now(),
    };
  }
  if (method === "Log.entryAdded") {
    const e = params.entry ?? {};
    return {
      level: BROWSER_LEVEL[e.level] ?? "info",
      source: "browser",
      text: clip(String(e.text ?? "")),
      ...(e.url ? { url: e.url, ...(e.lineNumber !== undefined ? { line: e.lineNumber + 1 } : {}) } : {}),
      time: e.timestamp ?? Date.now(),
    };
  }
  return null;
}

/**
 * What identifies one message when Chrome sends it again: not its text, whose objects come back
 * without their preview, but when and where it was logged.
 * @param {Omit<ConsoleEntry, "seq">} e
 */
const fingerprint = (e) => `${e.time}|${e.source}|${e.level}|${e.url ?? ""}|${e.line ?? ""}|${e.column ?? ""}`;

/**
 * @param {{
 *   cdp: {onEvent(tabId: number | null, fn: (method: string, params: any, tabId: number, sessionId: string | null) => void, options?: {children?: boolean}): () => void},
 *   storage?: import("../link/config.js").StorageArea,
 *   tabs?: {onRemoved: {addListener(fn: (tabId: number) => void): void}},
 *   frameUrl?: (tabId: number, sessionId: string) => string | undefined,
 *   log?: Pick<Console, "warn">,
 * }} deps frameUrl names the out-of-process frame an entry came from
 */
export function createConsoleLog({ cdp, storage, tabs, frameUrl = () => undefined, log = console }) {
  /** @type {Map<number, TabLog>} */
  const byTab = new Map();
  /** @type {any} */
  let saveTimer = null;

  /** @param {number} tabId */
  function tabLog(tabId) {
    let t = byTab.get(tabId);
    if (!t) byTab.set(tabId, (t = { entries: [], seen: new Set(), nextSeq: 1, floor: 0 }));
    return t;
  }

  // Events that arrive before the saved counters are read wait for them, in order.
  /** @type {[string, any, number, string | null][] | null} */
  let early = [];
  cdp.onEvent(
    null,
    (method, params, tabId, sessionId) => {
      if (method !== "Runtime.consoleAPICalled" && method !== "Runtime.exceptionThrown" && method !== "Log.entryAdded") return;
      if (early) early.push([method, params, tabId, sessionId]);
      else record(method, params, tabId, sessionId);
    },
    { children: true },
  );
  tabs?.onRemoved.addListener((tabId) => {
    if (byTab.delete(tabId)) save();
  });

  const ready = (async () => {
    const saved = await readSaved(storage, STORAGE_KEY, "the console counters", log);
    for (const [tabId, s] of Object.entries(saved)) {
      if (!Number.isSafeInteger(s?.nextSeq)) continue;
      const t = tabLog(Number(tabId));
      t.nextSeq = Math.max(t.nextSeq, s.nextSeq);
      t.floor = Number(s.floor) || 0;
      for (const entry of Array.isArray(s.entries) ? s.entries : []) {
        t.entries.push(entry);
        t.seen.add(fingerprint(entry));
      }
    }
    const pending = early ?? [];
    early = null;
    for (const args of pending) record(...args);
  })();

  /** @param {string} method @param {any} params @param {number} tabId @param {string | null} sessionId */
  function record(method, params, tabId, sessionId) {
    const entry = entryOf(method, params);
    if (!entry) return;
    const t = tabLog(tabId);
    const key = fingerprint(entry);
    // Already recorded: Chrome sends stored messages again on re-attach.
    if (t.seen.has(key) || entry.time <= t.floor) return;
    if (sessionId !== null) {
      const frame = frameUrl(tabId, sessionId);
      if (frame) entry.frame = frame;
    }
    const full = /** @type {ConsoleEntry} */ ({ seq: t.nextSeq++, ...entry });
    t.entries.push(full);
    t.seen.add(key);
    if (t.entries.length > BUFFER_SIZE) {
      const dropped = /** @type {ConsoleEntry} */ (t.entries.shift());
      t.seen.delete(fingerprint(dropped));
      t.floor = Math.max(t.floor, dropped.time);
    }
    save();
  }

  /** Saves the counters a moment later: a burst of messages costs one write. */
  function save() {
    if (!storage || saveTimer !== null) return;
    saveTimer = setTimeout(() => {
      saveTimer = null;
      /** @type {Record<string, {nextSeq: number, floor: number, entries: ConsoleEntry[]}>} */
      const table = {};
      for (const [tabId, t] of byTab) {
        const kept = t.entries.slice(-SAVED_ENTRIES);
        const left = t.entries.length > kept.length ? t.entries[t.entries.length - kept.length - 1].time : 0;
        table[tabId] = { nextSeq: t.nextSeq, floor: Math.max(t.floor, left), entries: kept };
      }
      storage.set({ [STORAGE_KEY]: table }).catch((err) => log.warn("tabpilot: cannot save the console counters", err));
    }, 250);
  }

  return {
    ready,

    /**
     * Entries of a tab: after `since` (a sequence number) if given, else the last `limit`; at `level`
     * and above. `next_since` is what to pass next time.
     * @param {number} tabId
     * @param {{since?: number | null, level?: Level | null, limit?: number}} [query]
     */
    async read(tabId, { since = null, level = null, limit = 100 } = {}) {
      await ready;
      const t = byTab.get(tabId);
      const all = t?.entries ?? [];
      const floor = level ? LEVELS[level] : 0;
      const wanted = all.filter((e) => (since === null || e.seq > since) && LEVELS[e.level] >= floor);
      const entries = since === null ? wanted.slice(-limit) : wanted.slice(0, limit);
      const lastSeq = (t?.nextSeq ?? 1) - 1;
      // Entries after `since` that the buffer no longer holds.
      const dropped = since !== null && all.length && all[0].seq > since + 1 ? all[0].seq - since - 1 : 0;
      return {
        entries,
        more: wanted.length - entries.length,
        next_since: since === null || entries.length === wanted.length ? lastSeq : entries[entries.length - 1].seq,
        dropped,
      };
    },
  };
}
