// @ts-check
// The frames of a tab, as one list whatever process they run in, and a way to run code in each of them.
//
// A frame is addressed by a FrameHandle: the tab, the CDP session that owns the frame's document (null
// for the tab's own session; a child session for an out-of-process iframe) and the frame id. Our code
// runs in the frame's "tabpilot" isolated world, where the snapshot agent lives: page scripts can
// neither see nor patch it, and it survives between calls for the life of the document.
import { RpcError, fromPage, said } from "../link/protocol.js";
import { withDeadline } from "../link/deadline.js";
import { pageAgentSource, AGENT_KEY } from "../snapshot/index.js";

export const WORLD_NAME = "tabpilot";
/** The installed agent, as an expression valid in the agent world. */
export const AGENT = `globalThis[Symbol.for(${JSON.stringify(AGENT_KEY)})]`;

/** How long an out-of-process frame may take to list its frames before it is left out. */
const CHILD_TIMEOUT_MS = 1500;
const CONTEXT_GONE = /cannot find context with specified id|execution context was destroyed|inspected target navigated or closed/i;
const OBJECT_GONE = /could not find object with given id|cannot find context with specified id|execution context was destroyed/i;

/**
 * @typedef {{tabId: number, sessionId: string | null, frameId: string}} FrameHandle
 * @typedef {FrameHandle & {parentFrameId: string | null, url: string}} FrameInfo
 * @typedef {{
 *   attach(tabId: number): Promise<void>,
 *   send(tabId: number, method: string, params?: object): Promise<any>,
 *   sendToSession(tabId: number, sessionId: string | null, method: string, params?: object): Promise<any>,
 *   childSessions(tabId: number): {sessionId: string}[],
 *   onEvent(tabId: number | null, fn: (method: string, params: any, tabId: number, sessionId: string | null) => void, options?: {children?: boolean}): () => void,
 *   onDetach(fn: (tabId: number) => void): () => void,
 * }} CdpLike
 */

/** An object argument for callOn (anything else is passed by value). */
class ObjectArg {
  /** @param {string} objectId */
  constructor(objectId) {
    this.objectId = objectId;
  }
}

/** @param {string} objectId */
export function objectArg(objectId) {
  return new ObjectArg(objectId);
}

/** The frame's document went away while we used an object of it. */
function documentGone() {
  return new RpcError("not_found", "the element's document went away (the page navigated or the frame was removed)", "ref_stale", {
    hint: "Take a new snapshot (tabpilot snapshot) and use its refs.",
  });
}

/** @param {any} details CDP Runtime.ExceptionDetails */
function pageScriptError(details) {
  const description = details.exception?.description;
  const text = typeof description === "string" && description ? description.split("\n", 1)[0] : details.text || "exception";
  return new RpcError("cdp_failed", said`tabpilot's in-page code failed: ${fromPage(text)}`);
}

/** @param {unknown} err */
function messageOf(err) {
  return err instanceof Error ? err.message : String(err);
}

