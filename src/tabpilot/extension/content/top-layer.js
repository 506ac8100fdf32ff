// @ts-check
// Keeps the overlay's host in the browser's top layer, above everything the page draws: a z-index can be
// outdone by the page's own top layer (a modal <dialog>, a popover, a fullscreen element), which is drawn
// over every z-index. The host is a manual popover; whenever the page puts something in the top layer (its
// toggle events reach the window first, in the capture phase, before any page script's listener) or
// takes the host out of it, the host is shown again, which puts it last, on top.
// A modal dialog, and a fullscreen element, make everything outside them inert, the top layer included,
// so while the page has one the host lives inside it (the fullscreen element, else the topmost modal
// dialog; still drawn in the top layer, above it), and goes back under <html> when it closes. A
// fullscreen element that draws no children (a video, a frame, a canvas) cannot hold it: the toolbar's
// Stop is the way then.
// A classic content script loaded before content/overlay.js, in the same isolated world: it leaves one
// frozen function there.
(() => {
  if (window.top !== window) return;

  /** Elements whose children are not drawn. */
  const REPLACED = new Set(["video", "iframe", "img", "canvas", "embed", "object", "audio", "input", "textarea", "select"]);

  /**
   * Keep `host` on top from now on. `rehome` is called when the place the host must live in changed
   * (a modal dialog or fullscreen opened or closed): it puts the host in `home()` and raises it.
   * @param {HTMLElement} host @param {() => void} rehome
   * @returns {{raise(): void, home(): Element | null}}
   */
  function keepOnTop(host, rehome) {
    /** The page's modal dialogs, in the order they opened (the last one blocks the rest of the page). @type {Element[]} */
    const modals = [];

    const raise = () => {
      if (!host.isConnected) return;
      if (host.getAttribute("popover") !== "manual") host.setAttribute("popover", "manual");
      try {
        if (host.matches(":popover-open")) host.hidePopover();
        host.showPopover();
      } catch {
        // Not shown (the document is being torn down): the next toggle or mount tries again.
      }
    };

    const home = () => {
      const full = document.fullscreenElement;
      if (full && !REPLACED.has(full.localName)) return full;
      for (let i = modals.length - 1; i >= 0; i--) {
        if (modals[i].isConnected && modals[i].matches(":modal")) return modals[i];
        modals.splice(i, 1);
      }
      return document.documentElement;
    };

    window.addEventListener(
      "toggle",
      (e) => {
        const { newState } = /** @type {ToggleEvent} */ (e);
        const target = /** @type {Element} */ (e.target);
        if (target === host) {
          if (newState === "closed") raise();
          return;
        }
        if (target.localName === "dialog") {
          const at = modals.indexOf(target);
          if (at !== -1) modals.splice(at, 1);
          if (newState === "open" && target.matches(":modal")) modals.push(target);
          rehome();
        } else if (newState === "open") {
          raise();
        }
      },
      true,
    );
    document.addEventListener("fullscreenchange", rehome, true);
    return { raise, home };
  }

  Object.defineProperty(globalThis, "tabpilotTopLayer", { value: Object.freeze({ keepOnTop }) });
})();
