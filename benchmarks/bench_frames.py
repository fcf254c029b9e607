"""Frames benchmark (issue 4): load N messages into a DataFrame — seconds and peak memory at N = 100k and 1M.

Target (issue 4): 1M messages in ≤ 3 s and ≤ 2 × the file size in peak memory.

For every N a child process writes one session file of N messages in the store's own JSONL format (offset-aware
timestamps, ``message_id`` 1..N, English/Chinese content, a tool call on every sixth message). Then, for every N, two
fresh child processes (so peak RSS belongs to that N and that case alone) measure:

* **cold** — a notebook's very first load: ``frames.session_messages(mem, sid)`` in a process that has never read
  the file (no store index). ``reader`` says which reader loaded it: ``columnar`` (pyarrow, ``frames._fast``) or
  ``exact`` (the store's line index + orjson), with the columnar reader's refusal reason if it refused;
* **tool calls**: then ``frames.tool_calls(mem, source="sessions")`` in the same process;
* **index**: in the second process, the store's own first read of the file (``len(session)`` — the line index that
  windows and searches need; the store's cost, not the frames');
* **frame (warm)**: then ``frames.session_messages(mem, sid)`` with the index built — what a notebook pays on a
  reload;
* **peak memory**: the growth of peak RSS during the cold load over RSS after imports, and during the warm load
  over RSS just before it (the index already resident); both also as a multiple of the file size. ``frame MB`` is
  pandas' own ``memory_usage(deep=True)`` of the result.

``--exact`` measures the exact reader alone (the columnar reader switched off), for comparison.

Usage::

    .venv/bin/python benchmarks/bench_frames.py                  # N = 100k and 1M (about a minute or two)
    .venv/bin/python benchmarks/bench_frames.py --sizes 10000    # quick
    .venv/bin/python benchmarks/bench_frames.py --json out.json
    .venv/bin/python benchmarks/bench_frames.py --exact          # the exact reader only

Figures are wall-clock on whatever machine runs this; on a shared machine they are noisy (the load average at the
start and end of each measurement is printed with it).
"""

from __future__ import annotations

import argparse
import datetime as _dt
import json
import os
import random
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

_REPO = Path(__file__).resolve().parents[1]
if str(_REPO) not in sys.path:
    sys.path.insert(0, str(_REPO))

USER = "bench-user"
SESSION = "bench-session"
ZONE = "Asia/Shanghai"
TARGET_SECONDS_1M = 3.0
TARGET_MEMORY_RATIO = 2.0

_EN = ("the", "project", "meeting", "moved", "Lyon", "coffee", "swim", "job", "interview", "memory", "agent", "tool",
       "search", "window", "birthday", "tea", "train", "weekend", "report", "python", "pandas", "notebook")
_ZH = ("我", "喜欢", "蓝莓", "生日", "咖啡", "游泳", "工作", "面试", "记忆", "周末", "火车", "报告", "笔记本")
_TOOLS = ("search_session", "search_daily", "get_session_window", "remember_note")


def _rss_mb() -> float:
    """Current resident set size (MB), from /proc."""
    with open("/proc/self/statm", encoding="ascii") as handle:
        pages = int(handle.read().split()[1])
    return pages * os.sysconf("SC_PAGE_SIZE") / 2**20


def _peak_mb() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024  # Linux: KiB


def _load() -> float:
    return os.getloadavg()[0]


def _calibrate() -> float:
    """Seconds for a fixed pure-Python loop (about 0.5 s on an idle 2020s core): how busy the machine was."""
    t0 = time.perf_counter()
    total = 0
    for i in range(10_000_000):
        total += i
    return time.perf_counter() - t0


