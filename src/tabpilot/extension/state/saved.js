// @ts-check
// What the worker keeps in chrome.storage.session to survive its own restarts, read back safely:
// a table that cannot be read is an empty one (logged), never an exception at start-up.

/**
 * @param {{get(key: string): Promise<Record<string, any>>} | null | undefined} storage
 * @param {string} key
 * @param {string} what for the log line, e.g. "the session table"
 * @param {Pick<Console, "warn">} log
 * @returns {Promise<Record<string, any>>}
 */
export async function readSaved(storage, key, what, log = console) {
  if (!storage) return {};
  try {
    const value = (await storage.get(key))[key];
    return value && typeof value === "object" ? value : {};
  } catch (err) {
    log.warn(`tabpilot: cannot read ${what}`, err);
    return {};
  }
}
