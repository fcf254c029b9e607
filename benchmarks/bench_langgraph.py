"""LangGraph sources as frames, and ``AgentMemStore`` beside LangGraph's own stores (issue 16).

Three measurements:

* **thread → frames**: a thread of ``--steps`` steps built by a real ``StateGraph`` run (one node looping, one id-less
  message per step, ``InMemorySaver``; ``--sqlite-steps`` also in a ``SqliteSaver`` file; ``--sparse-steps`` a
  thread writing a message every 10th step), then ``frames.session_messages``, ``frames.tool_calls`` (the per-saver
  readers of ``frames/_lg_readers.py``), ``frames.threads`` and ``frames.checkpoint_history``; up to ``--walk-max``
  steps also the public walk alone — ``saver.list()`` (LangGraph decoding every checkpoint's whole state) and our walk
  over it — and a check that the readers place every message as the walk does;
* **store → frame**: ``--items`` items in ``InMemoryStore``, ``SqliteStore`` (a file) and ``AgentMemStore`` (files),
  then ``frames.store_items(store)`` (LangGraph's stores read from their own data, ``frames/_lg_stores.py``); for
  ``InMemoryStore`` also the same frame through ``BaseStore.search``, for ``AgentMemStore`` a cold open (a new object
  replaying the layer);
* **adapter ops**: µs per ``put`` / ``get`` / ``search`` (a prefix and a filter, limit 10) on ``AgentMemStore``
  (files), ``InMemoryStore`` and ``SqliteStore`` (a file database) holding ``--ops-items`` items.

Figures are wall-clock medians on whatever machine runs this (noisy on a shared one); nothing in the test suite
asserts a time. ``benchmarks/LANGGRAPH.md`` keeps the last figures with the command and the load average.

Usage::

    .venv/bin/python benchmarks/bench_langgraph.py                        # steps 500,1000; 100k items; 10k ops items
    .venv/bin/python benchmarks/bench_langgraph.py --steps 1000,2000 --sparse-steps 10000 --sqlite-steps 1000
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


def build_thread(steps: int, *, every: int = 1, saver: Any = None) -> Any:
    """A real graph run of ``steps`` steps kept by ``saver`` (an InMemorySaver by default): every ``every``-th step
    writes one message (id-less, as a model's answer usually is: add_messages gives it its id); the others only
    count."""
    def step(state: _State) -> dict[str, Any]:
        n = state["n"]
        if n % every:
            return {"n": n + 1}
        return {"messages": [AIMessage(content=f"step {n}: something worth remembering")], "n": n + 1}

    graph = StateGraph(_State)
    graph.add_node("step", step)
    graph.add_edge(START, "step")
    graph.add_conditional_edges("step", lambda s: END if s["n"] >= steps else "step")
    saver = InMemorySaver() if saver is None else saver
    graph.compile(checkpointer=saver).invoke({"messages": [], "n": 0},
                                             {"configurable": {"thread_id": "t"}, "recursion_limit": steps + 10})
    return saver


def bench_thread(steps: int, *, every: int = 1, walk: bool = True, saver: Any = None) -> dict[str, Any]:
    """Build a thread, then time the frames (the per-saver readers) and, when ``walk``, the public walk alone."""
    from agentmem_nb.frames import langgraph as lg

    start = time.perf_counter()
    saver = build_thread(steps, every=every, saver=saver)
    built = time.perf_counter() - start
    messages = -(-steps // every)
    out: dict[str, Any] = {"steps": steps, "messages": messages, "build_s": built, "saver": type(saver).__name__}
    out["messages_s"], frame = _timed(lambda: frames.session_messages(saver, "t"))
    assert len(frame) == messages and frame["step"].notna().all()
    out["tools_s"], _ = _timed(lambda: frames.tool_calls(saver, session="t"))
    out["threads_s"], listed = _timed(lambda: frames.threads(saver))
    assert listed["n_checkpoints"].tolist() == [steps + 2]
    fast_history = isinstance(saver, InMemorySaver)  # the others' history is the public walk: timed once
    out["history_s"], history = _timed(lambda: frames.checkpoint_history(saver, "t"), repeat=3 if fast_history else 1)
    assert len(history) == steps + 2
    if walk:  # the public walk alone (LangGraph's list() decoding every state): the reference the readers replace
        config = {"configurable": {"thread_id": "t", "checkpoint_ns": ""}}
        out["list_s"], count = _timed(lambda: sum(1 for _ in saver.list(config)), repeat=1)
        assert count == steps + 2
        out["walk_s"], walked = _timed(lambda: lg._walk_rows(saver, "t", "messages"), repeat=1)
        assert walked[1] == lg._thread_rows(saver, "t", "messages")[1]  # the readers place every message alike
    return out


def bench_store_frame(items: int, root: Path) -> dict[str, float]:
    from agentmem_nb.frames import langgraph as lg

    out: dict[str, float] = {"items": items}
    reference = InMemoryStore()
    ours = AgentMemStore(MemoryStore(str(root / "frame")).user("bench"))
    conn = sqlite3.connect(root / "frame.sqlite", check_same_thread=False, isolation_level=None)
    sqlite_store = SqliteStore(conn)
    sqlite_store.setup()
    for store in (reference, ours, sqlite_store):
        for start in range(0, items, 1000):
            store.batch([_put(i) for i in range(start, min(start + 1000, items))])
    out["inmemory_frame_s"], frame = _timed(lambda: frames.store_items(reference))
    assert len(frame) == items
    out["inmemory_search_frame_s"], searched = _timed(  # the same frame through BaseStore.search (any store's path)
        lambda: lg._store_frame(lg._searched_rows(reference, ()), fields=None, zone=None))
    assert searched.equals(frame)
    out["sqlite_frame_s"], frame = _timed(lambda: frames.store_items(sqlite_store))
    assert len(frame) == items
    conn.close()
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
    parser.add_argument("--walk-max", type=int, default=1000,
                        help="time the public walk too up to this many steps (it grows with their square)")
    parser.add_argument("--sparse-steps", type=int, default=0,
                        help="also a thread of this many steps writing a message every 10th step (0: none)")
    parser.add_argument("--sqlite-steps", type=int, default=0,
                        help="also a thread of this many steps in a SqliteSaver file (0: none)")
    parser.add_argument("--items", type=int, default=100_000, help="items in the store-to-frame measurement")
    parser.add_argument("--ops-items", type=int, default=10_000, help="items held while ops are timed")
    args = parser.parse_args(argv)
    print(f"load average before: {os.getloadavg()}")
    runs = [(int(s), 1, None) for s in args.steps.split(",") if s]
    if args.sparse_steps:
        runs.append((args.sparse_steps, 10, None))
    with tempfile.TemporaryDirectory(prefix="bench-langgraph-") as tmp:
        if args.sqlite_steps:
            from langgraph.checkpoint.sqlite import SqliteSaver

            conn = sqlite3.connect(Path(tmp) / "threads.sqlite", check_same_thread=False)
            runs.append((args.sqlite_steps, 1, SqliteSaver(conn)))
        for steps, every, saver in runs:
            r = bench_thread(steps, every=every, walk=steps <= args.walk_max, saver=saver)
            walked = (f"; public walk: saver.list() alone {r['list_s']:.2f} s, walk {r['walk_s']:.2f} s"
                      if "walk_s" in r else "")
            print(f"thread {steps} steps ({r['saver']}, {r['messages']} messages): built {r['build_s']:.1f} s; "
                  f"session_messages {r['messages_s']:.2f} s; tool_calls {r['tools_s']:.2f} s; "
                  f"threads {r['threads_s']:.2f} s; checkpoint_history {r['history_s']:.2f} s{walked}")
        r = bench_store_frame(args.items, Path(tmp))
        print(f"store_items at {args.items} items: InMemoryStore {r['inmemory_frame_s']:.2f} s (through search "
              f"{r['inmemory_search_frame_s']:.2f} s); SqliteStore {r['sqlite_frame_s']:.2f} s; AgentMemStore "
              f"{r['agentmem_frame_s']:.2f} s (cold open, replaying {r['layer_bytes'] / 1e6:.0f} MB: "
              f"{r['agentmem_cold_open_s']:.2f} s)")
        for name, row in bench_ops(args.ops_items, Path(tmp)).items():
            print(f"{name:24s} at {args.ops_items} items: put {row['put_us']:8.0f} µs  get {row['get_us']:8.1f} µs  "
                  f"search(prefix) {row['search_prefix_us']:8.0f} µs  search(filter) {row['search_filter_us']:8.0f} µs")
    print(f"load average after: {os.getloadavg()}")


if __name__ == "__main__":
    main()
