// @ts-check
// The worker's end of the side panel: takes ports only from the extension's own panel page, answers its
// requests (most go on to the daemon's chat.* methods), fans each conversation's events out to the
// panels watching it, and re-attaches them after the daemon link comes back.
// The daemon holds every stream; what lives here is only routing, rebuilt from the panels' own
// `since_seq` after a worker restart (module state does not survive one).
import { RpcError } from "../link/protocol.js";
import { fenceMessage, ATTACHMENT_KINDS } from "./fence.js";
import { createBindings } from "./bindings.js";
import { createTurns } from "./turns.js";
import { PANEL_PORT, PANEL_PAGE } from "./names.js";

export { PANEL_PORT, PANEL_PAGE };

/** How long a request waits for the daemon link before it says the link is down. */
const LINK_WAIT_MS = 5_000;
/** Connection states in which the daemon answers (link/connection.js). */
const UP = new Set(["connected", "version_skew"]);

/**
 * @typedef {{postMessage(m: unknown): void, onMessage: {addListener(fn: (m: any) => void): void},
 *   onDisconnect: {addListener(fn: () => void): void}, disconnect(): void, name: string,
 *   sender?: {id?: string, url?: string, origin?: string}}} Port
 * @typedef {{last: number, pending: any[] | null}} Watch what a port has been sent of one conversation
 * @typedef {{id?: number, windowId?: number, url?: string, pendingUrl?: string, title?: string}} Tab
 */

/** @param {unknown} err */
function wireError(err) {
  const e = /** @type {any} */ (err);
  const reason = e?.reason ?? e?.data?.reason;
  const hint = e?.data?.hint;
  return {
    code: typeof e?.code === "string" ? e.code : "protocol_error",
    message: e instanceof Error ? e.message : String(err),
    ...(typeof reason === "string" ? { reason } : {}),
    ...(typeof hint === "string" ? { hint } : {}),
  };
}

/**
 * Is this port one of our own panel pages (the side panel, or the page popped out in a tab)? A content
 * script's port carries the web page's URL, and web pages cannot reach us at all (no
 * externally_connectable), so the URL and origin are what tell them apart.
 * @param {Port} port @param {{id: string, getURL(path: string): string}} runtime
 */
export function isPanelPort(port, runtime) {
  if (port.name !== PANEL_PORT) return false;
  const sender = port.sender ?? {};
  if (sender.id !== runtime.id) return false;
  const page = runtime.getURL(PANEL_PAGE);
  const url = sender.url ?? "";
  if (url !== page && !url.startsWith(`${page}?`) && !url.startsWith(`${page}#`)) return false;
  const origin = runtime.getURL("").replace(/\/$/, "");
  return sender.origin === undefined || sender.origin === origin;
}

/**
 * @param {{
 *   runtime: {id: string, getURL(path: string): string, onConnect: {addListener(fn: (port: Port) => void): void}},
 *   connection: {request(method: string, params: Record<string, unknown>): Promise<any>,
 *     onEvent(fn: (name: string, payload: any) => void): () => void, onChange(fn: () => void): () => void,
 *     status(): {state: string, lastError: string | null}, emit(name: string, payload: Record<string, unknown>): void},
 *   tabs: {get(tabId: number): Promise<Tab>, onRemoved: {addListener(fn: (tabId: number) => void): void}},
 *   storage: import("../link/config.js").StorageArea,
 *   admit: (tab: Tab & {id: number}) => Promise<void>,
 *   attachments: {page(tabId: number): Promise<{text: string, url: string, title: string}>,
 *     selection(tabId: number): Promise<string>, screenshot(tabId: number): Promise<string>},
 *   approvals?: {answer(approvalId: string, decision: string, from: {conversationId: string, always?: boolean}): boolean,
 *     panelGone(conversationId: string): void},
 *   hidden?: {list(): {requestId: string, kind: string}[], onChange(fn: () => void): () => void},
 *   timers?: {setTimeout: typeof setTimeout, clearTimeout: typeof clearTimeout},
 *   log?: Pick<Console, "warn">,
 * }} deps
 *   approvals: the cards of this conversation's agent actions; a panel showing it answers them
 *   hidden: the questions pages hide from the person (person/hidden-asks.js): a panel says so on those cards
 */
