// Shared by the action fixture pages: what the page received, for tests to read back (window.__events).
window.__events = [];
function record(type, target, extra) {
  const entry = { type, target: target && (target.id || target.getAttribute?.("name") || target.localName), trusted: null, ...extra };
  window.__events.push(entry);
  return entry;
}
// Every event of these kinds that reaches the document, with whether a person (trusted input) caused it.
for (const type of ["click", "dblclick", "contextmenu", "auxclick", "input", "change", "keydown", "keyup", "focusin", "mouseover", "mousedown", "mouseup"]) {
  document.addEventListener(type, (e) => {
    const extra = { trusted: e.isTrusted };
    if (e instanceof KeyboardEvent) Object.assign(extra, { key: e.key, code: e.code, keyCode: e.keyCode, shift: e.shiftKey, ctrl: e.ctrlKey, alt: e.altKey, meta: e.metaKey });
    if (e instanceof MouseEvent) Object.assign(extra, { button: e.button, detail: e.detail, shift: e.shiftKey, ctrl: e.ctrlKey, alt: e.altKey, meta: e.metaKey });
    if (e instanceof InputEvent) Object.assign(extra, { inputType: e.inputType, data: e.data });
    const t = e.composedPath()[0];
    record(type, t instanceof Element ? t : null, extra);
  }, true);
}
