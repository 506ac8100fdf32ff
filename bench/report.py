"""Tables of the records, one per suite: aligned text for the terminal, or Markdown for the README."""

from __future__ import annotations

from collections.abc import Callable, Sequence

from bench.stats import Record

Row = list[str]


def number(value: float | None) -> str:
    if value is None:
        return "–"
    if abs(value) >= 100:
        return f"{value:,.0f}"
    if abs(value) >= 10:
        return f"{value:.1f}"
    return f"{value:.2f}"


def count(record: Record | None) -> str:
    return f"{record.median:,.0f}" if record and record.median is not None else "–"


def ratio(record: Record | None) -> str:
    return f"×{number(record.ratio)}" if record and record.ratio is not None else ""


def percent(record: Record | None) -> str:
    if record is None or record.median is None:
        return "–"
    approximate = "≈" if record.note and "approximate" in record.note else ""
    return f"{approximate}{record.median:.1f}%"


def render(title: str, headers: Sequence[str], rows: Sequence[Row], markdown: bool, left: int = 1) -> str:
    """A table (the first `left` columns left-aligned); a row shorter than the headers ends with a cell
    that spans the rest (a note)."""
    if markdown:
        lines = [f"**{title}**", "", "| " + " | ".join(headers) + " |", "|" + "---|" * len(headers)]
        for row in rows:
            cells = row + [""] * (len(headers) - len(row))
            lines.append("| " + " | ".join(cell.replace("|", "\\|") for cell in cells) + " |")
        return "\n".join(lines)
    widths = [len(h) for h in headers]
    for row in rows:
        # A short row's last cell spans the rest and sets no width.
        cells = row if len(row) == len(headers) else row[:-1]
        widths = [max(w, len(cell)) for w, cell in zip(widths, [*cells, *[""] * len(headers)], strict=False)]

    def line(cells: Row) -> str:
        if len(cells) < len(headers):
            head = [c.ljust(w) for c, w in zip(cells[:-1], widths, strict=False)]
            return "  ".join([*head, cells[-1]]).rstrip()
        return "  ".join(
            c.ljust(w) if i < left or i == len(headers) - 1 else c.rjust(w)
            for i, (c, w) in enumerate(zip(cells, widths, strict=True))
        ).rstrip()

    return "\n".join([title, line(list(headers)), "  ".join("-" * w for w in widths), *map(line, rows)])


def _by_case(records: list[Record], suite: str) -> dict[str, dict[str, Record]]:
    cases: dict[str, dict[str, Record]] = {}
    for record in records:
        if record.suite == suite:
            cases.setdefault(record.case, {})[record.metric] = record
    return cases


def latency(records: list[Record], markdown: bool = False) -> str:
    from bench.latency import BARE_CASE, MCP_CASE, MCP_TARGET_MS, PEER, SHAPE_PREFIX, TARGETS, WORKER_PREFIX

    rows: list[Row] = []
    samples = 0
    everything = _by_case(records, "latency")
    cases = {case: m for case, m in everything.items() if not case.startswith((WORKER_PREFIX, SHAPE_PREFIX))}
    shapes = {
        case.removeprefix(SHAPE_PREFIX): m for case, m in everything.items() if case.startswith(SHAPE_PREFIX)
    }
    inside = {
        case.removeprefix(WORKER_PREFIX): m
        for case, m in everything.items()
        if case.startswith(WORKER_PREFIX)
    }
    for case, metrics in cases.items():
        r = metrics["wall_time"]
        samples = max(samples, len(r.samples)) if "floor" not in case else samples
        if not r.available:
            rows.append([case, r.note or "n/a"])
            continue
        rows.append([case, number(r.median), number(r.p95), ratio(r), r.note or ""])
    title = (
        f"Latency: whole process, warm daemon and browser, one interleaved run ({samples} runs each; "
        f"ratio to `{BARE_CASE}`)"
    )
    table = render(title, ["case", "median ms", "p95 ms", f"× {BARE_CASE}", "note"], rows, markdown)
    lines = _targets(cases, BARE_CASE, MCP_CASE, MCP_TARGET_MS, PEER, TARGETS)
    return "\n\n".join([table, *lines, *_shapes(shapes, markdown), *_worker(inside, markdown)])


def _shapes(cases: dict[str, dict[str, Record]], markdown: bool) -> list[str]:
    """Each command shape beside the plain shape of its verb, and which path of the CLI took it."""
    from bench.latency import SHAPE_PREFIX, SHAPE_TARGET

    if not cases:
        return []
    rows: list[Row] = []
    for case, metrics in cases.items():
        r = metrics["wall_time"]
        if not r.available:
            rows.append([case, r.note or "n/a"])
            continue
        versus = r.baseline.removeprefix(SHAPE_PREFIX) if r.baseline else ""
        rows.append([case, number(r.median), number(r.p95), ratio(r), versus, r.note or ""])
    title = f"Command shapes as agents write them (ratio to the plain shape of the verb; target ≤ {SHAPE_TARGET}×)"
    return [render(title, ["shape", "median ms", "p95 ms", "× plain", "plain", "path"], rows, markdown)]


