"""How much of the page a snapshot carries: links and form controls with a ref, and the page's visible words.

Ref coverage is exact when the snapshot engine's in-page agent can be found: the extension keeps it in an
isolated world of the page, which a raw CDP connection sees after `Runtime.enable`; each ref is resolved
there to its element and matched against the visible links and controls of the DOM. Until the agent is
discoverable, the share is approximated from the refs' roles in the text (labelled as such).
"""

from __future__ import annotations

import json
import re
from collections import Counter
from dataclasses import dataclass
from typing import Any

from bench.cdp import CdpError, PageCdp
from bench.refs import all_refs, refs_by_kind

# The snapshot engine's in-page agent and how it maps a ref to its element: the one place to change if
# the engine (src/tabpilot/extension/snapshot/index.js, "Calling convention") changes.
AGENT_EXPRESSION = "globalThis[Symbol.for('tabpilot.snapshot')]"
RESOLVE_REF = "(agent, ref) => agent.resolve(ref)"

# Visible a/button/input/select/textarea of the document, its open shadow roots and same-origin frames,
# as the prototype counted them (tabpilot's own overlay excluded); refs resolved to elements when an
# agent is given.
CENSUS = """(agent, resolve, refs, viewportOnly) => {
  const selector = 'a[href], button, input:not([type="hidden"]), select, textarea';
  const roots = [{ root: document, x: 0, y: 0 }];
  const targets = [];
  for (let i = 0; i < roots.length; i++) {
    const { root, x, y } = roots[i];
    for (const el of root.querySelectorAll("*")) {
      if (el.shadowRoot) roots.push({ root: el.shadowRoot, x, y });
      if (el.matches(selector)) targets.push({ el, x, y });
      if (el.localName === "iframe" && el.contentDocument && visible(el)) {
        const r = el.getBoundingClientRect();
        roots.push({ root: el.contentDocument, x: x + r.left, y: y + r.top });
      }
    }
  }
  function visible(el) {
    return (
      el.checkVisibility({ visibilityProperty: true }) &&
      !el.closest('[aria-hidden="true"], [inert], [data-tabpilot-overlay]') &&
      !clipped(el)
    );
  }
  // Inside a zero-size box that hides its overflow (a collapsed panel): present, but nobody can see it.
  function clipped(el) {
    for (let box = el.parentElement; box; box = box.parentElement) {
      const r = box.getBoundingClientRect();
      if ((r.width === 0 || r.height === 0) && getComputedStyle(box).overflow !== "visible") return true;
    }
    return false;
  }
  const inViewport = ({ el, x, y }) => {
    const r = el.getBoundingClientRect();
    return r.bottom + y > 0 && r.right + x > 0 && r.top + y < innerHeight && r.left + x < innerWidth;
  };
  const referenced = new Set();
  let unresolved = 0;
  for (const ref of agent ? refs : []) {
    let el = null;
    try { el = resolve(agent, ref); } catch { el = null; }
    if (el) referenced.add(el); else unresolved++;
  }
  const counts = { link: [0, 0], control: [0, 0] };
  const counted = new Set();
  const missed = { link: [], control: [] };
  for (const target of targets) {
    const el = target.el;
    if (!visible(el) || (viewportOnly && !inViewport(target))) continue;
    counted.add(el);
    const kind = el.matches("a[href]") ? "link" : "control";
    counts[kind][1]++;
    if (referenced.has(el)) counts[kind][0]++;
    else if (agent && missed[kind].length < 3) missed[kind].push(el.outerHTML.replace(/\\s+/g, " ").slice(0, 120));
  }
  const extra = [...referenced].filter((el) => !counted.has(el)).length;
  return { links: counts.link, controls: counts.control, extra, unresolved, missed };
}"""
AGENT_PRESENT = f"(() => {{ try {{ return !!({AGENT_EXPRESSION}); }} catch {{ return false; }} }})()"


@dataclass
class Coverage:
    """Links and controls (with a ref, visible) and the share of visible words, 0..1."""

    exact: bool
    links: tuple[int, int]
    controls: tuple[int, int]
    extra_refs: int
    unresolved_refs: int
    words: float
    missed: dict[str, list[str]]  # a few links and controls without a ref, as HTML

    @property
    def kind(self) -> str:
        if not self.exact:
            return "approximate (refs counted by role)"
        lost = f"; {self.unresolved_refs} refs did not resolve" if self.unresolved_refs else ""
        return f"exact (refs resolved by the in-page agent{lost})"


def share(pair: tuple[int, int]) -> float | None:
    with_ref, total = pair
    return with_ref / total if total else None


def words_share(inner_text: str, snapshot: str) -> float:
    """Multiset share of the page's innerText words (\\w+) that appear in the snapshot."""
    wanted = Counter(re.findall(r"\w+", inner_text))
    present = Counter(re.findall(r"\w+", snapshot))
    total = sum(wanted.values())
    found = sum(min(count, present[word]) for word, count in wanted.items())
    return found / total if total else 1.0


def agent_context(cdp: PageCdp) -> int | None:
    """The execution context of the top frame that holds the snapshot agent (normally an isolated world)."""
    for context in cdp.contexts():
        if context.get("auxData", {}).get("frameId") != cdp.target_id:
            continue
        try:
            if cdp.evaluate(AGENT_PRESENT, context["id"]):
                return int(context["id"])
        except CdpError:
            continue
    return None


def measure(cdp: PageCdp, snapshot: str, inner_text: str, viewport: bool) -> Coverage:
    """Coverage of one snapshot of the page `cdp` is connected to."""
    context = agent_context(cdp)
    census = _census(cdp, context, all_refs(snapshot) if context is not None else [], viewport)
    words = words_share(inner_text, snapshot)
    links, controls = _pair(census["links"]), _pair(census["controls"])
    if context is not None:
        extra, unresolved = int(census["extra"]), int(census["unresolved"])
        return Coverage(True, links, controls, extra, unresolved, words, dict(census["missed"]))
    by_kind = refs_by_kind(snapshot)
    return Coverage(
        False,
        (min(len(by_kind["link"]), links[1]), links[1]),
        (min(len(by_kind["control"]), controls[1]), controls[1]),
        len(by_kind["other"]),
        0,
        words,
        {},
    )


def _census(cdp: PageCdp, context: int | None, refs: list[str], viewport: bool) -> dict[str, Any]:
    agent = AGENT_EXPRESSION if context is not None else "null"
    expression = f"({CENSUS})({agent}, {RESOLVE_REF}, {json.dumps(refs)}, {json.dumps(viewport)})"
    result: dict[str, Any] = cdp.evaluate(expression, context)
    return result


def _pair(values: list[Any]) -> tuple[int, int]:
    return int(values[0]), int(values[1])
