"""Workloads 1-4, timed inside one worker process (see :mod:`benchmarks.peers.worker`).

Every read workload first checks that the peer returned exactly the expected messages (same contents, same order):
a figure for a store that answered differently would compare nothing, so it becomes an ``"error"`` figure instead.
"""

from __future__ import annotations

import statistics
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from benchmarks.peers.adapters import KEYWORD_LIMIT, Peer, remove_tree
from benchmarks.peers.data import TERM, anchors, chunk, term_ids
from benchmarks.peers.figures import Figure

__all__ = ["measure_append", "measure_window", "measure_keyword", "cold_open", "rss_mb"]


def _now() -> float:
    return time.perf_counter()


def _repeat(action: Callable[[], object], *, max_runs: int, budget_s: float) -> list[float]:
    """Seconds taken by each run of ``action``: at least one run, then more while under ``max_runs`` and the budget."""
    durations: list[float] = []
    started = _now()
    while len(durations) < max(1, max_runs):
        t0 = _now()
        action()
        durations.append(_now() - t0)
        if _now() - started >= budget_s:
            break
    return durations


def rss_mb() -> tuple[float, float]:
    """(current RSS, peak RSS) of this process in MiB, from ``/proc/self/status`` (Linux)."""
    current = peak = 0.0
    try:
        with open("/proc/self/status", encoding="ascii") as handle:
            for line in handle:
                if line.startswith("VmRSS:"):
                    current = int(line.split()[1]) / 1024
                elif line.startswith("VmHWM:"):
                    peak = int(line.split()[1]) / 1024
    except OSError:  # not Linux: ru_maxrss is the peak (KiB on Linux, bytes on macOS — only Linux is supported here)
        import resource

        peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    return current, peak


# ---------------------------------------------------------------------------------------------------- 1. append


@dataclass(frozen=True, slots=True)
class _AppendRun:
    total_s: float
    first_us: float
    last_us: float
    timed_fraction: float = 1.0
    """Share of the n appends that were timed (below 1 when the run hit its cap and the middle was interpolated)."""


