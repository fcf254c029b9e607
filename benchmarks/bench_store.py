"""Store benchmark (issue 2, "Benchmark"): append, window, keyword search and memory at N = 1k … 1M messages.

For every size N a child process builds a session file and a day file of N messages each (written directly in the
store's JSONL format, so building 1M lines takes seconds, not an hour of appends) and then measures, through the
public API:

* **append** µs/message on top of the N-message files, for a batch of messages:
  ``MemoryStore(...).user(u).append(...)`` (session + daily line) and the single line file under a layer (``session(sid)._file.append(record)``, internal: one raw line);
  *cold* = a fresh ``MemoryStore`` whose layer has never been indexed (the next id comes from the file's tail),
  *warm* = after the index was built (the next id comes from the index, the new line is indexed as it is written);
* **window** ``session.window(anchor, 5, 5)`` for random anchors, warm, plus the cold first call (the index build);
* **keyword search** ``session.search(term, limit=20)``, warm: a rare term (~0.1 % of messages), a common term, a CJK
  term and an absent term (a full scan, the worst case);
* **memory**: ``ru_maxrss`` of the child, the RSS growth across the index build and (where cheap) the tracemalloc
  peak of an index build.

Each size runs in its own process so that the peak RSS belongs to that N alone. ``--baseline`` also re-implements the
original demo's append (parse the whole file to find the next id, then append) to show how its cost grows.

Usage::

    .venv/bin/python benchmarks/bench_store.py --quick            # 1k and 10k, well under 30 s
    .venv/bin/python benchmarks/bench_store.py                    # 1k, 10k, 100k, 1M (several minutes)
    .venv/bin/python benchmarks/bench_store.py --sizes 1000,100000 --json results.json --baseline

Figures are wall-clock medians on whatever machine runs this; on a shared machine they are noisy (see README.md).
"""

from __future__ import annotations

import argparse
import datetime as _dt
import json
import os
import platform
import random
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
import tracemalloc
from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

# Runs from a checkout without installing the package (``python benchmarks/bench_store.py``).
_REPO = Path(__file__).resolve().parents[1]
if str(_REPO) not in sys.path:
    sys.path.insert(0, str(_REPO))

from agentmem_nb import MemoryStore  # noqa: E402  (after the sys.path fix above)

USER = "bench-user"
SESSION = "bench-session"
ZONE = _dt.timezone(_dt.timedelta(hours=8))  # a fixed offset: no tzdata needed, day files are unambiguous
DAY = _dt.date(2026, 4, 8)
# Prebuilt lines span 00:00–20:00 of DAY; appended lines start at 21:00 and advance 1 ms each, so every append of a
# run lands in the same (prebuilt) day file and timestamps stay in order.
BUILD_SPAN_SECONDS = 20 * 3600
APPEND_START = _dt.datetime(2026, 4, 8, 21, 0, tzinfo=ZONE)

RARE_TERM = "zephyrine"  # inserted into ~RARE_RATE of the messages; never produced by the vocabulary
RARE_RATE = 0.001
COMMON_TERM = "project"
CJK_TERM = "咖啡"
ABSENT_TERM = "qqxjzv"  # in no message: the search scans every byte of the index
WINDOW_SIDE = 5
SEARCH_LIMIT = 20

TARGETS = {
    "append_ratio_max": 1.3,  # append µs/msg at the largest N / at the smallest N
    "window_p50_us_at_1m": 1000.0,
    "search_ms": {100_000: 50.0, 1_000_000: 500.0},
}

ORIGINAL_DEMO_QUOTED_MS = {1000: 4.3, 5000: 18.9, 10000: 42.0}  # issue 2: the original demo measured on this machine


# ---------------------------------------------------------------------------------------------------------- settings


@dataclass(frozen=True, slots=True)
class Settings:
    """How much work each measurement does (``--quick`` shrinks all of it)."""

    batch: int  # messages appended per timed batch
    reps: int  # timed batches per append mode
    windows: int  # random anchors timed
    search_reps: int  # timed calls per search term
    seed: int
    tracemalloc_max_n: int  # run the (slow) tracemalloc index build only up to this N


FULL = dict(batch=1000, reps=5, windows=2000, search_reps=30)
QUICK = dict(batch=200, reps=3, windows=300, search_reps=7)


# ---------------------------------------------------------------------------------------------------------- content

_EN_WORDS = (
    "the a an and or but with without about after before during for from into over under again never always "
    "I you we they she he it my your our their this that these those here there today tomorrow yesterday "
    "agent memory project meeting coffee train ticket budget weekend notebook python server deploy release "
    "bug test window search anchor message session daily summary note reminder birthday dinner friend sister "
    "brother mother doctor appointment flight hotel Lyon Paris Shanghai Berlin museum concert guitar swimming "
    "running book chapter recipe garden rain sunny cold warm late early quick slow quiet busy happy tired "
    "remember forget prefer like dislike need want plan move start finish check send call write read cook "
    "visit learn teach fix break build ship review merge branch commit schedule invoice contract client"
).split()

_CN_PHRASES = (
    "我们 明天 今天 昨天 上午 下午 晚上 周末 项目 会议 咖啡 火车票 预算 笔记本 记忆 搜索 窗口 消息 会话 "
    "总结 提醒 生日 晚饭 朋友 姐姐 哥哥 妈妈 医生 预约 航班 酒店 里昂 巴黎 上海 柏林 博物馆 音乐会 吉他 "
    "游泳 跑步 这本书 第三章 菜谱 花园 下雨 晴天 很冷 暖和 有点晚 很早 安静 很忙 开心 有点累 记得 忘了 "
    "更喜欢 不喜欢 需要 想要 计划 搬家 开始 完成 检查 发送 打电话 写 读 做饭 参观 学习 修复 发布 评审 "
    "合并 提交 安排 发票 合同 客户 人参果 姑娘果 蓝莓 折耳根 一起 可能 已经 还没有 真的 非常"
).split()


