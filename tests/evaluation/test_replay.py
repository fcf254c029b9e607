"""Replay of logged turns on the memory as it was, side by side; export of logged turns as recall cases."""

from __future__ import annotations

import datetime as _dt
from pathlib import Path
from typing import Any, ClassVar

import pytest
from langchain_core.messages import BaseMessage, SystemMessage

from agentmem_nb import MemoryStore
from agentmem_nb.agent import SYSTEM_PROMPT, OfflineChatModel
from agentmem_nb.errors import InvalidArgument
from agentmem_nb.evaluation.cases import run_case_files
from agentmem_nb.evaluation.replay import export_cases, logged_turns, replay_turn
from agentmem_nb.testing.demo import DemoConversation, demo_store, seed_demo

CONVERSATIONS = (
    DemoConversation("moving", _dt.datetime(2026, 4, 6, 9, 15), (
        "Hi! My name is Maya and I just moved to Lyon.",
        "My sister Lena is visiting on the 18th.",
        "I need to buy a desk lamp this week.",
        "What did I say about my sister?",
    )),
    DemoConversation("weekend", _dt.datetime(2026, 4, 7, 18, 5), (
        "I love swimming more than hiking.",
        "Do you remember what I said about my sister's visit?",
        "What do I need to buy this week?",
        "我喜欢吃折耳根。",
        "我之前说过喜欢吃什么？",
    )),
)


@pytest.fixture
def played(tmp_path: Path) -> MemoryStore:
    """A store whose dialogue log holds real turns of the offline agent, over two days and two threads."""
    store = demo_store(str(tmp_path / "memory"))
    seed_demo(store, conversations=CONVERSATIONS)
    return store


def _files(root: Path) -> list[tuple[str, int, int]]:
    return sorted((str(p.relative_to(root)), p.stat().st_size, p.stat().st_mtime_ns)
                  for p in root.rglob("*") if p.is_file() and ".index" not in p.parts)


def test_replay_with_the_offline_model_reproduces_every_logged_turn_exactly(played: MemoryStore) -> None:
    user = played.user("demo")
    turns = logged_turns(user)
    assert len(turns) == 9 and sum(bool(t.tool_calls) for t in turns) >= 6
    for entry in turns:
        replay = replay_turn(user, entry, model=OfflineChatModel())
        assert replay.rebuilt.exact, replay.rebuilt.notes
        assert replay.faithful
        assert [(c.name, c.input, c.output) for c in replay.replayed.tool_calls] == [
            (c.name, c.input, c.output) for c in entry.tool_calls], entry.user_message
        assert replay.same_tool_calls and replay.same_tool_outputs and replay.same_retrieved and replay.same_reply


def test_the_replay_sees_only_what_was_written_before_the_turn(played: MemoryStore) -> None:
    user = played.user("demo")
    entry = next(t for t in logged_turns(user) if t.user_message == "What did I say about my sister?")
    # later, the same thread learns something new about the sister: the replay must not see it
    played.clock.set(_dt.datetime(2026, 4, 9, 10, 0, tzinfo=played.zone))  # type: ignore[attr-defined]
    user.append("moving", "user", "My sister Lena moved to Rome.")
    replay = replay_turn(user, entry, model=OfflineChatModel())
    assert replay.same_tool_outputs
    assert not any("Rome" in m.content for m in replay.replayed.retrieved + replay.original.retrieved)
    assert replay.rebuilt.messages == 6  # the three earlier turns of that thread, question and reply each
    assert any("Lena is visiting" in m.content for m in replay.original.retrieved)


def test_the_users_memory_is_not_written(played: MemoryStore) -> None:
    user = played.user("demo")
    before = _files(played.root)
    for entry in logged_turns(user)[:3]:
        replay_turn(user, entry, model=OfflineChatModel())
    assert _files(played.root) == before


class _RecordingModel(OfflineChatModel):
    seen: ClassVar[list[str]] = []

    def respond(self, messages: Any) -> Any:
        _RecordingModel.seen += [m.text for m in messages if isinstance(m, SystemMessage)]
        return super().respond(messages)


def test_another_prompt_replaces_the_rules_and_keeps_the_rest(played: MemoryStore) -> None:
    user = played.user("demo")
    entry = next(t for t in logged_turns(user) if t.user_message == "What did I say about my sister?")
    _RecordingModel.seen.clear()
    replay = replay_turn(user, entry, model=_RecordingModel(), system_prompt="NEW RULES: answer in one word.")
    assert _RecordingModel.seen, "the model was called"
    assert all(text.startswith("NEW RULES: answer in one word.") and SYSTEM_PROMPT not in text
               for text in _RecordingModel.seen)
    assert all("Current time: 2026-04-06" in text for text in _RecordingModel.seen)  # the turn's own part stays
    assert replay.replayed.model == "offline+rules" and replay.same_tool_calls


