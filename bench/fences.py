"""What the page-text fences cost: tokens of each bench page's full snapshot with its fence (the default)
and without (`TABPILOT_BOUNDARIES=off`), the same page read twice in a row."""

from __future__ import annotations

from bench import tokens
from bench.pages import Page
from bench.rig import Rig
from bench.snapshots import UNCAPPED, snapshot_text
from bench.spawn import Spawner
from bench.stats import Record, measured, missing

SUITE = "fences"
SESSION = "fences"


def run(rig: Rig, pages: list[Page]) -> list[Record]:
    if not tokens.available():
        return [missing(SUITE, "all pages", "fence_tokens", "tokens", tokens.MISSING)]
    fenced = Spawner({**rig.tp.env, "TABPILOT_BOUNDARIES": "on"})
    plain = Spawner({**rig.tp.env, "TABPILOT_BOUNDARIES": "off"})
    rig.start_session(SESSION, rig.url(pages[0], SESSION))
    out: list[Record] = []
    added: list[float] = []
    try:
        for page in pages:
            if not rig.cli("open", rig.url(page, SESSION), session=SESSION).ok:
                out.append(missing(SUITE, page.label, "tokens", "tokens", "error: open failed"))
                continue
            argv = rig.command("snapshot", *UNCAPPED, session=SESSION)
            with_fence, without = fenced.run(argv), plain.run(argv)
            if not (with_fence.ok and without.ok):
                out.append(missing(SUITE, page.label, "tokens", "tokens", "error: snapshot failed"))
                continue
            on, off = tokens.count(snapshot_text(with_fence)), tokens.count(snapshot_text(without))
            added.append(on - off)
            out.append(measured(SUITE, page.label, "tokens", "tokens", [on], ("without fences", off)))
    finally:
        rig.stop_session(SESSION)
    out.append(measured(SUITE, "all pages", "fence_tokens", "tokens", added, note="added per snapshot"))
    return out
