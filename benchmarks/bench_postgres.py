"""PostgreSQL backend benchmark (issue 13): append, window and exact search at N messages, beside the file backend,
and append throughput with 1, 4 and 16 writer processes.

For every size N one thread of N messages is built in both backends (the file written directly in the store's JSONL
format; the table filled with ``COPY``, the same records), then measured through the public API:

* **append** µs per message (session line + day copy) on top of the N-message thread;
* **window** ``session.window(anchor, 5, 5)`` for random anchors;
* **exact search** ``session.search(term, limit=20)``: a rare term (~0.1 %), a CJK term (~0.2 %), a common term
  and an absent one (the file backend's worst case, a full scan; on PostgreSQL a trigram index lookup); and
  ``daily(day).search`` for the rare and the common term (``day_search_*``: on PostgreSQL the day's copies are
  found through their session rows, schema version 6);
* **ranked search** ``retrieval.search(user, RANKED, scope=the thread, budget=10)``: ``ranked_first_us`` is the first
  query of a process (it builds the index from the store's scan: on files from the JSONL, which it then persists beside
  them; on PostgreSQL from ``read_records``, kept in memory only), ``ranked_us`` the median of the next ones;
* **LangGraph's PostgresStore** when langgraph-checkpoint-postgres is installed (the dev extra), twice: used the
  natural way (``langgraph``, see :func:`measure_langgraph`), and doing the same work with the index that work needs
  (``langgraph_trgm``, see :func:`measure_langgraph_trgm`: a trigram GIN index on the message text in its own
  ``store`` table, with our pending-list settings; its exact search by raw SQL, as its API has none; the scans of
  that search's plan in ``langgraph_trgm_plans``);
* **writers**: 1, 4 and 16 processes, each appending to its own user (a service writing many users' memories),
  messages per second overall and the ratio to one writer; the same with LangGraph's PostgresStore (each process
  putting to its own namespaces, two puts per message), without and with the trigram index, so the ratio can be
  read beside the peer's on this machine;
* **interleaved appends** (``--append-rounds``, see :func:`interleaved_appends`): our append beside PostgresStore's
  two puts, natural and with the trigram index, in rounds whose order rotates, and ours ÷ each per round
  (``append_round_ratios``): a steadier comparison on a shared machine than one figure after the other;
* **CPU per append** (``*_cpu_us``): the client's (``time.process_time``) and, with the throwaway server, the
  server's (every process of the cluster, from ``/proc``): on a shared machine wall-clock times swing with the
  neighbours' load, CPU time much less, and CPU time per append over the cores is what bounds the writers' throughput.

The throwaway server keeps PostgreSQL's durable defaults (fsync, synchronous_commit, full_page_writes on): a commit
waits for its WAL to reach the disk, as in production. The tests' server turns them off; this one does not.

It needs a server: ``--url postgresql://…`` (an empty database it may fill), or, in a source checkout with Debian's
``postgresql`` installed (``make test`` installs it), a throwaway server started for the run (``tests/pg_server.py``).
Figures are wall-clock medians on whatever machine runs this; on a shared machine they are noisy. Nothing in the
test suite asserts a time.

Usage::

    .venv/bin/python benchmarks/bench_postgres.py --quick                  # 10k, writers 1/4: about a minute
    .venv/bin/python benchmarks/bench_postgres.py --sizes 10000,100000,1000000
"""

from __future__ import annotations

import argparse
import datetime as _dt
import importlib.util
import json
import os
import random
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

_REPO = Path(__file__).resolve().parents[1]
if str(_REPO) not in sys.path:
    sys.path.insert(0, str(_REPO))

from agentmem_nb import MemoryStore  # noqa: E402  (after the sys.path fix above)

USER = "bench-user"
SESSION = "bench-session"
DAY = "2026-04-08"
RARE, CJK, COMMON, ABSENT = "zebracorn", "找工作", "topic", "nowhere-to-be-found"
# Two keywords a trigram index serves badly (see benchmarks/POSTGRES.md, "Keywords the index serves badly"): OLD is in
# one message of nine, but its newest hit is 87 % of the thread back (messages 12, 120-129, 1,200-1,299, ... are the
# only ones), so a backward walk reads most of the thread and the index reads every hit; number(n) is a rare phrase
# (11 hits) made of common trigrams ("message" is in every row; its rarest trigram is in ~1 % of them).
OLD = "message 12"


