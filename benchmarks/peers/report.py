"""Turns :class:`~benchmarks.peers.runner.Results` into the Markdown of ``benchmarks/RESULTS.md`` (and JSON).

Ratios are always "how many times faster agentmem_nb is": the peer's cost divided by agentmem_nb's cost at the same N
(for append, agentmem_nb's rate divided by the peer's). Below 1 the peer is faster. Rows of agentmem_nb variants carry
no ratio.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from benchmarks.peers.figures import WORKLOADS, Figure
from benchmarks.peers.runner import Results

__all__ = ["render_markdown", "render_json", "evaluate_targets", "Target", "REFERENCE_ROW"]

REFERENCE_ROW = "agentmem_nb"


def _cost(figure: Figure, metric: str | None = None) -> float | None:
    """The lower-is-better number a ratio is taken on (seconds); ``metric`` picks a ``*_ms`` metric explicitly."""
    m = figure.metrics
    if figure.status not in ("measured", "estimated"):
        return None
    if metric is not None:
        return m[metric] / 1e3 if metric in m else None
    if figure.workload == "append" and m.get("msgs_per_s"):
        return 1.0 / m["msgs_per_s"]
    if figure.workload == "window" and "median_us" in m:
        return m["median_us"] / 1e6
    if figure.workload == "keyword" and "median_ms" in m:
        return m["median_ms"] / 1e3
    if figure.workload == "cold" and "open_query_ms" in m:
        return m["open_query_ms"] / 1e3
    if figure.workload == "turn" and "overhead_ms" in m:
        return m["overhead_ms"] / 1e3
    return None


# ---------------------------------------------------------------------------------------------------- formatting


def fmt_seconds(seconds: float) -> str:
    """``118 µs``, ``4.2 ms``, ``1.35 s``, ``19 min``."""
    if seconds < 1e-3:
        return f"{seconds * 1e6:.0f} µs" if seconds >= 1e-5 else f"{seconds * 1e6:.1f} µs"
    if seconds < 1:
        return f"{seconds * 1e3:.1f} ms" if seconds < 0.1 else f"{seconds * 1e3:.0f} ms"
    if seconds < 120:
        return f"{seconds:.2f} s" if seconds < 10 else f"{seconds:.0f} s"
    if seconds < 7200:
        return f"{seconds / 60:.0f} min"
    return f"{seconds / 3600:.0f} h"


def fmt_ratio(ratio: float) -> str:
    """``×690``, ``×12``, ``×3.4``, ``×0.52``."""
    if ratio >= 100:
        return f"×{ratio:,.0f}"
    if ratio >= 10:
        return f"×{ratio:.0f}"
    return f"×{ratio:.2g}"


def _fmt_rate(rate: float) -> str:
    return f"{rate:,.0f}/s" if rate >= 10 else f"{rate:.2g}/s"


def _n_label(n: int) -> str:
    if n >= 1_000_000 and n % 1_000_000 == 0:
        return f"{n // 1_000_000}M"
    if n >= 1000 and n % 1000 == 0:
        return f"{n // 1000}k"
    return str(n)


class _Notes:
    """Footnotes of one table: identical notes share a number."""

    def __init__(self) -> None:
        self.texts: list[str] = []

    def mark(self, note: str) -> str:
        if not note:
            return ""
        if note not in self.texts:
            self.texts.append(note)
        return f" [{self.texts.index(note) + 1}]"

    def render(self) -> list[str]:
        return [f"[{i}] {text}  " for i, text in enumerate(self.texts, start=1)]


def _status_cell(figure: Figure, notes: _Notes) -> str | None:
    if figure.status in ("not run", "n/a", "error"):
        return f"{figure.status}{notes.mark(figure.note)}"
    return None


@dataclass(frozen=True, slots=True)
class _Table:
    title: str
    workload: str
    value: Callable[[Figure], str]
    ratio: bool = True
    reference: str = REFERENCE_ROW
    metric: str | None = None
    """The ``*_ms`` metric ratios are taken on, when not the workload's default."""


def _append_rate(f: Figure) -> str:
    return ("≈" if f.status == "estimated" else "") + _fmt_rate(f.metrics["msgs_per_s"])


def _append_ends(f: Figure) -> str:
    m = f.metrics
    return (f"{fmt_seconds(m['first_us'] / 1e6)} → {fmt_seconds(m['last_us'] / 1e6)} "
            f"({m['last_first_ratio']:.2g})")


