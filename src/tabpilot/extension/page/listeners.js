// @ts-check
// The page's click listeners, told to a frame's snapshot agent before a snapshot. They live in the
// page's own world, out of the agent's reach: CDP's DOMDebugger.getEventListeners reads them. The
// whole document the first time; after that, only the elements added since the last read (new
// elements bring their listeners; the agent watches the DOM), and nothing when none were.
import { AGENT } from "../browser/frames.js";

/** Listener types that make an element something a person clicks. */
const CLICK_TYPES = new Set(["click", "mousedown", "mouseup", "pointerdown", "pointerup", "touchstart", "touchend", "dblclick"]);
/** At most this many newly listened elements are resolved per read (the rest at the next one). */
const MAX_NEW_LISTENERS = 400;
/** CDP objects made while reading, and while telling the agent, released together. */
const GROUP = "tabpilot-listeners";
const TOLD = "tabpilot-listeners-told";

/**
 * @typedef {import("../browser/frames.js").FrameHandle} FrameHandle
 * @param {{frames: ReturnType<typeof import("../browser/frames.js").createFrames>}} deps
 */
export function createListeners({ frames }) {
  /** Frames with listeners left to resolve: read again next time, changed or not. @type {Set<string>} */
  const behind = new Set();

  /**
   * The click listeners in a node's subtree, read on the node as the page's own world sees it: without
   * `pierce` (which also walks the user-agent shadow roots of form controls, and was seen to hang
   * the renderer at a later navigation) getEventListeners reports the listeners of the object's world
   * only, so each root is resolved in the main world first.
   * @param {FrameHandle} frame @param {string} objectId a node in the agent's world
   */
  async function readRoot(frame, objectId) {
    const described = frames.send(frame, "DOM.describeNode", { objectId });
    void described.finally(() => frames.send(frame, "Runtime.releaseObject", { objectId })).catch(() => {});
    const { node } = await described;
    const { object } = await frames.send(frame, "DOM.resolveNode", { backendNodeId: node.backendNodeId, objectGroup: GROUP });
    const { listeners } = await frames.send(frame, "DOMDebugger.getEventListeners", { objectId: object.objectId, depth: -1 });
    return /** @type {{type: string, backendNodeId?: number}[]} */ (listeners);
  }

  /**
   * Reads the click listeners of what the agent hands out (the document, or what was added to it) and
   * tells the agent about the elements that are new to it.
   * @param {FrameHandle} frame
   */
  async function listen(frame) {
    const key = `${frame.tabId}|${frame.sessionId ?? ""}|${frame.frameId}`;
    const force = behind.delete(key);
    /** @type {number[]} */
    let ids = [];
    try {
      // (one node comes as itself, which spares listing the array's items)
      const list = await frames.evaluate(frame, `(r => r && r.length === 1 ? r[0] : r)(${AGENT}.listenRoots(${force}))`, { returnByValue: false });
      if (!list?.objectId) return;
      /** @type {string[]} */
      let roots = [list.objectId];
      if (list.subtype === "array") {
        const { result } = await frames.send(frame, "Runtime.getProperties", { objectId: list.objectId, ownProperties: true });
        void frames.send(frame, "Runtime.releaseObject", { objectId: list.objectId }).catch(() => {});
        roots = result.filter((/** @type {any} */ p) => /^\d+$/.test(p.name) && p.value?.objectId).map((/** @type {any} */ p) => p.value.objectId);
      }
      const read = await Promise.all(roots.map((/** @type {string} */ objectId) => readRoot(frame, objectId).catch(() => [])));
      ids = [...new Set(read.flat().filter((l) => CLICK_TYPES.has(l.type) && l.backendNodeId).map((l) => l.backendNodeId))];
    } finally {
      void frames.send(frame, "Runtime.releaseObjectGroup", { objectGroup: GROUP }).catch(() => {});
    }
    if (ids.length > MAX_NEW_LISTENERS) {
      // (a first read of a large page: the agent says which it knows already, the rest comes next time)
      ids = await frames.evaluate(frame, `${AGENT}.unheard(${JSON.stringify(ids)})`);
      if (ids.length > MAX_NEW_LISTENERS) behind.add(key);
    }
    await tell(frame, ids.slice(0, MAX_NEW_LISTENERS));
  }

  /** Resolves the listened elements in the agent's world and hands them over. @param {FrameHandle} frame @param {number[]} fresh */
  async function tell(frame, fresh) {
    if (!fresh.length) return;
    const contextId = await frames.agentWorld(frame);
    const objects = await Promise.all(
      fresh.map((backendNodeId) =>
        frames
          .send(frame, "DOM.resolveNode", { backendNodeId, executionContextId: contextId, objectGroup: TOLD })
          .then((r) => /** @type {string} */ (r.object.objectId), () => null),
      ),
    );
    try {
      await frames.send(frame, "Runtime.callFunctionOn", {
        executionContextId: contextId,
        functionDeclaration: `function (ids, ...nodes) { ${AGENT}.heard(ids, nodes); }`,
        arguments: [{ value: fresh }, ...objects.map((objectId) => (objectId ? { objectId } : { value: null }))],
      });
    } finally {
      void frames.send(frame, "Runtime.releaseObjectGroup", { objectGroup: TOLD }).catch(() => {});
    }
  }

  return { listen };
}
