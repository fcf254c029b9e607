"""The daily section of the context (``daily_limit > 0``): today's messages from *other* sessions, found even when
this session wrote the tail of the day file, and read backwards a bounded amount."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import agentmem_nb.agent.context as agent_context
from agentmem_nb import MemoryStore
from agentmem_nb.agent import ChatService, OfflineChatModel
from agentmem_nb.agent._text import content_tokens
from agentmem_nb.agent.context import build_context, long_term_lines_used


def _fill(store: MemoryStore, sid: str, count: int) -> None:
    mem = store.user("u1")
    for i in range(count):
        mem.append(sid, "user" if i % 2 == 0 else "assistant", f"{sid} line {i}")


def test_daily_context_finds_other_sessions_behind_a_busy_session(store: MemoryStore) -> None:
    mem = store.user("u1")
    mem.append("elsewhere", "user", "Lunch was ramen today.")
    mem.append("elsewhere", "assistant", "Sounds tasty.")
    mem.append("third", "user", "The train leaves at six.")
    _fill(store, "here", 40)  # this session alone wrote the last 40 lines of the day

    current = mem.append("here", "user", "What did I eat?")
    context = build_context(mem, "here", current, recent_rounds=3, daily_limit=2)

    assert [m.content for m in context.daily] == ["Sounds tasty.", "The train leaves at six."]


def test_daily_context_returns_up_to_the_limit_oldest_first(store: MemoryStore) -> None:
    mem = store.user("u1")
    for i in range(6):
        mem.append("elsewhere", "user", f"elsewhere {i}")
        _fill(store, "here", 10)
    current = mem.append("here", "user", "now")

    context = build_context(mem, "here", current, recent_rounds=3, daily_limit=4)

    assert [m.content for m in context.daily] == [f"elsewhere {i}" for i in range(2, 6)]


def test_daily_context_through_a_turn(store: MemoryStore) -> None:
    svc = ChatService(store, model=OfflineChatModel(), daily_limit=3)
    svc.turn("u1", "elsewhere", "Lunch was ramen today.")
    for i in range(12):
        svc.turn("u1", "here", f"filler {i}")

    context = svc.turn("u1", "here", "and now?").memory_context

    daily_part = context.split("[DAILY]\n")[1].split("[LONG_TERM]")[0]
    assert "user: Lunch was ramen today." in daily_part
    assert "filler" not in daily_part and "and now?" not in daily_part


def _bytes_read_for_daily(store: MemoryStore, user_id: str, fillers: int) -> tuple[int, int]:
    mem = store.user(user_id)
    mem.append("elsewhere", "user", "Too far back to be read.")
    for i in range(fillers):
        mem.append("here", "user", f"here line {i:06d}")
    current = mem.append("here", "user", "now")
    day = mem.daily(current.daily.day)
    read_before = day.stats.bytes_read
    context = build_context(mem, "here", current, recent_rounds=3, daily_limit=2)
    assert context.daily == (), "the other session's message lies beyond the scan limit"
    return day.stats.bytes_read - read_before, day.path.stat().st_size


def test_the_backwards_read_is_bounded(store: MemoryStore, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(agent_context, "DAILY_SCAN_MAX", 50)
    small, small_size = _bytes_read_for_daily(store, "u1", 200)
    large, large_size = _bytes_read_for_daily(store, "u2", 2000)

    assert large_size > 9 * small_size
    # the same number of lines is read however long the day is (ids have one more digit in the large file)
    assert 0 < small <= large <= small * 1.05
    per_line = large_size / 2002
    assert large <= (50 + 2) * per_line * 7 / 3 + 4096, "the final read of the cap plus the smaller ones before it"


def test_no_daily_context_by_default(store: MemoryStore) -> None:
    mem = store.user("u1")
    mem.append("elsewhere", "user", "Lunch was ramen today.")
    current = mem.append("here", "user", "now")
    assert build_context(mem, "here", current).daily == ()
    assert build_context(mem, "here", current, daily_limit=1).daily[0].content == "Lunch was ramen today."


# ---------------------------------------------------------------------------------------------- memory.md in the log


def _filler(chars: int) -> str:
    lines = [f"- filler fact number {i} about nothing in particular" for i in range(chars // 40 + 1)]
    return "\n".join(lines)[: chars - 1] + "\n"


def test_the_log_line_refers_to_a_large_memory_md_instead_of_copying_it(store: MemoryStore) -> None:
    """Log bytes per turn do not grow with the size of memory.md (100 MB of it made 150 MB of log a turn)."""
    svc = ChatService(store, model=OfflineChatModel())
    mem = store.user("u1")
    log = store.root / "u1" / "logs" / "llm_dialogue.jsonl"
    growth, contexts = {}, {}
    for size in (16_384, 2_048_000):  # both beyond LOG_LONG_TERM_MAX_CHARS
        mem.long_term.write(_filler(size))
        before = log.stat().st_size if log.exists() else 0
        result = svc.turn("u1", f"s{size}", "Good morning.")
        assert result.error is None, result.error
        growth[size] = log.stat().st_size - before
        contexts[size] = (mem.log.tail(1)[0].memory_context, mem.long_term.current().version)

    assert growth[2_048_000] - growth[16_384] < 100, growth  # a few more digits, not 2 MB more
    assert growth[2_048_000] < 4000, growth
    for size, (context, version) in contexts.items():
        assert f"memory.md version {version}, {size} characters, sha256 " in context
        assert "filler fact" not in context


def test_a_small_memory_md_is_logged_as_it_is_and_empty_sections_are_left_out(store: MemoryStore) -> None:
    svc = ChatService(store, model=OfflineChatModel())
    first = svc.turn("u1", "s1", "Good morning.")
    assert first.memory_context == "", "no history, no memory.md: nothing to log"

    store.user("u1").long_term.write("- Prefers green tea\n")
    second = svc.turn("u1", "s1", "Good evening.")
    assert second.memory_context.startswith("[SESSION]\nuser: Good morning.\nassistant: ")
    assert second.memory_context.endswith("\n[LONG_TERM]\n- Prefers green tea")
    assert "[DAILY]" not in second.memory_context


def _lines_used_reference(long_term: str, reply: str) -> tuple[str, ...]:
    """long_term_lines_used as first written: every line tokenised."""
    if not long_term.strip() or not reply.strip():
        return ()
    folded_reply, reply_tokens, used = reply.casefold(), content_tokens(reply), []
    for raw in long_term.splitlines():
        line = raw.strip()
        if not line or line.startswith("#"):
            continue
        fact = line.lstrip("-*+ \t").strip()
        if len(fact) < 2:
            continue
        if fact.casefold() in folded_reply:
            used.append(line)
            continue
        tokens = content_tokens(fact)
        if len(tokens) >= 2 and len(tokens & reply_tokens) >= 0.6 * len(tokens):
            used.append(line)
    return tuple(dict.fromkeys(used))


_WORDS = st.sampled_from(["tea", "Tea", "green", "GREEN", "lyon", "Lyon's", "sister", "the", "I", "ß", "SS", "straße",
                          "生日", "喜欢", "绿茶", "茶", "-", "#", "a", "co-op", "x.y", "(tea)", "|", "\\d"])


@settings(max_examples=300, deadline=None)
@given(lines=st.lists(st.lists(_WORDS, max_size=6).map(" ".join), max_size=8),
       reply=st.lists(_WORDS, max_size=8).map(" ".join))
def test_lines_used_skips_lines_without_a_reply_token_exactly(lines: list[str], reply: str) -> None:
    memory = "\n".join(f"- {line}" for line in lines)
    assert long_term_lines_used(memory, reply) == _lines_used_reference(memory, reply)


def test_lines_used_tokenises_only_lines_that_share_a_word_with_the_reply(monkeypatch: pytest.MonkeyPatch) -> None:
    """A turn over a large memory.md spent seconds tokenising every line to estimate which ones the reply used."""
    tokenised: list[str] = []
    real = agent_context.content_tokens
    monkeypatch.setattr(agent_context, "content_tokens", lambda text: tokenised.append(text) or real(text))
    memory = "\n".join(f"- filler fact number {i}" for i in range(10_000)) + "\n- Prefers green tea\n"

    assert long_term_lines_used(memory, "You prefer green tea.") == ("- Prefers green tea",)
    assert tokenised == ["You prefer green tea.", "Prefers green tea"]
