// @ts-check
// What each tab's pages asked of the network (Network domain events of the tab and its out-of-process
// frames), numbered per tab so an agent can read on from where it was, and the response bodies the
// browser still holds. Secrets in headers are the caller's to hide (tools/network/).

/** Requests kept per tab (the oldest are forgotten). */
export const BUFFER_SIZE = 500;
const MAX_POST_DATA = 64 * 1024;

/**
 * @typedef {{seq: number, method: string, url: string, type: string, status: number | null, status_text: string,
 *            mime: string, bytes: number | null, ms: number | null, failed: string | null, time: number,
 *            request_headers: Record<string, string>, response_headers: Record<string, string>,
 *            post_data: string | null, protocol: string, from_cache: boolean, download: boolean}} NetworkEntry
 *   download: the browser turned the response into a download (it ends the request, which is no failure)
 * @typedef {{entry: NetworkEntry, requestId: string, sessionId: string | null, started: number}} Tracked
 */

/**
 * @param {{
 *   cdp: {onEvent(tabId: number | null, fn: (method: string, params: any, tabId: number, sessionId: string | null) => void, options?: {children?: boolean}): () => void,
 *         sendToSession(tabId: number, sessionId: string | null, method: string, params?: object): Promise<any>},
 *   tabs?: {onRemoved: {addListener(fn: (tabId: number) => void): void}},
 * }} deps
 */
