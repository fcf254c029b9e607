"""The LoCoMo importer and the recall evaluation (synthetic fixture always; the real dev files when present)."""

from __future__ import annotations

import argparse
import datetime as _dt
import json
import time
from pathlib import Path

import pytest

from agentmem_nb import MemoryStore
from agentmem_nb.evaluation.locomo import (
    TURN_GAP,
    import_conversation,
    load_conversation,
    load_conversations,
    parse_locomo_datetime,
)
from agentmem_nb.evaluation.retrieval import (
    EvalReport,
    add_parser,
    evaluate_locomo,
    load_into_store,
    main,
)

DATA = Path(__file__).parent / "data"
MINI = DATA / "synthetic_dialogues.json"  # written for these tests in the LoCoMo format; not LoCoMo data
CHINESE = DATA / "zh_conversation.json"
LOCOMO_DEV = Path(__file__).resolve().parents[3] / "shared" / "data" / "locomo"


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("1:56 pm on 8 May, 2023", _dt.datetime(2023, 5, 8, 13, 56)),
        ("12:09 am on 13 September, 2023", _dt.datetime(2023, 9, 13, 0, 9)),
        ("12:30 pm on 1 January, 2024", _dt.datetime(2024, 1, 1, 12, 30)),
        ("10:37 AM on 27 June 2023", _dt.datetime(2023, 6, 27, 10, 37)),
    ],
)
def test_parse_locomo_datetime(text: str, expected: _dt.datetime) -> None:
    assert parse_locomo_datetime(text) == expected


@pytest.mark.parametrize("text", ["yesterday", "13:10 pm on 8 May, 2023", "1:56 pm on 8 Mai, 2023", ""])
def test_parse_locomo_datetime_names_the_bad_value(text: str) -> None:
    with pytest.raises(ValueError, match="LoCoMo session time"):
        parse_locomo_datetime(text)


def test_load_conversation_reads_sessions_turns_images_and_questions() -> None:
    conversation = load_conversation(MINI)
    assert conversation.name == "synthetic_dialogues"
    assert conversation.speakers == ("Ada", "Ben")
    assert [s.number for s in conversation.sessions] == [1, 2, 3]  # session_4 has a date but no turns
    assert conversation.turn_count == 6 + 8 + 6
    bowl = conversation.sessions[1].turns[2]
    assert bowl.image_caption == "a photo of a blue ceramic bowl on a table"
    assert bowl.content.endswith("[shared an image: a photo of a blue ceramic bowl on a table]")
    assert "handmade pottery search" not in bowl.content  # the dataset's image search query is not imported
    assert [q.category for q in conversation.questions] == [4, 2, 1, 4, 3, 4, 5]
    assert conversation.questions[6].answer == "nothing"


def test_import_round_trip_through_the_store(tmp_path: Path) -> None:
    conversation = load_conversation(MINI)
    store = MemoryStore(tmp_path, zone="Europe/Paris")
    report = import_conversation(store, conversation, user_id="ada")
    assert (report.user_id, report.sessions, report.messages) == ("ada", 3, 20)
    user = store.user("ada")
    assert user.session_ids() == ["session_1", "session_2", "session_3"]
    assert user.days() == ["2023-03-03", "2023-04-21", "2023-07-02"]
    for session in conversation.sessions:
        messages = user.session(session.session_id).messages()
        assert [m.content for m in messages] == [t.content for t in session.turns]
        assert [m.role for m in messages] == [t.speaker for t in session.turns]
        assert [m.meta["speaker"] for m in messages] == [t.speaker for t in session.turns]
        assert [m.meta["dia_id"] for m in messages] == [t.dia_id for t in session.turns]
        assert messages[0].ts.replace(tzinfo=None) == session.started
        assert [b.ts - a.ts for a, b in zip(messages, messages[1:], strict=False)] == [TURN_GAP] * (len(messages) - 1)
        daily = user.daily(session.started.date().isoformat()).messages()
        assert [m.meta["dia_id"] for m in daily] == [t.dia_id for t in session.turns]
    # a session starting one minute before midnight stays in its day file
    assert [m.day for m in user.daily("2023-07-02").messages()] == ["2023-07-02"] * 6
    assert user.session("session_2").messages()[2].meta["img_url"] == "https://example.invalid/bowl.jpg"


def test_import_refuses_a_user_that_already_has_messages(tmp_path: Path) -> None:
    store = MemoryStore(tmp_path, zone="UTC")
    import_conversation(store, load_conversation(MINI), user_id="ada")
    with pytest.raises(ValueError, match="already has messages"):
        import_conversation(store, load_conversation(MINI), user_id="ada")


def test_load_conversation_accepts_the_flat_shape_and_rejects_other_json(tmp_path: Path) -> None:
    nested = json.loads(MINI.read_text())[0]
    flat = {**nested["conversation"], "qa": nested["qa"]}
    assert load_conversation(flat).turn_count == 20
    other = tmp_path / "other.json"
    other.write_text('{"hello": 1}')
    with pytest.raises(ValueError, match="speaker_a"):
        load_conversation(other)


