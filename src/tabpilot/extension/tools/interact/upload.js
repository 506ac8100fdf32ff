// @ts-check
// tool.upload: hand files (read by the daemon) to a file input, a drop zone, or whatever opens a file chooser.
//
// DOM.setFileInputFiles is refused ("Not allowed") under chrome.debugger in a person's own profile, so
// the page gets File objects built from the bytes, set on the input through a DataTransfer with the
// input and change events a pick fires. A target that is not a file input (nor holds one) is tried as
// a drop zone (it accepts a drag of files: drop it), then as a button that opens a file chooser: the
// chooser is intercepted (Page.setInterceptFileChooserDialog) and its input gets the files.
import { RpcError, said } from "../../link/protocol.js";
import { requireString } from "../../link/params.js";
import { actionable, release, saidName } from "../../page/actionability.js";
import { click } from "../../page/input.js";
import { beginAction, finishAction, targetInfo } from "../../page/action.js";
import { approve } from "../../approval/gate.js";

const UPLOAD_TIMEOUT_MS = 30000;
/** How long a click gets to open a file chooser. */
const CHOOSER_WAIT_MS = 2000;

/**
 * In the page: give the files to the file input `this` stands for (itself, its label's control, or the
 * only one inside it) — or, with how "drop", drop them on `this` if it takes a drop of files.
 * @this {Element}
 * @param {{name: string, type: string, last_modified: number, data: string}[]} files
 * @param {"input" | "drop"} how
 */
function deliverInPage(files, how) {
  const el = /** @type {any} */ (this);
  const isFileInput = (/** @type {any} */ n) => n && n.localName === "input" && n.type === "file";
  let input = isFileInput(el) ? el : el.localName === "label" && isFileInput(el.control) ? el.control : null;
  if (!input) {
    const inside = el.querySelectorAll('input[type="file"]');
    if (inside.length === 1) input = inside[0];
  }
  const transfer = () => {
    const dt = new DataTransfer();
    for (const f of files) {
      const bin = atob(f.data);
      const bytes = new Uint8Array(bin.length);
      for (let i = 0; i < bin.length; i++) bytes[i] = bin.charCodeAt(i);
      dt.items.add(new File([bytes], f.name, { type: f.type, lastModified: f.last_modified }));
    }
    return dt;
  };
  if (how === "input") {
    if (!input) return { kind: "other" };
    if (input.disabled) return { error: "disabled" };
    if (files.length > 1 && !input.multiple) return { error: "single" };
    input.files = transfer().files;
    input.dispatchEvent(new Event("input", { bubbles: true, composed: true }));
    input.dispatchEvent(new Event("change", { bubbles: true }));
    return { kind: "input", received: input.files.length };
  }
  // A drop zone says so by cancelling dragover; then the drop carries the files.
  const r = el.getBoundingClientRect();
  const at = { clientX: r.left + r.width / 2, clientY: r.top + r.height / 2 };
  const dt = transfer();
  const fire = (/** @type {string} */ type) => el.dispatchEvent(new DragEvent(type, { bubbles: true, cancelable: true, composed: true, dataTransfer: dt, ...at }));
  fire("dragenter");
  if (fire("dragover")) {
    fire("dragleave");
    return { kind: "other" };
  }
  fire("drop");
  return { kind: "drop", received: dt.files.length };
}

const DELIVER = deliverInPage.toString();

/** @param {unknown} raw */
function filesOf(raw) {
  const ok = Array.isArray(raw) && raw.length > 0 && raw.every((f) => f && typeof f.name === "string" && typeof f.data === "string");
  if (!ok) throw new RpcError("invalid_params", "files must be a list of {name, type, data}: the daemon fills it from paths");
  return /** @type {{name: string, path?: string, type: string, size: number, last_modified: number, data: string}[]} */ (raw);
}

/** @param {import("../../link/protocol.js").Said} name @param {any} failed */
function deliveryError(name, failed) {
  if (failed.error === "single") {
    return new RpcError("invalid_params", said`${name} takes one file`, "too_many_files", { hint: "Upload one file to it, or use an input that takes several." });
  }
  return new RpcError("timeout", said`${name} is disabled`, "element_disabled", { hint: "Do what the page needs first, then retry." });
}