def _english_sentence(rng: random.Random) -> str:
    length = max(2, min(40, int(rng.lognormvariate(2.0, 0.55))))
    words = [rng.choice(_EN_WORDS) for _ in range(length)]
    words[0] = words[0][:1].upper() + words[0][1:]
    return " ".join(words) + rng.choice((".", ".", ".", "?", "!"))


def _chinese_sentence(rng: random.Random) -> str:
    length = max(2, min(30, int(rng.lognormvariate(1.7, 0.55))))
    parts = []
    for i in range(length):
        parts.append(rng.choice(_CN_PHRASES))
        if i and i < length - 1 and rng.random() < 0.15:
            parts.append("，")
    return "".join(parts) + rng.choice(("。", "。", "？", "！"))


def _mixed_sentence(rng: random.Random) -> str:
    english = _english_sentence(rng).rstrip(".?!").split(" ")
    for _ in range(rng.randint(1, 3)):
        english.insert(rng.randrange(len(english) + 1), rng.choice(_CN_PHRASES))
    return " ".join(english) + "。"


def _message_text(rng: random.Random, *, assistant: bool) -> str:
    count = max(1, min(8, int(rng.lognormvariate(0.2 if assistant else -0.3, 0.7)) + (1 if assistant else 0)))
    sentences = []
    for _ in range(count):
        pick = rng.random()
        if pick < 0.45:
            sentences.append(_english_sentence(rng))
        elif pick < 0.85:
            sentences.append(_chinese_sentence(rng))
        else:
            sentences.append(_mixed_sentence(rng))
    return " ".join(sentences)


@dataclass(frozen=True, slots=True)
class PoolEntry:
    text: str
    json_text: str  # the JSON string literal, computed once (building 1M lines then costs a lookup, not a dumps)
    has_common: bool
    has_cjk: bool


class Corpus:
    """A deterministic pool of realistic mixed English/Chinese messages; a run draws from it with its own rng.

    A pool (rather than one fresh sentence per line) keeps building 1M lines fast; 8k distinct messages of varied
    length are plenty for a substring search, whose cost depends on bytes scanned and hit density, not on variety.
    """

    POOL = 4096

    def __init__(self, seed: int) -> None:
        rng = random.Random(seed)
        self.user = [self._entry(_message_text(rng, assistant=False)) for _ in range(self.POOL)]
        self.assistant = [self._entry(_message_text(rng, assistant=True)) for _ in range(self.POOL)]
        for entry in self.user + self.assistant:
            # The rare and absent terms must come only from where the builder puts them.
            assert RARE_TERM not in entry.text.casefold() and ABSENT_TERM not in entry.text.casefold()

    @staticmethod
    def _entry(text: str) -> PoolEntry:
        folded = text.casefold()
        return PoolEntry(text, json.dumps(text, ensure_ascii=False), COMMON_TERM in folded, CJK_TERM in folded)

    def pick(self, rng: random.Random, *, assistant: bool) -> PoolEntry:
        pool = self.assistant if assistant else self.user
        return pool[rng.randrange(self.POOL)]


def _ts_text(seconds: float) -> str:
    whole = int(seconds)
    micro = int(round((seconds - whole) * 1_000_000))
    if micro == 1_000_000:
        whole, micro = whole + 1, 0
    h, rest = divmod(whole, 3600)
    m, s = divmod(rest, 60)
    return f"{DAY.isoformat()}T{h:02d}:{m:02d}:{s:02d}.{micro:06d}+08:00"


def _line(ts: str, role: str, content_json: str, tag: str, message_id: int) -> str:
    # Byte-for-byte what JsonlFile.append writes: json.dumps(record, ensure_ascii=False) with the keys in this order.
    return (f'{{"ts": "{ts}", "role": "{role}", "content": {content_json}, "tags": ["{tag}"], '
            f'"meta": {{"session_id": "{SESSION}"}}, "message_id": {message_id}}}\n')


@dataclass(frozen=True, slots=True)
class Built:
    session_path: Path
    daily_path: Path
    session_bytes: int
    daily_bytes: int
    seconds: float
    rare_hits: int
    common_hits: int
    cjk_hits: int


def build_layers(user_dir: Path, n: int, corpus: Corpus, rng: random.Random) -> Built:
    """Write ``sessions/{SESSION}.jsonl`` and ``daily/{DAY}.jsonl`` with ``n`` messages each (ids 1..n)."""
    session_path = user_dir / "sessions" / f"{SESSION}.jsonl"
    daily_path = user_dir / "daily" / f"{DAY.isoformat()}.jsonl"
    session_path.parent.mkdir(parents=True, exist_ok=True)
    daily_path.parent.mkdir(parents=True, exist_ok=True)
    step = BUILD_SPAN_SECONDS / max(n, 1)
    rare = common = cjk = 0
    started = time.perf_counter()
    with open(session_path, "w", encoding="utf-8") as s_out, open(daily_path, "w", encoding="utf-8") as d_out:
        s_buf: list[str] = []
        d_buf: list[str] = []
        for i in range(1, n + 1):
            assistant = i % 2 == 0
            entry = corpus.pick(rng, assistant=assistant)
            content_json = entry.json_text
            if rng.random() < RARE_RATE:
                words = entry.text.split(" ")
                words.insert(rng.randrange(len(words) + 1), RARE_TERM)
                content_json = json.dumps(" ".join(words), ensure_ascii=False)
                rare += 1
            common += entry.has_common
            cjk += entry.has_cjk
            ts = _ts_text(i * step)
            role = "assistant" if assistant else "user"
            s_buf.append(_line(ts, role, content_json, "session", i))
            d_buf.append(_line(ts, role, content_json, "daily", i))
            if len(s_buf) >= 8192:
                s_out.write("".join(s_buf))
                d_out.write("".join(d_buf))
                s_buf.clear()
                d_buf.clear()
        s_out.write("".join(s_buf))
        d_out.write("".join(d_buf))
    seconds = time.perf_counter() - started
    return Built(session_path, daily_path, session_path.stat().st_size, daily_path.stat().st_size, seconds,
                 rare, common, cjk)