def test_evaluation_report_structure_on_the_fixture() -> None:
    report = evaluate_locomo([MINI], budget=10)
    assert isinstance(report, EvalReport)
    assert report.overall.questions == 5  # categories 1-4 with evidence
    assert report.skipped_without_evidence == 1
    assert set(report.per_category) == {1, 2, 3, 4}
    assert sum(s.questions for s in report.per_category.values()) == report.overall.questions
    assert 0 <= report.overall.all_at <= report.overall.any_at <= 1
    assert report.overall.any_hits == 5  # every question of this tiny conversation finds its turn
    payload = report.to_dict()
    assert set(payload) >= {"overall", "per_category", "per_conversation", "latency_ms", "budget", "window"}
    assert set(payload["latency_ms"]) == {"p50", "p95", "max"}
    assert "any@10" in report.format()


def test_a_smaller_budget_never_finds_more() -> None:
    corpus_reports = [evaluate_locomo([MINI], budget=n) for n in (1, 3, 10)]
    anys = [r.overall.any_hits for r in corpus_reports]
    assert anys == sorted(anys)
    assert corpus_reports[0].overall.any_hits < corpus_reports[2].overall.any_hits


def test_cli_json_and_argparse_wiring(capsys: pytest.CaptureFixture[str]) -> None:
    assert main([str(MINI), "--budget", "5", "--json"]) == 0
    payload = json.loads(capsys.readouterr().out)
    assert payload["budget"] == 5 and payload["overall"]["questions"] == 5
    parser = argparse.ArgumentParser(prog="agentmem-nb")
    add_parser(parser.add_subparsers(dest="command"))
    args = parser.parse_args(["eval", "locomo", str(MINI), "--budget", "3"])
    assert args.func(args) == 0
    assert "any@3" in capsys.readouterr().out


def test_cli_reports_missing_files_and_bad_budget(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    assert main([str(tmp_path / "nope.json")]) == 2
    assert "no such file" in capsys.readouterr().err
    assert main([str(MINI), "--budget", "0"]) == 2


def test_chinese_test_set_recall() -> None:
    """Our own Chinese conversation (7 sessions, 35 questions): the CJK path must keep finding its evidence."""
    report = evaluate_locomo([CHINESE], budget=10)
    assert report.overall.questions >= 30
    assert report.overall.any_at >= 0.8


@pytest.mark.skipif(not LOCOMO_DEV.is_dir(), reason=f"LoCoMo development files not found at {LOCOMO_DEV}")
def test_real_locomo_files_import_and_recall(tmp_path: Path) -> None:
    files = sorted(LOCOMO_DEV.glob("conv-*.json"))
    assert files, f"no conv-*.json in {LOCOMO_DEV}"
    started = time.perf_counter()
    corpus = load_into_store(files, tmp_path)
    for name, conversation in corpus.conversations:
        user = corpus.store.user(name)
        sessions = user.session_ids()
        assert len(sessions) == len(conversation.sessions)
        assert sum(len(user.session(s)) for s in sessions) == conversation.turn_count
        dia_ids = {m.meta["dia_id"] for day in user.days() for m in user.daily(day).messages()}
        evidence = {e for q in conversation.questions for e in q.evidence}
        assert len(evidence - dia_ids) <= 3, "evidence should point at imported turns (LoCoMo has a few typos)"
    # recall on the smallest conversation: a regression guard far below the measured figures
    small = min(corpus.conversations, key=lambda c: c[1].turn_count)
    sub = type(corpus)(corpus.store, (small,), corpus.import_seconds)
    report = evaluate_locomo(sub, budget=10)
    assert report.overall.any_at >= 0.7
    assert time.perf_counter() - started < 60


def test_malformed_evidence_entries_are_repaired_or_dropped() -> None:
    nested = json.loads(MINI.read_text())[0]
    nested["qa"] = [{"question": "q", "answer": "a", "category": 1, "evidence": ["D1:3; D2:1", "D:3:2", "D", 7]}]
    assert load_conversation(nested).questions[0].evidence == ("D1:3", "D2:1", "D3:2")


def test_a_file_of_several_conversations_imports_one_user_each(tmp_path: Path) -> None:
    first = json.loads(MINI.read_text())[0]
    second = {**first, "sample_id": "mini-2"}
    both = tmp_path / "locomo10.json"
    both.write_text(json.dumps([first, second]))
    assert [c.name for c in load_conversations(both)] == ["mini-1", "mini-2"]
    with pytest.raises(ValueError, match="load_conversations"):
        load_conversation(both)
    report = evaluate_locomo([both], budget=10)
    assert report.files == ("mini-1", "mini-2") and report.overall.questions == 10
