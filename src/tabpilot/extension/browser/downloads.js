// @ts-check
// Downloads the sessions' pages start, through chrome.downloads: which session a file belongs to (the
// tab that announced it with Page.downloadWillBegin, else a session tab showing its referrer), where it
// goes (a managed browser's default folder is $TABPILOT_HOME/downloads, and each session gets its own
// subfolder; the person's browser keeps its own folder), never over a file of the same name, an
// agent's download from a blocked site cancelled, and a side-panel agent's download held until the
// person allows it (`hold`). chrome.downloads cannot stop the request itself: the download has started
// when the extension hears of it. What it can hold is the file: Chrome does not give it its name nor
// complete it until every onDeterminingFilename listener has called suggest; cancelled before that,
// the partial file is deleted and nothing lands in the folder.
//
// The DevTools way is closed to extensions: chrome.debugger answers Browser.setDownloadBehavior with
// "wasn't found" and Page.setDownloadBehavior with "Cannot access browser-level commands", so the
// folder comes from the managed profile's preferences (launcher.py).

/**
 * @typedef {{id: number, url?: string, finalUrl?: string, referrer?: string, filename?: string, mime?: string,
 *            totalBytes?: number, fileSize?: number, bytesReceived?: number, state?: string, error?: string}} DownloadItem
 * @typedef {{id: number, session_id: string | null, tab_id: number | null, url: string, name: string, path: string,
 *            bytes: number, mime: string, state: "in_progress" | "complete" | "interrupted", error: string | null,
 *            started: number}} Download
 * @typedef {{
 *   onCreated: {addListener(fn: (item: DownloadItem) => void): void},
 *   onChanged: {addListener(fn: (delta: any) => void): void},
 *   onDeterminingFilename?: {addListener(fn: (item: DownloadItem, suggest: (s?: {filename: string, conflictAction: string}) => void) => boolean | void): void},
 *   search(query: object): Promise<DownloadItem[]>,
 *   cancel(id: number): Promise<void>,
 *   erase(query: object): Promise<unknown>,
 * }} DownloadsApi
 */

/** How long a new download waits for the page that started it to be named. */
const OWNER_WAIT_MS = 1000;
/** Downloads remembered for the listings (the oldest are forgotten). */
const KEPT = 200;

// Chrome refuses a suggested name that is a device on Windows (on every platform) or longer than a file
// system takes, and then puts the file where it likes: outside the session's folder.
const RESERVED = /^(?:con|prn|aux|nul|com[0-9]|lpt[0-9]|clock\$)(?:\.|$)/i;
/** UTF-8 bytes a name may take: file systems take 255, Chrome's uniquifier adds " (NN)". */
const MAX_NAME_BYTES = 200;
const encoder = new TextEncoder();

/** `name` cut to `bytes` of UTF-8 at a whole character. @param {string} name @param {number} bytes */
function cut(name, bytes) {
  let out = "";
  for (const ch of name) {
    if (encoder.encode(out + ch).length > bytes) break;
    out += ch;
  }
  return out;
}