def number(n: int) -> str:
    """A phrase with 11 hits in an ``n``-message thread (message n/10 - 1 and the ten whose number extends it)."""
    return f"message {n // 10 - 1}"


def _terms(n: int) -> tuple[tuple[str, str], ...]:
    """Every exact-search keyword measured, by name, for an ``n``-message thread."""
    return (("rare", RARE), ("cjk", CJK), ("common", COMMON), ("absent", ABSENT), ("old", OLD), ("number", number(n)))
RANKED = f"brown fox {RARE}"  # words in every message and a rare one: the ranker scores the whole thread


def content(i: int) -> str:
    """Message ``i``'s text: every 1000th holds RARE, every 500th CJK, all hold COMMON."""
    text = f"message {i} about topic {i % 97}: the quick brown fox and some filler words to make it longer"
    if i % 1000 == 7:
        text += f" {RARE}"
    if i % 500 == 3:
        text += f" 我在{CJK}了"
    return text


def _record(i: int, tag: str) -> dict[str, Any]:
    ts = (_dt.datetime(2026, 4, 8, tzinfo=_dt.timezone.utc) + _dt.timedelta(milliseconds=i)).isoformat(
        timespec="microseconds")
    return {"ts": ts, "role": "user" if i % 2 else "assistant", "content": content(i), "tags": [tag],
            "meta": {"session_id": SESSION}}


def build_files(root: Path, n: int) -> MemoryStore:
    for folder, key, tag in (("sessions", SESSION, "session"), ("daily", DAY, "daily")):
        path = root / USER / folder / f"{key}.jsonl"
        path.parent.mkdir(parents=True, exist_ok=True)
        with open(path, "w", encoding="utf-8") as handle:
            for i in range(n):
                handle.write(json.dumps({**_record(i, tag), "message_id": i + 1}, ensure_ascii=False) + "\n")
    return MemoryStore(root, zone="UTC")


def build_database(url: str, n: int) -> MemoryStore:
    from agentmem_nb.store.postgres import upgrade_database
    from agentmem_nb.store.postgres.records import fold

    upgrade_database(url)
    store = MemoryStore(url, zone="UTC")
    store.user(USER).append(SESSION, "user", "seed", day=DAY)  # the layer rows
    import psycopg

    with psycopg.connect(url, autocommit=True) as conn:
        conn.execute("DELETE FROM am_messages")
        layers = dict(conn.execute("SELECT kind, layer_id FROM am_layers").fetchall())
        session, day = layers["session"], layers["daily"]
        # as appends leave them (schema 6): the session row folded and naming its day copy, the copy naming it back
        with conn.cursor() as cur, cur.copy("COPY am_messages (layer_id, position, message_id, record, folded, "
                                            "copy_layer, copy_position) FROM STDIN") as copy:
            for i in range(n):
                record = _record(i, "session")
                copy.write_row((session, i, i + 1, json.dumps(record, ensure_ascii=False), fold(record["content"]),
                                day, i))
        with conn.cursor() as cur, cur.copy("COPY am_messages (layer_id, position, message_id, record, "
                                            "source_layer, source_position) FROM STDIN") as copy:
            for i in range(n):
                copy.write_row((day, i, i + 1, json.dumps(_record(i, "daily"), ensure_ascii=False), session, i))
        conn.execute("UPDATE am_layers SET rows = %s, next_id = %s, generation = 0", (n, n + 1))
        conn.execute("VACUUM ANALYZE am_messages")
    return store


class ServerCpu:
    """CPU seconds used so far by every process of a local cluster (its postmaster and the postmaster's children),
    read from ``/proc``; ``None`` folder: not measurable (a server given by ``--url``)."""

    def __init__(self, folder: Path | None) -> None:
        self.folder = folder

    def seconds(self) -> float | None:
        if self.folder is None:
            return None
        postmaster = int((self.folder / "data" / "postmaster.pid").read_text().split()[0])
        ticks = 0
        for entry in os.listdir("/proc"):
            if not entry.isdigit():
                continue
            try:
                with open(f"/proc/{entry}/stat", encoding="ascii") as handle:
                    fields = handle.read().rsplit(")", 1)[1].split()
            except OSError:  # a process that ended while we looked
                continue
            if int(entry) == postmaster:  # its own, and its children's that ended (a closed connection's backend)
                ticks += sum(int(value) for value in fields[11:15])  # utime, stime, cutime, cstime
            elif int(fields[1]) == postmaster:
                ticks += int(fields[11]) + int(fields[12])  # utime + stime
        return ticks / os.sysconf("SC_CLK_TCK")