/** @type {import("../../link/dispatcher.js").Handler} */
export async function upload(params, ctx) {
  const raw = requireString(params, "target");
  const files = filesOf(params.files);
  const action = await beginAction(params, ctx, { defaultTimeoutMs: UPLOAD_TIMEOUT_MS });
  const { signal } = ctx;
  const common = { timeoutMs: action.timeoutMs, deadline: action.deadline, signal };
  // A file input is often hidden behind a styled button: attached is enough to give it files.
  const target = await actionable(ctx, action.tabId, raw, { ...common, visible: false, label: true });
  const info = targetInfo(target);
  const summary = files.map((f) => ({ name: f.name, size: f.size, type: f.type }));
  const pageFiles = files.map(({ path, ...file }) => file);
  const done = (/** @type {string} */ via, /** @type {object} */ extra = {}) =>
    finishAction(ctx, params, action.tabId, { tab_id: action.tabId, target: info, via, files: summary, ...extra });
  try {
    // The card names each file by the path it was read from; the page gets only its name.
    const what = { action: "upload", target: `${files.map((f) => f.path ?? f.name).join(", ")} into ${info.name}` };
    if (await approve(ctx, action.sessionId, action.tabId, what)) action.deadline = Date.now() + action.timeoutMs;
    for (const how of /** @type {const} */ (["input", "drop"])) {
      const delivered = await ctx.frames.callOn(target.frame, target.objectId, DELIVER, [pageFiles, how]);
      if (delivered.error) throw deliveryError(saidName(target), delivered);
      if (delivered.kind !== "other") return done(delivered.kind);
    }
    return done("chooser", { input: await throughChooser(ctx, action, raw, pageFiles, common) });
  } finally {
    release(ctx, target);
  }
}

/**
 * Click the target with the file chooser intercepted, and give the files to the input that asked.
 * @param {Record<string, any>} ctx
 * @param {{tabId: number, send: import("../../page/input.js").Send}} action
 * @param {string} raw
 * @param {any[]} files
 * @param {{timeoutMs: number, deadline: number, signal?: AbortSignal}} common
 */
async function throughChooser(ctx, action, raw, files, common) {
  /** @type {(value: {sessionId: string | null, frameId: string, backendNodeId: number}) => void} */
  let chosen = () => {};
  /** @type {Promise<{sessionId: string | null, frameId: string, backendNodeId: number}>} */
  const opened = new Promise((resolve) => (chosen = resolve));
  const off = ctx.cdp.onEvent(
    action.tabId,
    (/** @type {string} */ method, /** @type {any} */ p, /** @type {number} */ _tab, /** @type {string | null} */ sessionId) => {
      if (method === "Page.fileChooserOpened" && p.backendNodeId) chosen({ sessionId, frameId: p.frameId, backendNodeId: p.backendNodeId });
    },
    { children: true },
  );
  const sessions = [null, ...ctx.cdp.childSessions(action.tabId).map((/** @type {{sessionId: string}} */ c) => c.sessionId)];
  const intercept = (/** @type {boolean} */ enabled) =>
    Promise.all(sessions.map((s) => ctx.cdp.sendToSession(action.tabId, s, "Page.setInterceptFileChooserDialog", { enabled }).catch(() => {})));
  await intercept(true);
  try {
    const button = await actionable(ctx, action.tabId, raw, { ...common, pointer: true });
    release(ctx, button);
    await click(action.send, button.point);
    const which = await Promise.race([opened, new Promise((r) => setTimeout(() => r(null), CHOOSER_WAIT_MS))]);
    if (!which) {
      throw new RpcError("invalid_params", said`${saidName(button)} is not a file input, a drop zone, nor opens a file chooser`, "not_a_file_input", {
        hint: "Point at the file input, its label or button, or the drop zone (`tabpilot find` shows them).",
      });
    }
    const frame = { tabId: action.tabId, sessionId: which.sessionId, frameId: which.frameId };
    const contextId = await ctx.frames.agentWorld(frame);
    const { object } = await ctx.frames.send(frame, "DOM.resolveNode", { backendNodeId: which.backendNodeId, executionContextId: contextId });
    try {
      const delivered = await ctx.frames.callOn(frame, object.objectId, DELIVER, [files, "input"]);
      if (delivered.error) throw deliveryError(saidName(button), delivered);
      const label = await ctx.frames.callOn(frame, object.objectId, "function () { return this.id ? `input#${this.id}` : 'a file input'; }");
      return label;
    } finally {
      void ctx.frames.send(frame, "Runtime.releaseObject", { objectId: object.objectId }).catch(() => {});
    }
  } finally {
    off();
    await intercept(false);
  }
}
