// A cover that has settled is reported at once; one that animates, moves, fades or changes is waited out.
import { test } from "node:test";
import assert from "node:assert/strict";
import { SETTLED_COVER_MS, watchCover } from "../../../src/tabpilot/extension/page/actionability.js";

const banner = { cover: { tag: "div#banner", role: "dialog", name: "Cookie consent", text: "We use cookies" }, box: [0, 400, 800, 300, 1], animating: false };

test("the same cover, nothing animating, on looks SETTLED_COVER_MS apart has settled", () => {
  let watched = watchCover(null, banner, 1000);
  assert.equal(watched.settled, false);
  watched = watchCover(watched.seen, banner, 1000 + SETTLED_COVER_MS - 1);
  assert.equal(watched.settled, false);
  watched = watchCover(watched.seen, banner, 1000 + SETTLED_COVER_MS);
  assert.equal(watched.settled, true);
});

test("an animating page, another cover, or the same cover moved or fading starts the watch over", () => {
  const first = watchCover(null, banner, 0).seen;
  for (const look of [
    { ...banner, animating: true },
    { ...banner, cover: { ...banner.cover, text: "Loading…" } },
    { ...banner, box: [0, 380, 800, 300, 1] },
    { ...banner, box: [0, 400, 800, 300, 0.6] },
  ]) {
    const watched = watchCover(first, look, SETTLED_COVER_MS * 3);
    assert.equal(watched.settled, false, JSON.stringify(look));
    if (!look.animating) assert.equal(watched.seen?.since, SETTLED_COVER_MS * 3);
    else assert.equal(watched.seen, null);
  }
});