export function createNetworkLog({ cdp, tabs }) {
  /** @type {Map<number, {entries: Tracked[], byRequest: Map<string, Tracked>, nextSeq: number}>} */
  const byTab = new Map();
  tabs?.onRemoved.addListener((tabId) => byTab.delete(tabId));

  /** @param {number} tabId */
  function tabLog(tabId) {
    let t = byTab.get(tabId);
    if (!t) byTab.set(tabId, (t = { entries: [], byRequest: new Map(), nextSeq: 1 }));
    return t;
  }

  /** A header's value whatever its case, or "". @param {Record<string, string>} headers @param {string} name */
  const headerOf = (headers, name) => {
    for (const [k, v] of Object.entries(headers)) if (k.toLowerCase() === name) return String(v);
    return "";
  };

  /** @param {number} tabId @param {string | null} sessionId @param {string} requestId */
  const key = (tabId, sessionId, requestId) => `${sessionId ?? ""}|${requestId}`;

  cdp.onEvent(
    null,
    (method, params, tabId, sessionId) => {
      if (method === "Page.downloadWillBegin") {
        markDownload(tabLog(tabId), String(params.url ?? ""));
        return;
      }
      if (!method.startsWith("Network.")) return;
      const t = tabLog(tabId);
      const k = key(tabId, sessionId, params.requestId);
      if (method === "Network.requestWillBeSent") {
        const previous = t.byRequest.get(k);
        // A redirect reuses the request id: the hop before is finished with the redirect's status.
        if (previous && params.redirectResponse) respond(previous, params.redirectResponse, params.timestamp);
        const r = params.request ?? {};
        const post = typeof r.postData === "string" ? r.postData.slice(0, MAX_POST_DATA) : null;
        /** @type {Tracked} */
        const tracked = {
          requestId: params.requestId,
          sessionId,
          started: params.timestamp ?? 0,
          entry: {
            seq: t.nextSeq++, method: r.method ?? "GET", url: `${r.url ?? ""}${r.urlFragment ?? ""}`, type: String(params.type ?? "other").toLowerCase(),
            status: null, status_text: "", mime: "", bytes: null, ms: null, failed: null, time: params.wallTime ? Math.round(params.wallTime * 1000) : Date.now(),
            request_headers: { ...(r.headers ?? {}) }, response_headers: {}, post_data: post, protocol: "", from_cache: false,
            download: false,
          },
        };
        t.byRequest.set(k, tracked);
        t.entries.push(tracked);
        if (t.entries.length > BUFFER_SIZE) {
          const dropped = /** @type {Tracked} */ (t.entries.shift());
          if (t.byRequest.get(key(tabId, dropped.sessionId, dropped.requestId)) === dropped) t.byRequest.delete(key(tabId, dropped.sessionId, dropped.requestId));
        }
        return;
      }
      const tracked = t.byRequest.get(k);
      if (!tracked) return;
      if (method === "Network.requestWillBeSentExtraInfo") {
        Object.assign(tracked.entry.request_headers, params.headers ?? {});
      } else if (method === "Network.responseReceived") {
        respond(tracked, params.response ?? {}, params.timestamp);
        if (params.type) tracked.entry.type = String(params.type).toLowerCase();
      } else if (method === "Network.responseReceivedExtraInfo") {
        // The raw headers, Set-Cookie included (responseReceived leaves some out).
        Object.assign(tracked.entry.response_headers, params.headers ?? {});
      } else if (method === "Network.requestServedFromCache") {
        tracked.entry.from_cache = true;
      } else if (method === "Network.loadingFinished") {
        tracked.entry.bytes = Math.round(params.encodedDataLength ?? 0);
        tracked.entry.ms = Math.round(((params.timestamp ?? tracked.started) - tracked.started) * 1000);
      } else if (method === "Network.loadingFailed") {
        // A download ends its navigation's request with an abort, before or after the browser says so.
        const downloaded = tracked.entry.download || (params.errorText === "net::ERR_ABORTED" && /^\s*attachment/i.test(headerOf(tracked.entry.response_headers, "content-disposition")));
        if (downloaded) tracked.entry.download = true;
        else tracked.entry.failed = params.blockedReason ? `blocked (${params.blockedReason})` : String(params.errorText ?? "failed");
        tracked.entry.ms = Math.round(((params.timestamp ?? tracked.started) - tracked.started) * 1000);
      }
    },
    { children: true },
  );

  /**
   * The browser made a download of a URL: the latest request for it is that download (the abort that
   * ends it is no failure). @param {{entries: Tracked[]}} t @param {string} url
   */
  function markDownload(t, url) {
    for (let i = t.entries.length - 1; i >= 0; i--) {
      const e = t.entries[i].entry;
      if (e.url !== url) continue;
      e.download = true;
      if (e.failed === "net::ERR_ABORTED") e.failed = null;
      return;
    }
  }

  /** @param {Tracked} tracked @param {any} response @param {number | undefined} timestamp */
  function respond(tracked, response, timestamp) {
    const e = tracked.entry;
    e.status = Number.isInteger(response.status) ? response.status : null;
    e.status_text = String(response.statusText ?? "");
    e.mime = String(response.mimeType ?? "");
    e.protocol = String(response.protocol ?? "");
    e.response_headers = { ...(response.headers ?? {}), ...e.response_headers };
    if (response.fromDiskCache || response.fromServiceWorker) e.from_cache = true;
    if (timestamp !== undefined) e.ms = Math.round((timestamp - tracked.started) * 1000);
  }

  return {
    /**
     * Network.enable on a target, as cdp's per-target setup runs it (every tab and frame we attach to).
     * @param {(method: string, params?: object) => Promise<unknown>} send
     */
    async enable(send) {
      await send("Network.enable", { maxTotalBufferSize: 20_000_000, maxResourceBufferSize: 5_000_000 });
    },

    /**
     * The tab's requests after `since`, oldest first, filtered; `next_since` is what to pass next time.
     * @param {number} tabId
     * @param {{since?: number, text?: string | null, types?: string[] | null, limit?: number}} query
     */
    read(tabId, { since = 0, text = null, types = null, limit = 100 }) {
      const t = byTab.get(tabId);
      const all = (t?.entries ?? []).map((x) => x.entry);
      const needle = text?.toLowerCase() ?? null;
      const wanted = all.filter((e) => e.seq > since && (!needle || e.url.toLowerCase().includes(needle)) && (!types || types.includes(e.type)));
      const entries = wanted.slice(-limit);
      return { entries: entries.map((e) => ({ ...e })), more: wanted.length - entries.length, next_since: (t?.nextSeq ?? 1) - 1 };
    },

    /** One request by its number, with where to ask for its body. @param {number} tabId @param {number} seq */
    get(tabId, seq) {
      const found = byTab.get(tabId)?.entries.find((x) => x.entry.seq === seq);
      return found ? { entry: { ...found.entry }, requestId: found.requestId, sessionId: found.sessionId } : null;
    },

    /**
     * The response body the browser still holds for a request.
     * @param {number} tabId @param {string | null} sessionId @param {string} requestId
     * @returns {Promise<{body: string, base64: boolean}>}
     */
    async body(tabId, sessionId, requestId) {
      const reply = await cdp.sendToSession(tabId, sessionId, "Network.getResponseBody", { requestId });
      return { body: String(reply.body ?? ""), base64: reply.base64Encoded === true };
    },
  };
}