def _check_line_format() -> None:
    """The hand-built line must equal what the store itself would write (else the benchmark measures a fiction)."""
    record = {"ts": _ts_text(1.5), "role": "user", "content": 'x "y" 咖啡\n', "tags": ["session"],
              "meta": {"session_id": SESSION}, "message_id": 7}
    expected = json.dumps(record, ensure_ascii=False) + "\n"
    got = _line(record["ts"], "user", json.dumps(record["content"], ensure_ascii=False), "session", 7)
    assert got == expected, f"builder line format drifted:\n{got}\n{expected}"


# ---------------------------------------------------------------------------------------------------------- helpers


class StepClock:
    """Aware time that advances 1 ms per call (the store's ``clock=``), so appends get distinct, ordered ts."""

    def __init__(self, start: _dt.datetime) -> None:
        self.now = start

    def __call__(self) -> _dt.datetime:
        current = self.now
        self.now += _dt.timedelta(milliseconds=1)
        return current


def summarize(samples: Sequence[float]) -> dict[str, float]:
    """Median, nearest-rank p95, mean, min and count of ``samples`` (seconds in, microseconds out)."""
    ordered = sorted(samples)
    p95 = ordered[min(len(ordered) - 1, max(0, int(round(0.95 * len(ordered))) - 1))]
    return {
        "p50_us": statistics.median(ordered) * 1e6,
        "p95_us": p95 * 1e6,
        "mean_us": statistics.fmean(ordered) * 1e6,
        "min_us": ordered[0] * 1e6,
        "n": len(ordered),
    }


def current_rss_bytes() -> int | None:
    """Resident set size now (Linux ``/proc``); ``None`` elsewhere."""
    try:
        with open("/proc/self/statm") as handle:
            return int(handle.read().split()[1]) * os.sysconf("SC_PAGE_SIZE")
    except (OSError, ValueError, IndexError):
        return None


def peak_rss_bytes() -> int:
    """``ru_maxrss`` of this process (kilobytes on Linux, bytes on macOS)."""
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    return peak if sys.platform == "darwin" else peak * 1024


@dataclass(frozen=True, slots=True)
class Batch:
    wall_s: float
    cpu_s: float  # user + system CPU of this process: what other processes on the machine disturb least
    per_call_s: list[float]


def _timed_batch(call: Callable[[int], object], count: int) -> Batch:
    """Run ``call(i)`` ``count`` times, timing the batch (wall and CPU) and each call (wall)."""
    per_call = []
    clock = time.perf_counter
    cpu_started = time.process_time()
    started = clock()
    for i in range(count):
        t0 = clock()
        call(i)
        per_call.append(clock() - t0)
    wall = clock() - started
    return Batch(wall, time.process_time() - cpu_started, per_call)


def _append_summary(batches: list[Batch], batch: int) -> dict[str, Any]:
    per_message = [b.wall_s / batch * 1e6 for b in batches]
    cpu_per_message = [b.cpu_s / batch * 1e6 for b in batches]
    pooled = [t for b in batches for t in b.per_call_s]
    return {
        "us_per_msg": statistics.median(per_message),
        "us_per_msg_best": min(per_message),  # least disturbed by other processes on a shared machine
        "cpu_us_per_msg": statistics.median(cpu_per_message),
        "us_per_msg_reps": [round(x, 2) for x in per_message],
        "per_call": summarize(pooled),
        "first_call_us": [round(b.per_call_s[0] * 1e6, 1) for b in batches],
    }


# ---------------------------------------------------------------------------------------------------------- one size