def _cold_memory(f: Figure) -> str:
    m = f.metrics

    def peak(prefix: str) -> str:
        if f"{prefix}peak_rss_mb" not in m:
            return "—"
        return f"{m[prefix + 'peak_rss_mb']:.0f} (+{m[prefix + 'rss_growth_mb']:.0f})"

    return f"{peak('')} / {peak('keyword_')} MiB, import {fmt_seconds(m['import_s'])}"


def _ms(metric: str) -> Callable[[Figure], str]:
    return lambda f: fmt_seconds(f.metrics[metric] / 1e3) if metric in f.metrics else "—"


def _turn(f: Figure) -> str:
    m = f.metrics
    return f"{fmt_seconds(m['overhead_ms'] / 1e3)} (turn {fmt_seconds(m['total_ms'] / 1e3)})"


_TABLES = (
    _Table("messages per second (higher is better)", "append", _append_rate),
    _Table("cost per message, first 1% → last 1% of the run (last/first)", "append", _append_ends, ratio=False),
    _Table("median latency", "window", lambda f: fmt_seconds(f.metrics["median_us"] / 1e6)),
    _Table("median latency", "keyword", lambda f: fmt_seconds(f.metrics["median_ms"] / 1e3)),
    _Table("open + first query = the window around the middle message, median", "cold", _ms("open_query_ms"),
           metric="open_query_ms"),
    _Table("open + first query = the keyword lookup, median", "cold", _ms("open_keyword_ms"),
           metric="open_keyword_ms"),
    _Table("peak RSS of the process, window first / keyword first (growth from the open + query), import time",
           "cold", _cold_memory, ratio=False),
)


def _render_table(table: _Table, figures: list[Figure], reference: str) -> list[str]:
    rows: list[str] = []
    sizes: list[int] = []
    cells: dict[tuple[str, int], Figure] = {}
    for f in figures:
        if f.workload != table.workload:
            continue
        if f.peer not in rows:
            rows.append(f.peer)
        if f.n not in sizes:
            sizes.append(f.n)
        cells[(f.peer, f.n)] = f
    if not rows:
        return []
    sizes.sort()
    notes = _Notes()
    lines = [f"*{table.title}*", "", "| store | " + " | ".join(f"N={_n_label(n)}" for n in sizes) + " |",
             "|---|" + "---:|" * len(sizes)]
    for row in rows:
        out = []
        for n in sizes:
            f = cells.get((row, n))
            if f is None:
                out.append("—")
                continue
            status = _status_cell(f, notes)
            if status is not None:
                out.append(status)
                continue
            text = table.value(f)
            ref = cells.get((reference, n))
            if table.ratio and not row.startswith(REFERENCE_ROW) and ref is not None:
                mine, theirs = _cost(ref, table.metric), _cost(f, table.metric)
                if mine and theirs:
                    text += f" · **{'≈' if f.status == 'estimated' else ''}{fmt_ratio(theirs / mine)}**"
            text += notes.mark(f.note)
            out.append(text)
        lines.append(f"| {row} | " + " | ".join(out) + " |")
    lines.append("")
    lines += notes.render()
    if notes.texts:
        lines.append("")
    return lines


# ---------------------------------------------------------------------------------------------------- targets


@dataclass(frozen=True, slots=True)
class Target:
    """One target of the issue and what this run says about it."""

    name: str
    measured: str
    verdict: str  # "met", "not met", "not measured"

    def to_dict(self) -> dict[str, str]:
        """JSON-ready form."""
        return {"name": self.name, "measured": self.measured, "verdict": self.verdict}


def _find(figures: list[Figure], workload: str, peer: str, n: int) -> Figure | None:
    for f in figures:
        if f.workload == workload and f.peer == peer and f.n == n and f.status in ("measured", "estimated"):
            return f
    return None


def _on_par(figures: list[Figure], workload: str, label: str, peer: str, n: int) -> Target:
    name = f"{label} at N={_n_label(n)}: at least on par with {peer} (agentmem_nb time ≤ 1.1 × peer time)"
    mine, theirs = _find(figures, workload, REFERENCE_ROW, n), _find(figures, workload, peer, n)
    if mine is None or theirs is None:
        return Target(name, f"no figure at N={_n_label(n)}", "not measured")
    a, b = _cost(mine), _cost(theirs)
    assert a is not None and b is not None
    measured = f"{fmt_seconds(a)} vs {fmt_seconds(b)} ({fmt_ratio(b / a)} faster)"
    return Target(name, measured, "met" if a <= 1.1 * b else "not met")


