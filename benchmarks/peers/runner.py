"""Runs the plan: one worker process per (peer, N), cold-open samples in fresh processes, then the turn workload.

Everything a peer could not (or was not asked to) run still gets a figure, with ``"not run"`` or ``"n/a"`` and the
reason, so a table never silently drops a row.
"""

from __future__ import annotations

import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from benchmarks.peers.adapters import PEERS, remove_tree
from benchmarks.peers.figures import Figure
from benchmarks.peers.machine import describe_machine, fsync_latency_us, load_average
from benchmarks.peers.turn import run_turn_workload

__all__ = ["Plan", "QUICK", "FULL", "Results", "run_plan", "run_worker", "snapshot_code", "UNCAPPED_PEER"]

UNCAPPED_PEER = "agentmem"
"""The only store run beyond ``Plan.peer_max_n`` (the 1M column is agentmem_nb alone)."""

_REPO = Path(__file__).resolve().parents[2]


@dataclass(frozen=True, slots=True)
class Plan:
    """What to run. :data:`QUICK` and :data:`FULL` are the two presets; command-line options override fields."""

    sizes: tuple[int, ...]
    peers: tuple[str, ...] = tuple(PEERS)
    peer_max_n: int = 100_000
    repeats: int = 3
    repeats_read: int = 20
    calls: int = 200
    budget_s: float = 60.0
    """Seconds one read measurement may take before its repeats stop (there is always at least one run)."""
    append_budget_s: float = 400.0
    """The same for whole append runs; a quadratic peer whose estimated run exceeds it is extrapolated."""
    cold_repeats: int = 3
    turn_sizes: tuple[int, ...] = (100, 1_000, 10_000, 100_000)
    turn_repeats: int = 15
    quick: bool = False
    workdir: Path | None = None

    def with_overrides(self, **changes: Any) -> Plan:
        """A copy with the non-``None`` values of ``changes`` applied."""
        return replace(self, **{k: v for k, v in changes.items() if v is not None})


QUICK = Plan(sizes=(100, 300), peer_max_n=100, repeats=2, repeats_read=5, calls=20, budget_s=1.0,
             append_budget_s=0.5, cold_repeats=1, turn_sizes=(30,), turn_repeats=3, quick=True)
FULL = Plan(sizes=(1_000, 10_000, 100_000, 1_000_000))


