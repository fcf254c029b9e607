"""Turn benchmark (issue 3, "Benchmark"): the overhead of one ``ChatService.turn`` with the offline model.

Overhead is everything a turn costs except the model's own time (``timings_ms["total"] - timings_ms["model"]``):
persisting the user message to session + day file, building the context, the agent graph, the tool calls, persisting
the reply with its trace, the dialogue log line and ``conversations.json``. The target is ≤ 20 ms per turn, flat in
the session's size.

For every size N the session file and the day file are pre-built with N messages each (written directly in the
store's JSONL format), with recall facts ("My kiwi017 is in box 34.") planted at evenly spaced depths. Then, on a
warm service (graph built, files indexed — the first turn is reported separately as *cold*), it runs

* **chat** turns: no tool call (one model step);
* **recall** turns: "What did I say about kiwi017?" — ``search_session`` finds the planted fact somewhere in the N
  messages, ``get_session_window`` expands it, then the reply (three model steps, two tool calls).

What to expect: chat turns are flat in N. Recall turns add the store's keyword scan, which for a rare keyword walks
the whole in-memory text of the session (about 1.7 ms of CPU at N = 100,000); everything else a turn does reads only
the tails of the files. The cold first turn at large N is the store indexing the two files once.

Usage::

    .venv/bin/python benchmarks/bench_turn.py                  # N = 100 and 100,000; 60 turns of each kind
    .venv/bin/python benchmarks/bench_turn.py --turns 20 --sizes 100,10000,100000 --json turn.json

Facts (issue 14): ``--facts background|hot|off`` is the service's fact mode (default ``background``, as a service is
built today); ``--preload-facts K`` records K facts for the user before the turns (a turn's latency must not grow
with K); ``--chat-text`` is the chat turn's message (``{i}`` is the turn number; a statement such as "I moved to
Town{i}." gives the extractor work); ``--memory`` measures, under ``tracemalloc``, the peak of Python memory
allocated during each chat turn and the drain of its extraction (a separate run: tracing slows every turn). Each
background extraction is drained after its turn, outside the timed part, so turns are measured alike in every mode.
See benchmarks/FACTS.md.

Figures are wall-clock on whatever machine runs this; on a shared machine they are noisy, so the process CPU time of
each whole turn (model included; tool threads included) is reported too: it is much less sensitive to other load.
"""

from __future__ import annotations

import argparse
import datetime as _dt
import json
import platform
import shutil
import statistics
import sys
import tempfile
import time
import tracemalloc
from pathlib import Path
from typing import Any, cast

# Runs from a checkout without installing the package (``python benchmarks/bench_turn.py``).
_REPO = Path(__file__).resolve().parents[1]
if str(_REPO) not in sys.path:
    sys.path.insert(0, str(_REPO))

from agentmem_nb import MemoryStore  # noqa: E402  (after the sys.path fix above)
from agentmem_nb.agent import ChatService, OfflineChatModel, TurnResult  # noqa: E402
from agentmem_nb.agent.facts_queue import FactMode  # noqa: E402
from agentmem_nb.store.facts import FactSource, Statement  # noqa: E402

USER = "bench-user"
SESSION = "bench-session"
ZONE = _dt.timezone(_dt.timedelta(hours=8))
DAY = _dt.date(2026, 4, 8)
BUILD_START = _dt.datetime(2026, 4, 8, 0, 0, tzinfo=ZONE)
TURNS_START = _dt.datetime(2026, 4, 8, 21, 0, tzinfo=ZONE)  # after every pre-built line, same day file
FACTS = 50
TARGET_MS = 20.0

_WORDS = ("project", "meeting", "coffee", "weather", "music", "garden", "travel", "recipe", "budget", "movie",
          "咖啡", "天气", "音乐", "旅行")


class StepClock:
    """Deterministic time: each call advances 1 ms (turn timings are measured with perf_counter, not this)."""

    def __init__(self, start: _dt.datetime) -> None:
        self.now = start

    def __call__(self) -> _dt.datetime:
        self.now += _dt.timedelta(milliseconds=1)
        return self.now


