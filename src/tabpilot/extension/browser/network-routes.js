// @ts-check
// Each session's network routes: requests whose URL matches a pattern are answered with a status and
// body of the agent's choosing, or aborted, before they leave the browser; and its request shaping:
// requests to an origin carry the headers (and HTTP basic credentials) the agent set for that origin,
// and no other origin's. The site guard owns the Fetch domain (it fails requests to blocked sites
// first); it asks here about every other request it catches, and catches what these patterns name as
// well. Each hop of a redirect is caught anew, so credentials never follow a redirect to another origin.

/**
 * @typedef {{pattern: string, status: number, body: string, content_type: string, abort: boolean}} Route
 *   body: base64
 * @typedef {{headers: Record<string, string>, authorization: string | null}} Shaping
 *   headers: by the name as the agent wrote it; authorization: a whole Authorization value
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
  /** Each session's shaping, by origin. @type {Map<string, Map<string, Shaping>>} */
  const shapingBySession = new Map();

  /** What the agent set for an origin, merged into the request's own headers. @param {Record<string, string>} own @param {Shaping} shaping */
  function shapedHeaders(own, shaping) {
    const added = { ...shaping.headers, ...(shaping.authorization ? { Authorization: shaping.authorization } : {}) };
    const replaced = new Set(Object.keys(added).map((name) => name.toLowerCase()));
    const kept = Object.entries(own ?? {}).filter(([name]) => !replaced.has(name.toLowerCase()));
    return [...kept, ...Object.entries(added)].map(([name, value]) => ({ name, value: String(value) }));
  }

  /** @param {string} url */
  function originOf(url) {
    try {
      return new URL(url).origin;
    } catch {
      return null;
    }
  }

  return {
    /** The Fetch.enable patterns for every session's routes. */
    patterns() {
      const all = new Set([...bySession.values()].flat().map((r) => fetchPattern(r.pattern).replace(/\*+/g, "*")));
      for (const origins of shapingBySession.values()) for (const origin of origins.keys()) all.add(`${origin}/*`);
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

    /** The session's shaped origins: header names only, and whose credentials (never a value). @param {string} sessionId */
    shaping: (sessionId) =>
      [...(shapingBySession.get(sessionId) ?? new Map()).entries()].map(([origin, s]) => ({
        origin,
        headers: Object.keys(s.headers),
        credentials: s.authorization !== null,
      })),

    /**
     * Set what requests to one origin carry; `headers` and `authorization` each replace what was set
     * (undefined: keep it). An origin left with nothing is dropped.
     * @param {string} sessionId @param {string} origin
     * @param {{headers?: Record<string, string>, authorization?: string | null}} change
     */
    async shape(sessionId, origin, change) {
      const origins = shapingBySession.get(sessionId) ?? new Map();
      const was = origins.get(origin) ?? { headers: {}, authorization: null };
      const now = { headers: change.headers ?? was.headers, authorization: change.authorization === undefined ? was.authorization : change.authorization };
      if (Object.keys(now.headers).length === 0 && now.authorization === null) origins.delete(origin);
      else origins.set(origin, now);
      if (origins.size) shapingBySession.set(sessionId, origins);
      else shapingBySession.delete(sessionId);
      await onChange();
    },

    /** The session ends: none of its shaping is left. @param {string} sessionId */
    async unshape(sessionId) {
      if (shapingBySession.delete(sessionId)) await onChange();
    },

    /**
     * How to answer a caught request: a Fetch command, or null to let it go.
     * @param {number} tabId @param {any} paused Fetch.requestPaused params
     * @returns {Promise<[string, object] | null>}
     */
    async answer(tabId, paused) {
      if (bySession.size === 0 && shapingBySession.size === 0) return null;
      const sessionId = await ownerOfTab(tabId);
      const url = String(paused.request?.url ?? "");
      const route = sessionId ? (bySession.get(sessionId) ?? []).findLast((r) => patternRegExp(r.pattern).test(url)) : undefined;
      if (!route) {
        const origin = originOf(url);
        const shaping = sessionId && origin ? shapingBySession.get(sessionId)?.get(origin) : undefined;
        if (!shaping) return null;
        return ["Fetch.continueRequest", { requestId: paused.requestId, headers: shapedHeaders(paused.request?.headers, shaping) }];
      }
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