def measure_size(n: int, root: Path, settings: Settings) -> dict[str, Any]:
    """Everything for one N; ``root`` is an empty directory this function may fill."""
    _check_line_format()
    rss_start = current_rss_bytes()
    corpus = Corpus(settings.seed)
    rng = random.Random(settings.seed * 1_000_003 + n)
    user_dir = root / USER
    print(f"[N={n:,}] building session + daily files ...", file=sys.stderr, flush=True)
    built = build_layers(user_dir, n, corpus, rng)
    result: dict[str, Any] = {
        "n": n,
        "build_s": built.seconds,
        "session_bytes": built.session_bytes,
        "daily_bytes": built.daily_bytes,
        "bytes_per_message": built.session_bytes / max(n, 1),
        "term_messages": {RARE_TERM: built.rare_hits, COMMON_TERM: built.common_hits, CJK_TERM: built.cjk_hits,
                          ABSENT_TERM: 0},
        "rss_start_bytes": rss_start,
    }
    clock = StepClock(APPEND_START)

    def new_store() -> MemoryStore:
        return MemoryStore(root, zone=ZONE, clock=clock)

    contents = [corpus.pick(rng, assistant=i % 2 == 1).text for i in range(settings.batch)]
    day = DAY.isoformat()

    def record(i: int) -> dict[str, Any]:
        return {"ts": clock().isoformat(timespec="microseconds"), "role": "assistant" if i % 2 else "user",
                "content": contents[i], "tags": ["session"], "meta": {"session_id": SESSION}}

    def restore_sizes() -> None:
        # Cold batches all start from exactly N lines: cut the appended lines off again (fresh objects follow).
        os.truncate(built.session_path, built.session_bytes)
        os.truncate(built.daily_path, built.daily_bytes)

    # --- cold appends: a fresh MemoryStore per batch; its layers are never indexed, so every append takes the
    #     next id from the file's tail.
    print(f"[N={n:,}] cold appends ...", file=sys.stderr, flush=True)
    api_cold, layer_cold = [], []
    for _ in range(settings.reps):
        user = new_store().user(USER)
        api_cold.append(_timed_batch(
            lambda i: user.append(SESSION, "assistant" if i % 2 else "user", contents[i]), settings.batch))
        restore_sizes()
        layer = new_store().user(USER).session(SESSION)
        layer_cold.append(_timed_batch(lambda i: layer._file.append(record(i)), settings.batch))
        restore_sizes()
    result["append_api_cold"] = _append_summary(api_cold, settings.batch)
    result["append_layer_cold"] = _append_summary(layer_cold, settings.batch)

    # --- the cold first read: builds the index of the whole file (what a new process pays once per layer).
    print(f"[N={n:,}] index build (cold first window) ...", file=sys.stderr, flush=True)
    store = new_store()
    user = store.user(USER)
    session = user.session(SESSION)
    anchors_rng = random.Random(settings.seed + 7)
    rss_before = current_rss_bytes()
    t0 = time.perf_counter()
    first = session.window(anchors_rng.randint(1, n), WINDOW_SIDE, WINDOW_SIDE)
    result["window_cold_first_call_s"] = time.perf_counter() - t0
    rss_after_session = current_rss_bytes()
    t0 = time.perf_counter()
    daily_len = len(user.daily(day))
    result["daily_index_build_s"] = time.perf_counter() - t0
    result["index_rss_delta_bytes"] = (rss_after_session - rss_before
                                       if rss_before is not None and rss_after_session is not None else None)
    # Sanity: the store reads the hand-built files as its own, with no problems reported.
    problems = session.problems() + user.daily(day).problems()
    if not first or len(session) != n or daily_len != n or problems:
        raise SystemExit(f"N={n}: store did not read the built files cleanly: window={bool(first)} "
                         f"session={len(session)} daily={daily_len} problems={problems[:3]}")

    if n <= settings.tracemalloc_max_n:
        print(f"[N={n:,}] tracemalloc index build ...", file=sys.stderr, flush=True)
        probe = new_store().user(USER).session(SESSION)
        tracemalloc.start()
        t0 = time.perf_counter()
        len(probe)
        traced_s = time.perf_counter() - t0
        _, traced_peak = tracemalloc.get_traced_memory()
        tracemalloc.stop()
        result["index_tracemalloc_peak_bytes"] = traced_peak
        result["index_tracemalloc_build_s"] = traced_s  # slower than the real build: tracing costs
        del probe
    else:
        result["index_tracemalloc_peak_bytes"] = None

    # --- warm window: random anchors over the whole file.
    print(f"[N={n:,}] warm windows ...", file=sys.stderr, flush=True)
    anchors = [anchors_rng.randint(1, n) for _ in range(settings.windows)]
    window_times = []
    cpu_started = time.process_time()
    for anchor in anchors:
        t0 = time.perf_counter()
        window = session.window(anchor, WINDOW_SIDE, WINDOW_SIDE)
        window_times.append(time.perf_counter() - t0)
        if window.anchor is None:
            raise SystemExit(f"N={n}: window({anchor}) lost its anchor: {window.reason}")
    result["window_warm"] = {**summarize(window_times),
                             "cpu_mean_us": (time.process_time() - cpu_started) / len(anchors) * 1e6}

    # --- warm keyword search.
    print(f"[N={n:,}] warm searches ...", file=sys.stderr, flush=True)
    searches: dict[str, Any] = {}
    for label, term in (("rare", RARE_TERM), ("common", COMMON_TERM), ("cjk", CJK_TERM), ("absent", ABSENT_TERM)):
        times = []
        hits: list[Any] = []
        cpu_started = time.process_time()
        for _ in range(settings.search_reps):
            t0 = time.perf_counter()
            hits = session.search(term, limit=SEARCH_LIMIT)
            times.append(time.perf_counter() - t0)
        wrong = [m.message_id for m in hits if term.casefold() not in m.content.casefold()]
        if wrong:
            raise SystemExit(f"N={n}: search({term!r}) returned non-matching messages {wrong[:5]}")
        searches[label] = {"term": term, "returned": len(hits), "messages_with_term": result["term_messages"][term],
                           **summarize(times),
                           "cpu_mean_us": (time.process_time() - cpu_started) / settings.search_reps * 1e6}
    result["search_warm"] = searches

    # --- warm appends: the same store, indexes built; each append also indexes its own line. The files grow by
    #     reps * batch lines here (truncating would throw the index away).
    print(f"[N={n:,}] warm appends ...", file=sys.stderr, flush=True)
    api_warm, layer_warm = [], []
    for _ in range(settings.reps):
        api_warm.append(_timed_batch(
            lambda i: user.append(SESSION, "assistant" if i % 2 else "user", contents[i]), settings.batch))
        layer_warm.append(_timed_batch(lambda i: session._file.append(record(i)), settings.batch))
    result["append_api_warm"] = _append_summary(api_warm, settings.batch)
    result["append_layer_warm"] = _append_summary(layer_warm, settings.batch)
    result["warm_append_file_growth_lines"] = 2 * settings.reps * settings.batch
    if len(session) != n + 2 * settings.reps * settings.batch or session.problems():
        raise SystemExit(f"N={n}: warm appends left {len(session)} lines or problems {session.problems()[:3]}")

    result["peak_rss_bytes"] = peak_rss_bytes()
    return result


# ---------------------------------------------------------------------------------------------------------- interleaved


APPEND_MODES = ("append_api_cold", "append_api_warm", "append_layer_cold", "append_layer_warm")


