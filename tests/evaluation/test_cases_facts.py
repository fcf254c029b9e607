"""``expect_facts`` in recall cases: the memory's user messages are recorded as facts, then each expected fact
(key, value, status) must be among them; a failure names the facts the key has instead."""

from __future__ import annotations

from pathlib import Path

from agentmem_nb import MemoryStore
from agentmem_nb.evaluation.cases import run_case_files
from agentmem_nb.store.facts import FactSource, Statement

MOVES = """\
user: maya
model: offline
zone: Europe/Paris
conversation:
  - {session: s1, role: user, content: "I live in Paris.", ts: "2026-04-01T09:00:00+02:00"}
  - {session: s1, role: assistant, content: "Noted."}
  - {session: s1, role: user, content: "My sister Ana lives in Porto.", ts: "2026-04-02T09:00:00+02:00"}
  - {session: s2, role: user, content: "We moved to Lyon last month.", ts: "2026-04-06T09:00:00+02:00"}
"""


def test_facts_cases_built_to_pass_pass(case_file) -> None:
    report = run_case_files([case_file("""\
        - name: moves
          question: "Where do I live?"
          expect_facts:
            - {key: sister.lives_in, value: Porto}
            - {key: User.Lives_In, value: " lyon "}
            - {key: user.lives_in, value: Paris, status: superseded}
        - name: with-retrieval
          question: "Where does my sister live?"
          expect_retrieved: ["Ana lives in Porto"]
          expect_facts: [{key: sister.name, value: Ana}]
        - name: agent-turn
          question: "My sister moved to Lisbon."
          agent: true
          expect_facts:
            - {key: sister.lives_in, value: Lisbon}
            - {key: sister.lives_in, value: Porto, status: superseded}
    """, head=MOVES)])
    assert report.ok, report.format()
    moves = report.result("moves")
    assert [c.kind for c in moves.checks] == ["fact", "fact", "fact"]
    assert [c.kind for c in report.result("with-retrieval").checks] == ["retrieved", "fact"]


def test_a_facts_case_built_to_fail_names_what_the_key_holds_instead(case_file) -> None:
    report = run_case_files([case_file("""\
        - name: stale
          question: "Where do I live?"
          expect_facts:
            - {key: user.lives_in, value: Paris}
            - {key: brother.lives_in, value: Rome}
            - {key: sister.lives_in, value: Porto}
    """, head=MOVES)])
    result = report.result("stale")
    assert not result.passed
    assert [c.passed for c in result.checks] == [False, False, True]
    assert result.reasons == (
        "expected fact user.lives_in = Paris (active); the facts for it are Paris (superseded, from s1#1), "
        "Lyon (active, from s2#1)",
        "expected fact brother.lives_in = Rome (active); no fact with key brother.lives_in (keys: sister.lives_in, "
        "sister.name, user.lives_in)",
    )
    assert "expected fact user.lives_in = Paris (active)" in report.format()


def test_messages_already_recorded_in_a_memory_folder_are_not_extracted_again(tmp_path: Path) -> None:
    folder = tmp_path / "memory"
    user = MemoryStore(folder, zone="UTC").user("ana")
    said = user.append("s1", "user", "I live in Paris.")
    # the folder's own record of that message (say, a model extractor read it otherwise): kept, not re-extracted
    user.facts.record([Statement("user", "lives_in", "Rome")], source=FactSource("s1", said.session.message_id),
                      extracted_by="model")
    user.append("s1", "user", "I like green tea.")
    before = (folder / "ana" / "facts.jsonl").read_bytes()
    path = tmp_path / "f.memcases.yaml"
    path.write_text("user: ana\nmemory: memory\ncases:\n  - name: f\n    question: q\n    expect_facts:\n"
                    "      - {key: user.lives_in, value: Rome}\n      - {key: user.likes, value: green tea}\n",
                    encoding="utf-8")
    report = run_case_files([path])
    assert report.ok, report.format()
    assert (folder / "ana" / "facts.jsonl").read_bytes() == before  # the copy was written, never the folder