def _worker(cases: dict[str, dict[str, Record]], markdown: bool) -> list[str]:
    """The phases each tool marked in the service worker (medians), and the setup's target line."""
    from bench.latency import PHASES, SETUP_CASE, SETUP_PHASE, SETUP_TARGET_MS

    if not cases:
        return []
    rows: list[Row] = []
    runs = 0
    for case, metrics in cases.items():
        whole = metrics.get("whole")
        if whole is None or not whole.available:
            rows.append([case, whole.note if whole and whole.note else "n/a"])
            continue
        runs = max(runs, len(whole.samples))
        rows.append([case, *(number(metrics[p].median) if p in metrics else "" for p in PHASES)])
    title = (
        f"In the extension's service worker: ms from the request's arrival to each phase ({runs} runs each, "
        f"medians; `{SETUP_PHASE}`: the first mouse or key event sent, after every check and the shield)"
    )
    out = [render(title, ["tool", *PHASES], rows, markdown)]
    setup = cases.get(SETUP_CASE, {}).get(SETUP_PHASE)
    if setup is not None and setup.median is not None:
        verdict = "met" if setup.median <= SETUP_TARGET_MS else "not met"
        out.append(
            f"- {SETUP_CASE} setup before its first input: {setup.median:.2f} ms (target ≤ {SETUP_TARGET_MS:.0f} ms: {verdict})"
        )
    return out


def _targets(
    cases: dict[str, dict[str, Record]],
    bare: str,
    mcp: str,
    mcp_target_ms: float,
    peer: str,
    targets: dict[str, float],
) -> list[str]:
    """One line per figure the hot path aims at, and tabpilot/agent-browser when it ran beside."""
    lines = []
    for case, target in targets.items():
        r = cases.get(case, {}).get("wall_time")
        if r is not None and r.ratio is not None:
            verdict = "met" if r.ratio <= target else "not met"
            lines.append(f"{case}: ×{r.ratio:.2f} {bare} (target ≤ {target}×: {verdict})")
        theirs = cases.get(f"{peer} {case}", {}).get("wall_time")
        if r is not None and r.median and theirs is not None and theirs.median:
            lines.append(f"{case}: tabpilot/{peer} {r.median / theirs.median:.2f}")
    m = cases.get(mcp, {}).get("wall_time")
    if m is not None and m.median is not None:
        verdict = "met" if m.median <= mcp_target_ms else "not met"
        lines.append(f"{mcp}: {m.median:.1f} ms (target ≤ {mcp_target_ms:.0f} ms: {verdict})")
    return ["\n".join(f"- {line}" for line in lines)] if lines else []


def snapshots(records: list[Record], markdown: bool = False) -> str:
    rows: list[Row] = []
    for case, m in _by_case(records, "snapshots").items():
        page, mode = case.rsplit(" ", 1)
        time = m.get("wall_time")
        if time is None or not time.available:
            note = time.note if time else "n/a"
            rows.append([page, mode, note or "n/a"])
            continue
        tokens, chars = m.get("tokens"), m.get("chars")
        if "links_with_ref" not in m:  # the page's innerText: the baseline row
            rows.append([page, mode, count(tokens), "", count(chars), number(time.median), number(time.p95)])
            rows[-1] += [""] * (12 - len(rows[-1]))
            continue
        rows.append(
            [
                page,
                mode,
                count(tokens),
                ratio(tokens),
                count(chars),
                number(time.median),
                number(time.p95),
                ratio(time),
                percent(m.get("links_with_ref")),
                percent(m.get("controls_with_ref")),
                percent(m.get("words")),
                count(m.get("extra_refs")) if "extra_refs" in m else "",
            ]
        )
    headers = [
        "page",
        "mode",
        "tokens",
        "× text",
        "chars",
        "ms",
        "p95 ms",
        "× cdp",
        "links",
        "controls",
        "words",
        "extra",
    ]
    title = (
        "Snapshots: o200k tokens and characters (× the page's innerText), whole-command time (× fetching innerText "
        "over CDP), share of visible links/controls with a ref, share of innerText words (≈: approximate)"
    )
    return render(title, headers, rows, markdown, left=2)


def memory(records: list[Record], markdown: bool = False) -> str:
    rows: list[Row] = []
    for case, metrics in _by_case(records, "memory").items():
        r = next(iter(metrics.values()))
        if not r.available:
            rows.append([case, r.note or "n/a"])
            continue
        against = f"{ratio(r)} {r.baseline}" if r.ratio is not None else ""
        rows.append([case, number(r.median), number(r.p95), against])
    return render("Memory (MiB)", ["what", "median", "p95", "vs baseline"], rows, markdown)