NO_SERVER_CPU = ServerCpu(None)


def cpu_per_call(call: Callable[[int], object], count: int, server: ServerCpu) -> dict[str, float]:
    """Mean wall, client CPU and server CPU (when measurable) per call, in µs, over ``count`` calls."""
    server_start, client_start, wall_start = server.seconds(), time.process_time(), time.perf_counter()
    for i in range(count):
        call(i)
    wall, client, server_end = time.perf_counter() - wall_start, time.process_time() - client_start, server.seconds()
    out = {"wall_us": wall / count * 1e6, "client_cpu_us": client / count * 1e6}
    if server_start is not None and server_end is not None:
        out["server_cpu_us"] = (server_end - server_start) / count * 1e6
    return out


def _median_us(call: Callable[[], object], repeats: int) -> float:
    samples = []
    for _ in range(repeats):
        start = time.perf_counter()
        call()
        samples.append((time.perf_counter() - start) * 1e6)
    return statistics.median(samples)


def measure(store: MemoryStore, n: int, *, repeats: int, rng: random.Random,
            server: ServerCpu = NO_SERVER_CPU) -> dict[str, float]:
    user = store.user(USER)
    layer = user.session(SESSION)
    layer.window(1, 5, 5)  # warm: the file backend indexes on first use (its cold cost is benchmarks/COLD.md's)
    for _, term in _terms(n):
        layer.search(term, limit=20)
    anchors = [rng.randrange(1, n + 1) for _ in range(repeats * 10)]
    out = {"window_us": statistics.median(
        [_median_us(lambda a=a: layer.window(a, 5, 5), 1) for a in anchors])}
    for name, term in _terms(n):
        out[f"search_{name}_us"] = _median_us(lambda term=term: layer.search(term, limit=20), repeats)
    day = user.daily(DAY)
    # the day: its copies are found through the session
    for name, term in (("rare", RARE), ("common", COMMON), ("old", OLD), ("number", number(n))):
        day.search(term, limit=20)
        out[f"day_search_{name}_us"] = _median_us(lambda term=term: day.search(term, limit=20), repeats)
    from agentmem_nb.retrieval import Scope, search

    def ranked() -> object:
        return search(user, RANKED, scope=Scope.session(SESSION), budget=10, how="ranked")

    out["ranked_first_us"] = _median_us(ranked, 1)  # builds this process's index of the thread
    out["ranked_us"] = _median_us(ranked, repeats)
    counter = iter(range(10**9))
    out["append_us"] = _median_us(lambda: user.append(SESSION, "user", f"appended {next(counter)}", day=DAY),
                                  repeats * 10)
    cpu = cpu_per_call(lambda i: user.append(SESSION, "user", f"appended {next(counter)}", day=DAY), repeats * 10,
                       server)
    out.update({f"append_{key}": value for key, value in cpu.items() if key != "wall_us"})
    return out


def _measure_puts(store: Any, namespace: tuple[str, ...], key: Callable[[int], str], n: int, *, repeats: int,
                  server: ServerCpu) -> dict[str, float]:
    """A PostgresStore's append, as in :func:`measure_langgraph`: one ``put`` (``append_*``) and the same work as our
    append, two ``put`` s, the message in the thread's namespace and its copy in the day's (``append2_*``), each put
    its own transaction as ``put`` does. ``key(i)`` names the ``i``-th new item."""
    counter = iter(range(n + 1, 10**9))
    out = {"append_us": _median_us(lambda: store.put(namespace, key(next(counter)), _record(n, "session")),
                                   repeats * 10)}
    day_namespace = namespace[:-1] + ("daily", DAY)

    def both(_: int = 0) -> None:
        name = key(next(counter))
        store.put(namespace, name, _record(n, "session"))
        store.put(day_namespace, name, _record(n, "daily"))

    out["append2_us"] = _median_us(both, repeats * 10)
    cpu = cpu_per_call(lambda i: store.put(namespace, key(next(counter)), _record(n, "session")), repeats * 10,
                       server)
    out.update({f"append_{name}": value for name, value in cpu.items() if name != "wall_us"})
    cpu = cpu_per_call(both, repeats * 10, server)
    out.update({f"append2_{name}": value for name, value in cpu.items() if name != "wall_us"})
    return out


