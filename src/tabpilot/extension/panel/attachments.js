// @ts-check
// What the person can attach to a message from their tab: the page as the agent would read it, the
// text they selected, a screenshot of what they see.
import { RpcError } from "../link/protocol.js";

/** Page attachments are capped like a default snapshot, so one message cannot flood the agent. */
export const PAGE_TOKENS = 12_000;
const SELECTION_CHARS = 20_000;

/**
 * @param {{
 *   snapshots: {take(tabId: number, options: object, flags?: {remember?: boolean}): Promise<{text: string, url: string, title: string}>},
 *   cdp: {send(tabId: number, method: string, params?: object): Promise<any>},
 * }} deps
 */
export function createAttachments({ snapshots, cdp }) {
  return {
    /** @param {number} tabId */
    async page(tabId) {
      const s = await snapshots.take(tabId, { mode: "full", maxTokens: PAGE_TOKENS, rootRef: null, viewportOnly: false, urls: true }, { remember: false });
      return { text: s.text, url: s.url, title: s.title };
    },
    /** @param {number} tabId */
    async selection(tabId) {
      const reply = await cdp.send(tabId, "Runtime.evaluate", { expression: "String(getSelection())", returnByValue: true });
      const value = reply?.result?.value;
      return typeof value === "string" ? value.slice(0, SELECTION_CHARS) : "";
    },
    /** @param {number} tabId @returns {Promise<string>} base64 PNG */
    async screenshot(tabId) {
      const reply = await cdp.send(tabId, "Page.captureScreenshot", { format: "png" });
      if (typeof reply?.data !== "string") throw new RpcError("cdp_failed", "the screenshot came back empty");
      return reply.data;
    },
  };
}