def measure_interleaved(fixtures: list[dict[str, Any]], settings: Settings) -> dict[str, Any]:
    """Append batches alternating between the smallest and the largest file, in one process.

    The per-size figures come from different processes minutes apart; on a shared machine the load changes in
    between, and that alone can move a ratio by 2x. Alternating small/large batches exposes both to the same load, so
    their ratio is the fair test of "append cost does not grow with N". ``fixtures``: the two sizes' files, each
    ``{"n", "root", "session_bytes", "daily_bytes"}``, cut back to their built length first.
    """
    corpus = Corpus(settings.seed)
    rng = random.Random(settings.seed + 11)
    contents = [corpus.pick(rng, assistant=i % 2 == 1).text for i in range(settings.batch)]
    clock = StepClock(APPEND_START)
    roots = [Path(f["root"]) for f in fixtures]
    paths = [(r / USER / "sessions" / f"{SESSION}.jsonl", r / USER / "daily" / f"{DAY.isoformat()}.jsonl")
             for r in roots]

    def restore(k: int) -> None:
        os.truncate(paths[k][0], fixtures[k]["session_bytes"])
        os.truncate(paths[k][1], fixtures[k]["daily_bytes"])

    def record(i: int) -> dict[str, Any]:
        return {"ts": clock().isoformat(timespec="microseconds"), "role": "assistant" if i % 2 else "user",
                "content": contents[i], "tags": ["session"], "meta": {"session_id": SESSION}}

    def api_batch(user: Any) -> Batch:
        return _timed_batch(lambda i: user.append(SESSION, "assistant" if i % 2 else "user", contents[i]),
                            settings.batch)

    def layer_batch(layer: Any) -> Batch:
        return _timed_batch(lambda i: layer._file.append(record(i)), settings.batch)

    reps = 2 * settings.reps  # two sizes share the time; more reps steady the median of each
    batches: dict[str, list[list[Batch]]] = {mode: [[], []] for mode in APPEND_MODES}
    for k in (0, 1):
        restore(k)
    print(f"[interleaved N={fixtures[0]['n']:,} vs N={fixtures[1]['n']:,}] cold appends ...", file=sys.stderr,
          flush=True)
    for rep in range(reps):
        for k in ((0, 1) if rep % 2 == 0 else (1, 0)):  # alternate who goes first, too
            batches["append_api_cold"][k].append(api_batch(MemoryStore(roots[k], zone=ZONE, clock=clock).user(USER)))
            restore(k)
            layer = MemoryStore(roots[k], zone=ZONE, clock=clock).user(USER).session(SESSION)
            batches["append_layer_cold"][k].append(layer_batch(layer))
            restore(k)
    print("[interleaved] index builds, then warm appends ...", file=sys.stderr, flush=True)
    users = [MemoryStore(r, zone=ZONE, clock=clock).user(USER) for r in roots]
    for user in users:
        len(user.session(SESSION))
        len(user.daily(DAY.isoformat()))
    for rep in range(reps):
        for k in ((0, 1) if rep % 2 == 0 else (1, 0)):
            batches["append_api_warm"][k].append(api_batch(users[k]))
            batches["append_layer_warm"][k].append(layer_batch(users[k].session(SESSION)))
    out: dict[str, Any] = {"small_n": fixtures[0]["n"], "large_n": fixtures[1]["n"]}
    for mode in APPEND_MODES:
        small, large = (_append_summary(batches[mode][k], settings.batch) for k in (0, 1))
        out[mode] = {"small": small, "large": large,
                     "ratio": large["us_per_msg"] / small["us_per_msg"],
                     "ratio_cpu": large["cpu_us_per_msg"] / small["cpu_us_per_msg"]}
    return out


# ---------------------------------------------------------------------------------------------------------- baseline


def _original_demo_append(path: Path, record: dict[str, Any]) -> None:
    """The original demo's append, re-implemented: parse every line to find the next id, then append one line."""
    rows = []
    if path.exists():
        with path.open("r", encoding="utf-8") as handle:
            for raw in handle:
                raw = raw.strip()
                if raw:
                    rows.append(json.loads(raw))
    next_id = 1
    for row in rows:
        try:  # the demo's rule: int() of anything, positive or else "missing"
            given: int | None = int(row.get("message_id"))
        except (TypeError, ValueError):
            given = None
        if given is not None and given <= 0:
            given = None
        next_id = max(next_id, (given if given is not None else next_id) + 1)
    line = dict(record, message_id=next_id)
    with path.open("a", encoding="utf-8") as handle:
        handle.write(json.dumps(line, ensure_ascii=False) + "\n")


def measure_baseline(root: Path, settings: Settings, sizes: Sequence[int], count: int) -> list[dict[str, Any]]:
    """ms per message (session + daily line, each a full parse) of the original demo's append at each size."""
    corpus = Corpus(settings.seed)
    out = []
    for n in sizes:
        print(f"[baseline N={n:,}] original-demo append ...", file=sys.stderr, flush=True)
        folder = root / f"baseline-{n}"
        built = build_layers(folder / USER, n, corpus, random.Random(settings.seed + n))
        content = corpus.user[0].text
        ts = APPEND_START.isoformat(timespec="seconds")
        reps, session_only = [], []
        for _ in range(3):
            # One message = its session line + its daily line, as the demo's chat turn wrote them.
            started = time.perf_counter()
            for _ in range(count):
                _original_demo_append(built.session_path, {"ts": ts, "role": "user", "content": content,
                                                           "tags": ["session"], "meta": {}})
                _original_demo_append(built.daily_path, {"ts": ts, "role": "user", "content": content,
                                                         "tags": ["daily"], "meta": {}})
            reps.append((time.perf_counter() - started) / count * 1e3)
            os.truncate(built.session_path, built.session_bytes)
            os.truncate(built.daily_path, built.daily_bytes)
            started = time.perf_counter()
            for _ in range(count):
                _original_demo_append(built.session_path, {"ts": ts, "role": "user", "content": content,
                                                           "tags": ["session"], "meta": {}})
            session_only.append((time.perf_counter() - started) / count * 1e3)
            os.truncate(built.session_path, built.session_bytes)
        shutil.rmtree(folder, ignore_errors=True)
        out.append({"n": n, "ms_per_msg": statistics.median(reps), "ms_per_msg_reps": [round(r, 3) for r in reps],
                    "ms_session_line_only": statistics.median(session_only), "appends_per_rep": count,
                    "quoted_original_ms": ORIGINAL_DEMO_QUOTED_MS.get(n)})
    return out


