"""HTTP API benchmark (issue 15): requests/s and latency percentiles of ``agentmem-nb serve``, measured from a second
process, for

* **messages** — ``GET /api/conversations/{id}/messages`` of a conversation of N messages (default 10,000; one
  assistant message in four carries a tool call), the original front end's reload of a long thread: the first read,
  one read after an append (the thread is read again), then G reads of the unchanged thread by C clients at once
  (served from :mod:`agentmem_nb.api.thread_cache`);
* **chat** — ``POST /api/chat`` turns with the offline model over S sessions (half plain chat, half recall questions
  that run ``search_session`` + ``get_session_window``), C clients at once.

The server is the real command (``python -m agentmem_nb.cli --root R serve --port 0 --quiet``) in its own process;
this process is only the client (threads with one ``httpx.Client`` each), so the figures include HTTP, JSON and the
event loop, not only the store. The conversation is written straight into the store's JSONL format before the server
starts (as ``bench_turn.py`` builds its files), then one warm-up request lets the server index it.

Usage::

    .venv/bin/python benchmarks/bench_api.py                       # N = 10,000; 200 GETs, 200 turns
    .venv/bin/python benchmarks/bench_api.py --quick --json api.json  # a smoke run (N = 500, 20 + 20 requests)

Figures are wall clock on whatever machine runs this (see ``benchmarks/API.md`` for the recorded ones).
"""

from __future__ import annotations

import argparse
import datetime as _dt
import json
import os
import platform
import signal
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import httpx

_REPO = Path(__file__).resolve().parents[1]
USER = "bench-user"
LONG = "long-thread"
ZONE = _dt.timezone(_dt.timedelta(hours=8))
START = _dt.datetime(2026, 4, 8, 0, 0, tzinfo=ZONE)


def build_thread(root: Path, n: int) -> None:
    """Write a conversation of ``n`` messages (and its entry in ``conversations.json``) in the store's format."""
    user = root / USER
    (user / "sessions").mkdir(parents=True, exist_ok=True)
    lines = []
    for i in range(n):
        ts = (START + _dt.timedelta(seconds=i)).isoformat(timespec="microseconds")
        role = "user" if i % 2 == 0 else "assistant"
        meta: dict[str, Any] = {"session_id": LONG}
        if role == "assistant" and i % 4 == 1:
            meta["tool_calls"] = [{"id": f"call_{i}", "name": "search_session", "input": {"keyword": f"kiwi{i % 97}"},
                                   "output": f"#{i} [2026-04-08 10:00] user: my kiwi{i % 97} is in box {i % 13}"}]
        lines.append(json.dumps({"ts": ts, "role": role, "content": f"message {i}: the weather, a recipe and kiwi{i % 97}",
                                 "tags": ["session"], "meta": meta, "message_id": i + 1}, ensure_ascii=False))
    (user / "sessions" / f"{LONG}.jsonl").write_text("\n".join(lines) + "\n", encoding="utf-8")
    stamp = START.isoformat()
    (user / "conversations.json").write_text(json.dumps(
        {LONG: {"title": "a long thread", "created_at": stamp, "updated_at": stamp}}), encoding="utf-8")


def start_server(root: Path) -> tuple[subprocess.Popen[str], str]:
    """``agentmem-nb serve`` on a free port in its own process; returns it and its address."""
    env = {k: v for k, v in os.environ.items() if not k.startswith(("AGENTMEM_", "OPENAI_"))}  # the offline model
    env["PYTHONPATH"] = str(_REPO)
    process = subprocess.Popen([sys.executable, "-m", "agentmem_nb.cli", "--root", str(root), "serve", "--port", "0",
                                "--quiet"], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env)
    assert process.stdout is not None
    banner = process.stdout.readline()
    if "serving http://" not in banner:
        process.kill()
        raise SystemExit(f"the server did not start: {banner!r} {process.communicate()[1][-2000:]}")
    return process, banner.split("serving ", 1)[1].split("/ ", 1)[0]


