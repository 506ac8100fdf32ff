// @ts-check
// The cards of a side-panel agent's actions the person is asked about, while they wait for an answer.
// A card shows in the side panel when a panel shows its conversation (the panel reads it from the
// conversation's events: the daemon records each card and its answer as this module reports them, and
// the call waiting on it is kept alive by progress frames); otherwise, and as
// soon as the last panel showing it closes, in the page in view (this extension's own prompt frame,
// person/overlay.js) and as a system notification. The first answer wins, from whichever surface, and
// only a person's: a trusted click in our own pages or a notification button. No answer in time, Stop,
// the tab closing: no. Nothing here ever says yes by default.
import { RpcError, fromPage, said } from "../link/protocol.js";

/**
 * @typedef {{rule: string, title: string, rules: string[], target: string, site: string | null,
 *   start: string | null, code?: string, always: boolean}} Card  what the person reads
 * @typedef {"allow" | "deny"} Decision
 * @typedef {{id: string, sessionId: string, conversationId: string, tabId: number, card: Card,
 *   deadline: number, elsewhere: AbortController | null, settle: (outcome: string, via: string, always?: boolean) => void}} Pending
 * @typedef {{
 *   askApproval(tabId: number, request: {requestId: string, sessionId: string, view: Record<string, unknown>, timeoutMs: number, signal?: AbortSignal}): Promise<string>,
 *   answeredVia?(requestId: string): string,
 * }} PageSurface  answeredVia: where the person answered the page's card ("page", or "popup" for one the page hid)
 * @typedef {{ask(question: {id: string, title: string, message: string, buttons: string[], contextMessage?: string},
 *   options: {timeoutMs: number, signal?: AbortSignal, onClick?: () => void}): Promise<number | "timeout" | "closed">}} NotifySurface
 */

/** The agent is told this when the person says no: it must not look for another way. */
export const DECLINED_HINT = "the person said no; do not retry or find another way; tell them what you could not do";

/**
 * @param {{
 *   timeoutMs: () => Promise<number>,
 *   page: PageSurface,
 *   notify: NotifySurface,
 *   panelShows: (conversationId: string) => boolean,
 *   tabInView: (sessionId: string) => Promise<number | null>,
 *   showTab: (tabId: number) => void,
 *   emit: (name: string, payload: Record<string, unknown>) => void,
 *   random?: () => string,
 * }} deps
 *   panelShows: a side panel shows this conversation now; tabInView: the active tab of the window the
 *   person last used, unless another session's agent works there (its input must never reach the card);
 *   emit: tell the daemon of a card and of its answer (the conversation's timeline)
 */