def measure_langgraph(url: str, n: int, *, repeats: int, rng: random.Random,
                      server: ServerCpu = NO_SERVER_CPU) -> dict[str, float] | None:
    """The same work with LangGraph's ``PostgresStore`` used the natural way: one item per message in the thread's
    namespace (key = the message id, value = the record); a window is a ``search`` with a ``message_id`` range
    filter; an exact search lists the namespace and keeps the items whose content holds the term (the store has no
    substring search; its ``query`` needs an embedding index). ``append2`` is the same work as our append: two puts,
    the message in the thread's namespace and its copy in the day's (each put its own transaction, as ``put`` does).
    ``None`` when langgraph-checkpoint-postgres is absent."""
    try:
        from langgraph.store.base import PutOp
        from langgraph.store.postgres import PostgresStore
    except ImportError:
        return None
    namespace = ("memories", USER, SESSION)
    with PostgresStore.from_conn_string(url) as store:
        store.setup()
        for start in range(0, n, 5000):
            store.batch([PutOp(namespace, str(i + 1), {**_record(i, "session"), "message_id": i + 1})
                         for i in range(start, min(n, start + 5000))])

        def window(anchor: int) -> object:
            return store.search(namespace, filter={"message_id": {"$gte": anchor - 5, "$lte": anchor + 5}},
                                limit=11)

        def exact(term: str) -> list[object]:
            hits: list[object] = []
            offset = 0
            while True:
                page = store.search(namespace, limit=1000, offset=offset)
                hits += [item for item in page if term in str(item.value.get("content", "")).casefold()]
                if len(page) < 1000:
                    return hits[-20:]
                offset += 1000

        anchors = [rng.randrange(6, n - 5) for _ in range(repeats * 3)]
        out = {"window_us": statistics.median([_median_us(lambda a=a: window(a), 1) for a in anchors])}
        for name, term in _terms(n):
            out[f"search_{name}_us"] = _median_us(lambda term=term: exact(term), max(2, repeats // 10))
        out.update(_measure_puts(store, namespace, str, n, repeats=repeats, server=server))
    return out


# PostgresStore doing the same work as ours, with the index that work needs: a trigram GIN index on the message text
# in LangGraph's own ``store`` table (its ``value`` is the item's JSONB), with the same pending-list settings as ours
# (migrations/0006: fastupdate on, 256 kB) so that neither side's appends are favoured. It lives in a schema of its
# own, so that with ``--url`` (one database for everything) the natural PostgresStore beside it stays without it.
TRGM_SCHEMA = "bench_trgm"
TRGM_INDEX = "store_content_trgm"
TRGM_INDEX_SQL = (f"CREATE INDEX IF NOT EXISTS {TRGM_INDEX} ON store USING gin ((value->>'content') gin_trgm_ops) "
                  "WITH (fastupdate = on, gin_pending_list_limit = 256)")
# Exact search through that index by raw SQL (PostgresStore's API has no substring search): case-insensitive
# substring in one namespace, the last 20 hits, newest first as ours (its keys are zero-padded message ids, so that
# the primary key's order is the messages' order, as our ``position``).
TRGM_SEARCH = ("SELECT key, value FROM store WHERE prefix = %s AND value->>'content' ILIKE %s "
               "ORDER BY key DESC LIMIT 20")


def trgm_conninfo(url: str) -> str:
    """``url`` with its search path on :data:`TRGM_SCHEMA` (created, with pg_trgm, if missing): LangGraph's
    ``setup()`` then makes its ``store`` table there."""
    import psycopg
    from psycopg.conninfo import make_conninfo

    with psycopg.connect(url, autocommit=True) as conn:
        conn.execute("CREATE EXTENSION IF NOT EXISTS pg_trgm")
        conn.execute(f"CREATE SCHEMA IF NOT EXISTS {TRGM_SCHEMA}")
    return make_conninfo(url, options=f"-c search_path={TRGM_SCHEMA},public")


def langgraph_trgm_ready(conninfo: str) -> bool:
    """PostgresStore's tables set up in ``conninfo`` (see :func:`trgm_conninfo`), then the trigram index on them
    (after ``setup()``: LangGraph's migrations do not know it) and fresh statistics; ``False`` when
    langgraph-checkpoint-postgres is absent."""
    if not langgraph_ready(conninfo):
        return False
    import psycopg

    with psycopg.connect(conninfo, autocommit=True) as conn:
        conn.execute(TRGM_INDEX_SQL)
        conn.execute("VACUUM ANALYZE store")
    return True


def search_plan(conn: Any, namespace: tuple[str, ...], term: str) -> list[str]:
    """The scans of :data:`TRGM_SEARCH`'s plan for ``term``: ``"Bitmap Index Scan on store_content_trgm"`` …"""
    from agentmem_nb.store.postgres.layer import like_pattern

    (plan,) = conn.execute("EXPLAIN (FORMAT JSON) " + TRGM_SEARCH, (".".join(namespace), like_pattern(term)),
                           prepare=False).fetchone()
    scans, nodes = [], [plan[0]["Plan"]]
    while nodes:
        node = nodes.pop()
        nodes += node.get("Plans", [])
        if "Scan" in node["Node Type"]:
            scans.append(f"{node['Node Type']} on {node.get('Index Name') or node.get('Relation Name')}")
    return scans


def measure_langgraph_trgm(url: str, n: int, *, repeats: int, server: ServerCpu = NO_SERVER_CPU
                           ) -> tuple[dict[str, float], dict[str, list[str]]] | None:
    """PostgresStore doing the same work as ours, with the index it needs (:data:`TRGM_INDEX`): the thread loaded
    as in :func:`measure_langgraph` (keys zero-padded), the index built, then the exact search by raw SQL
    (:data:`TRGM_SEARCH`, on a connection set up as the store's: JIT off; and planned per term) and the appends through ``put``. Returns
    the figures and, per term, the scans of the search's plan. ``None`` when langgraph-checkpoint-postgres is absent.
    """
    try:
        from langgraph.store.base import PutOp
        from langgraph.store.postgres import PostgresStore
    except ImportError:
        return None
    import psycopg

    from agentmem_nb.store.postgres.layer import like_pattern

    conninfo = trgm_conninfo(url)
    namespace = ("memories", USER, SESSION)

    def key(i: int) -> str:
        return f"{i:012d}"

    with PostgresStore.from_conn_string(conninfo) as store:
        store.setup()
        for start in range(0, n, 5000):
            store.batch([PutOp(namespace, key(i + 1), {**_record(i, "session"), "message_id": i + 1})
                         for i in range(start, min(n, start + 5000))])
        langgraph_trgm_ready(conninfo)  # the index after the load, as ours is there when its rows are copied in
        out: dict[str, float] = {}
        plans: dict[str, list[str]] = {}
        with psycopg.connect(conninfo, autocommit=True) as conn:
            conn.execute("SET jit = off")  # as the store's connections (connection.py)
            # planned for each term: psycopg prepares a statement after 5 runs, and the server then settles on a
            # generic plan, chosen on the rare term's runs (the trigram index, then a sort), which for the common
            # term reads and sorts every row of the thread (27 ms at 10k against 0.5 ms): a careful client's setting
            conn.execute("SET plan_cache_mode = force_custom_plan")
            for name, term in _terms(n):
                params = (".".join(namespace), like_pattern(term))
                conn.execute(TRGM_SEARCH, params).fetchall()  # warm, as ours
                out[f"search_{name}_us"] = _median_us(lambda params=params: conn.execute(TRGM_SEARCH, params)
                                                      .fetchall(), repeats)
                plans[name] = search_plan(conn, namespace, term)
        out.update(_measure_puts(store, namespace, key, n, repeats=repeats, server=server))
    return out, plans


_WRITER = """
import sys, time
from agentmem_nb import MemoryStore
url, name, count = sys.argv[1], sys.argv[2], int(sys.argv[3])
user = MemoryStore(url, zone="UTC").user(name)
user.session("s").tail(1)
print("ready", flush=True); sys.stdin.readline()
start = time.process_time()
for i in range(count):
    user.append("s", "user", f"message {i} about topic {i % 97}: the quick brown fox and filler words from {name}")
print("done", time.process_time() - start, flush=True)
"""


# The same with LangGraph's PostgresStore: each writer puts to its own user's namespaces, two puts per message (the
# thread's item and the day's copy: the same work as one of our appends), each put its own transaction.
_LANGGRAPH_WRITER = """
import sys, time
from langgraph.store.postgres import PostgresStore
url, name, count = sys.argv[1], sys.argv[2], int(sys.argv[3])
with PostgresStore.from_conn_string(url) as store:
    store.get(("memories", name, "s"), "0")
    print("ready", flush=True); sys.stdin.readline()
    start = time.process_time()
    for i in range(count):
        record = {"ts": "2026-04-08T10:00:00.000000+00:00", "role": "user",
                  "content": f"message {i} about topic {i % 97}: the quick brown fox and filler words from {name}"}
        store.put(("memories", name, "s"), str(i + 1), {**record, "tags": ["session"]})
        store.put(("memories", name, "daily", "2026-04-08"), str(i + 1), {**record, "tags": ["daily"]})
    print("done", time.process_time() - start, flush=True)
"""


def langgraph_ready(url: str) -> bool:
    """Set up LangGraph's PostgresStore tables in ``url``; ``False`` when langgraph-checkpoint-postgres is absent."""
    try:
        from langgraph.store.postgres import PostgresStore
    except ImportError:
        return False
    with PostgresStore.from_conn_string(url) as store:
        store.setup()
    return True


def writers(url: str, processes: int, each: int, server: ServerCpu = NO_SERVER_CPU, *,
            script: str = _WRITER) -> dict[str, float]:
    """Messages per second with ``processes`` writers, each appending ``each`` messages to its own user, and the CPU
    per append (the writers' own and, when measurable, the server's). ``script``: the writer (ours, or
    :data:`_LANGGRAPH_WRITER`)."""
    procs = [subprocess.Popen([sys.executable, "-c", script, url, f"w{processes}-{n}", str(each)],
                              stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True) for n in range(processes)]
    for proc in procs:
        assert proc.stdout is not None and proc.stdout.readline().strip() == "ready"
    server_start = server.seconds()
    start = time.perf_counter()
    for proc in procs:
        assert proc.stdin is not None
        proc.stdin.write("go\n")
        proc.stdin.flush()
    client = 0.0
    for proc in procs:
        assert proc.stdout is not None
        word, seconds = proc.stdout.readline().split()
        assert word == "done"
        client += float(seconds)
    elapsed = time.perf_counter() - start
    server_end = server.seconds()
    for proc in procs:
        proc.wait()
    total = processes * each
    out = {"per_s": total / elapsed, "client_cpu_us": client / total * 1e6}
    if server_start is not None and server_end is not None:
        out["server_cpu_us"] = (server_end - server_start) / total * 1e6
    return out


def interleaved_appends(fresh: Callable[[], str], rounds: int, each: int, server: ServerCpu = NO_SERVER_CPU
                        ) -> dict[str, list[dict[str, float]]]:
    """Our append beside PostgresStore's two puts, natural and with the trigram index, interleaved: each in a database
    of its own (with ``--url`` one database: our user, the natural ``store`` and :data:`TRGM_SCHEMA`'s ``store``
    are apart), one round of ``each`` appends each to warm up, then ``rounds`` rounds of ``each`` appends per configuration, their order
    rotated every round, so that a neighbour's load falls on all three alike. Per configuration, per round: wall,
    client CPU and server CPU per message, in µs (see :func:`cpu_per_call`). The message is the writers' (~90
    characters); the PostgresStore keys are zero-padded as in :func:`measure_langgraph_trgm` for both."""
    from langgraph.store.postgres import PostgresStore

    from agentmem_nb.store.postgres import upgrade_database

    def text(i: int) -> str:
        return f"message {i} about topic {i % 97}: the quick brown fox and filler words from interleaved"

    url = fresh()
    upgrade_database(url)
    ours = MemoryStore(url, zone="UTC")
    user = ours.user("interleaved")
    calls: dict[str, Callable[[int], object]] = {
        "postgres": lambda i: user.append("s", "user", text(i), day=DAY)}
    peers = []
    try:
        for name in ("langgraph", "langgraph_trgm"):
            conninfo = fresh()
            if name == "langgraph_trgm":
                conninfo = trgm_conninfo(conninfo)
                langgraph_trgm_ready(conninfo)
            else:
                langgraph_ready(conninfo)
            manager = PostgresStore.from_conn_string(conninfo)
            peers.append(manager)
            peer = manager.__enter__()

            def both(i: int, peer: Any = peer) -> None:
                record = {"ts": "2026-04-08T10:00:00.000000+00:00", "role": "user", "content": text(i)}
                peer.put(("memories", "interleaved", "s"), f"{i + 1:012d}", {**record, "tags": ["session"]})
                peer.put(("memories", "interleaved", "daily", DAY), f"{i + 1:012d}", {**record, "tags": ["daily"]})

            calls[name] = both
        names = list(calls)
        for name in names:
            for i in range(each):
                calls[name](i)
        out: dict[str, list[dict[str, float]]] = {name: [] for name in names}
        for round_ in range(rounds):
            for name in names[round_ % 3:] + names[:round_ % 3]:
                first = (round_ + 1) * each
                out[name].append(cpu_per_call(lambda i, name=name, first=first: calls[name](first + i), each, server))
    finally:
        for manager in peers:
            manager.__exit__(None, None, None)
        ours.close()  # type: ignore[attr-defined]  # the PostgreSQL store's pool
    return out


def _ratios(rounds: dict[str, list[dict[str, float]]], peer: str) -> dict[str, list[float]]:
    """Per measure, ours ÷ ``peer`` round by round, sorted (the median is the comparison; the ends the spread)."""
    def total(row: dict[str, float]) -> float:
        return row["client_cpu_us"] + row.get("server_cpu_us", 0.0)

    out = {key: sorted(mine[key] / theirs[key] for mine, theirs in zip(rounds["postgres"], rounds[peer])
                       if theirs.get(key)) for key in rounds["postgres"][0]}
    out["cpu_us"] = sorted(total(mine) / total(theirs) for mine, theirs in zip(rounds["postgres"], rounds[peer]))
    return out


def _server_url() -> tuple[ServerCpu, Callable[[], str], Callable[[], None]]:
    sys.path.insert(0, str(_REPO / "tests"))
    from pg_server import PgServer, server_bindir  # a source checkout's throwaway server

    bindir = server_bindir()
    if bindir is None:
        raise SystemExit("no PostgreSQL server: give --url postgresql://… or install Debian's postgresql "
                         "(scripts/install_postgres.sh)")
    server = PgServer(bindir, durable=True)  # fsync and synchronous commits on: see the module docstring
    return ServerCpu(server.folder), server.new_database, server.destroy


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--url", help="an empty database to fill (default: a throwaway server of a checkout)")
    parser.add_argument("--sizes", default="10000,100000", help="messages per thread (default: %(default)s)")
    parser.add_argument("--writers", default="1,4,16", help="writer processes (default: %(default)s; '' for none)")
    parser.add_argument("--each", type=int, default=300, help="appends per writer (default: %(default)s)")
    parser.add_argument("--repeats", type=int, default=30)
    parser.add_argument("--quick", action="store_true", help="10k only, writers 1 and 4, fewer repeats")
    parser.add_argument("--json", action="store_true", help="print the results as JSON")
    parser.add_argument("--no-langgraph", action="store_true", help="skip LangGraph's PostgresStore beside it")
    parser.add_argument("--append-rounds", type=int, default=0,
                        help="also our append beside PostgresStore's, natural and with the trigram index, "
                             "interleaved: this many rounds of --each appends each (default: none)")
    args = parser.parse_args(argv)
    if args.quick:
        args.sizes, args.writers, args.repeats, args.each = "10000", "1,4", 10, 150
    sizes = [int(s) for s in args.sizes.split(",") if s.strip()]
    stop: Callable[[], None] = lambda: None  # noqa: E731
    server = NO_SERVER_CPU
    if args.url:
        fresh: Callable[[], str] = lambda: args.url  # noqa: E731
    else:
        server, fresh, stop = _server_url()
    results: dict[str, Any] = {"sizes": {}, "writers": {}, "writers_cpu": {}, "langgraph_writers": {},
                               "langgraph_writers_cpu": {}, "langgraph_trgm_writers": {},
                               "langgraph_trgm_writers_cpu": {}, "langgraph_trgm_plans": {}}
    rng = random.Random(13)
    try:
        for n in sizes:
            print(f"building N={n} ...", file=sys.stderr)
            with tempfile.TemporaryDirectory() as folder:
                files = measure(build_files(Path(folder), n), n, repeats=args.repeats, rng=rng)
            database_store = build_database(fresh(), n)
            database = measure(database_store, n, repeats=args.repeats, rng=rng, server=server)
            database_store.close()  # type: ignore[attr-defined]  # the PostgreSQL store's pool
            results["sizes"][n] = {"files": files, "postgres": database}
            if not args.no_langgraph:
                peer = measure_langgraph(fresh(), n, repeats=args.repeats, rng=rng, server=server)
                if peer is not None:
                    results["sizes"][n]["langgraph"] = peer
                indexed = measure_langgraph_trgm(fresh(), n, repeats=args.repeats, server=server)
                if indexed is not None:
                    results["sizes"][n]["langgraph_trgm"], results["langgraph_trgm_plans"][n] = indexed
        counts = [int(w) for w in args.writers.split(",") if w.strip()]
        if counts:
            url = fresh()
            from agentmem_nb.store.postgres import upgrade_database

            upgrade_database(url)
        for count in counts:
            print(f"{count} writer(s) ...", file=sys.stderr)
            measured = writers(url, count, args.each, server)
            results["writers"][count] = measured.pop("per_s")
            results["writers_cpu"][count] = measured
        peer_url = fresh() if counts and not args.no_langgraph else None
        if peer_url is not None and langgraph_ready(peer_url):
            for count in counts:
                print(f"{count} PostgresStore writer(s) ...", file=sys.stderr)
                measured = writers(peer_url, count, args.each, server, script=_LANGGRAPH_WRITER)
                results["langgraph_writers"][count] = measured.pop("per_s")
                results["langgraph_writers_cpu"][count] = measured
            trgm_url = trgm_conninfo(fresh())
            langgraph_trgm_ready(trgm_url)
            for count in counts:
                print(f"{count} PostgresStore writer(s), with the trigram index ...", file=sys.stderr)
                measured = writers(trgm_url, count, args.each, server, script=_LANGGRAPH_WRITER)
                results["langgraph_trgm_writers"][count] = measured.pop("per_s")
                results["langgraph_trgm_writers_cpu"][count] = measured
        if args.append_rounds and not args.no_langgraph and importlib.util.find_spec("langgraph") is not None:
            print(f"{args.append_rounds} interleaved rounds of appends ...", file=sys.stderr)
            rounds = interleaved_appends(fresh, args.append_rounds, args.each, server)
            results["append_rounds"] = rounds
            results["append_round_ratios"] = {peer: _ratios(rounds, peer) for peer in ("langgraph", "langgraph_trgm")}
    finally:
        stop()
    if args.json:
        print(json.dumps(results, indent=2))
        return 0
    # langgraph: PostgresStore the natural way; langgraph+trgm: the same work with the index it needs (its search by
    # raw SQL)
    columns = ("files", "postgres", "langgraph", "langgraph_trgm")
    print(f"{'N':>9} {'measure':<26}" + "".join(f" {name:>14}" for name in columns))
    for n, pair in results["sizes"].items():
        keys = list(pair["postgres"]) + [key for key in pair.get("langgraph", {}) if key not in pair["postgres"]]
        for key in keys:
            cells = [f"{pair[name][key]:>12.0f}µs" if key in pair.get(name, {}) else f"{'-':>14}" for name in columns]
            print(f"{n:>9} {key:<26} " + " ".join(cells))
        for term, scans in results["langgraph_trgm_plans"].get(n, {}).items():
            print(f"{n:>9} PostgresStore+trgm search plan, {term}: {', '.join(scans)}")
    for name, key in (("agentmem_nb", "writers"), ("PostgresStore, two puts", "langgraph_writers"),
                      ("PostgresStore + trigram index, two puts", "langgraph_trgm_writers")):
        one = results[key].get(1)
        for count, rate in results[key].items():
            ratio = f"  ({rate / one:.1f}x one writer)" if one else ""
            cpu = results[key + "_cpu"][count]
            print(f"{name}: {count:>3} writer process(es): {rate:8.0f} messages/s{ratio}, CPU per message: "
                  f"client {cpu['client_cpu_us']:.0f} µs, server {cpu.get('server_cpu_us', float('nan')):.0f} µs")
    for peer, ratios in results.get("append_round_ratios", {}).items():
        print(f"interleaved appends, ours ÷ {peer}, median of {args.append_rounds} rounds (range): " + ", ".join(
            f"{key} {statistics.median(values):.2f} ({values[0]:.2f}-{values[-1]:.2f})"
            for key, values in ratios.items() if values))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
