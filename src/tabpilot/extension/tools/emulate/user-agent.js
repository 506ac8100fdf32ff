// @ts-check
// One tab's user agent and languages. CDP sets both in one call (Emulation.setUserAgentOverride), so a
// device's user agent, `--user-agent` and `--locale` each keep what the others set. What is kept lasts
// as long as the debugger attachment that holds the override in Chrome: a new attachment starts clean.

/** @typedef {{attachment: unknown, userAgent: string | null, language: string | null}} Identity */

/** @type {Map<number, Identity>} */
const byTab = new Map();

/** A mobile user agent of this browser's own version, for a viewport given as mobile. */
export function mobileUserAgent() {
  const version = /Chrome\/([\d.]+)/.exec(globalThis.navigator?.userAgent ?? "")?.[1] ?? "120.0.0.0";
  return `Mozilla/5.0 (Linux; Android 14; Pixel 7) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/${version} Mobile Safari/537.36`;
}

/**
 * Change the tab's user agent and/or language (undefined: keep; null: the browser's own) and apply both.
 * @param {{cdp: {attach(tabId: number): Promise<unknown>, send(tabId: number, method: string, params?: object): Promise<any>, attachmentOf(tabId: number): unknown}}} ctx
 * @param {number} tabId
 * @param {{userAgent?: string | null, language?: string | null}} change
 */
export async function setIdentity(ctx, tabId, change) {
  await ctx.cdp.attach(tabId);
  const attachment = ctx.cdp.attachmentOf(tabId);
  const kept = byTab.get(tabId);
  const was = kept && kept.attachment === attachment ? kept : { attachment, userAgent: null, language: null };
  const now = {
    attachment,
    userAgent: change.userAgent === undefined ? was.userAgent : change.userAgent,
    language: change.language === undefined ? was.language : change.language,
  };
  if (now.userAgent === null && now.language === null) {
    byTab.delete(tabId);
    await ctx.cdp.send(tabId, "Emulation.setUserAgentOverride", { userAgent: "" });
    return;
  }
  byTab.set(tabId, now);
  await ctx.cdp.send(tabId, "Emulation.setUserAgentOverride", {
    userAgent: now.userAgent ?? globalThis.navigator?.userAgent ?? "",
    ...(now.language === null ? {} : { acceptLanguage: now.language }),
  });
}