def _append_full(peer_cls: type[Peer], n: int, folder: Path, *, cap_s: float | None) -> tuple[Peer, _AppendRun]:
    """Append messages 1..n from an empty store, timing each 1% slice (messages are built before a slice is timed).

    With ``cap_s``, once the timed slices exceed it the slices left before the last are filled untimed with
    ``bulk_load``, the last slice is timed as usual, and the skipped middle is costed by linear interpolation between
    the last timed slice and the final one (append costs here do not jump, so a line is a fair model).
    """
    remove_tree(folder)
    peer = peer_cls(folder)
    step = max(1, n // 100)
    bounds = [(first, min(n, first + step - 1)) for first in range(1, n + 1, step)]
    timed: list[tuple[float, int]] = []  # (seconds, messages) per timed slice
    skipped = 0
    index = 0
    while index < len(bounds):
        last_slice = index == len(bounds) - 1
        if cap_s is not None and not last_slice and timed and sum(t for t, _ in timed) > cap_s:
            fill_from, fill_to = bounds[index][0], bounds[-2][1]
            for start in range(fill_from, fill_to + 1, 10_000):
                peer.bulk_load(chunk(n, start, min(fill_to, start + 9_999)))
            skipped = fill_to - fill_from + 1
            index = len(bounds) - 1
            continue
        messages = chunk(n, *bounds[index])
        t0 = _now()
        for message in messages:
            peer.append(message)
        timed.append((_now() - t0, len(messages)))
        index += 1
    total = sum(seconds for seconds, _ in timed)
    first_us = timed[0][0] / timed[0][1] * 1e6
    last_us = timed[-1][0] / timed[-1][1] * 1e6
    if skipped:
        before_us = timed[-2][0] / timed[-2][1] * 1e6
        total += skipped * (before_us + last_us) / 2 / 1e6
    return peer, _AppendRun(total, first_us, last_us, 1 - skipped / n)


def _append_ends(peer: Peer, n: int, *, last_budget_s: float) -> dict[str, float]:
    """For a peer whose append rewrites its whole history: time the first 1% from empty, fill the middle untimed,
    time (a sample of) the last 1%, and extrapolate the total from a straight line through the two per-append costs
    (each append reads and rewrites every earlier message, so its cost grows linearly with position)."""
    step = max(1, n // 100)
    head = chunk(n, 1, step)
    t0 = _now()
    for message in head:
        peer.append(message)
    first_us = (_now() - t0) / len(head) * 1e6
    for start in range(step + 1, n - step + 1, 10_000):  # untimed fill, in slices to bound memory
        peer.bulk_load(chunk(n, start, min(n - step, start + 9_999)))
    tail = chunk(n, n - step + 1, n)
    done = 0
    t0 = _now()
    while done < len(tail):
        peer.append(tail[done])
        done += 1
        if done >= min(3, len(tail)) and _now() - t0 >= last_budget_s:
            break
    last_us = (_now() - t0) / done * 1e6
    if done < len(tail):
        peer.bulk_load(tail[done:])  # the read workloads need all n messages
    p_first = (step + 1) / 2
    p_last = n - step + (done + 1) / 2
    slope = (last_us - first_us) / (p_last - p_first) if p_last > p_first else 0.0
    intercept = first_us - slope * p_first
    total_s = (intercept * n + slope * n * (n + 1) / 2) / 1e6
    return {"total_s": total_s, "first_us": first_us, "last_us": last_us, "sampled_last": float(done),
            "slice": float(len(tail))}


def _warm_up(peer_cls: type[Peer], folder: Path) -> None:
    """A few untimed appends in a scratch store, so one-time costs (lazy imports, first-call setup) are not
    charged to the first 1% of the timed run."""
    remove_tree(folder)
    peer = peer_cls(folder)
    for message in chunk(10, 1, 10):
        peer.append(message)
    peer.window(5, 10)
    peer.keyword("warm", 10)
    peer.close()
    remove_tree(folder)


def measure_append(peer_cls: type[Peer], n: int, workdir: Path, *, repeats: int, budget_s: float,
                   sample_budget_s: float) -> tuple[Figure, Peer]:
    """Workload 1. Returns the figure and the peer holding the full conversation (for the read workloads).

    Full runs repeat up to ``repeats`` times while under ``budget_s``. A peer that rewrites its history is first
    measured at both ends (the last 1% sampled for up to ``sample_budget_s``); if the estimated full run exceeds
    ``budget_s`` that estimate is the figure, marked ``"estimated"``.
    """
    folder = workdir / "data"
    _warm_up(peer_cls, workdir / "warm-up")
    probe_estimate_s = None
    if peer_cls.rewrites_history:
        remove_tree(folder)
        probe = peer_cls(folder)
        ends = _append_ends(probe, n, last_budget_s=sample_budget_s)
        if ends["total_s"] > budget_s:
            metrics = {"msgs_per_s": n / ends["total_s"], "first_us": ends["first_us"], "last_us": ends["last_us"],
                       "last_first_ratio": ends["last_us"] / ends["first_us"], "total_s": ends["total_s"],
                       "runs": 1.0, "sampled_last": ends["sampled_last"]}
            sampled = int(ends["sampled_last"])
            note = (f"a full run would take ≈{_duration(ends['total_s'])} (> budget {_duration(budget_s)}): "
                    f"first 1% ({int(ends['slice'])} appends from empty) and "
                    f"{'all' if sampled == int(ends['slice']) else f'{sampled} of the'} last-1% appends measured, "
                    "the total extrapolated linearly between them")
            return Figure("append", peer_cls.label, n, "estimated", metrics, note), probe
        probe.close()
        probe_estimate_s = ends["total_s"]  # kept to show how close the extrapolation is where both exist
    runs: list[_AppendRun] = []
    peer: Peer | None = None
    started = _now()
    while len(runs) < max(1, repeats):
        if peer is not None:
            peer.close()
        peer, run = _append_full(peer_cls, n, folder, cap_s=budget_s if peer_cls.may_extrapolate else None)
        runs.append(run)
        if _now() - started >= budget_s or run.timed_fraction < 1:
            break
    assert peer is not None
    total = statistics.median(r.total_s for r in runs)
    metrics = {"msgs_per_s": n / total, "first_us": statistics.median(r.first_us for r in runs),
               "last_us": statistics.median(r.last_us for r in runs),
               "last_first_ratio": statistics.median(r.last_us / r.first_us for r in runs), "total_s": total,
               "runs": float(len(runs))}
    partial = runs[-1].timed_fraction
    if partial < 1:
        note = (f"the first appends were timed until the {_duration(budget_s)} budget ran out, the rest but the last "
                f"1% loaded untimed, the last 1% timed ({partial:.0%} of all appends timed); the untimed middle is "
                "costed by linear interpolation")
        return Figure("append", peer_cls.label, n, "estimated", metrics, note), peer
    note = ""
    if probe_estimate_s is not None:
        metrics["probe_estimate_s"] = probe_estimate_s
        note = (f"runs in full; the end-point extrapolation used where a full run is too long predicted "
                f"{probe_estimate_s:.1f} s for this run, measured {total:.1f} s")
    return Figure("append", peer_cls.label, n, "measured", metrics, note), peer


def _duration(seconds: float) -> str:
    if seconds >= 7200:
        return f"{seconds / 3600:.0f} h"
    if seconds >= 120:
        return f"{seconds / 60:.0f} min"
    return f"{seconds:.0f} s"


# ---------------------------------------------------------------------------------------------------- 2-3. reads


def _expected(n: int, ids: list[int]) -> list[str]:
    return [chunk(n, i, i)[0].content for i in ids]


def _window_ids(anchor: int, n: int) -> list[int]:
    return list(range(max(1, anchor - 2), min(n, anchor + 2) + 1))


def measure_window(peer: Peer, n: int, *, calls: int, budget_s: float) -> Figure:
    """Workload 2: median latency of ``window(anchor)`` over spread-out anchors, after one checked warm-up call."""
    spots = anchors(n, calls + 1)
    got = peer.window(spots[0], n)
    if got != _expected(n, _window_ids(spots[0], n)):
        return Figure("window", peer.label, n, "error", note=f"wrong messages for anchor {spots[0]}: {len(got)} returned")
    queue = iter(spots[1:])
    durations = _repeat(lambda: peer.window(next(queue), n), max_runs=calls, budget_s=budget_s)
    return Figure("window", peer.label, n, "measured",
                  {"median_us": statistics.median(durations) * 1e6, "runs": float(len(durations))})


def measure_keyword(peer: Peer, n: int, *, repeats: int, budget_s: float) -> list[Figure]:
    """Workload 3 for the peer's own strategy and each extra strategy it offers (e.g. raw SQL)."""
    expected = _expected(n, term_ids(n)[-KEYWORD_LIMIT:])
    strategies: list[tuple[str, Callable[[], list[str]]]] = [(peer.label, lambda: peer.keyword(TERM, n))]
    for label in peer.extra_keyword_rows:
        strategies.append((label, lambda label=label: peer.keyword_variant(label, TERM, n)))  # type: ignore[misc]
    figures = []
    for label, action in strategies:
        got = action()
        if got != expected:
            figures.append(Figure("keyword", label, n, "error",
                                  note=f"returned {len(got)} messages, expected the {len(expected)} planted hits"))
            continue
        durations = _repeat(action, max_runs=repeats, budget_s=budget_s)
        figures.append(Figure("keyword", label, n, "measured",
                              {"median_ms": statistics.median(durations) * 1e3, "runs": float(len(durations))}))
    return figures


# ---------------------------------------------------------------------------------------------------- 4. cold open


def cold_open(peer_cls: type[Peer], n: int, folder: Path, *, first: str = "window") -> dict[str, float]:
    """Workload 4, one sample (call in a fresh process): import, then open the store and run one query — the window
    around the middle message (``first="window"``) or the keyword lookup (``first="keyword"``). Peak RSS is the
    process's high-water mark after the query; its growth is measured from just before the open.

    Keys: ``open_query_ms``, ``peak_rss_mb``, ``rss_growth_mb`` for a window first; ``open_keyword_ms``,
    ``keyword_peak_rss_mb``, ``keyword_rss_growth_mb`` for a keyword first; ``import_s`` for both.
    """
    if first not in ("window", "keyword"):
        raise ValueError(f"first query must be 'window' or 'keyword', not {first!r}")
    t0 = _now()
    peer_cls.import_library()
    import_s = _now() - t0
    _, peak_before = rss_mb()
    anchor = max(1, n // 2)
    t0 = _now()
    peer = peer_cls(folder)
    got = peer.window(anchor, n) if first == "window" else peer.keyword(TERM, n)
    open_query_s = _now() - t0
    _, peak_after = rss_mb()
    peer.close()
    expected = (_expected(n, _window_ids(anchor, n)) if first == "window"
                else _expected(n, term_ids(n)[-KEYWORD_LIMIT:]))
    if got != expected:
        raise RuntimeError(f"{peer_cls.label}: cold {first} query returned the wrong messages")
    if first == "window":
        return {"open_query_ms": open_query_s * 1e3, "import_s": import_s, "peak_rss_mb": peak_after,
                "rss_growth_mb": peak_after - peak_before}
    return {"open_keyword_ms": open_query_s * 1e3, "import_s": import_s, "keyword_peak_rss_mb": peak_after,
            "keyword_rss_growth_mb": peak_after - peak_before}