/** A name that is one plain file name in a folder (no path, nothing hidden, no device, not too long). @param {string} name */
export function safeName(name) {
  const base = name.split(/[\\/]/).pop() ?? "";
  let cleaned = base.replace(/[\u0000-\u001f<>:"|?*]/g, "_").replace(/^[.\s]+/, "").replace(/[.\s]+$/, "");
  if (RESERVED.test(cleaned)) cleaned = `_${cleaned}`;
  if (encoder.encode(cleaned).length > MAX_NAME_BYTES) {
    const dot = cleaned.lastIndexOf(".");
    const extension = dot > 0 && cleaned.length - dot <= 16 ? cleaned.slice(dot) : "";
    cleaned = cut(cleaned.slice(0, cleaned.length - extension.length), MAX_NAME_BYTES - encoder.encode(extension).length) + extension;
  }
  return cleaned || "download";
}

/** The session's subfolder name (session names are [A-Za-z0-9._-]). @param {string} sessionId */
export function sessionFolder(sessionId) {
  return sessionId.replace(/[^A-Za-z0-9._-]/g, "_").replace(/^\.+/, "_") || "default";
}

/**
 * @param {{
 *   downloadsApi: DownloadsApi | undefined,
 *   cdp: {onEvent(tabId: number | null, fn: (method: string, params: any, tabId: number, sessionId: string | null) => void): () => void},
 *   ownerOfTab: (tabId: number) => Promise<string | null>,
 *   tabsShowing: (url: string) => Promise<number[]>,
 *   isManaged: () => Promise<boolean>,
 *   isBlocked: (url: string | undefined) => Promise<boolean>,
 *   anySession: () => Promise<boolean>,
 *   hold?: (sessionId: string, tabId: number | null, item: DownloadItem) => Promise<boolean>,
 *   log?: Pick<Console, "warn">,
 * }} deps
 *   ownerOfTab: the session a tab belongs to; tabsShowing: the tabs whose page is at a URL; hold: may
 *   a session's download go on (the person is asked for a side-panel agent's), false cancels it
 */
export function createDownloads({ downloadsApi, cdp, ownerOfTab, tabsShowing, isManaged, isBlocked, anySession, hold = async () => true, log = console }) {
  /** @type {Map<number, Download>} */
  const byId = new Map();
  /** Announced by a page and not yet matched to a download: url → tab. */
  /** @type {{url: string, tabId: number, at: number}[]} */
  const announced = [];
  /** @type {Set<() => void>} */
  const waiters = new Set();

  const wake = () => {
    for (const fn of [...waiters]) fn();
  };

  cdp.onEvent(null, (method, params, tabId) => {
    if (method !== "Page.downloadWillBegin") return;
    announced.push({ url: String(params.url ?? ""), tabId, at: Date.now() });
    if (announced.length > 50) announced.shift();
    wake();
  });

  /** The tab that started a download: announced by its page, or showing the page it came from. @param {DownloadItem} item */
  async function originTab(item) {
    // The person's own downloads, while no session runs, are not held up.
    if (!(await anySession())) return null;
    const end = Date.now() + OWNER_WAIT_MS;
    const urls = [item.url, item.finalUrl].filter(Boolean);
    for (;;) {
      const i = announced.findIndex((a) => urls.includes(a.url));
      if (i !== -1) return announced.splice(i, 1)[0].tabId;
      if (Date.now() >= end) break;
      await new Promise((resolve) => {
        const done = () => {
          waiters.delete(done);
          resolve(undefined);
        };
        waiters.add(done);
        setTimeout(done, 50);
      });
    }
    if (item.referrer) {
      for (const tabId of await tabsShowing(item.referrer)) if (await ownerOfTab(tabId)) return tabId;
    }
    return null;
  }

  /** @param {DownloadItem} item @param {Download} record */
  function update(item, record) {
    if (item.filename) {
      record.path = item.filename;
      record.name = safeName(item.filename);
    }
    if (item.mime) record.mime = item.mime;
    const bytes = item.fileSize || item.bytesReceived || item.totalBytes;
    if (typeof bytes === "number" && bytes >= 0) record.bytes = bytes;
    if (item.state === "complete" || item.state === "interrupted" || item.state === "in_progress") record.state = item.state;
    if (item.error) record.error = item.error;
  }

  /** @param {DownloadItem} item */
  function recordOf(item) {
    let record = byId.get(item.id);
    if (!record) {
      record = {
        id: item.id, session_id: null, tab_id: null, url: item.finalUrl || item.url || "", name: "", path: "",
        bytes: 0, mime: "", state: "in_progress", error: null, started: Date.now(),
      };
      byId.set(item.id, record);
      if (byId.size > KEPT) byId.delete(/** @type {number} */ (byId.keys().next().value));
    }
    return record;
  }

  /** @param {DownloadItem} item */
  async function blocked(item) {
    for (const url of [item.url, item.finalUrl, item.referrer]) {
      if (url && (await isBlocked(url).catch(() => true))) return true;
    }
    return false;
  }

  /** @param {DownloadItem} item @param {string} [why] */
  async function refuse(item, why = "BLOCKED_SITE") {
    const record = recordOf(item);
    record.state = "interrupted";
    record.error = why;
    await downloadsApi?.cancel(item.id).catch(() => {});
    await downloadsApi?.erase({ id: item.id }).catch(() => {});
    wake();
  }

  /** Who owns a new download, once per download. @type {Map<number, Promise<void>>} */
  const placed = new Map();
  /** @param {DownloadItem} item */
  function place(item) {
    let pending = placed.get(item.id);
    if (!pending) {
      pending = (async () => {
        const record = recordOf(item);
        update(item, record);
        const tabId = await originTab(item);
        if (tabId !== null) {
          record.tab_id = tabId;
          record.session_id = await ownerOfTab(tabId);
        }
        wake();
      })().catch((err) => log.warn("tabpilot: cannot follow a download", err));
      placed.set(item.id, pending);
      if (placed.size > KEPT) placed.delete(/** @type {number} */ (placed.keys().next().value));
    }
    return pending;
  }

  // Only the agent's downloads answer to the blocked sites (the person may fetch what they like); a
  // session tab's request to a blocked site is failed before it leaves (the site guard), this is the
  // second line.
  /** @param {DownloadItem} item */
  async function agentsAndBlocked(item) {
    await place(item);
    return Boolean(byId.get(item.id)?.session_id) && (await blocked(item));
  }

  downloadsApi?.onCreated.addListener((item) => {
    void agentsAndBlocked(item).then((refused) => (refused ? refuse(item) : undefined));
  });

  // Called for every download while its name is chosen; Chrome waits for suggest (return true).
  downloadsApi?.onDeterminingFilename?.addListener((item, suggest) => {
    void (async () => {
      if (await agentsAndBlocked(item)) {
        suggest();
        return refuse(item);
      }
      const record = byId.get(item.id);
      const name = safeName(item.filename || record?.name || "download");
      if (record?.session_id && !(await hold(record.session_id, record.tab_id, item).catch(() => false))) {
        suggest();
        return refuse(item, "NOT_ALLOWED");
      }
      if (!record?.session_id) {
        // Not the agent's: the browser's own choice, untouched.
        suggest();
      } else if (await isManaged()) {
        suggest({ filename: `${sessionFolder(record.session_id)}/${name}`, conflictAction: "uniquify" });
      } else {
        suggest({ filename: name, conflictAction: "uniquify" });
      }
    })().catch(() => suggest());
    return true;
  });

  downloadsApi?.onChanged.addListener((delta) => {
    const record = byId.get(delta.id);
    if (!record) return;
    void downloadsApi
      .search({ id: delta.id })
      .then(([item]) => {
        if (item) update(item, record);
        wake();
      })
      .catch(() => {});
  });

  /** @param {Download} d */
  const copy = (d) => ({ ...d });

  return {
    /** The session's downloads, oldest first. @param {string} sessionId */
    list(sessionId) {
      return [...byId.values()].filter((d) => d.session_id === sessionId).map(copy);
    },

    /** The highest download id so far: what started after it is new. */
    cursor() {
      let top = 0;
      for (const id of byId.keys()) top = Math.max(top, id);
      return top;
    },

    /**
     * The session's first download after `after` (an id) that is no longer in progress; without
     * `after`, its latest download once that is no longer in progress. If none finished within `ms`,
     * the one waited for (still in progress); null when none started.
     * @param {string | null} sessionId null: any session's (with `tabId`)
     * @param {{after?: number, ms: number, tabId?: number, signal?: AbortSignal}} options
     * @returns {Promise<Download | null>}
     */
    async wait(sessionId, { after, ms, tabId, signal }) {
      const end = Date.now() + ms;
      const mine = () =>
        [...byId.values()].filter(
          (d) => d.id > (after ?? 0) && (sessionId === null || d.session_id === sessionId) && (tabId === undefined || d.tab_id === tabId),
        );
      const pick = () => (after === undefined ? mine().at(-1) : mine().find((d) => d.state !== "in_progress") ?? mine()[0]);
      for (;;) {
        const found = pick();
        if (found && found.state !== "in_progress") return copy(found);
        if (Date.now() >= end) return found ? copy(found) : null;
        if (signal?.aborted) throw signal.reason;
        await new Promise((resolve) => {
          const fire = () => {
            waiters.delete(fire);
            resolve(undefined);
          };
          waiters.add(fire);
          setTimeout(fire, Math.min(200, Math.max(0, end - Date.now())));
        });
      }
    },
  };
}
