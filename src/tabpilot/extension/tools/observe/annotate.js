// @ts-check
// screenshot --annotate: the refs on screen (an interactive snapshot of the viewport) boxed and labelled
// on the captured image, drawn in the worker (OffscreenCanvas), so the page itself is never touched.
import { locateRef } from "../../page/targets.js";

/** Magenta: rare on real pages, so a box stands out (and a test can find it). */
export const BOX_COLOR = "#ff00ff";
const LABEL_FONT = "bold 12px sans-serif";
/** Refs boxed at most: a crowded page stays readable. */
const MAX_BOXES = 200;

/** The refs of a snapshot text with their bracket's role and name, in reading order. @param {string} text */
export function refsOf(text) {
  /** @type {{ref: string, label: string}[]} */
  const out = [];
  const seen = new Set();
  for (const m of text.matchAll(/\[([^[\]]*?) @(e\d+)\b/g)) {
    if (seen.has(m[2])) continue;
    seen.add(m[2]);
    out.push({ ref: `@${m[2]}`, label: m[1] });
  }
  return out;
}

const BOX = `function () {
  const r = this.getBoundingClientRect();
  return { x: r.left, y: r.top, width: r.width, height: r.height };
}`;

/** @param {string} base64 */
function bytesOf(base64) {
  const raw = atob(base64);
  const bytes = new Uint8Array(raw.length);
  for (let i = 0; i < raw.length; i++) bytes[i] = raw.charCodeAt(i);
  return bytes;
}

/** @param {ArrayBuffer} buffer */
function base64Of(buffer) {
  const bytes = new Uint8Array(buffer);
  let raw = "";
  for (let i = 0; i < bytes.length; i += 0x8000) raw += String.fromCharCode(...bytes.subarray(i, i + 0x8000));
  return btoa(raw);
}

/**
 * The boxes of the refs on screen, in the viewport's CSS pixels (iframes' offsets added).
 * @param {any} ctx @param {number} tabId
 */
export async function refBoxes(ctx, tabId) {
  const snap = await ctx.snapshots.take(tabId, { mode: "interactive", viewportOnly: true, maxTokens: 0 }, { remember: false });
  /** @type {{ref: string, label: string, x: number, y: number, width: number, height: number}[]} */
  const boxes = [];
  for (const { ref, label } of refsOf(snap.text).slice(0, MAX_BOXES)) {
    const found = await locateRef(ctx, tabId, ref).catch(() => null);
    if (!found) continue;
    const box = await ctx.frames.callOn(found.frame, found.objectId, BOX).catch(() => null);
    void ctx.frames.send(found.frame, "Runtime.releaseObject", { objectId: found.objectId }).catch(() => {});
    if (!box || !(box.width > 0 && box.height > 0)) continue;
    const origin = await ctx.frames.offset(found.frame);
    boxes.push({ ref, label, x: Math.round(box.x + origin.x), y: Math.round(box.y + origin.y), width: Math.round(box.width), height: Math.round(box.height) });
  }
  return boxes;
}

/**
 * The PNG with each box and its ref drawn on it.
 * @param {string} png base64 @param {{ref: string, x: number, y: number, width: number, height: number}[]} boxes
 * @param {number} cssWidth the viewport's width in CSS pixels (the image may have more device pixels)
 */
export async function drawBoxes(png, boxes, cssWidth) {
  const bitmap = await createImageBitmap(new Blob([bytesOf(png)], { type: "image/png" }));
  const canvas = new OffscreenCanvas(bitmap.width, bitmap.height);
  const g = /** @type {OffscreenCanvasRenderingContext2D} */ (canvas.getContext("2d"));
  g.drawImage(bitmap, 0, 0);
  const s = cssWidth > 0 ? bitmap.width / cssWidth : 1;
  g.font = LABEL_FONT;
  g.textBaseline = "top";
  for (const b of boxes) {
    g.strokeStyle = BOX_COLOR;
    g.lineWidth = 2 * s;
    g.strokeRect(b.x * s, b.y * s, b.width * s, b.height * s);
    const text = b.ref.slice(1);
    const w = g.measureText(text).width + 6;
    const h = 15;
    // Above the box when there is room, else inside its top-left corner.
    const ly = b.y * s >= h ? b.y * s - h : b.y * s;
    g.fillStyle = BOX_COLOR;
    g.fillRect(b.x * s, ly, w, h);
    g.fillStyle = "#ffffff";
    g.fillText(text, b.x * s + 3, ly + 1);
  }
  const blob = await canvas.convertToBlob({ type: "image/png" });
  return base64Of(await blob.arrayBuffer());
}