def parallel(records: list[Record], markdown: bool = False) -> str:
    rows: list[Row] = []
    for case, m in _by_case(records, "parallel").items():
        rate, latency_ms = m["actions_per_s"], m["latency"]
        errors, crossed = m["errors"], m["cross_talk"]
        rows.append(
            [
                case,
                number(rate.median),
                ratio(rate),
                number(latency_ms.median),
                number(latency_ms.p95),
                count(errors),
                count(crossed),
                errors.note or crossed.note or "",
            ]
        )
    headers = [
        "sessions (loop)",
        "actions/s",
        "× 1",
        "median ms",
        "p95 ms",
        "errors",
        "cross-talk",
        "first problem",
    ]
    return render("Parallel sessions in one browser", headers, rows, markdown)


def peer(records: list[Record], markdown: bool = False) -> str:
    cases = _by_case(records, "peer")
    rows: list[Row] = []
    for case, m in cases.items():
        if not case.startswith("agent-browser: "):
            continue
        name = case.removeprefix("agent-browser: ")
        ours = cases.get(f"tabpilot: {name}", {})
        for metric, theirs in m.items():
            if not theirs.available:
                rows.append([name, metric, theirs.note or "n/a"])
                continue
            mine = ours.get(metric)
            rows.append(
                [
                    name,
                    metric,
                    number(theirs.median),
                    number(mine.median) if mine else "–",
                    f"{mine.ratio:.2f}" if mine and mine.ratio is not None else "–",
                ]
            )
    return render(
        "Side by side with agent-browser",
        ["case", "metric", "agent-browser", "tabpilot", "tabpilot/peer"],
        rows,
        markdown,
        left=2,
    )


def agents(records: list[Record], markdown: bool = False) -> str:
    rows: list[Row] = []
    for case, metrics in _by_case(records, "agents").items():
        for metric, r in metrics.items():
            if not r.available:
                rows.append([case, r.note or "n/a"])
                continue
            rows.append(
                [
                    case,
                    f"{count(r)} tokens" if metric == "tokens" else f"{number(r.median)} ms",
                    "" if metric == "tokens" else f"{number(r.p95)} ms",
                    f"{ratio(r)} {r.baseline}" if r.ratio is not None else "",
                ]
            )
    return render("Skill, MCP and batch", ["case", "median", "p95", "vs baseline"], rows, markdown)


def apps(records: list[Record], markdown: bool = False) -> str:
    rows: list[Row] = []
    for case, m in _by_case(records, "apps").items():
        ok = m.get("succeeded")
        if ok is None or not ok.available:
            rows.append([case, ok.note if ok else "n/a"])
            continue
        runs = len(m["commands"].samples) if "commands" in m else 0
        theirs = m.get("baseline_succeeded")
        row = [
            case,
            f"{count(ok)}/{runs}" + (f" ({count(theirs)}/{runs})" if theirs and theirs.available else ""),
            count(m.get("commands"))
            + (f" ({count(m.get('baseline_commands'))})" if "baseline_commands" in m else ""),
            count(m.get("snapshot_tokens")),
            count(m.get("baseline_tokens")),
            ratio(m.get("snapshot_tokens")),
            percent(m.get("coverage"))
            + (f" ({percent(m.get('baseline_coverage'))})" if "baseline_coverage" in m else ""),
        ]
        rows.append(row)
        if ok.note:
            rows.append(["", ok.note])
    return render(
        "Real apps: tabpilot (Playwright aria snapshot); tokens are medians per task run",
        ["task", "ok", "commands", "tokens", "baseline tokens", "ratio", "coverage"],
        rows,
        markdown,
    )


def _medians(suite: str, title: str, records: list[Record], markdown: bool) -> str:
    """A suite's cases with their median and p95 in their own unit, and a ratio or the note."""
    rows: list[Row] = []
    for case, metrics in _by_case(records, suite).items():
        for r in metrics.values():
            if not r.available:
                rows.append([case, r.note or "n/a"])
                continue
            unit = f" {r.unit}" if r.unit else ""
            rows.append(
                [
                    case,
                    f"{number(r.median)}{unit}",
                    f"{number(r.p95)}{unit}",
                    f"{ratio(r)} {r.baseline}" if r.ratio is not None else (r.note or ""),
                ]
            )
    return render(title, ["case", "median", "p95", "vs baseline / note"], rows, markdown)


def fences(records: list[Record], markdown: bool = False) -> str:
    return _medians("fences", "Page-text fences: tokens per full snapshot", records, markdown)


def panel(records: list[Record], markdown: bool = False) -> str:
    return _medians("panel", "Side panel: agent runs", records, markdown)


def approvals(records: list[Record], markdown: bool = False) -> str:
    return _medians("approvals", "Approvals", records, markdown)


def cues(records: list[Record], markdown: bool = False) -> str:
    return _medians("cues", "Action cues", records, markdown)


TABLES: dict[str, Callable[[list[Record], bool], str]] = {
    "approvals": approvals,
    "agents": agents,
    "latency": latency,
    "snapshots": snapshots,
    "fences": fences,
    "memory": memory,
    "parallel": parallel,
    "peer": peer,
    "apps": apps,
    "panel": panel,
    "cues": cues,
}