def evaluate_targets(figures: list[Figure]) -> list[Target]:
    """The issue's targets, judged on this run's figures (``not measured`` when the run lacks the N)."""
    targets: list[Target] = []
    name = "append at N=10k: agentmem_nb ≥ 10× faster than FileChatMessageHistory"
    mine, theirs = _find(figures, "append", REFERENCE_ROW, 10_000), _find(figures, "append", "FileChatMessageHistory",
                                                                            10_000)
    if mine and theirs:
        ratio = mine.metrics["msgs_per_s"] / theirs.metrics["msgs_per_s"]
        est = " (peer figure extrapolated, see table)" if theirs.status == "estimated" else ""
        targets.append(Target(name, f"{_fmt_rate(mine.metrics['msgs_per_s'])} vs "
                                    f"{_fmt_rate(theirs.metrics['msgs_per_s'])}: {fmt_ratio(ratio)}{est}",
                              "met" if ratio >= 10 else "not met"))
    else:
        targets.append(Target(name, "no figure at N=10k", "not measured"))
    ours = sorted((f for f in figures if f.workload == "append" and f.peer == REFERENCE_ROW
                   and f.status == "measured"), key=lambda f: f.n)
    name = "append flat from 1k to 1M (µs/message at the largest N ≤ 1.3 × at the smallest)"
    if len(ours) >= 2:
        small, large = ours[0], ours[-1]
        growth = small.metrics["msgs_per_s"] / large.metrics["msgs_per_s"]
        measured = (f"{fmt_seconds(1 / small.metrics['msgs_per_s'])}/msg at N={_n_label(small.n)}, "
                    f"{fmt_seconds(1 / large.metrics['msgs_per_s'])}/msg at N={_n_label(large.n)} "
                    f"(×{growth:.2f}); last/first 1% within the N={_n_label(large.n)} run: "
                    f"{large.metrics['last_first_ratio']:.2f}")
        verdict = "met" if growth <= 1.3 else "not met"
        if large.n < 1_000_000:
            verdict = "not measured" if verdict == "met" else verdict
            measured += " (1M not in this run)"
        targets.append(Target(name, measured, verdict))
    else:
        targets.append(Target(name, "fewer than two sizes measured", "not measured"))
    targets.append(_on_par(figures, "window", "window", "LangGraph SqliteStore", 100_000))
    targets.append(_on_par(figures, "keyword", "keyword", "LangGraph SqliteStore", 100_000))
    targets.append(_on_par(figures, "keyword", "keyword (vs. raw SQL, beyond the target)",
                           "LangGraph SqliteStore, raw SQL LIKE", 100_000))
    cold = _find(figures, "cold", REFERENCE_ROW, 100_000)
    name = "cold open + first query of a 100k-message user < 1 s (whichever query comes first)"
    if cold:
        m = cold.metrics
        firsts = {"window": m.get("open_query_ms"), "keyword lookup": m.get("open_keyword_ms")}
        measured = "; ".join(f"{fmt_seconds(ms / 1e3)} with a {what} first" for what, ms in firsts.items()
                             if ms is not None)
        worst = max(ms for ms in firsts.values() if ms is not None) / 1e3
        targets.append(Target(name, f"{measured} (peak RSS {m['peak_rss_mb']:.0f} MiB window first, "
                                    f"{m.get('keyword_peak_rss_mb', float('nan')):.0f} MiB keyword first)",
                              "met" if worst < 1 else "not met"))
    else:
        targets.append(Target(name, "no figure at N=100k", "not measured"))
    return targets


# ---------------------------------------------------------------------------------------------------- documents


def _machine_lines(results: Results) -> list[str]:
    m, c = results.machine, results.conditions
    packages = ", ".join(f"{k} {v}" for k, v in m["packages"].items())
    return [
        f"- Date: {m['date']}; the run took {fmt_seconds(c.get('duration_s', 0.0))}.",
        f"- CPU: {m['cpu']}, {m['cores']} cores ({m['usable_cores']} usable), {m.get('memory_gb')} GB RAM; "
        f"{m['os']}; data on {m['data_folder_fs']}.",
        f"- Shared machine: 1-min load average {c.get('load_before')} at start, {c.get('load_after')} at end; "
        f"append+fsync latency on the data disk {c.get('fsync_us_before')} µs at start, "
        f"{c.get('fsync_us_after')} µs at end (other jobs' disk traffic moves the fsync-bound rows).",
        f"- {m['python']}, SQLite {m['sqlite']}.",
        f"- Code under test: {m.get('code', 'unknown')}, copied before the run (every worker imports the copy, so "
        "edits to the checkout during the run cannot leak in).",
        f"- Packages: {packages}.",
    ]


