"""Procedural memory: standing instructions versioned beside memory.md, proposed by the agent through a tool,
restorable, and composed into every turn's system prompt."""

from __future__ import annotations

import pytest
from agentmem_nb.testing.fake_openai import FakeOpenAI, real_config

from agentmem_nb import MemoryStore
from agentmem_nb.agent import ChatService
from agentmem_nb.agent.procedural import propose_instruction
from agentmem_nb.agent.tools import _BadArgument


def test_a_proposal_is_a_version_that_can_be_restored(store: MemoryStore) -> None:
    user = store.user("u")
    user.long_term.add_note("likes tea")
    out = propose_instruction(user, {"instruction": "Answer in French.", "reason": "the user asked"})
    assert "version 1" in out and user.instructions.read() == "- Answer in French.\n"
    assert user.instructions.history()[-1].source == "propose_instruction: the user asked"
    assert user.long_term.read() == "- likes tea\n", "memory.md is another document"
    propose_instruction(user, {"instruction": "Keep replies short."})
    user.instructions.restore(2, which="before")
    assert user.instructions.read() == "- Answer in French.\n" and len(user.instructions.history()) == 3
    assert (user.directory / "instructions.history.jsonl").is_file()


@pytest.mark.parametrize(("args", "fix"), [({}, "instruction"), ({"instruction": "  "}, "one sentence"),
                                           ({"instruction": "x" * 400}, "under 300"),
                                           ({"instruction": "ok", "reason": 3}, "reason must be text")])
def test_a_bad_proposal_is_answered_and_writes_nothing(store: MemoryStore, args: dict[str, object], fix: str) -> None:
    user = store.user("u")
    with pytest.raises(_BadArgument, match=fix):
        propose_instruction(user, args)
    assert user.instructions.read() == ""


def test_the_instructions_are_in_every_system_prompt_and_the_tools_offered(store: MemoryStore,
                                                                          fake_openai: FakeOpenAI) -> None:
    propose_instruction(store.user("u"), {"instruction": "Always answer in French."})
    svc = ChatService(store, config=real_config(fake_openai))
    result = svc.turn("u", svc.new_conversation("u"), "Hello!")
    system = fake_openai.requests[-1]["messages"][0]["content"]
    assert "<standing_instructions>\n- Always answer in French.\n</standing_instructions>" in system
    names = {t["function"]["name"] for t in fake_openai.requests[-1]["tools"]}
    assert {"propose_instruction", "recall_facts"} <= names
    assert "[INSTRUCTIONS]\n(instructions.md version 1)" in result.memory_context


def test_procedural_off_leaves_the_prompt_and_tools_as_before(store: MemoryStore, fake_openai: FakeOpenAI) -> None:
    propose_instruction(store.user("u"), {"instruction": "Always answer in French."})
    svc = ChatService(store, config=real_config(fake_openai), procedural=False)
    svc.turn("u", svc.new_conversation("u"), "Hello!")
    assert "standing_instructions" not in fake_openai.requests[-1]["messages"][0]["content"]
    assert "propose_instruction" not in {t["function"]["name"] for t in fake_openai.requests[-1]["tools"]}