def build(path: Path, n: int, seed: int = 7) -> None:
    """Write ``n`` messages as ``JsonlFile.append`` would (same keys and spacing)."""
    rnd = random.Random(seed)
    sentences = []
    for _ in range(2000):
        if rnd.random() < 0.35:
            sentences.append("".join(rnd.choice(_ZH) for _ in range(rnd.randint(4, 30))) + "。")
        else:
            sentences.append(" ".join(rnd.choice(_EN) for _ in range(rnd.randint(4, 25))) + ".")
    start = _dt.datetime(2026, 1, 1, tzinfo=_dt.timezone(_dt.timedelta(hours=8)))
    path.parent.mkdir(parents=True, exist_ok=True)
    dumps = json.dumps
    with open(path, "w", encoding="utf-8") as handle:
        moment = start
        batch = []
        for i in range(1, n + 1):
            moment += _dt.timedelta(seconds=rnd.randint(1, 40), microseconds=rnd.randint(0, 999_999))
            role = "user" if i % 2 else "assistant"
            content = " ".join(rnd.choice(sentences) for _ in range(rnd.randint(1, 3 if role == "user" else 5)))
            meta: dict[str, Any] = {}
            if i % 6 == 0:
                meta["tool_calls"] = [{"id": f"call_{i}", "name": rnd.choice(_TOOLS),
                                       "input": {"keyword": rnd.choice(_EN)},
                                       "output": f"#{i - 1} [2026-01-01 10:00] user: {content[:60]}",
                                       "duration_ms": round(rnd.uniform(1, 50), 3)}]
            meta["session_id"] = SESSION
            record = {"ts": moment.isoformat(timespec="microseconds"), "role": role, "content": content,
                      "tags": ["session"], "meta": meta, "message_id": i}
            batch.append(dumps(record, ensure_ascii=False))
            if len(batch) >= 10_000:
                handle.write("\n".join(batch) + "\n")
                batch = []
        if batch:
            handle.write("\n".join(batch) + "\n")


def _reader(stats: Any) -> str:
    if stats.columnar_files:
        return "columnar"
    return "exact" + (f" ({stats.refusals[0].split(': ', 1)[1]})" if stats.refusals else "")


def _prepare(exact: bool) -> tuple[Any, Any]:
    import gc

    import pandas  # noqa: F401  - imported before the baseline so the baseline includes it

    from agentmem_nb import MemoryStore, frames
    from agentmem_nb.frames import _fast

    if exact:
        _fast.FAST_MIN_BYTES = 1 << 62
    gc.collect()
    return MemoryStore, frames


def measure_cold(root: Path, n: int, *, exact: bool = False) -> dict[str, Any]:
    """Run in a fresh process: the first frame load (no index), its reader and peak memory; then tool calls."""
    import gc

    memory_store, frames = _prepare(exact)
    size_mb = (root / USER / "sessions" / f"{SESSION}.jsonl").stat().st_size / 2**20
    rss_start = _rss_mb()
    load_start = _load()
    calibration = _calibrate()
    mem = memory_store(root, zone=ZONE).user(USER)
    stats = frames.ReadStats()
    t0, c0 = time.perf_counter(), time.process_time()
    frame = frames.session_messages(mem, SESSION, stats=stats)
    cold_s, cold_cpu = time.perf_counter() - t0, time.process_time() - c0
    peak = _peak_mb()
    assert len(frame) == n and int(frame["message_id"].iloc[-1]) == n, (len(frame), n)
    frame_mb = frame.memory_usage(deep=True).sum() / 2**20
    del frame
    gc.collect()
    t0 = time.perf_counter()
    calls = frames.tool_calls(mem, source="sessions")
    tools_s = time.perf_counter() - t0
    assert len(calls) == n // 6
    return {
        "n": n,
        "file_mb": round(size_mb, 1),
        "reader": _reader(stats),
        "cold_s": round(cold_s, 2),
        "cold_cpu_s": round(cold_cpu, 2),
        "tool_calls_s": round(tools_s, 2),
        "cold_peak_growth_mb": round(peak - rss_start, 1),
        "cold_peak_ratio": round((peak - rss_start) / size_mb, 2),
        "frame_mb": round(frame_mb, 1),
        "load_avg": [round(load_start, 2), round(_load(), 2)],
        "calibration_s": round(calibration, 2),
    }


def measure_warm(root: Path, n: int, *, exact: bool = False) -> dict[str, Any]:
    """Run in a fresh process: the store's index, then a frame load with it built, and that load's peak memory."""
    memory_store, frames = _prepare(exact)
    size_mb = (root / USER / "sessions" / f"{SESSION}.jsonl").stat().st_size / 2**20
    load_start = _load()
    mem = memory_store(root, zone=ZONE).user(USER)
    t0, c0 = time.perf_counter(), time.process_time()
    rows_indexed = len(mem.session(SESSION))
    index_s, index_cpu = time.perf_counter() - t0, time.process_time() - c0
    rss_before_frame = _rss_mb()
    stats = frames.ReadStats()
    t0, c0 = time.perf_counter(), time.process_time()
    frame = frames.session_messages(mem, SESSION, stats=stats)
    frame_s, frame_cpu = time.perf_counter() - t0, time.process_time() - c0
    peak = _peak_mb()
    assert len(frame) == rows_indexed == n, (len(frame), rows_indexed, n)
    return {
        "index_s": round(index_s, 2),
        "index_cpu_s": round(index_cpu, 2),
        "frame_s": round(frame_s, 2),
        "frame_cpu_s": round(frame_cpu, 2),
        "warm_reader": _reader(stats),
        "frame_peak_growth_mb": round(peak - rss_before_frame, 1),
        "frame_peak_ratio": round((peak - rss_before_frame) / size_mb, 2),
        "warm_load_avg": [round(load_start, 2), round(_load(), 2)],
    }