# ---------------------------------------------------------------------------------------------------------- report


def _mb(value: int | None) -> str:
    return "-" if value is None else f"{value / 2**20:,.1f}"


def _ms(us: float) -> str:
    return f"{us / 1000:,.2f}"


def ratios(sizes: list[dict[str, Any]]) -> dict[str, Any]:
    """Append µs/msg at the largest N divided by the smallest N, per mode."""
    done = [s for s in sizes if "error" not in s]
    if len(done) < 2:
        return {}
    small, large = min(done, key=lambda s: s["n"]), max(done, key=lambda s: s["n"])
    out: dict[str, Any] = {"small_n": small["n"], "large_n": large["n"]}
    for mode in APPEND_MODES:
        out[mode] = large[mode]["us_per_msg"] / small[mode]["us_per_msg"]
        out[mode + "_best"] = large[mode]["us_per_msg_best"] / small[mode]["us_per_msg_best"]
        out[mode + "_cpu"] = large[mode]["cpu_us_per_msg"] / small[mode]["cpu_us_per_msg"]
    return out


def verdicts(sizes: list[dict[str, Any]], ratio: dict[str, Any],
             interleaved: dict[str, Any] | None) -> list[dict[str, Any]]:
    """Each target of issue 2 that this run can judge, with the measured value.

    The append ratio is judged on the interleaved measurement when there is one (same load on both sizes), else on
    the per-size medians.
    """
    out = []
    if interleaved and "error" not in interleaved:
        for mode in APPEND_MODES:
            value = interleaved[mode]["ratio"]
            out.append({"target": f"{mode} ratio N={interleaved['large_n']:,}/N={interleaved['small_n']:,} "
                                  f"(interleaved) <= {TARGETS['append_ratio_max']}",
                        "value": round(value, 3), "ok": value <= TARGETS["append_ratio_max"]})
    elif ratio:
        for mode in APPEND_MODES:
            out.append({"target": f"{mode} ratio N={ratio['large_n']:,}/N={ratio['small_n']:,} <= "
                                  f"{TARGETS['append_ratio_max']}",
                        "value": round(ratio[mode], 3), "ok": ratio[mode] <= TARGETS["append_ratio_max"]})
    by_n = {s["n"]: s for s in sizes if "error" not in s}
    if 1_000_000 in by_n:
        p50 = by_n[1_000_000]["window_warm"]["p50_us"]
        out.append({"target": "window warm p50 at 1M <= 1 ms", "value": round(p50, 1), "unit": "us",
                    "ok": p50 <= TARGETS["window_p50_us_at_1m"]})
    for n, limit_ms in TARGETS["search_ms"].items():
        if n in by_n:
            for label in ("rare", "common", "cjk"):
                p50_ms = by_n[n]["search_warm"][label]["p50_us"] / 1000
                out.append({"target": f"search {label} warm p50 at {n:,} <= {limit_ms:g} ms",
                            "value": round(p50_ms, 3), "unit": "ms", "ok": p50_ms <= limit_ms})
    return out