def _fact_positions(n: int) -> list[int]:
    """Positions (0-based) of the planted facts, evenly spread over the file."""
    count = min(FACTS, max(1, n // 2))
    return [int(i * (n - 1) / max(1, count - 1)) // 2 * 2 for i in range(count)]  # even = user messages


def build(root: Path, n: int) -> list[str]:
    """Write a session and a day file of ``n`` messages each; returns the planted fact keywords."""
    user_dir = root / USER
    (user_dir / "sessions").mkdir(parents=True)
    (user_dir / "daily").mkdir()
    facts = {pos: f"kiwi{k:03d}" for k, pos in enumerate(_fact_positions(n))}
    step = (TURNS_START - BUILD_START - _dt.timedelta(minutes=5)) / max(1, n)
    with open(user_dir / "sessions" / f"{SESSION}.jsonl", "w", encoding="utf-8") as session, \
            open(user_dir / "daily" / f"{DAY.isoformat()}.jsonl", "w", encoding="utf-8") as daily:
        for i in range(n):
            role = "user" if i % 2 == 0 else "assistant"
            if i in facts:
                content = f"My {facts[i]} is in box {i}."
            else:
                content = f"Message {i} about {_WORDS[i % len(_WORDS)]} and {_WORDS[(i * 7) % len(_WORDS)]}."
            base = {"ts": (BUILD_START + step * i).isoformat(timespec="microseconds"), "role": role,
                    "content": content}
            session.write(json.dumps({**base, "tags": ["session"], "meta": {"session_id": SESSION},
                                      "message_id": i + 1}, ensure_ascii=False) + "\n")
            daily.write(json.dumps({**base, "tags": ["daily"], "meta": {"session_id": SESSION},
                                    "message_id": i + 1}, ensure_ascii=False) + "\n")
    return list(facts.values())


def _overhead(result: TurnResult) -> float:
    return result.timings_ms["total"] - result.timings_ms["model"]


def _summary(values: list[float]) -> dict[str, float]:
    ordered = sorted(values)
    p95 = ordered[min(len(ordered) - 1, int(round(0.95 * (len(ordered) - 1))))]
    return {"median": statistics.median(ordered), "p95": p95, "min": ordered[0], "max": ordered[-1]}


CHAT_TEXT = "Tell me something about topic {i}."


def preload_facts(store: MemoryStore, k: int) -> None:
    """``k`` facts for the user, in one write: accumulating likes of many people (none supersedes another)."""
    if k > 0:
        store.user(USER).facts.record([Statement(f"friend{i % 97}", "likes", f"thing{i}", "add") for i in range(k)],
                                      source=FactSource("preload", 1), extracted_by="bench")


def run_size(n: int, turns: int, *, facts: str = "background", preload: int = 0, chat_text: str = CHAT_TEXT,
             memory: bool = False) -> dict[str, Any]:
    root = Path(tempfile.mkdtemp(prefix=f"bench-turn-{n}-"))
    try:
        started = time.perf_counter()
        keywords = build(root, n)
        build_s = time.perf_counter() - started
        store = MemoryStore(root, zone=ZONE, clock=StepClock(TURNS_START))
        preload_facts(store, preload)
        svc = ChatService(store, model=OfflineChatModel(), facts=cast(FactMode, facts))

        cold = svc.turn(USER, SESSION, "Hello, first turn of the benchmark.")
        svc.drain()
        results: dict[str, list[TurnResult]] = {"chat": [], "recall": []}
        cpu: dict[str, list[float]] = {"chat": [], "recall": []}
        peaks: list[float] = []
        if memory:
            tracemalloc.start()

        def timed(kind: str, text: str) -> TurnResult:
            if memory:
                tracemalloc.reset_peak()
                base = tracemalloc.get_traced_memory()[0]
            before = time.process_time()
            result = svc.turn(USER, SESSION, text)
            cpu[kind].append((time.process_time() - before) * 1000)
            results[kind].append(result)
            svc.drain()  # the background extraction of this turn, outside the timed part
            if memory and kind == "chat":
                peaks.append((tracemalloc.get_traced_memory()[1] - base) / 1024)
            return result

        for i in range(turns):
            timed("chat", chat_text.format(i=i))
            keyword = keywords[i % len(keywords)]
            recall = timed("recall", f"What did I say about {keyword}?")
            assert [c.name for c in recall.tool_calls] == ["search_session", "get_session_window"], recall.tool_calls
            assert f"My {keyword} is in box" in recall.reply, recall.reply

        if memory:
            tracemalloc.stop()
        out: dict[str, Any] = {"n": n, "build_s": round(build_s, 3), "cold_turn_ms": round(cold.timings_ms["total"], 3),
                               "graphs_built": svc.graphs_built, "facts": facts, "preloaded_facts": preload,
                               "facts_after": len(store.user(USER).facts.all())}
        if memory:
            out["chat_peak_kib"] = {k: round(v, 1) for k, v in _summary(peaks).items()}
        for kind, items in results.items():
            out[kind] = {
                "overhead_ms": {k: round(v, 3) for k, v in _summary([_overhead(r) for r in items]).items()},
                "model_ms_median": round(statistics.median(r.timings_ms["model"] for r in items), 3),
                "cpu_ms": {k: round(v, 3) for k, v in _summary(cpu[kind]).items()},
                "steps_ms_median": {step: round(statistics.median(r.timings_ms[step] for r in items), 3)
                                    for step in ("persist_user", "context", "agent", "tools", "persist_reply", "log",
                                                 "conversations")},
            }
        return out
    finally:
        shutil.rmtree(root, ignore_errors=True)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--sizes", default="100,100000", help="comma-separated session sizes (messages)")
    parser.add_argument("--turns", type=int, default=60, help="turns of each kind per size")
    parser.add_argument("--json", type=Path, help="also write the results here")
    parser.add_argument("--facts", choices=("background", "hot", "off"), default="background",
                        help="the service's fact mode (default: background)")
    parser.add_argument("--preload-facts", type=int, default=0, help="facts recorded for the user before the turns")
    parser.add_argument("--chat-text", default=CHAT_TEXT, help="the chat turn's message ({i}: the turn number)")
    parser.add_argument("--memory", action="store_true",
                        help="report the tracemalloc peak of each chat turn and its extraction (slower)")
    args = parser.parse_args(argv)
    sizes = [int(s) for s in args.sizes.split(",") if s.strip()]

    print(f"turn overhead, offline model; python {platform.python_version()} on {platform.machine()}; "
          f"{args.turns} turns of each kind per size; target median <= {TARGET_MS:g} ms, flat in N; "
          f"facts {args.facts}, {args.preload_facts} preloaded; chat text {args.chat_text!r}")
    rows = []
    for n in sizes:
        row = run_size(n, args.turns, facts=args.facts, preload=args.preload_facts, chat_text=args.chat_text,
                       memory=args.memory)
        rows.append(row)
        print(f"\nN = {n:>9,}  (files built in {row['build_s']} s; cold first turn {row['cold_turn_ms']} ms, "
              f"graphs built: {row['graphs_built']})")
        for kind in ("chat", "recall"):
            o = row[kind]["overhead_ms"]
            steps = ", ".join(f"{k} {v}" for k, v in row[kind]["steps_ms_median"].items())
            c = row[kind]["cpu_ms"]
            print(f"  {kind:<6} overhead median {o['median']:7.2f} ms   p95 {o['p95']:7.2f} ms   "
                  f"(model {row[kind]['model_ms_median']:.2f} ms; whole turn CPU median {c['median']:.2f} ms, "
                  f"p95 {c['p95']:.2f} ms)\n         median steps: {steps}")
        print(f"  facts: {row['facts_after']} after the turns")
        if "chat_peak_kib" in row:
            m = row["chat_peak_kib"]
            print(f"  chat turn + its extraction, traced peak: median {m['median']:.1f} KiB, p95 {m['p95']:.1f} KiB")
    if len(rows) >= 2:
        for kind in ("chat", "recall"):
            ratio = rows[-1][kind]["overhead_ms"]["median"] / rows[0][kind]["overhead_ms"]["median"]
            print(f"\n{kind}: median overhead at N={rows[-1]['n']:,} / at N={rows[0]['n']:,} = {ratio:.2f}")
    worst = max(row[kind]["overhead_ms"]["median"] for row in rows for kind in ("chat", "recall"))
    print(f"\nworst median overhead {worst:.2f} ms: {'within' if worst <= TARGET_MS else 'ABOVE'} the "
          f"{TARGET_MS:g} ms target")
    if args.json:
        args.json.write_text(json.dumps({"machine": platform.platform(), "turns": args.turns, "sizes": rows},
                                        indent=2) + "\n", encoding="utf-8")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
