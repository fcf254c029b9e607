"""The six tools: output format, validation of model-supplied arguments (answered, never raised), the retriever."""

from __future__ import annotations

import pytest
from langchain_core.messages import ToolMessage

from agentmem_nb import MemoryStore, UserMemory
from agentmem_nb.agent import MemoryTools
from agentmem_nb.agent.tools import MAX_ROUNDS, TOOL_NAMES, TOOL_WINDOW_SIDE_CAP, TurnScope
from agentmem_nb.items import ItemKey
from agentmem_nb.retrieval import Retriever, Scope, SearchResult


@pytest.fixture
def mem(store: MemoryStore) -> UserMemory:
    user = store.user("u1")
    user.append("s1", "user", "My sister lives in Lyon\nand flies planes.")
    user.append("s1", "assistant", "Noted!")
    user.append("other", "user", "Dentist on Friday.")
    for i in range(30):
        user.append("s1", "user" if i % 2 == 0 else "assistant", f"filler {i}")
    return user


@pytest.fixture
def tools(mem: UserMemory) -> dict:
    bound = MemoryTools(mem, "s1")  # called outside a graph: the turn's day is today (the test clock's 2026-04-08)
    return {tool.name: tool for tool in bound.tools}


def test_the_six_tools_exist_with_json_schemas(tools: dict) -> None:
    assert tuple(tools) == TOOL_NAMES
    for tool in tools.values():
        schema = tool.tool_call_schema
        assert schema["type"] == "object" and tool.description
    assert tools["get_session_window"].tool_call_schema["properties"]["message_id"]["type"] == "integer"


def test_output_lines_show_the_anchor_and_the_day(tools: dict) -> None:
    found = tools["search_session"].invoke({"keyword": "SISTER"})
    assert "#1 [2026-04-08 10:00] user: My sister lives in Lyon and flies planes." in found.splitlines()
    daily = tools["search_daily"].invoke({"keyword": "dentist"})
    assert "#3 day=2026-04-08 [2026-04-08 10:00] user: Dentist on Friday." in daily.splitlines()
    window = tools["get_session_window"].invoke({"message_id": 2, "before": 1, "after": 1})
    assert [line.split(" ")[0] for line in window.splitlines()[1:]] == ["#1", "#2", "#3"]
    recent = tools["get_recent_session"].invoke({"rounds": 1})
    assert [line.split(" ")[0] for line in recent.splitlines()[1:]] == ["#31", "#32"]


def test_searches_skip_the_message_being_answered(mem: UserMemory) -> None:
    bound = MemoryTools(mem, "s1")
    current = mem.append("s1", "user", "What about my sister?")
    scope = TurnScope(day="2026-04-08", exclude=frozenset({("session", "s1", current.session.message_id),
                                                           ("daily", "2026-04-08", current.daily.message_id)}))
    assert "What about my sister" not in bound.search_session({"keyword": "sister"}, scope=scope)
    assert "What about my sister" not in bound.search_daily({"keyword": "sister"}, scope=scope)
    assert set(scope.retrieved) == {("session", "s1", 1), ("daily", "2026-04-08", 1)}