def render(doc: dict[str, Any]) -> str:
    """The human-readable tables."""
    meta = doc["meta"]
    sizes = [s for s in doc["sizes"] if "error" not in s]
    lines = [
        f"agentmem_nb store benchmark — Python {meta['python']} on {meta['platform']}, {meta['cpus']} CPU(s), "
        f"load avg {meta['loadavg_start']} at start, {meta['loadavg_end']} at end",
        f"batch {meta['settings']['batch']} appends × {meta['settings']['reps']} reps; "
        f"{meta['settings']['windows']} windows; {meta['settings']['search_reps']} calls per search term; "
        f"seed {meta['settings']['seed']}. Medians unless marked p95. Wall-clock on a shared machine: noisy.",
        "",
        "APPEND on top of N existing messages (µs per message = batch time / batch size, median of reps)",
        f"{'N':>10} {'build s':>8} {'MB/file':>8} {'B/msg':>6} | {'API cold':>9} {'API warm':>9} "
        f"{'layer cold':>10} {'layer warm':>10} | {'API warm p95/call':>17} | {'CPU µs: API cold/warm':>21}",
    ]
    for s in sizes:
        lines.append(
            f"{s['n']:>10,} {s['build_s']:>8.1f} {_mb(s['session_bytes']):>8} {s['bytes_per_message']:>6.0f} | "
            f"{s['append_api_cold']['us_per_msg']:>9.1f} {s['append_api_warm']['us_per_msg']:>9.1f} "
            f"{s['append_layer_cold']['us_per_msg']:>10.1f} {s['append_layer_warm']['us_per_msg']:>10.1f} | "
            f"{s['append_api_warm']['per_call']['p95_us']:>17.1f} | "
            f"{s['append_api_cold']['cpu_us_per_msg']:>10.1f} {s['append_api_warm']['cpu_us_per_msg']:>10.1f}")
    lines.append("  API = user.append(): a session line + a daily line. layer = one raw line on the session file (internal).")
    lines.append("  cold = fresh MemoryStore, next id read from the file tail; warm = index built, line indexed on write.")
    if doc.get("ratios"):
        r = doc["ratios"]
        lines.append(f"  ratio N={r['large_n']:,} / N={r['small_n']:,}: API cold {r['append_api_cold']:.2f}, "
                     f"API warm {r['append_api_warm']:.2f}, layer cold {r['append_layer_cold']:.2f}, "
                     f"layer warm {r['append_layer_warm']:.2f}  (target <= {TARGETS['append_ratio_max']})")
        lines.append(f"  same ratio on the best rep of each:    API cold {r['append_api_cold_best']:.2f}, "
                     f"API warm {r['append_api_warm_best']:.2f}, layer cold {r['append_layer_cold_best']:.2f}, "
                     f"layer warm {r['append_layer_warm_best']:.2f}")
        lines.append(f"  same ratio on CPU time (median):       API cold {r['append_api_cold_cpu']:.2f}, "
                     f"API warm {r['append_api_warm_cpu']:.2f}, layer cold {r['append_layer_cold_cpu']:.2f}, "
                     f"layer warm {r['append_layer_warm_cpu']:.2f}")
    inter = doc.get("interleaved")
    if inter and "error" not in inter:
        lines += ["",
                  f"APPEND INTERLEAVED: batches alternate between N={inter['small_n']:,} and N={inter['large_n']:,} in "
                  "one process (same load on both): µs/msg median, wall (CPU)",
                  f"{'mode':>18} | {'N=' + format(inter['small_n'], ','):>18} | {'N=' + format(inter['large_n'], ','):>18}"
                  f" | {'ratio wall (CPU)':>16}"]
        for mode in APPEND_MODES:
            m = inter[mode]
            cells = [f"{m[k]['us_per_msg']:.1f} ({m[k]['cpu_us_per_msg']:.1f})" for k in ("small", "large")]
            lines.append(f"{mode.removeprefix('append_'):>18} | {cells[0]:>18} | {cells[1]:>18} | "
                         f"{m['ratio']:>7.2f} ({m['ratio_cpu']:.2f})")
    elif inter:
        lines.append(f"APPEND INTERLEAVED: FAILED — {inter['error']}")
    lines += [
        "",
        f"WINDOW session.window(anchor, {WINDOW_SIDE}, {WINDOW_SIDE}), random anchors; INDEX = cold first call",
        f"{'N':>10} | {'warm p50 µs':>11} {'warm p95 µs':>11} | {'1st call s':>10} {'daily idx s':>11} "
        f"{'idx RSS+MB':>10} {'tracemalloc MB':>14} | {'peak RSS MB':>11} | {'warm CPU µs':>11}",
    ]
    for s in sizes:
        w = s["window_warm"]
        lines.append(
            f"{s['n']:>10,} | {w['p50_us']:>11.1f} {w['p95_us']:>11.1f} | {s['window_cold_first_call_s']:>10.3f} "
            f"{s['daily_index_build_s']:>11.3f} {_mb(s['index_rss_delta_bytes']):>10} "
            f"{_mb(s['index_tracemalloc_peak_bytes']):>14} | {_mb(s['peak_rss_bytes']):>11} | "
            f"{w['cpu_mean_us']:>11.1f}")
    lines.append("  peak RSS = ru_maxrss of the child process for that N (interpreter + both indexes + the run).")
    lines += [
        "",
        f"KEYWORD SEARCH session.search(term, limit={SEARCH_LIMIT}), warm; ms p50 / p95 [messages containing term]",
        f"{'N':>10} | {'rare ' + repr(RARE_TERM):>26} | {'common ' + repr(COMMON_TERM):>26} | "
        f"{'CJK ' + repr(CJK_TERM):>24} | {'absent (full scan)':>20}",
    ]
    for s in sizes:
        cells = []
        for label, width in (("rare", 26), ("common", 26), ("cjk", 24)):
            q = s["search_warm"][label]
            cells.append(f"{_ms(q['p50_us'])} / {_ms(q['p95_us'])} [{q['messages_with_term']:,}]".rjust(width))
        q = s["search_warm"]["absent"]
        cells.append(f"{_ms(q['p50_us'])} / {_ms(q['p95_us'])}".rjust(20))
        lines.append(f"{s['n']:>10,} | " + " | ".join(cells))
    if doc.get("baseline"):
        lines += ["", "BASELINE: the original demo's append (parse the whole file for the next id), session + daily",
                  f"{'N':>10} | {'ms/msg':>8} | {'session line only ms':>20} | {'issue quotes ms':>15} | "
                  f"{'this store, API cold µs/msg':>27}"]
        ours = {s["n"]: s["append_api_cold"]["us_per_msg"] for s in sizes}
        for b in doc["baseline"]:
            quoted = "-" if b["quoted_original_ms"] is None else f"{b['quoted_original_ms']:g}"
            mine = f"{ours[b['n']]:.1f}" if b["n"] in ours else "-"
            lines.append(f"{b['n']:>10,} | {b['ms_per_msg']:>8.2f} | {b['ms_session_line_only']:>20.2f} | "
                         f"{quoted:>15} | {mine:>27}")
    for s in doc["sizes"]:
        if "error" in s:
            lines.append(f"N={s['n']:,}: FAILED — {s['error']}")
    if doc.get("verdicts"):
        lines += ["", "TARGETS (issue 2)"]
        for v in doc["verdicts"]:
            unit = v.get("unit", "")
            lines.append(f"  [{'ok' if v['ok'] else 'MISS'}] {v['target']}: {v['value']}{(' ' + unit) if unit else ''}")
    lines.append(f"\ntotal {doc['meta']['total_s']:.1f} s")
    return "\n".join(lines)


# ---------------------------------------------------------------------------------------------------------- driver


def _run_json_child(flag: str, payload: str) -> dict[str, Any]:
    """Run this script with a hidden ``flag`` in a fresh interpreter; its last stdout line is the JSON result."""
    proc = subprocess.run([sys.executable, str(Path(__file__).resolve()), flag, payload],
                          stdout=subprocess.PIPE, text=True)
    if proc.returncode != 0:
        return {"error": f"child exited with {proc.returncode} (see stderr above)"}
    return json.loads(proc.stdout.strip().splitlines()[-1])


def _run_child(n: int, root: Path, settings: Settings) -> dict[str, Any]:
    """Measure one size in a fresh interpreter, so its peak RSS is its own."""
    result = _run_json_child("--_child", json.dumps({"n": n, "root": str(root), "settings": asdict(settings)}))
    return {"n": n, **result}


