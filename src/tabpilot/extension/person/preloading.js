// @ts-check
// Blocked means no request leaves, and speculative loads are requests no tab rule holds: speculation
// rules (`<script type=speculationrules>`) make the browser prefetch and prerender pages before any
// click, with the person's cookies, from a prerender target that chrome.debugger never reaches (a
// page's Target.setAutoAttach does not report it, measured in Chromium 14x) and whose requests the
// declarativeNetRequest rules count as the debugged tab's own documents. So while any session is open
// (panel sessions too) the browser's "Preload pages" setting is off (privacy.network.
// networkPredictionEnabled): no prefetch, no prerender, in any tab. It is given back to the person's
// own choice once the last session ends.

/**
 * @typedef {{
 *   set(details: {value: boolean}): Promise<void>,
 *   clear(details: object): Promise<void>,
 *   get(details: object): Promise<{value: boolean, levelOfControl: string}>,
 * }} BrowserSetting
 */

/**
 * Register in the worker's first turn.
 * @param {{
 *   setting: BrowserSetting | undefined,
 *   sessions: {listSessionIds(): Promise<string[]>, onChange(fn: () => void): () => void, ready: Promise<unknown>},
 *   log?: Pick<Console, "warn">,
 * }} deps
 *   setting: chrome.privacy.network.networkPredictionEnabled
 */
export function createPreloading({ setting, sessions, log = console }) {
  /** Whether this worker last turned preloading off; null before it decided. @type {boolean | null} */
  let off = null;
  let updates = Promise.resolve();

  sessions.onChange(() => void refresh());
  void sessions.ready.then(() => refresh());

  function refresh() {
    updates = updates.then(apply).catch((err) => log.warn("tabpilot: cannot turn speculative loading off", err));
    return updates;
  }

  async function apply() {
    if (!setting) return;
    const open = (await sessions.listSessionIds()).length > 0;
    if (open === off) return;
    if (open) await setting.set({ value: false });
    else await setting.clear({});
    off = open;
    if (open) {
      const { levelOfControl } = await setting.get({});
      // A policy or another extension decides it: say so where the person's admin can see it.
      if (levelOfControl !== "controlled_by_this_extension") log.warn(`tabpilot: speculative loading is ${levelOfControl}, not turned off`);
    }
  }

  return { refresh };
}