export function createPanelBridge({ runtime, connection, tabs, storage, admit, attachments, approvals, hidden, timers = globalThis, log = console }) {
  /** @type {Map<string, Map<Port, Watch>>} conversation id → the ports watching it */
  const watchers = new Map();
  /** @type {Set<Port>} */
  const ports = new Set();
  /** @type {Set<() => void>} */
  const changeListeners = new Set();
  const bindings = createBindings({ storage, log });
  const turns = createTurns({ storage, log });
  const isUp = () => UP.has(connection.status().state);
  let wasUp = isUp();

  // Registered in the worker's first turn, like every listener that may wake it.
  tabs.onRemoved.addListener((tabId) => void onTabRemoved(tabId));
  connection.onEvent((name, payload) => {
    if (name === "chat.event") onChatEvent(payload);
  });
  connection.onChange(() => {
    const up = isUp();
    const status = connection.status();
    for (const port of ports) post(port, { push: "status", link: { state: status.state, error: status.lastError } });
    if (up && !wasUp) void reattachAll();
    wasUp = up;
    changed();
  });

  function changed() {
    for (const fn of [...changeListeners]) fn();
  }

  /** The approval cards a page keeps from their natural size (an approval's card is asked by its id). */
  const hiddenCards = () => ({ push: "hidden", approval_ids: (hidden?.list() ?? []).filter((a) => a.kind === "approve").map((a) => a.requestId) });
  hidden?.onChange(() => {
    const message = hiddenCards();
    for (const port of ports) post(port, message);
  });

  /** @param {Port} port @param {unknown} message */
  function post(port, message) {
    try {
      port.postMessage(message);
    } catch {
      drop(port);
    }
  }

  /** @param {Port} port @param {any} event @param {Watch} watch */
  function deliver(port, event, watch) {
    if (typeof event?.seq !== "number" || event.seq <= watch.last) return;
    watch.last = event.seq;
    post(port, { push: "event", conversation_id: event.conversation_id, event });
  }

  /** @param {any} event */
  function onChatEvent(event) {
    const cid = event?.conversation_id;
    if (event?.kind === "turn_start" || event?.kind === "turn_end") changed();
    const watching = typeof cid === "string" ? watchers.get(cid) : undefined;
    if (!watching) return;
    for (const [port, watch] of watching) {
      if (watch.pending) watch.pending.push(event);
      else deliver(port, event, watch);
    }
  }

  /** Resolves when the daemon link is authenticated, or fails after LINK_WAIT_MS. */
  function linkUp() {
    if (isUp()) return Promise.resolve();
    return new Promise((resolve, reject) => {
      const off = connection.onChange(() => {
        if (!isUp()) return;
        off();
        timers.clearTimeout(timer);
        resolve(undefined);
      });
      const timer = timers.setTimeout(() => {
        off();
        reject(new RpcError("no_browser_connected", "tabpilot's daemon is not connected", "browser_disconnected", {
          hint: "start it with `tabpilot daemon start`, or pair this browser in the toolbar popup",
        }));
      }, LINK_WAIT_MS);
    });
  }

  /** @param {string} method @param {Record<string, unknown>} params */
  async function daemon(method, params) {
    await linkUp();
    return connection.request(method, params);
  }

  /** The tab, refused when it is closed or on a blocked site. @param {unknown} tabId */
  async function usableTab(tabId) {
    if (!Number.isInteger(tabId)) throw new RpcError("invalid_params", "tab_id must be a tab id");
    const tab = await tabs.get(/** @type {number} */ (tabId)).catch(() => null);
    if (!tab || tab.id === undefined) throw new RpcError("not_found", `tab ${tabId} is closed`, "unknown_tab");
    await admit(/** @type {Tab & {id: number}} */ (tab));
    return /** @type {Tab & {id: number}} */ (tab);
  }

  /** @param {Port} port @param {string} cid @param {number} since */
  async function attach(port, cid, since) {
    let watching = watchers.get(cid);
    if (!watching) watchers.set(cid, (watching = new Map()));
    // A port already watching may have been sent events after the `since` it asks from, so part of a
    // run of text deltas: a folded run would show that part twice. Only a port's first attach is folded
    // (fewer bytes, one write in the page); reattachAll serves ports at different points, unfolded too.
    const fold = !watching.has(port);
    // Live events that arrive while the backlog is on its way wait behind it.
    /** @type {Watch} */
    const watch = { last: since, pending: [] };
    watching.set(port, watch);
    try {
      const reply = await daemon("chat.attach", { conversation_id: cid, since_seq: since, fold });
      const backlog = (reply.events ?? []).filter((/** @type {any} */ e) => e.seq > since);
      if (backlog.length) watch.last = backlog.at(-1).seq;
      const pending = watch.pending ?? [];
      watch.pending = null;
      return { ...reply, events: backlog, after: () => pending.forEach((e) => deliver(port, e, watch)) };
    } catch (err) {
      watching.delete(port);
      if (watching.size === 0) watchers.delete(cid);
      throw err;
    }
  }

  /** @param {Port} port @param {string} cid */
  function detach(port, cid) {
    const watching = watchers.get(cid);
    if (!watching?.delete(port) || watching.size > 0) return;
    watchers.delete(cid);
    // Nobody sees this conversation's cards in a panel now: they go to the page and a notification.
    approvals?.panelGone(cid);
    if (isUp()) connection.request("chat.detach", { conversation_id: cid }).catch(() => {});
  }

  /** The daemon forgot who watched what when the link dropped: tell it again, from what each panel has. */
  async function reattachAll() {
    for (const [cid, watching] of watchers) {
      const since = Math.min(...[...watching.values()].map((w) => w.last));
      try {
        const reply = await connection.request("chat.attach", { conversation_id: cid, since_seq: since });
        for (const event of reply.events ?? []) for (const [port, watch] of watching) deliver(port, event, watch);
      } catch (err) {
        log.warn(`tabpilot: re-attaching conversation ${cid} failed`, err);
      }
    }
  }

  /** @param {number} tabId */
  async function onTabRemoved(tabId) {
    const cid = await bindings.unbindTab(tabId);
    if (cid === null) return;
    // The daemon stops the run and keeps the transcript for History.
    connection.emit("chat.tab_closed", { conversation_id: cid, tab_id: tabId });
    changed();
  }

  /** @param {number} tabId @param {Record<string, unknown>} params */
  async function gather(tabId, params) {
    const wanted = Array.isArray(params.attach) ? params.attach.filter((k) => ATTACHMENT_KINDS.includes(k)) : [];
    /** @type {{kind: "page" | "selection", text: string, url?: string, title?: string}[]} */
    const fenced = [];
    /** @type {{kind: string, media_type: string, data: string}[]} */
    const images = [];
    for (const kind of new Set(wanted)) {
      if (kind === "page") fenced.push({ kind: "page", ...(await attachments.page(tabId)) });
      else if (kind === "selection") {
        const text = await attachments.selection(tabId);
        if (text.trim() === "") throw new RpcError("invalid_params", "nothing is selected on the page", undefined, { hint: "select some text first" });
        fenced.push({ kind: "selection", text });
      } else images.push({ kind: "screenshot", media_type: "image/png", data: await attachments.screenshot(tabId) });
    }
    return { fenced, images };
  }

  /** @type {Record<string, (port: Port, params: Record<string, any>) => Promise<any>>} */
  const ops = {
    async status() {
      const s = connection.status();
      return { link: { state: s.state, error: s.lastError } };
    },
    async agents() {
      return daemon("agent.list", {});
    },
    /** What the panel shows for a tab: its conversation (if any) and whether it may be used. */
    async tab(_port, { tab_id }) {
      const tab = await tabs.get(tab_id).catch(() => null);
      if (!tab) throw new RpcError("not_found", `tab ${tab_id} is closed`, "unknown_tab");
      const blocked = await admit(/** @type {Tab & {id: number}} */ (tab)).then(() => null, (err) => wireError(err));
      return { tab_id, url: tab.url || tab.pendingUrl || "", title: tab.title ?? "", blocked, conversation_id: await bindings.ofTab(tab_id) };
    },
    async start(_port, { tab_id, agent, workspace, conversation_id }) {
      const tab = await usableTab(tab_id);
      /** @type {Record<string, unknown>} */
      const params = { tab_id: tab.id, window_id: tab.windowId, url: tab.url ?? "", title: tab.title ?? "", agent, workspace: workspace ?? null };
      // Reopening from History binds the earlier conversation to this tab.
      if (typeof conversation_id === "string") params.conversation_id = conversation_id;
      const started = await daemon("chat.start", params);
      await bindings.bind(tab.id, started.conversation_id);
      changed();
      return started;
    },
    async send(_port, { conversation_id, text, client_msg_id, ...rest }) {
      if (typeof text !== "string" || text.trim() === "") throw new RpcError("invalid_params", "type a message first");
      const tabId = await bindings.tabOf(conversation_id);
      if (tabId === null) throw new RpcError("not_found", "this conversation is not bound to an open tab", "unknown_tab", { hint: "open it from History on a tab" });
      const tab = await usableTab(tabId);
      const { fenced, images } = await gather(tabId, rest);
      await turns.started(conversation_id, tab.url || tab.pendingUrl, text);
      /** @type {Record<string, unknown>} */
      const params = { conversation_id, text: fenceMessage(text, fenced), client_msg_id };
      if (images.length) params.attachments = images;
      return daemon("chat.send", params);
    },
    async stop(_port, { conversation_id }) {
      return daemon("chat.stop", { conversation_id });
    },
    /** By conversation, or by tab (whatever is bound to it: asked beside `tab`, it saves the panel a round trip). */
    async attach(port, { conversation_id, tab_id, since_seq }) {
      const cid = conversation_id ?? (Number.isInteger(tab_id) ? await bindings.ofTab(tab_id) : undefined);
      if (cid === null) return { conversation_id: null, events: [], running: false };
      if (typeof cid !== "string") throw new RpcError("invalid_params", "conversation_id must be a string");
      return attach(port, cid, Number.isSafeInteger(since_seq) && since_seq >= 0 ? since_seq : 0);
    },
    async detach(port, { conversation_id }) {
      detach(port, conversation_id);
      return { detached: true };
    },
    async history() {
      return daemon("chat.list", {});
    },
    /** The person answers a card of an agent's action (only from a panel showing its conversation). */
    async answer(port, { conversation_id, approval_id, decision, always }) {
      if (!watchers.get(conversation_id)?.has(port)) throw new RpcError("invalid_params", "this panel does not show that conversation");
      const answered = approvals?.answer(String(approval_id), String(decision), { conversationId: conversation_id, always: always === true }) ?? false;
      return { answered };
    },
    /** The person answers the agent CLI's own question (may it run this tool?): the daemon relays it. */
    async permit(port, { conversation_id, permission_id, decision }) {
      if (!watchers.get(conversation_id)?.has(port)) throw new RpcError("invalid_params", "this panel does not show that conversation");
      return daemon("chat.answer", { conversation_id, permission_id, decision });
    },
    async delete(port, { conversation_id }) {
      detach(port, conversation_id);
      await bindings.forget(conversation_id);
      await turns.forget(conversation_id);
      return daemon("chat.delete", { conversation_id });
    },
  };

  /** @param {Port} port */
  function drop(port) {
    if (!ports.delete(port)) return;
    for (const cid of [...watchers.keys()]) detach(port, cid);
  }

  runtime.onConnect.addListener((port) => {
    if (port.name !== PANEL_PORT) return;
    if (!isPanelPort(port, runtime)) {
      log.warn("tabpilot: refused a side-panel port from", port.sender?.url);
      port.disconnect();
      return;
    }
    ports.add(port);
    port.onDisconnect.addListener(() => drop(port));
    if (hidden) post(port, hiddenCards());
    port.onMessage.addListener(async (message) => {
      const id = message?.id;
      const op = Object.hasOwn(ops, message?.op) ? ops[message.op] : null;
      if (op === null) return post(port, { id, error: { code: "unknown_method", message: `no panel operation ${message?.op}` } });
      try {
        const result = await op(port, message.params ?? {});
        const after = result?.after;
        if (after) delete result.after;
        post(port, { id, result });
        after?.();
      } catch (err) {
        post(port, { id, error: wireError(err) });
      }
    });
  });

  return {
    /** Does a side panel show this conversation now? @param {string} cid */
    shows(cid) {
      return (watchers.get(cid)?.size ?? 0) > 0;
    },
    /**
     * The conversation bound to a tab and its turn's sites (null: none). A conversation whose sites
     * are unknown is confined to the tab's own site: nothing widens a turn by being forgotten.
     * @param {number} tabId
     */
    async turnOfTab(tabId) {
      const cid = await bindings.ofTab(tabId);
      if (cid === null) return null;
      return { conversationId: cid, ...((await turns.of(cid)) ?? { scope: { sites: [], unconfined: false }, start: null }) };
    },
    /** For the popup: the conversations the daemon keeps, the running ones first. */
    async conversations() {
      if (!isUp()) return [];
      const { conversations = [] } = await connection.request("chat.list", {}).catch(() => ({}));
      return conversations;
    },
    /** Stop every running side-panel turn (the popup's Stop all). */
    async stopAll() {
      if (!isUp()) return;
      const { conversations = [] } = await connection.request("chat.list", {}).catch(() => ({}));
      await Promise.all(
        conversations.filter((/** @type {any} */ c) => c.running).map((/** @type {any} */ c) => connection.request("chat.stop", { conversation_id: c.conversation_id }).catch(() => {})),
      );
    },
    /** @param {string} cid */
    stop(cid) {
      return connection.request("chat.stop", { conversation_id: cid });
    },
    /** @param {() => void} fn @returns {() => void} */
    onChange(fn) {
      changeListeners.add(fn);
      return () => changeListeners.delete(fn);
    },
  };
}