def _parse_sizes(text: str) -> list[int]:
    try:
        sizes = [int(part.replace("_", "")) for part in text.split(",") if part.strip()]
    except ValueError:
        raise argparse.ArgumentTypeError(f"--sizes must be comma-separated integers like 1000,10000; got {text!r}")
    if not sizes or any(n < 1 for n in sizes):
        raise argparse.ArgumentTypeError(f"--sizes needs positive integers; got {text!r}")
    return sizes


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--sizes", type=_parse_sizes, default=None,
                        help="comma-separated N (default 1000,10000,100000,1000000; --quick: 1000,10000)")
    parser.add_argument("--quick", action="store_true", help="small sizes and fewer repetitions (well under 30 s)")
    parser.add_argument("--json", nargs="?", const="-", default=None, metavar="PATH",
                        help="write the JSON document to PATH; without PATH print it instead of the tables")
    parser.add_argument("--root", type=Path, default=None,
                        help="work directory (kept afterwards); default: a temporary directory, removed afterwards")
    parser.add_argument("--baseline", action="store_true",
                        help="also time the original demo's full-rescan append at 1k/5k/10k")
    parser.add_argument("--batch", type=int, default=None, help="appends per timed batch (default 1000; quick 200)")
    parser.add_argument("--reps", type=int, default=None, help="timed batches per append mode (default 5; quick 3)")
    parser.add_argument("--seed", type=int, default=20260408)
    parser.add_argument("--tracemalloc-max-n", type=int, default=100_000,
                        help="trace an extra index build with tracemalloc up to this N (slow; default 100000)")
    parser.add_argument("--in-process", action="store_true",
                        help="measure every size in this process (for profilers; peak RSS is then cumulative)")
    parser.add_argument("--no-interleave", action="store_true",
                        help="skip the interleaved smallest-vs-largest append comparison")
    parser.add_argument("--_child", help=argparse.SUPPRESS)
    parser.add_argument("--_interleave", help=argparse.SUPPRESS)
    args = parser.parse_args(argv)

    if args._child:
        spec = json.loads(args._child)
        result = measure_size(spec["n"], Path(spec["root"]), Settings(**spec["settings"]))
        print(json.dumps(result))
        return 0
    if args._interleave:
        spec = json.loads(args._interleave)
        print(json.dumps(measure_interleaved(spec["fixtures"], Settings(**spec["settings"]))))
        return 0

    base = QUICK if args.quick else FULL
    settings = Settings(batch=args.batch or base["batch"], reps=args.reps or base["reps"],
                        windows=base["windows"], search_reps=base["search_reps"], seed=args.seed,
                        tracemalloc_max_n=args.tracemalloc_max_n)
    if settings.batch < 1 or settings.reps < 1:
        parser.error(f"--batch and --reps must be >= 1; got {settings.batch} and {settings.reps}")
    sizes = args.sizes or ([1000, 10_000] if args.quick else [1000, 10_000, 100_000, 1_000_000])

    started = time.perf_counter()
    loadavg_start = [round(x, 2) for x in os.getloadavg()]
    owned = args.root is None
    root = Path(tempfile.mkdtemp(prefix="agentmem-bench-")) if owned else args.root
    interleave = not args.no_interleave and len(set(sizes)) >= 2
    keep = {min(sizes), max(sizes)} if interleave else set()
    interleaved: dict[str, Any] | None = None
    try:
        results = []
        for n in sizes:
            size_root = root / f"n{n}"
            if size_root.exists():
                shutil.rmtree(size_root)  # a previous run's files would change N
            size_root.mkdir(parents=True)
            if args.in_process:
                results.append(measure_size(n, size_root, settings))
            else:
                results.append(_run_child(n, size_root, settings))
            if owned and n not in keep:
                shutil.rmtree(size_root, ignore_errors=True)  # 1M lines are ~0.5 GB: free the disk as we go
        if interleave:
            last = {r["n"]: r for r in results}
            fixtures = [{"n": n, "root": str(root / f"n{n}"), "session_bytes": last[n].get("session_bytes"),
                         "daily_bytes": last[n].get("daily_bytes")} for n in sorted(keep)]
            if any("error" in last[n] for n in keep):
                interleaved = {"error": "a size it needs failed"}
            elif args.in_process:
                interleaved = measure_interleaved(fixtures, settings)
            else:
                interleaved = _run_json_child("--_interleave",
                                              json.dumps({"fixtures": fixtures, "settings": asdict(settings)}))
            if owned:
                for n in keep:
                    shutil.rmtree(root / f"n{n}", ignore_errors=True)
        baseline = None
        if args.baseline:
            base_sizes = [1000, 2000, 5000] if args.quick else [1000, 5000, 10_000]
            baseline = measure_baseline(root, settings, base_sizes, count=20 if args.quick else 50)
    finally:
        if owned:
            shutil.rmtree(root, ignore_errors=True)

    ratio = ratios(results)
    doc: dict[str, Any] = {
        "meta": {
            "python": platform.python_version(),
            "platform": f"{platform.system()} {platform.machine()}",
            "cpus": os.cpu_count(),
            "loadavg_start": loadavg_start,
            "loadavg_end": [round(x, 2) for x in os.getloadavg()],
            "date": _dt.datetime.now(_dt.timezone.utc).isoformat(timespec="seconds"),
            "settings": asdict(settings),
            "terms": {"rare": RARE_TERM, "common": COMMON_TERM, "cjk": CJK_TERM, "absent": ABSENT_TERM,
                      "rare_rate": RARE_RATE},
            "total_s": time.perf_counter() - started,
        },
        "sizes": results,
        "ratios": ratio,
        "interleaved": interleaved,
        "verdicts": verdicts(results, ratio, interleaved),
        "baseline": baseline,
    }
    if args.json == "-":
        print(json.dumps(doc, indent=2, ensure_ascii=False))
    else:
        print(render(doc))
        if args.json:
            Path(args.json).write_text(json.dumps(doc, indent=2, ensure_ascii=False) + "\n", encoding="utf-8")
    failed = any("error" in s for s in results) or bool(interleaved and "error" in interleaved)
    return 1 if failed else 0


if __name__ == "__main__":
    raise SystemExit(main())
