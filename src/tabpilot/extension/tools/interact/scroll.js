// @ts-check
// tool.scroll: the page, or the scrollable box around a target, by an amount or to an end.
import { RpcError } from "../../link/protocol.js";
import { actionable, release } from "../../page/actionability.js";
import { beginAction, finishAction, targetInfo } from "../../page/action.js";

const DIRECTIONS = ["down", "up", "left", "right"];
const ENDS = ["top", "bottom", "left", "right"];

/**
 * In the page: scroll `this` (an element, or null for the page) or the box around it that a wheel there
 * would move: the nearest that can still go that way (an inner list at its end hands on to the panel
 * around it), else the nearest that can scroll that way at all. Instant, so the position reported is
 * where it stays; the page's scroll events fire.
 * @this {Element | null}
 * @param {{direction: string | null, amount: number | null, to: string | null}} opts
 */
function scrollInPage(opts) {
  // Called on nothing, `this` is the global object.
  const target = this instanceof Element ? this : null;
  const doc = target ? target.ownerDocument : document;
  const page = /** @type {Element} */ (doc.scrollingElement || doc.documentElement);
  const vertical = opts.to ? opts.to === "top" || opts.to === "bottom" : opts.direction === "up" || opts.direction === "down";
  const back = opts.to ? opts.to === "top" || opts.to === "left" : opts.direction === "up" || opts.direction === "left";
  /** @param {Element} el */
  const canScroll = (el) => {
    if (el === page) return true;
    const style = getComputedStyle(el);
    const overflow = vertical ? style.overflowY : style.overflowX;
    const room = vertical ? el.scrollHeight - el.clientHeight : el.scrollWidth - el.clientWidth;
    return room > 0 && /^(auto|scroll|overlay)$/.test(overflow);
  };
  /** Has it room left the way we go? @param {Element} el */
  const canGo = (el) => {
    const at = vertical ? el.scrollTop : el.scrollLeft;
    const end = vertical ? el.scrollHeight - el.clientHeight : el.scrollWidth - el.clientWidth;
    return back ? at > 0 : at < end - 1;
  };
  /** @type {Element[]} */
  const boxes = [];
  for (let el = target ?? page; el && el !== page; ) {
    if (canScroll(el)) boxes.push(el);
    el = el.parentNode instanceof ShadowRoot ? el.parentNode.host : el.parentElement;
  }
  boxes.push(page);
  const box = boxes.find(canGo) ?? boxes[0];
  const view = box === page ? { w: innerWidth, h: innerHeight } : { w: box.clientWidth, h: box.clientHeight };
  const before = { x: box.scrollLeft, y: box.scrollTop };
  if (opts.to) {
    const end = { top: [null, 0], bottom: [null, box.scrollHeight], left: [0, null], right: [box.scrollWidth, null] }[opts.to];
    box.scrollTo({ left: end[0] ?? before.x, top: end[1] ?? before.y, behavior: "instant" });
  } else {
    // A screenful less a little, so the last lines stay in sight.
    const amount = opts.amount ?? Math.round((vertical ? view.h : view.w) * 0.85);
    const sign = opts.direction === "up" || opts.direction === "left" ? -1 : 1;
    box.scrollBy({ left: vertical ? 0 : sign * amount, top: vertical ? sign * amount : 0, behavior: "instant" });
  }
  const x = Math.round(box.scrollLeft);
  const y = Math.round(box.scrollTop);
  return {
    page: box === page,
    x,
    y,
    max_x: Math.max(0, Math.round(box.scrollWidth - (box === page ? page.clientWidth : box.clientWidth))),
    max_y: Math.max(0, Math.round(box.scrollHeight - (box === page ? page.clientHeight : box.clientHeight))),
    moved: Math.round(vertical ? Math.abs(y - before.y) : Math.abs(x - before.x)),
  };
}

const SCROLL = scrollInPage.toString();

/** @type {import("../../link/dispatcher.js").Handler} */
export async function scroll(params, ctx) {
  const to = params.to ?? null;
  const direction = params.direction ?? (to ? null : "down");
  const amount = params.amount ?? null;
  if (to !== null && !ENDS.includes(to)) throw new RpcError("invalid_params", `to must be one of ${ENDS.join(", ")}`);
  if (direction !== null && !DIRECTIONS.includes(direction)) throw new RpcError("invalid_params", `direction must be one of ${DIRECTIONS.join(", ")}`);
  if (to !== null && params.direction !== undefined) throw new RpcError("invalid_params", "give a direction or an end (to), not both");
  if (amount !== null && (!Number.isSafeInteger(amount) || amount <= 0)) throw new RpcError("invalid_params", "amount must be a positive number of pixels");
  const action = await beginAction(params, ctx);
  const opts = { direction, amount, to };
  if (params.target === undefined || params.target === null) {
    const main = await ctx.frames.main(action.tabId);
    const done = await ctx.frames.evaluate(main, `(${SCROLL})(${JSON.stringify(opts)})`);
    return finishAction(ctx, params, action.tabId, { tab_id: action.tabId, direction, to, ...done });
  }
  const target = await actionable(ctx, action.tabId, params.target, {
    enabled: false,
    timeoutMs: action.timeoutMs,
    deadline: action.deadline,
    signal: ctx.signal,
  });
  try {
    const done = await ctx.frames.callOn(target.frame, target.objectId, SCROLL, [opts]);
    return finishAction(ctx, params, action.tabId, { tab_id: action.tabId, target: targetInfo(target), direction, to, ...done });
  } finally {
    release(ctx, target);
  }
}
