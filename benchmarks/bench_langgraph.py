"""LangGraph sources as frames, and ``AgentMemStore`` beside LangGraph's own stores (issue 16).

Three measurements, each through public APIs only:

* **thread → frames**: a thread of ``--steps`` steps built by a real ``StateGraph`` (one node looping, one message per
  step, ``InMemorySaver``), then ``saver.list()`` alone (LangGraph decoding every checkpoint's whole state: the floor
  of any reader of the history through the public API), ``frames.session_messages(saver, thread)`` — the walk of
  every checkpoint that gives each message the step that wrote it — and ``frames.checkpoint_history``;
* **store → frame**: ``--items`` items in ``InMemoryStore`` and in ``AgentMemStore`` (files), then
  ``frames.store_items(store)``; for ``AgentMemStore`` also a cold open (a new object replaying the layer);
* **adapter ops**: µs per ``put`` / ``get`` / ``search`` (a prefix and a filter, limit 10) on ``AgentMemStore``
  (files), ``InMemoryStore`` and ``SqliteStore`` (a file database) holding ``--ops-items`` items.

Figures are wall-clock medians on whatever machine runs this (noisy on a shared one); nothing in the test suite
asserts a time. ``benchmarks/LANGGRAPH.md`` keeps the last figures with the command and the load average.

Usage::

    .venv/bin/python benchmarks/bench_langgraph.py                        # steps 500,1000; 100k items; 10k ops items
    .venv/bin/python benchmarks/bench_langgraph.py --steps 200 --items 10000 --ops-items 1000   # quick
"""

from __future__ import annotations

import argparse
import os
import sqlite3
import statistics
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Annotated, Any, TypedDict

_REPO = Path(__file__).resolve().parents[1]
if str(_REPO) not in sys.path:
    sys.path.insert(0, str(_REPO))

from langchain_core.messages import AIMessage  # noqa: E402  (after the sys.path fix above)
from langgraph.checkpoint.memory import InMemorySaver  # noqa: E402
from langgraph.graph import END, START, StateGraph  # noqa: E402
from langgraph.graph.message import add_messages  # noqa: E402
from langgraph.store.memory import InMemoryStore  # noqa: E402
from langgraph.store.sqlite import SqliteStore  # noqa: E402

from agentmem_nb import MemoryStore, frames  # noqa: E402
from agentmem_nb.langgraph_store import AgentMemStore  # noqa: E402


class _State(TypedDict):
    messages: Annotated[list[Any], add_messages]
    n: int


def _timed(fn: Callable[[], Any], repeat: int = 3) -> tuple[float, Any]:
    times, result = [], None
    for _ in range(repeat):
        start = time.perf_counter()
        result = fn()
        times.append(time.perf_counter() - start)
    return statistics.median(times), result


def build_thread(steps: int) -> InMemorySaver:
    """A real graph run of ``steps`` steps, one message each, kept by an InMemorySaver."""
    def step(state: _State) -> dict[str, Any]:
        n = state["n"]
        return {"messages": [AIMessage(content=f"step {n}: something worth remembering", id=f"m{n}")], "n": n + 1}

    graph = StateGraph(_State)
    graph.add_node("step", step)
    graph.add_edge(START, "step")
    graph.add_conditional_edges("step", lambda s: END if s["n"] >= steps else "step")
    saver = InMemorySaver()
    graph.compile(checkpointer=saver).invoke({"messages": [], "n": 0},
                                             {"configurable": {"thread_id": "t"}, "recursion_limit": steps + 10})
    return saver


def bench_thread(steps: int) -> dict[str, float]:
    start = time.perf_counter()
    saver = build_thread(steps)
    built = time.perf_counter() - start
    config = {"configurable": {"thread_id": "t", "checkpoint_ns": ""}}
    list_s, count = _timed(lambda: sum(1 for _ in saver.list(config)), repeat=1)  # LangGraph's own decoding alone
    assert count == steps + 2
    messages_s, frame = _timed(lambda: frames.session_messages(saver, "t"), repeat=1)
    assert len(frame) == steps
    history_s, history = _timed(lambda: frames.checkpoint_history(saver, "t"), repeat=1)
    assert len(history) == steps + 2
    return {"steps": steps, "build_s": built, "list_s": list_s, "messages_s": messages_s, "history_s": history_s}