@dataclass(slots=True)
class Results:
    """Everything the report needs."""

    plan: Plan
    machine: dict[str, Any]
    figures: list[Figure] = field(default_factory=list)
    conditions: dict[str, Any] = field(default_factory=dict)

    rendered_from: str = ""
    """Set when these results were read back from a JSON file rather than measured by this process."""

    @classmethod
    def from_dict(cls, raw: dict[str, Any], *, source: str = "") -> Results:
        """Inverse of :meth:`to_dict` (``--from-json`` re-renders a run without measuring again)."""
        fields = dict(raw["plan"])
        for name in ("sizes", "peers", "turn_sizes"):
            fields[name] = tuple(fields[name])
        fields["workdir"] = Path(fields["workdir"]) if fields.get("workdir") else None
        return cls(plan=Plan(**fields), machine=dict(raw["machine"]),
                   figures=[Figure.from_dict(f) for f in raw["figures"]], conditions=dict(raw.get("conditions", {})),
                   rendered_from=source)

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready form (``--json``)."""
        plan = {name: getattr(self.plan, name) for name in Plan.__slots__}  # type: ignore[attr-defined]
        plan["workdir"] = str(plan["workdir"]) if plan["workdir"] else None
        return {"plan": plan, "machine": self.machine, "conditions": self.conditions,
                "figures": [f.to_dict() for f in self.figures]}


def snapshot_code(root: Path) -> Path:
    """Copy the code under test (``agentmem_nb`` and ``benchmarks``) into ``root/code``.

    Workers import from the copy (it comes first on their ``PYTHONPATH``, ahead of the editable install), so edits
    made to the checkout while a long run is in progress cannot change the code halfway through it.
    """
    target = root / "code"
    for package in ("agentmem_nb", "benchmarks"):
        shutil.copytree(_REPO / package, target / package,
                        ignore=shutil.ignore_patterns("__pycache__", "*.pyc", "RESULTS*.md"))
    return target


def _python_env(code: Path) -> dict[str, str]:
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(code), env.get("PYTHONPATH", "")]))
    env.setdefault("PYTHONHASHSEED", "0")
    return env


def run_worker(args: list[str], out: Path, timeout: float, *, code: Path = _REPO) -> tuple[Any, str]:
    """Run ``python -m benchmarks.peers.worker ARGS --out OUT``; return (its parsed output or None, error text)."""
    command = [sys.executable, "-m", "benchmarks.peers.worker", *args, "--out", str(out)]
    try:
        done = subprocess.run(command, cwd=code, env=_python_env(code), stdout=subprocess.DEVNULL,
                              stderr=subprocess.PIPE, text=True, timeout=timeout)
    except subprocess.TimeoutExpired:
        return None, f"worker timed out after {timeout:.0f} s"
    if done.returncode != 0 or not out.exists():
        tail = (done.stderr or "").strip().splitlines()[-3:]
        return None, f"worker failed (exit {done.returncode}): {' | '.join(tail)}"
    return json.loads(out.read_text()), ""


def _not_run(peer_key: str, n: int, plan: Plan) -> list[Figure]:
    cls = PEERS[peer_key]
    note = (f"peers are compared up to N={plan.peer_max_n:,}; this column is agentmem_nb alone")
    return [Figure(w, cls.label, n, "not run", note=note) for w in ("append", "window", "keyword", "cold")
            if w in cls.workloads] + [Figure("keyword", label, n, "not run", note=note)
                                       for label in cls.extra_keyword_rows]


def _cold_figures(peer_key: str, n: int, case_dir: Path, plan: Plan, code: Path) -> Figure:
    """Cold-open samples in fresh processes, alternating a window and a keyword lookup as the first query."""
    cls = PEERS[peer_key]
    samples: dict[str, list[dict[str, float]]] = {"window": [], "keyword": []}
    for i in range(max(1, plan.cold_repeats)):
        for first, found in samples.items():
            out = case_dir / f"cold-{first}-{i}.json"
            sample, error = run_worker(["cold", "--peer", peer_key, "--n", str(n), "--workdir", str(case_dir),
                                        "--first", first], out, timeout=max(120.0, plan.append_budget_s), code=code)
            if sample is None:
                return Figure("cold", cls.label, n, "error", note=f"{first} first: {error}")
            found.append(sample)
    metrics: dict[str, float] = {}
    for found in samples.values():
        for key in found[0]:
            metrics[key] = statistics.median(s[key] for s in found)
    metrics["import_s"] = statistics.median(s["import_s"] for found in samples.values() for s in found)
    metrics["runs"] = float(len(samples["window"]))
    return Figure("cold", cls.label, n, "measured", metrics)


def _run_case(peer_key: str, n: int, root: Path, plan: Plan, code: Path) -> list[Figure]:
    cls = PEERS[peer_key]
    case_dir = root / f"{peer_key}-{n}"
    case_dir.mkdir(parents=True, exist_ok=True)
    try:
        args = ["run", "--peer", peer_key, "--n", str(n), "--workdir", str(case_dir),
                "--repeats", str(plan.repeats), "--repeats-read", str(plan.repeats_read), "--calls", str(plan.calls),
                "--budget", str(plan.budget_s), "--append-budget", str(plan.append_budget_s)]
        # Generous: a run may use its whole append budget per repeat plus read budgets, on a loaded machine.
        timeout = 4 * plan.append_budget_s * max(1, plan.repeats) + 10 * plan.budget_s + 300
        raw, error = run_worker(args, case_dir / "figures.json", timeout, code=code)
        if raw is None:
            return [Figure(w, cls.label, n, "error", note=error) for w in ("append", "window", "keyword")
                    if w in cls.workloads]
        figures = [Figure.from_dict(item) for item in raw]
        if "cold" in cls.workloads:
            figures.append(_cold_figures(peer_key, n, case_dir, plan, code))
        return figures
    finally:
        remove_tree(case_dir)


def _in_memory_cold(peer_key: str, n: int) -> Figure:
    return Figure("cold", PEERS[peer_key].label, n, "n/a",
                  note="in-memory store: nothing persists, so there is nothing to reopen")


def run_plan(plan: Plan, *, progress: Callable[[str], None] = lambda line: None) -> Results:
    """Run every case of ``plan`` and return the figures (workloads 1-5) with the machine description."""
    root = Path(tempfile.mkdtemp(prefix="agentmem-bench-", dir=plan.workdir))
    started = time.monotonic()
    results = Results(plan=plan, machine=describe_machine(root, repo=_REPO))
    results.conditions = {"load_before": load_average(), "fsync_us_before": fsync_latency_us(root)}
    try:
        code = snapshot_code(root)
        for n in plan.sizes:
            for peer_key in plan.peers:
                cls = PEERS[peer_key]
                if peer_key != UNCAPPED_PEER and n > plan.peer_max_n:
                    results.figures += _not_run(peer_key, n, plan)
                else:
                    progress(f"{cls.label}: N={n:,} …")
                    t0 = time.monotonic()
                    results.figures += _run_case(peer_key, n, root, plan, code)
                    progress(f"{cls.label}: N={n:,} done in {time.monotonic() - t0:.1f} s")
                if not cls.persistent:
                    results.figures.append(_in_memory_cold(peer_key, n))
        results.figures += run_turn_workload(plan, root, code=code, progress=progress)
    finally:
        results.conditions.update({"load_after": load_average(), "fsync_us_after": fsync_latency_us(root),
                                   "duration_s": round(time.monotonic() - started, 1)})
        remove_tree(root)
    return results
