// @ts-check
// Each session's network routes: requests whose URL matches a pattern are answered with a status and
// body of the agent's choosing, or aborted, before they leave the browser. The site guard owns the
// Fetch domain (it fails requests to blocked sites first); it asks here about every other request it
// catches, and catches what these patterns name as well.

/**
 * @typedef {{pattern: string, status: number, body: string, content_type: string, abort: boolean}} Route
 *   body: base64
 */

/** A pattern with no wildcard matches URLs that contain it. @param {string} pattern */
export function fetchPattern(pattern) {
  return /[*?]/.test(pattern) ? pattern : `*${pattern}*`;
}

/** Fetch's wildcards (* any run, ? one character; `**` is `*`) as a RegExp. @param {string} pattern */
export function patternRegExp(pattern) {
  const source = fetchPattern(pattern)
    .replace(/\*+/g, "*")
    .replace(/[.+^${}()|[\]\\]/g, "\\$&")
    .replace(/\*/g, ".*")
    .replace(/\?/g, ".");
  return new RegExp(`^${source}$`, "s");
}

/**
 * @param {{ownerOfTab: (tabId: number) => Promise<string | null>, onChange: () => Promise<void>}} deps
 *   onChange: the patterns changed (every target must intercept by the new ones)
 */
export function createNetworkRoutes({ ownerOfTab, onChange }) {
  /** @type {Map<string, Route[]>} */
  const bySession = new Map();

  return {
    /** The Fetch.enable patterns for every session's routes. */
    patterns() {
      const all = new Set([...bySession.values()].flat().map((r) => fetchPattern(r.pattern).replace(/\*+/g, "*")));
      return [...all].map((urlPattern) => ({ urlPattern, requestStage: /** @type {const} */ ("Request") }));
    },

    /** @param {string} sessionId */
    list: (sessionId) => [...(bySession.get(sessionId) ?? [])].map((r) => ({ pattern: r.pattern, status: r.status, abort: r.abort, bytes: atob(r.body).length })),

    /** @param {string} sessionId @param {Route} route the last one added wins over older ones for the same URL */
    async add(sessionId, route) {
      const routes = (bySession.get(sessionId) ?? []).filter((r) => r.pattern !== route.pattern);
      bySession.set(sessionId, [...routes, route]);
      await onChange();
    },

    /** Remove one pattern's route, or all the session's; how many went. @param {string} sessionId @param {string | null} pattern */
    async remove(sessionId, pattern) {
      const routes = bySession.get(sessionId) ?? [];
      const kept = pattern === null ? [] : routes.filter((r) => r.pattern !== pattern);
      if (kept.length) bySession.set(sessionId, kept);
      else bySession.delete(sessionId);
      if (kept.length !== routes.length) await onChange();
      return routes.length - kept.length;
    },

    /**
     * How to answer a caught request: a Fetch command, or null to let it go.
     * @param {number} tabId @param {any} paused Fetch.requestPaused params
     * @returns {Promise<[string, object] | null>}
     */
    async answer(tabId, paused) {
      if (bySession.size === 0) return null;
      const sessionId = await ownerOfTab(tabId);
      const url = String(paused.request?.url ?? "");
      const route = sessionId ? (bySession.get(sessionId) ?? []).findLast((r) => patternRegExp(r.pattern).test(url)) : undefined;
      if (!route) return null;
      if (route.abort) return ["Fetch.failRequest", { requestId: paused.requestId, errorReason: "Aborted" }];
      return [
        "Fetch.fulfillRequest",
        {
          requestId: paused.requestId,
          responseCode: route.status,
          responseHeaders: [
            { name: "Content-Type", value: route.content_type },
            { name: "Access-Control-Allow-Origin", value: "*" },
          ],
          body: route.body,
        },
      ];
    },
  };
}
