// @ts-check
// Is a prompt frame drawn at its natural size? IntersectionObserver v2 calls a frame visible when the page
// shrinks it with `zoom` (html { zoom: 0.04 } leaves a speck a normal-size bait can sit on) or when the
// visual viewport is pinch-zoomed (the frame is drawn larger, partly off screen), so the prompt asks this
// too before it arms: its rendered box must be its layout box, at a visual scale of 1. A classic content
// script loaded before content/overlay.js, in the same isolated world (the page cannot replace what it
// calls): it leaves one frozen function there.
(() => {
  if (window.top !== window) return;

  /** Rendered and layout sizes may differ by rounding, not more (CSS px). */
  const ROUNDING_PX = 0.5;
  /** A scale this close to 1 is 1. */
  const SCALE_EPSILON = 0.001;

  /** @param {number} n */
  const times = (n) => `×${Number(n.toPrecision(2))}`;

  /**
   * Why the frame is not drawn at its natural size, in the person's words; null when it is.
   * @param {HTMLElement} frame
   * @returns {string | null}
   */
  function shrunk(frame) {
    const scale = window.visualViewport?.scale ?? 1;
    if (Math.abs(scale - 1) > SCALE_EPSILON) return `the page is zoomed ${scale > 1 ? "in" : "out"} (${times(scale)}), so it is not drawn at its size`;
    const zoom = /** @type {{currentCSSZoom?: number}} */ (frame).currentCSSZoom ?? 1;
    if (Math.abs(zoom - 1) > SCALE_EPSILON) return `the page zooms it to ${times(zoom)} of its size`;
    const r = frame.getBoundingClientRect();
    if (Math.abs(r.width - frame.offsetWidth) > ROUNDING_PX || Math.abs(r.height - frame.offsetHeight) > ROUNDING_PX) {
      return `the page draws it at ${Math.round(r.width)}×${Math.round(r.height)} px instead of ${frame.offsetWidth}×${frame.offsetHeight}`;
    }
    return null;
  }

  Object.defineProperty(globalThis, "tabpilotDrawn", { value: Object.freeze({ shrunk }) });
})();