export function createAsks({ timeoutMs, page, notify, panelShows, tabInView, showTab, emit, random = () => crypto.randomUUID().slice(0, 12) }) {
  /** @type {Map<string, Pending>} */
  const pending = new Map();

  /** Ask in the page in view and with a notification, both withdrawn once any answer comes. @param {Pending} entry */
  function raiseElsewhere(entry) {
    if (entry.elsewhere) return;
    const elsewhere = new AbortController();
    entry.elsewhere = elsewhere;
    const left = Math.max(0, entry.deadline - Date.now());
    const { card } = entry;
    const view = { ...card, session_id: entry.sessionId, deadline: entry.deadline };
    void tabInView(entry.sessionId)
      .then((tabId) => page.askApproval(tabId ?? entry.tabId, { requestId: entry.id, sessionId: entry.sessionId, view, timeoutMs: left, signal: elsewhere.signal }))
      .then((answer) => (answer === "allow" || answer === "deny") && entry.settle(answer, page.answeredVia?.(entry.id) ?? "page"))
      .catch(() => {});
    void notify
      .ask(
        {
          id: `tabpilot-${entry.id}`,
          title: "Allow this action?",
          message: `${card.title}: ${card.target}`.slice(0, 300),
          contextMessage: card.site ? `on ${card.site} · no answer means no` : "no answer means no",
          buttons: ["Allow", "Deny"],
        },
        { timeoutMs: left, signal: elsewhere.signal, onClick: () => showTab(entry.tabId) },
      )
      .then((answer) => (answer === 0 ? entry.settle("allow", "notification") : answer === 1 || answer === "closed" ? entry.settle("deny", "notification") : undefined))
      .catch(() => {});
  }

  return {
    /**
     * Ask the person about one action and wait. Resolves on Allow (with whether they chose Always);
     * rejects with `permission_denied` (user_declined or approval_timeout) or the abort's reason.
     * @param {{sessionId: string, conversationId: string, tabId: number, card: Card}} request
     * @param {{signal: AbortSignal, progress: (payload: Record<string, unknown>) => void}} call
     *   the tool call that waits (a download, which no call waits for, passes a signal of its own)
     * @returns {Promise<{always: boolean}>}
     */
    async ask({ sessionId, conversationId, tabId, card }, { signal, progress }) {
      if (signal.aborted) throw signal.reason;
      const waitMs = await timeoutMs();
      const id = `ap-${random()}`;
      const deadline = Date.now() + waitMs;
      return new Promise((resolve, reject) => {
        const timer = setTimeout(() => entry.settle("timeout", "timeout"), waitMs);
        const onAbort = () => entry.settle("stopped", "stop");
        /** @type {Pending} */
        const entry = {
          id,
          sessionId,
          conversationId,
          tabId,
          card,
          deadline,
          elsewhere: null,
          settle(outcome, via, always = false) {
            if (pending.get(id) !== entry) return;
            pending.delete(id);
            clearTimeout(timer);
            signal.removeEventListener("abort", onAbort);
            entry.elsewhere?.abort();
            emit("chat.approval", { session_id: sessionId, conversation_id: conversationId, approval_id: id, state: "answered", decision: outcome, via, always });
            if (outcome === "allow") return resolve({ always });
            if (outcome === "stopped") return reject(signal.reason);
            if (outcome === "deny") {
              return reject(new RpcError("permission_denied", said`the person declined (user_declined): ${card.title.toLowerCase()} (${fromPage(card.target)})`, "user_declined", { hint: DECLINED_HINT, rule: card.rule }));
            }
            const why = outcome === "tab_closed" ? "the tab closed before anyone answered" : `nobody answered within ${Math.round(waitMs / 1000)} s`;
            reject(new RpcError("permission_denied", said`not allowed (approval_timeout): ${why} (${card.title.toLowerCase()}: ${fromPage(card.target)})`, "approval_timeout", {
              hint: "no answer is a no; ask the person in your reply instead of trying again",
              rule: card.rule,
            }));
          },
        };
        pending.set(id, entry);
        signal.addEventListener("abort", onAbort, { once: true });
        emit("chat.approval", { session_id: sessionId, conversation_id: conversationId, approval_id: id, state: "asked", ...card, deadline });
        progress({ waiting: "approval", deadline_ms: waitMs });
        if (!panelShows(conversationId)) raiseElsewhere(entry);
      });
    },

    /**
     * A person's answer from the side panel showing the card's conversation; false when there is no
     * such card (already answered, or another conversation's).
     * @param {string} approvalId @param {Decision} decision @param {{conversationId: string, always?: boolean}} from
     */
    answer(approvalId, decision, { conversationId, always = false }) {
      const entry = pending.get(approvalId);
      if (!entry || entry.conversationId !== conversationId || (decision !== "allow" && decision !== "deny")) return false;
      entry.settle(decision, "panel", decision === "allow" && always && entry.card.always);
      return true;
    },

    /** No side panel shows this conversation any more: its cards go to the page and a notification. @param {string} conversationId */
    panelGone(conversationId) {
      for (const entry of pending.values()) if (entry.conversationId === conversationId) raiseElsewhere(entry);
    },

    /** The tab an asking action is for closed: its cards are a no. @param {number} tabId */
    tabClosed(tabId) {
      for (const entry of [...pending.values()]) if (entry.tabId === tabId) entry.settle("tab_closed", "tab");
    },

    /** The cards waiting now (for tests and the options page). */
    pending() {
      return [...pending.values()].map((e) => ({ approval_id: e.id, conversation_id: e.conversationId, tab_id: e.tabId, ...e.card }));
    },
  };
}