def _child(args: list[str]) -> dict[str, Any]:
    out = subprocess.run([sys.executable, __file__, *args], check=True, capture_output=True, text=True)
    return json.loads(out.stdout.strip().splitlines()[-1])


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--sizes", default="100000,1000000", help="comma-separated N (default: 100000,1000000)")
    parser.add_argument("--json", metavar="PATH", help="also write the results as JSON to PATH")
    parser.add_argument("--root", help="build under this folder and keep the files (default: a temporary one)")
    parser.add_argument("--exact", action="store_true", help="switch the columnar reader off (the exact reader only)")
    parser.add_argument("--_build", nargs=2, help=argparse.SUPPRESS)
    parser.add_argument("--_measure", nargs=3, help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args._build:
        build(Path(args._build[0]) / USER / "sessions" / f"{SESSION}.jsonl", int(args._build[1]))
        print(json.dumps({"built": True}))
        return 0
    if args._measure:
        which = measure_cold if args._measure[0] == "cold" else measure_warm
        print(json.dumps(which(Path(args._measure[1]), int(args._measure[2]), exact=args.exact)))
        return 0

    sizes = [int(s) for s in args.sizes.split(",") if s.strip()]
    results = []
    with tempfile.TemporaryDirectory(prefix="bench-frames-") as scratch:
        base = Path(args.root) if args.root else Path(scratch)
        for n in sizes:
            root = base / f"n{n}"
            if not (root / USER / "sessions" / f"{SESSION}.jsonl").exists():
                print(f"building {n:,} messages ...", file=sys.stderr)
                _child(["--_build", str(root), str(n)])
            print(f"measuring {n:,} ...", file=sys.stderr)
            flags = ["--exact"] if args.exact else []
            result = _child(["--_measure", "cold", str(root), str(n), *flags])
            result.update(_child(["--_measure", "warm", str(root), str(n), *flags]))
            results.append(result)
            if not args.root:
                (root / USER / "sessions" / f"{SESSION}.jsonl").unlink()
    header = ("| N | file MB | reader | cold s (cpu) | index s (cpu) | frame s (cpu), warm | tool calls s |"
              " peak growth, cold | peak growth, frame | frame MB | load avg | calibration s |")
    print(header)
    print("|---" * (header.count("|") - 1) + "|")
    for r in results:
        print(f"| {r['n']:,} | {r['file_mb']} | {r['reader']} | {r['cold_s']} ({r['cold_cpu_s']}) | "
              f"{r['index_s']} ({r['index_cpu_s']}) | {r['frame_s']} ({r['frame_cpu_s']}) | {r['tool_calls_s']} | "
              f"{r['cold_peak_growth_mb']} MB ({r['cold_peak_ratio']}×) | "
              f"{r['frame_peak_growth_mb']} MB ({r['frame_peak_ratio']}×) | {r['frame_mb']} | "
              f"{r['load_avg'][0]} → {r['load_avg'][1]} | {r['calibration_s']} |")
    big = [r for r in results if r["n"] >= 1_000_000]
    for r in big:
        print(f"\n1M target: cold {r['cold_s']} s ({r['reader']}) / warm {r['frame_s']} s "
              f"vs ≤ {TARGET_SECONDS_1M} s; peak {r['cold_peak_ratio']}× (cold) / {r['frame_peak_ratio']}× (warm) "
              f"vs ≤ {TARGET_MEMORY_RATIO}× the file size")
    if args.json:
        Path(args.json).write_text(json.dumps({"results": results, "python": sys.version.split()[0]}, indent=2))
    return 0


if __name__ == "__main__":
    sys.exit(main())