def render_markdown(results: Results) -> str:
    """The whole ``RESULTS.md``."""
    plan = results.plan
    figures = results.figures
    mode = "quick" if plan.quick else "full"
    lines = [
        "# agentmem_nb vs. the stores users would otherwise pick",
        "",
        f"Written by `python -m benchmarks` ({mode} mode; `agentmem-nb bench` runs the same code). "
        "Every figure comes from this one run on this one machine."
        + (" This page was re-rendered from the run's saved JSON (`--from-json`): the figures are the run's, only "
           "the surrounding text may be newer." if results.rendered_from else ""),
        "",
        "## Machine",
        "",
        *_machine_lines(results),
        "",
        "## How to read",
        "",
        f"- Each figure is a median: append over up to {plan.repeats} full runs, window over up to {plan.calls} "
        f"calls at spread-out anchors, keyword over up to {plan.repeats_read} lookups, cold open over "
        f"{plan.cold_repeats} fresh process{'es' if plan.cold_repeats != 1 else ''}, turns over up to {plan.turn_repeats} turns (a measurement stops "
        f"repeating after {fmt_seconds(plan.budget_s)}, append runs after {fmt_seconds(plan.append_budget_s)}; "
        "`--json` has the exact counts).",
        "- **×k** = how many times faster agentmem_nb is than that row at the same N (the row's time ÷ agentmem_nb's; "
        "for append, agentmem_nb's rate ÷ the row's). Below ×1 the other store is faster.",
        "- ≈ marks an extrapolated figure (the footnote says what was really measured); *not run* and *n/a* say why.",
        "- Before timing, every store's answer is checked against the expected messages (same contents, same order); "
        "a store that answered differently would show *error*.",
        "- The workloads use each library the way its users naturally would (docstring of "
        "`benchmarks/peers/adapters.py`): FileChatMessageHistory keeps a conversation in one JSON file "
        "(`add_message`; reads parse `history.messages`); LangGraph stores put one item per message under "
        "namespace (user, session) with the message id as key, fetch a window with five `get`s, and find a keyword "
        "by listing the namespace with `search` and filtering in Python — their Store API has no substring filter, "
        "and `query=` is semantic search that needs an embedding index. The *raw SQL LIKE* row shows the best a "
        "SqliteStore user could do by leaving the Store API. agentmem_nb's append writes two files (the session "
        "and the day), as the agent does.",
        "- Keyword lookup means the last 20 messages containing the term, oldest first (what the agent's "
        "`search_session` asks for). agentmem_nb walks back from the newest message and stops at the 20th hit, so "
        "with one hit per 1,000 messages it scans about the last 20,000 messages whatever N is (all of them below "
        "N=20k): that is why its time stops growing past 100k. The raw-SQL row can stop early the same way "
        "(`ORDER BY rowid DESC LIMIT 20`); the Store API rows cannot, as `search` has no order to walk back in "
        "(SqliteStore sorts by `updated_at`, which has one-second resolution; InMemoryStore returns insertion "
        "order, oldest first), nor can FileChatMessageHistory (it parses the whole file).",
        "- Durability differs: agentmem_nb (default) and FileChatMessageHistory hand each write to the OS without "
        "fsync; SqliteStore commits every `put` in its own transaction with SQLite's default `synchronous=FULL` "
        "(fsync per put). The *durability='fsync'* row is the like-for-like comparison with SqliteStore.",
        "- Cold open: a fresh Python process per sample, with either a window or a keyword lookup as the first "
        "query (stores may defer work to the first query that needs it; imports are timed separately). The OS "
        "page cache is warm because the data was just written (dropping it needs root).",
        "",
        "## Targets",
        "",
        "| target | this run | verdict |",
        "|---|---|---|",
    ]
    for t in evaluate_targets(figures):
        lines.append(f"| {t.name} | {t.measured} | **{t.verdict}** |")
    lines.append("")
    reference_turn = next((f.peer for f in figures if f.workload == "turn" and f.peer.startswith(REFERENCE_ROW)),
                          REFERENCE_ROW)
    tables = list(_TABLES) + [_Table("memory overhead per turn (turn total minus model time), median", "turn",
                                     _turn)]
    for workload, heading in WORKLOADS.items():
        section = [t for t in tables if t.workload == workload]
        rendered: list[str] = []
        for table in section:
            reference = reference_turn if workload == "turn" else table.reference
            rendered += _render_table(table, figures, reference)
        if rendered:
            lines += [f"## {heading}", "", *rendered]
    return "\n".join(lines).rstrip() + "\n"


def render_json(results: Results) -> str:
    """The ``--json`` document: plan, machine, conditions, every figure and the targets."""
    document: dict[str, Any] = results.to_dict()
    document["targets"] = [t.to_dict() for t in evaluate_targets(results.figures)]
    return json.dumps(document, indent=2, ensure_ascii=False)