def test_a_replay_shows_both_sides(played: MemoryStore) -> None:
    user = played.user("demo")
    entry = next(t for t in logged_turns(user) if t.user_message == "What did I say about my sister?")
    replay = replay_turn(user, entry.entry_id, model=OfflineChatModel())
    text = replay.format()
    assert "original (offline)" in text and "replay (offline)" in text
    assert "tool calls same; retrieved same; reply same" in text
    frame = replay.to_frame()
    assert list(frame.columns) == ["what", "original", "replayed", "same"]
    assert frame["what"].iloc[-1] == "reply" and bool(frame["same"].all())
    assert any(w.startswith("retrieved") for w in frame["what"]) and any(w.startswith("tool") for w in frame["what"])


def test_a_different_agent_shows_up_as_a_difference(played: MemoryStore) -> None:
    class Forgetful(OfflineChatModel):
        def respond(self, messages: Any) -> Any:
            return OfflineChatModel.respond(self.model_copy(update={"tool_names": ()}), messages)

    user = played.user("demo")
    entry = next(t for t in logged_turns(user) if t.user_message == "What did I say about my sister?")
    replay = replay_turn(user, entry, model=Forgetful())
    assert not replay.same_tool_calls and not replay.replayed.tool_calls and not replay.same_reply
    assert "tool calls differ" in replay.format() and "≠tool 1" in replay.format()


def test_unknown_turn(played: MemoryStore) -> None:
    with pytest.raises(InvalidArgument, match="no logged turn 99"):
        replay_turn(played.user("demo"), 99, model=OfflineChatModel())


def test_exported_turns_become_recall_cases_that_pass(played: MemoryStore, tmp_path: Path) -> None:
    user = played.user("demo")
    turns = logged_turns(user)
    path = tmp_path / "cases" / "exported.memcases.yaml"
    path.parent.mkdir()
    path.write_text(export_cases(user, turns, path=path), encoding="utf-8")
    text = path.read_text(encoding="utf-8")
    assert "memory: ../memory" in text and "as_of:" in text and "model: offline" in text
    assert "- Lena is visiting" not in text and "My sister Lena is visiting on the 18th." in text
    report = run_case_files([path])
    assert report.ok, report.format()
    assert len(report.results) == len(turns)
    # the sister question of the second thread needed the first thread's day file, as logged
    sister = next(r for r in report.results if "sister-s-visit" in r.name or "sister" in r.question and r.tools
                  and any(t.name == "search_daily" for t in r.tools))
    assert any("Lena is visiting" in m.content for m in sister.retrieved)


def test_an_exported_case_fails_when_the_agent_changes(played: MemoryStore, tmp_path: Path) -> None:
    user = played.user("demo")
    entry = next(t for t in logged_turns(user) if t.user_message == "What did I say about my sister?")
    path = tmp_path / "one.memcases.yaml"
    path.write_text(export_cases(user, [entry], path=path), encoding="utf-8")
    with_memory = run_case_files([path]).results[0]
    assert with_memory.passed
    # the same case, run on a memory as of before the sister was mentioned: the evidence is not there
    early = path.read_text(encoding="utf-8").replace("as_of: '2026-04-06", "as_of: '2026-04-05")
    path.write_text(early, encoding="utf-8")
    result = run_case_files([path]).results[0]
    assert not result.passed and any("Lena is visiting" in reason for reason in result.reasons)


def test_the_cli_lists_replays_and_exports_logged_turns(played: MemoryStore, tmp_path: Path,
                                                         capsys: pytest.CaptureFixture[str]) -> None:
    from agentmem_nb.cli import main

    root = str(played.root)
    # opened in another zone than it was written in, the replay shows other times: and says so
    assert main(["--root", root, "--zone", "UTC", "eval", "replay", "--user", "demo", "--turn", "4",
                 "--offline"]) == 0
    assert "give its zone" in capsys.readouterr().out
    root_zone = ["--root", root, "--zone", "Europe/Paris"]
    assert main([*root_zone, "eval", "replay", "--user", "demo"]) == 0
    listed = capsys.readouterr().out.splitlines()
    assert len(listed) == 9 and listed[3].startswith("4\tmoving\t'What did I say about my sister?'\tsearch_session(")
    assert main([*root_zone, "eval", "replay", "--user", "demo", "--turn", "4", "--offline"]) == 0
    shown = capsys.readouterr().out
    assert "original (offline)" in shown and "tool calls same; retrieved same; reply same" in shown
    cases = tmp_path / "out" / "turns.memcases.yaml"
    assert main([*root_zone, "eval", "replay", "--user", "demo", "--turn", "4", "--turn", "6", "--offline",
                 "--export", str(cases)]) == 0
    assert "2 turn(s) written" in capsys.readouterr().out
    assert main(["eval", "cases", str(cases)]) == 0
    assert capsys.readouterr().out.rstrip().endswith("2 passed, 0 failed")
    assert main(["--root", root, "eval", "replay", "--user", "nobody"]) == 2
    assert "no user 'nobody'" in capsys.readouterr().err