/** @param {{cdp: CdpLike}} deps */
export function createFrames({ cdp }) {
  /** Agent world of each frame: key "tab|session|frame" → context id (a promise while being set up). */
  /** @type {Map<string, Promise<number>>} */
  const worlds = new Map();
  /** @type {Map<number, string>} */
  const mainFrames = new Map();

  /** @param {FrameHandle} frame */
  const keyOf = (frame) => `${frame.tabId}|${frame.sessionId ?? ""}|${frame.frameId}`;

  /** @param {(key: string) => boolean} predicate */
  function forget(predicate) {
    for (const key of [...worlds.keys()]) if (predicate(key)) worlds.delete(key);
  }

  cdp.onEvent(
    null,
    (method, params, tabId, sessionId) => {
      const prefix = `${tabId}|${sessionId ?? ""}|`;
      if (method === "Runtime.executionContextDestroyed" || method === "Runtime.executionContextsCleared") {
        // Context ids are only unique per session; a cleared session loses them all.
        const id = params.executionContextId;
        for (const [key, world] of [...worlds]) {
          if (!key.startsWith(prefix)) continue;
          if (id === undefined) worlds.delete(key);
          else void world.then((contextId) => contextId === id && worlds.get(key) === world && worlds.delete(key), () => {});
        }
      } else if (method === "Page.frameNavigated" && params.frame?.id) {
        const frameId = params.frame.id;
        forget((key) => key.startsWith(`${tabId}|`) && key.endsWith(`|${frameId}`));
      }
    },
    { children: true },
  );
  cdp.onDetach((tabId) => {
    mainFrames.delete(tabId);
    forget((key) => key.startsWith(`${tabId}|`));
  });

  /** @param {FrameHandle} frame @param {string} method @param {object} [params] */
  function send(frame, method, params = {}) {
    return cdp.sendToSession(frame.tabId, frame.sessionId, method, params);
  }

  /** @param {number} tabId @returns {Promise<FrameHandle>} */
  async function main(tabId) {
    let frameId = mainFrames.get(tabId);
    if (frameId === undefined) {
      const { frameTree } = await cdp.send(tabId, "Page.getFrameTree");
      frameId = /** @type {string} */ (frameTree.frame.id);
      mainFrames.set(tabId, frameId);
    }
    return { tabId, sessionId: null, frameId };
  }

  /**
   * Every frame of the tab, parents before children (the main frame first), whatever process it runs in.
   * @param {number} tabId
   * @returns {Promise<FrameInfo[]>}
   */
  async function list(tabId) {
    await cdp.attach(tabId);
    const sessions = [null, ...cdp.childSessions(tabId).map((c) => c.sessionId)];
    const trees = await Promise.all(
      sessions.map((sessionId) => {
        const tree = cdp.sendToSession(tabId, sessionId, "Page.getFrameTree");
        if (sessionId === null) return tree.then((reply) => ({ sessionId, tree: reply.frameTree }));
        // A child that went away meanwhile, or whose process is stuck, has no frames to offer.
        return withDeadline(tree, { timeoutMs: CHILD_TIMEOUT_MS }).then((reply) => ({ sessionId, tree: reply.frameTree }), () => null);
      }),
    );
    /** @type {Map<string, FrameInfo>} */
    const byId = new Map();
    /** @type {Map<string, string[]>} */
    const childrenOf = new Map();
    /** @param {any} node @param {string | null} sessionId */
    function collect(node, sessionId) {
      const f = node.frame;
      // A child session's root frame is the out-of-process iframe itself: that session owns it.
      if (!byId.has(f.id) || sessionId !== null) {
        byId.set(f.id, { tabId, sessionId, frameId: f.id, parentFrameId: f.parentId ?? null, url: f.url ?? "" });
      }
      if (f.parentId) {
        const siblings = childrenOf.get(f.parentId) ?? [];
        if (!siblings.includes(f.id)) siblings.push(f.id);
        childrenOf.set(f.parentId, siblings);
      }
      for (const child of node.childFrames ?? []) collect(child, sessionId);
    }
    for (const entry of trees) if (entry) collect(entry.tree, entry.sessionId);
    const rootId = /** @type {any} */ (trees[0]).tree.frame.id;
    mainFrames.set(tabId, rootId);
    /** @type {FrameInfo[]} */
    const ordered = [];
    /** @param {string} id */
    function visit(id) {
      const info = byId.get(id);
      if (!info || ordered.includes(info)) return;
      ordered.push(info);
      for (const child of childrenOf.get(id) ?? []) visit(child);
    }
    visit(rootId);
    // Frames whose parent we could not see (a session still being set up) still count.
    for (const info of byId.values()) if (!ordered.includes(info)) ordered.push(info);
    return ordered;
  }

  /**
   * The context id of the frame's "tabpilot" world, with the snapshot agent installed in it.
   * @param {FrameHandle} frame
   * @returns {Promise<number>}
   */
  function agentWorld(frame) {
    const key = keyOf(frame);
    const known = worlds.get(key);
    if (known) return known;
    const created = (async () => {
      const { executionContextId } = await send(frame, "Page.createIsolatedWorld", {
        frameId: frame.frameId,
        worldName: WORLD_NAME,
        grantUniveralAccess: false,
      });
      const installed = await send(frame, "Runtime.evaluate", {
        expression: `(${pageAgentSource()}, true)`,
        contextId: executionContextId,
        returnByValue: true,
      });
      if (installed.exceptionDetails) throw pageScriptError(installed.exceptionDetails);
      return /** @type {number} */ (executionContextId);
    })();
    worlds.set(key, created);
    created.catch(() => {
      if (worlds.get(key) === created) worlds.delete(key);
    });
    return created;
  }

  /**
   * Runs `attempt` with the frame's agent world; a world that vanished under us (the frame navigated)
   * is made again once.
   * @template T
   * @param {FrameHandle} frame
   * @param {(contextId: number) => Promise<T>} attempt
   */
  async function inWorld(frame, attempt) {
    const contextId = await agentWorld(frame);
    try {
      return await attempt(contextId);
    } catch (err) {
      if (!CONTEXT_GONE.test(messageOf(err))) throw err;
      worlds.delete(keyOf(frame));
      return attempt(await agentWorld(frame));
    }
  }

  /**
   * Evaluates in the frame's agent world. By value: the value; otherwise the CDP RemoteObject.
   * @param {FrameHandle} frame
   * @param {string} expression
   * @param {{returnByValue?: boolean, awaitPromise?: boolean}} [options]
   */
  function evaluate(frame, expression, { returnByValue = true, awaitPromise = false } = {}) {
    return inWorld(frame, async (contextId) => {
      const reply = await send(frame, "Runtime.evaluate", { expression, contextId, returnByValue, awaitPromise });
      if (reply.exceptionDetails) throw pageScriptError(reply.exceptionDetails);
      return returnByValue ? reply.result?.value : reply.result;
    });
  }

  /**
   * Calls a function in the frame's agent world (no `this`) with JSON arguments; its value (promises
   * awaited). The same source every time lets the page reuse its compiled code.
   * @param {FrameHandle} frame
   * @param {string} functionSource
   * @param {unknown[]} [args]
   */
  function call(frame, functionSource, args = []) {
    return inWorld(frame, async (contextId) => {
      const reply = await send(frame, "Runtime.callFunctionOn", {
        functionDeclaration: functionSource,
        executionContextId: contextId,
        arguments: args.map((value) => ({ value })),
        returnByValue: true,
        awaitPromise: true,
      });
      if (reply.exceptionDetails) throw pageScriptError(reply.exceptionDetails);
      return reply.result?.value;
    });
  }

  /**
   * Calls a function with `this` = the object (an element of the frame). Arguments are JSON values, or
   * objectArg(id) for another object of the same world. By value: the value; otherwise the RemoteObject.
   * @param {FrameHandle} frame
   * @param {string} objectId
   * @param {string} functionSource
   * @param {unknown[]} [args]
   * @param {{returnByValue?: boolean, awaitPromise?: boolean}} [options]
   */
  async function callOn(frame, objectId, functionSource, args = [], { returnByValue = true, awaitPromise = false } = {}) {
    let reply;
    try {
      reply = await send(frame, "Runtime.callFunctionOn", {
        objectId,
        functionDeclaration: functionSource,
        arguments: args.map((a) => (a instanceof ObjectArg ? { objectId: a.objectId } : { value: a })),
        returnByValue,
        awaitPromise,
      });
    } catch (err) {
      if (OBJECT_GONE.test(messageOf(err))) throw documentGone();
      throw err;
    }
    if (reply.exceptionDetails) throw pageScriptError(reply.exceptionDetails);
    return returnByValue ? reply.result?.value : reply.result;
  }

  /**
   * Where the frame's viewport starts in the tab's viewport, in CSS pixels: the content boxes of the
   * iframe elements that hold it, added up to the top.
   * @param {FrameHandle} frame
   * @returns {Promise<{x: number, y: number}>}
   */
  async function offset(frame) {
    let x = 0;
    let y = 0;
    if (frame.sessionId === null && frame.frameId === (await main(frame.tabId)).frameId) return { x, y };
    const all = await list(frame.tabId);
    const byId = new Map(all.map((f) => [f.frameId, f]));
    let current = byId.get(frame.frameId);
    if (!current) throw frameGone(frame);
    for (let depth = 0; current.parentFrameId !== null && depth < 32; depth++) {
      const parent = byId.get(current.parentFrameId);
      if (!parent) throw frameGone(frame);
      // The owner element lives in the parent's document, so the parent's session answers for it.
      const { backendNodeId } = await send(parent, "DOM.getFrameOwner", { frameId: current.frameId });
      const contextId = await agentWorld(parent);
      const { object } = await send(parent, "DOM.resolveNode", { backendNodeId, executionContextId: contextId });
      const box = await callOn(parent, object.objectId, CONTENT_ORIGIN);
      void send(parent, "Runtime.releaseObject", { objectId: object.objectId }).catch(() => {});
      x += box.x;
      y += box.y;
      current = parent;
    }
    return { x, y };
  }

  return { main, list, send, agentWorld, evaluate, call, callOn, offset };
}

/** @param {FrameHandle} frame */
function frameGone(frame) {
  return new RpcError("not_found", `frame ${frame.frameId} is no longer in tab ${frame.tabId}`, "frame_detached", {
    tab_id: frame.tabId,
    hint: "The frame was removed or navigated; take a new snapshot and retry.",
  });
}

/** In the page: the top-left of an iframe's content box (inside border and padding) in its viewport. */
const CONTENT_ORIGIN = `function () {
  const r = this.getBoundingClientRect();
  const cs = getComputedStyle(this);
  return { x: r.left + parseFloat(cs.borderLeftWidth) + parseFloat(cs.paddingLeft),
           y: r.top + parseFloat(cs.borderTopWidth) + parseFloat(cs.paddingTop) };
}`;