# (tool, arguments, text the answer must contain)
BAD_ARGUMENTS = [
    ("search_session", {}, "missing required argument(s) keyword"),
    ("search_session", {"keyword": ""}, "keyword is empty"),
    ("search_session", {"keyword": ["sister"]}, "keyword must be text"),
    ("search_session", {"keyword": None}, "keyword must be text"),
    ("search_session", {"keyword": "x" * 5000}, "5000 characters"),
    ("search_session", {"keyword": "a", "session_id": "../../etc"}, "bound to the current user and session"),
    ("get_session_window", {"message_id": "abc"}, "message_id must be a positive whole number"),
    ("get_session_window", {"message_id": True}, "message_id must be a positive whole number"),
    ("get_session_window", {"message_id": -3}, "message_id must be a positive whole number"),
    ("get_session_window", {"message_id": 1.5}, "message_id must be a positive whole number"),
    ("get_session_window", {"message_id": 99999}, "no message #99999"),
    ("get_session_window", {"message_id": 10**19}, "message_id 10000000000000000000 is too large"),
    ("get_session_window", {"message_id": "12345678901234567890"}, "message_id '12345678901234567890' is too large"),
    ("get_session_window", {"message_id": 1e300}, "message_id 1e+300 is too large"),
    ("get_session_window", {"message_id": 2.0**53}, "message_id 9007199254740992.0 is too large"),
    ("get_daily_window", {"message_id": float("inf")}, "message_id inf is too large"),
    ("get_session_window", {"message_id": 1, "before": "lots"}, "before must be a whole number"),
    ("get_session_window", {"message_id": 1, "after": {"n": 1}}, "after must be a whole number"),
    ("search_daily", {"keyword": "x", "day": "../../etc/passwd"}, "invalid day"),
    ("search_daily", {"keyword": "x", "day": "2026-02-30"}, "no such calendar day"),
    ("search_daily", {"keyword": "x", "day": "08/04/2026"}, "YYYY-MM-DD"),
    ("search_daily", {"keyword": "x", "day": 20260408}, "day must be text"),
    ("get_daily_window", {"message_id": 1, "day": "2026-13-01"}, "no such calendar day"),
    ("get_daily_window", {"message_id": 5000, "day": "2026-04-08"}, "no message #5000"),
    ("get_daily_window", {"message_id": 1, "day": "2025-01-01"}, "nothing was recorded on 2025-01-01"),
    ("get_recent_session", {"rounds": 0}, "rounds must be a whole number from 1"),
    ("get_recent_session", {"rounds": "many"}, "rounds must be a whole number from 1"),
    ("remember_note", {"note": ""}, "note is empty"),
    ("remember_note", {"note": 42}, "note must be text"),
    ("remember_note", {"note": "y" * 5000}, "5000 characters long"),
    # Names of langchain's own plumbing: they must not collide with it (TypeError) nor be silently swallowed.
    ("search_session", {"keyword": "a", "self": 1}, "unexpected argument(s) self; this tool takes keyword"),
    ("get_recent_session", {"config": {}}, "unexpected argument(s) config; this tool takes rounds"),
    ("search_daily", {"keyword": "a", "run_manager": None}, "unexpected argument(s) run_manager; this tool takes"),
    ("remember_note", {"note": "Likes \ud800 emoji"},
     "the note could not be saved: long-term memory text has an unencodable character '\\ud800'"),
]


@pytest.mark.parametrize(("name", "args", "expected"), BAD_ARGUMENTS,
                         ids=[f"{n}-{i}" for i, (n, _a, _e) in enumerate(BAD_ARGUMENTS)])
def test_bad_arguments_are_answered_with_an_explanation(tools: dict, mem: UserMemory, name: str, args: dict,
                                                        expected: str) -> None:
    answer = tools[name].invoke(args)
    assert isinstance(answer, str) and answer.startswith("Error: ") and expected in answer
    as_call = tools[name].invoke({"name": name, "args": args, "id": "call_x", "type": "tool_call"})
    assert isinstance(as_call, ToolMessage) and as_call.status == "error" and as_call.tool_call_id == "call_x"
    assert mem.long_term.read() == ""


def test_huge_windows_are_clamped_and_say_so(tools: dict) -> None:
    answer = tools["get_session_window"].invoke({"message_id": "#16", "before": 10**9, "after": -4})
    head, *lines = answer.splitlines()
    assert f"before=1000000000 is more than {TOOL_WINDOW_SIDE_CAP}, used {TOOL_WINDOW_SIDE_CAP}" in head
    assert "after=-4 is negative, used 0" in head
    assert len(lines) == 16 and lines[-1].startswith("#16 ")


def test_huge_numbers_are_never_echoed_digit_by_digit(tools: dict) -> None:
    window = tools["get_session_window"].invoke({"message_id": 16, "before": 1e300, "after": 10**300})
    head = window.splitlines()[0]
    assert f"before=1e+300 is more than {TOOL_WINDOW_SIDE_CAP}" in head and len(head) < 300
    recent = tools["get_recent_session"].invoke({"rounds": 10**300}).splitlines()[0]
    assert f"is more than {MAX_ROUNDS}; used {MAX_ROUNDS}" in recent and len(recent) < 200
    assert f"(rounds=1e+300 is more than {MAX_ROUNDS}" in tools["get_recent_session"].invoke({"rounds": 1e300})


