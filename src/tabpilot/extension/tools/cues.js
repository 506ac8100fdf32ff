// @ts-check
// Which cue the person sees in the page for each tool (page/cue.js draws it): "element" rings what the
// action resolved (a dot too at a position given), "edge" frames the page (a navigation, a scroll),
// "none" draws nothing (reads, tabs, sessions, settings). Every wire name of tools/index.js has a row, so
// a new tool has to choose.

/** @typedef {"element" | "edge" | "none"} CueKind */

/** @type {Readonly<Record<string, CueKind>>} */
export const CUES = Object.freeze({
  "system.ping": "none",
  "tool.session_start": "none",
  "tool.session_stop": "none",
  "tool.tab_list": "none",
  "tool.tab_create": "none",
  "tool.tab_close": "none",
  "tool.tab_select": "none",
  "tool.tab_borrow": "none",
  "tool.tab_return": "none",
  "tool.navigate": "edge",
  "tool.navigate_back": "edge",
  "tool.navigate_forward": "edge",
  "tool.reload": "edge",
  "tool.evaluate": "none",
  "tool.screenshot": "none",
  "tool.snapshot": "none",
  "tool.find": "none",
  "tool.text": "none",
  "tool.html": "none",
  "tool.console": "none",
  "tool.click": "element",
  "tool.hover": "element",
  "tool.focus": "element",
  "tool.fill": "element",
  "tool.type": "element",
  "tool.press": "none",
  "tool.select": "element",
  "tool.check": "element",
  "tool.scroll": "edge",
  "tool.drag": "element",
  "tool.upload": "element",
  "tool.wait": "none",
  "tool.dialog": "none",
  "tool.request_help": "none",
  "tool.downloads_list": "none",
  "tool.downloads_wait": "none",
  "tool.network_requests": "none",
  "tool.network_request": "none",
  "tool.network_route": "none",
  "tool.network_unroute": "none",
  "tool.network_headers": "none",
  "tool.network_credentials": "none",
  "tool.init_script_add": "none",
  "tool.init_script_list": "none",
  "tool.init_script_remove": "none",
  "tool.cookies": "none",
  "tool.storage": "none",
  "tool.state_save": "none",
  "tool.state_load": "none",
  "tool.emulate": "none",
  "tool.pdf": "none",
});

/** The cue of a wire name; a method without a row draws nothing. @param {string} method @returns {CueKind} */
export function cueOf(method) {
  return Object.hasOwn(CUES, method) ? CUES[method] : "none";
}
