// @ts-check
// The permission behind `emulate --geolocation`: an emulated place means nothing to a page the browser
// would ask the person about first. chrome.debugger cannot reach the Browser domain's permission
// overrides, so the site is allowed through chrome.contentSettings, and only for as long as a session
// asked for it: --reset and the session's end take the rule away again. contentSettings.clear removes
// only this extension's own rules, never the person's.

/**
 * @param {{location: {set(details: {primaryPattern: string, setting: string}): Promise<void>, clear(details: object): Promise<void>}}} deps
 */
export function createGeolocationGrants({ location }) {
  /** Each session's allowed sites, as content-setting patterns. @type {Map<string, Set<string>>} */
  const bySession = new Map();

  /** Every rule again from what the sessions still hold. */
  async function rewrite() {
    await location.clear({});
    for (const primaryPattern of new Set([...bySession.values()].flatMap((s) => [...s]))) {
      await location.set({ primaryPattern, setting: "allow" });
    }
  }

  return {
    /** @param {string} sessionId @param {string} origin e.g. https://example.com:8443 */
    async grant(sessionId, origin) {
      const pattern = `${origin}/*`;
      const held = bySession.get(sessionId) ?? new Set();
      held.add(pattern);
      bySession.set(sessionId, held);
      await location.set({ primaryPattern: pattern, setting: "allow" });
    },

    /** A session's grants end: one site's (--reset), or all of them (null: the session stops). @param {string} sessionId @param {string | null} origin */
    async revoke(sessionId, origin) {
      const held = bySession.get(sessionId);
      if (!held) return;
      if (origin === null) bySession.delete(sessionId);
      else held.delete(`${origin}/*`);
      await rewrite();
    },

    /** A worker that starts with no session left holds nothing from an earlier life. */
    clearAll: () => location.clear({}),
  };
}