def cpu_seconds(pid: int) -> float | None:
    """User + system CPU time of process ``pid`` so far (Linux ``/proc``; ``None`` elsewhere)."""
    try:
        fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    except OSError:
        return None
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def run_load(url: str, requests: int, clients: int, call: Callable[[httpx.Client, int], httpx.Response],
             *, server_pid: int) -> dict[str, Any]:
    """``requests`` calls spread over ``clients`` threads; latency percentiles, requests/s, statuses, bytes, and the
    server's CPU time per request (much less sensitive to other load on a shared machine than the wall clock)."""
    latencies: list[float] = []
    statuses: dict[int, int] = {}
    sizes: list[int] = []
    lock = threading.Lock()
    counter = iter(range(requests))

    def worker() -> None:
        with httpx.Client(base_url=url, timeout=300) as http:
            while True:
                with lock:
                    n = next(counter, None)
                if n is None:
                    return
                began = time.perf_counter()
                response = call(http, n)
                elapsed = time.perf_counter() - began
                with lock:
                    latencies.append(elapsed * 1000)
                    statuses[response.status_code] = statuses.get(response.status_code, 0) + 1
                    sizes.append(len(response.content))

    threads = [threading.Thread(target=worker) for _ in range(clients)]
    cpu_before = cpu_seconds(server_pid)
    began = time.perf_counter()
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    wall = time.perf_counter() - began
    cpu_after = cpu_seconds(server_pid)
    ordered = sorted(latencies)
    return {
        "requests": requests, "clients": clients, "seconds": round(wall, 3),
        "requests_per_s": round(requests / wall, 2),
        "p50_ms": round(statistics.median(ordered), 2),
        "p95_ms": round(ordered[min(len(ordered) - 1, int(0.95 * len(ordered)))], 2),
        "max_ms": round(ordered[-1], 2),
        "statuses": statuses, "mean_bytes": round(statistics.fmean(sizes)),
        "server_cpu_ms_per_request": (round(1000 * (cpu_after - cpu_before) / requests, 2)
                                      if cpu_before is not None and cpu_after is not None else None),
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0], formatter_class=argparse.RawTextHelpFormatter)
    parser.add_argument("--messages", type=int, default=10_000, help="messages in the long conversation")
    parser.add_argument("--gets", type=int, default=200, help="GET requests of the long conversation")
    parser.add_argument("--get-clients", type=int, default=4, help="clients at once for the GETs")
    parser.add_argument("--turns", type=int, default=200, help="chat turns")
    parser.add_argument("--sessions", type=int, default=10, help="sessions the turns are spread over")
    parser.add_argument("--chat-clients", type=int, default=10, help="clients at once for the turns")
    parser.add_argument("--quick", action="store_true", help="a smoke run: 500 messages, 20 GETs, 20 turns")
    parser.add_argument("--json", type=Path, help="write the figures here")
    args = parser.parse_args(argv)
    if args.quick:
        args.messages, args.gets, args.turns = 500, 20, 20

    with tempfile.TemporaryDirectory(prefix="bench-api-") as tmp:
        root = Path(tmp) / "memory"
        build_thread(root, args.messages)
        process, url = start_server(root)
        try:
            with httpx.Client(base_url=url, timeout=300) as http:
                cpu_before, began = cpu_seconds(process.pid), time.perf_counter()
                warm = http.get(f"/api/conversations/{LONG}/messages", params={"user_id": USER})
                first = {"ms": round(1000 * (time.perf_counter() - began), 1),
                         "server_cpu_ms": round(1000 * ((cpu_seconds(process.pid) or 0) - (cpu_before or 0)), 1)}
                assert len(warm.json()["items"]) == args.messages, "the long thread was not served whole"
                # a changed thread is read again: one append, then one more GET (the common case while chatting)
                http.post("/api/chat", json={"user_id": USER, "session_id": LONG, "message": "hello"})
                cpu_before, began = cpu_seconds(process.pid), time.perf_counter()
                http.get(f"/api/conversations/{LONG}/messages", params={"user_id": USER})
                changed = {"ms": round(1000 * (time.perf_counter() - began), 1),
                           "server_cpu_ms": round(1000 * ((cpu_seconds(process.pid) or 0) - (cpu_before or 0)), 1)}
                sessions = [http.post("/api/conversations", json={"user_id": USER}).json()["session_id"]
                            for _ in range(args.sessions)]
            gets = run_load(url, args.gets, args.get_clients, lambda http, n: http.get(
                f"/api/conversations/{LONG}/messages", params={"user_id": USER}), server_pid=process.pid)

            def turn(http: httpx.Client, n: int) -> httpx.Response:
                text = f"I prefer kiwi number {n}" if n % 2 == 0 else f"What did I say about kiwi number {n - 1}?"
                return http.post("/api/chat", json={"user_id": USER, "session_id": sessions[n % args.sessions],
                                                    "message": text})

            chats = run_load(url, args.turns, args.chat_clients, turn, server_pid=process.pid)
        finally:
            process.send_signal(signal.SIGINT)
            process.wait(timeout=60)

    report = {
        "when": _dt.datetime.now(_dt.timezone.utc).isoformat(timespec="seconds"),
        "machine": f"{platform.machine()}, {os.cpu_count()} cores, Python {platform.python_version()}",
        "load_average": os.getloadavg()[0] if hasattr(os, "getloadavg") else None,
        "messages_in_thread": args.messages, "sessions": args.sessions,
        "messages_first_read": first, "messages_after_append": changed,
        "messages_endpoint": gets, "chat_turns": chats,
    }
    print(f"messages endpoint, first read (server indexes the file): {first['ms']} ms, server CPU "
          f"{first['server_cpu_ms']} ms; after an append (read again): {changed['ms']} ms, server CPU "
          f"{changed['server_cpu_ms']} ms")
    print(f"messages endpoint, {args.messages} messages ({gets['mean_bytes'] / 1e6:.2f} MB a response), "
          f"{gets['clients']} clients: {gets['requests_per_s']} req/s, p50 {gets['p50_ms']} ms, "
          f"p95 {gets['p95_ms']} ms, server CPU {gets['server_cpu_ms_per_request']} ms/request, "
          f"statuses {gets['statuses']}")
    print(f"chat turns (offline model), {args.sessions} sessions, {chats['clients']} clients: "
          f"{chats['requests_per_s']} turns/s, p50 {chats['p50_ms']} ms, p95 {chats['p95_ms']} ms, "
          f"server CPU {chats['server_cpu_ms_per_request']} ms/turn, statuses {chats['statuses']}")
    if args.json:
        args.json.write_text(json.dumps(report, indent=2) + "\n", encoding="utf-8")
    failed = [s for part in (gets, chats) for s in part["statuses"] if s != 200]
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