def test_lenient_but_unambiguous_values_are_accepted(tools: dict) -> None:
    assert "#1 " in tools["get_session_window"].invoke({"message_id": "1", "before": "0", "after": 2.0})
    assert "#1 day=" in tools["get_daily_window"].invoke({"message_id": 1, "day": "today", "after": 0})
    assert "No message on 2026-04-07" in tools["search_daily"].invoke({"keyword": "x", "day": "yesterday"})
    assert "message(s) across every day" in tools["search_daily"].invoke({"keyword": "filler", "day": ""})


def test_remember_note_writes_memory_md_with_history(tools: dict, mem: UserMemory) -> None:
    assert tools["remember_note"].invoke({"note": "  Prefers   tea "}).endswith("- Prefers tea")
    assert tools["remember_note"].invoke({"note": "Prefers tea"}).startswith("Already in long-term memory")
    assert mem.long_term.lines() == ["- Prefers tea"]
    assert [v.source for v in mem.long_term.history()] == ["remember_note:s1"]


class _Answering(Retriever):
    """A retriever that records each search and answers with message #2 of s1 (or whatever ``found`` says)."""

    def __init__(self) -> None:
        super().__init__()
        self.seen: list[tuple[Scope, str, int]] = []

    def search(self, user: UserMemory, query: str, *, scope: Scope | None = None, budget: int = 20,
               **options: object) -> SearchResult:
        assert scope is not None
        self.seen.append((scope, query, budget))
        found = super().search(user, "Noted", scope=Scope.session("s1"), budget=1)
        return SearchResult(query, scope, found.mode, budget, found.hits, found.messages)


def test_every_search_goes_through_the_given_retriever(mem: UserMemory) -> None:
    retriever = _Answering()
    bound = MemoryTools(mem, "s1", retriever=retriever)
    turn = TurnScope(day="2026-04-08")
    assert "#2 " in bound.search_session({"keyword": "two words"}, scope=turn)
    bound.search_daily({"keyword": "x", "day": "2026-04-08"}, scope=turn)
    bound.search_daily({"keyword": "y"}, scope=turn)
    assert [(s.layer, s.key, q) for s, q, _ in retriever.seen] == [
        ("session", "s1", "two words"), ("daily", "2026-04-08", "x"), ("daily", None, "y")]
    assert ItemKey("session", "s1", 2) in turn.retrieved  # what the model was shown, by item key


def test_a_retriever_that_ignores_exclude_never_shows_the_question(mem: UserMemory) -> None:
    bound = MemoryTools(mem, "s1", retriever=_Answering())
    turn = TurnScope(day="2026-04-08", exclude=frozenset({ItemKey("session", "s1", 2)}))
    assert "#2 " not in bound.search_session({"keyword": "noted"}, scope=turn)


def test_tools_work_outside_a_turn(mem: UserMemory) -> None:
    bound = MemoryTools(mem, "s1")
    assert "#1 " in bound.tools[0].invoke({"keyword": "sister"})
    assert "#1 " in bound.search_session({"keyword": "sister"})


def test_multi_word_queries_are_ranked_and_the_question_lends_nothing(tmp_path) -> None:  # noqa: ANN001
    """Through the search tool, several words are ranked (a message sharing no exact phrase is found), and the question being
    answered neither comes back nor makes its neighbours look relevant."""
    from agentmem_nb import MemoryStore

    user = MemoryStore(tmp_path).user("u")
    user.append("s", "user", "Hello there.")
    user.append("s", "assistant", "Hi! How can I help?")
    question = user.append("s", "user", "What did I tell you about my grandmother?").session
    exclude = frozenset({("session", "s", question.message_id)})

    bound = MemoryTools(user, "s")
    turn = TurnScope(day=user.days()[0], exclude=exclude)
    assert bound.search_session({"keyword": "grandmother"}, scope=turn).startswith("No message in this conversation")

    user.append("s", "user", "My grandmother Rosa bakes bread every Sunday.")
    found = bound.search_session({"keyword": "grandmother sunday bread"}, scope=turn).splitlines()[1:]
    assert "My grandmother Rosa bakes bread every Sunday." in found[0]
    assert not any(line.startswith(f"#{question.message_id} ") for line in found)