def bench_store_frame(items: int, root: Path) -> dict[str, float]:
    out: dict[str, float] = {"items": items}
    reference = InMemoryStore()
    ours = AgentMemStore(MemoryStore(str(root / "frame")).user("bench"))
    for store in (reference, ours):
        for start in range(0, items, 1000):
            store.batch([_put(i) for i in range(start, min(start + 1000, items))])
    out["inmemory_frame_s"], frame = _timed(lambda: frames.store_items(reference))
    assert len(frame) == items
    out["agentmem_frame_s"], frame = _timed(lambda: frames.store_items(ours))
    assert len(frame) == items
    out["agentmem_cold_open_s"], _ = _timed(
        lambda: AgentMemStore(MemoryStore(str(root / "frame")).user("bench")).get(("users", "u0"), "k0"))
    out["layer_bytes"] = sum(f.stat().st_size for f in (root / "frame").rglob("*.jsonl"))
    return out


def _put(i: int) -> Any:
    from langgraph.store.base import PutOp

    return PutOp(("users", f"u{i % 100}"), f"k{i}", {"text": f"item {i} about topic {i % 37}", "score": i % 10,
                                                     "kind": "note" if i % 3 else "fact"})


def bench_ops(count: int, root: Path) -> dict[str, dict[str, float]]:
    conn = sqlite3.connect(root / "lg.sqlite", check_same_thread=False, isolation_level=None)
    sqlite_store = SqliteStore(conn)
    sqlite_store.setup()
    stores: dict[str, Any] = {
        "AgentMemStore (files)": AgentMemStore(MemoryStore(str(root / "ops")).user("bench")),
        "InMemoryStore": InMemoryStore(),
        "SqliteStore": sqlite_store,
    }
    results: dict[str, dict[str, float]] = {}
    for name, store in stores.items():
        for start in range(0, count, 1000):
            store.batch([_put(i) for i in range(start, min(start + 1000, count))])
        row: dict[str, float] = {}
        row["put_us"] = _per_op(lambda i: store.put(("users", f"u{i % 100}"), f"new{i}", {"text": f"new {i}"}), 300)
        row["get_us"] = _per_op(lambda i: store.get(("users", f"u{i % 100}"), f"k{i * 7 % count}"), 1000)
        row["search_prefix_us"] = _per_op(lambda i: store.search(("users", f"u{i % 100}"), limit=10), 200)
        row["search_filter_us"] = _per_op(lambda i: store.search(("users",), filter={"kind": "fact", "score": i % 10},
                                                                 limit=10), 100)
        results[name] = row
    conn.close()
    return results


def _per_op(fn: Callable[[int], Any], count: int) -> float:
    start = time.perf_counter()
    for i in range(count):
        fn(i)
    return (time.perf_counter() - start) / count * 1e6


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--steps", default="500,1000", help="thread sizes in steps, comma-separated")
    parser.add_argument("--items", type=int, default=100_000, help="items in the store-to-frame measurement")
    parser.add_argument("--ops-items", type=int, default=10_000, help="items held while ops are timed")
    args = parser.parse_args(argv)
    print(f"load average before: {os.getloadavg()}")
    for steps in (int(s) for s in args.steps.split(",") if s):
        r = bench_thread(steps)
        print(f"thread {steps} steps: built {r['build_s']:.1f} s; saver.list() alone {r['list_s']:.2f} s; "
              f"session_messages {r['messages_s']:.2f} s; "
              f"checkpoint_history {r['history_s']:.2f} s")
    with tempfile.TemporaryDirectory(prefix="bench-langgraph-") as tmp:
        r = bench_store_frame(args.items, Path(tmp))
        print(f"store_items at {args.items} items: InMemoryStore {r['inmemory_frame_s']:.2f} s; AgentMemStore "
              f"{r['agentmem_frame_s']:.2f} s (cold open, replaying {r['layer_bytes'] / 1e6:.0f} MB: "
              f"{r['agentmem_cold_open_s']:.2f} s)")
        for name, row in bench_ops(args.ops_items, Path(tmp)).items():
            print(f"{name:24s} at {args.ops_items} items: put {row['put_us']:8.0f} µs  get {row['get_us']:8.1f} µs  "
                  f"search(prefix) {row['search_prefix_us']:8.0f} µs  search(filter) {row['search_filter_us']:8.0f} µs")
    print(f"load average after: {os.getloadavg()}")


if __name__ == "__main__":
    main()
