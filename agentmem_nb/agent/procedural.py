"""Procedural memory: the agent's standing instructions for one user (``instructions.md``), and the
``propose_instruction`` tool through which the agent changes them.

The document is versioned exactly as ``memory.md`` is (:class:`~agentmem_nb.store.LongTermMemory` under another
name: every change in ``instructions.history.jsonl``, any version restorable), and composed into the system prompt of
every turn (:func:`~agentmem_nb.agent.prompt.system_prompt_for`). A proposal is applied at once as a new version
whose source says it came from the agent and why; a person who disagrees restores the version before it
(``user.instructions.restore(n, which="before")``) — the proposal stays in the history either way.
"""

from __future__ import annotations

from typing import Any

from langchain_core.tools import BaseTool

from agentmem_nb.agent.tools import MemoryTools, TurnScope, _BadArgument, _check_keys, _schema, _show
from agentmem_nb.store import UserMemory

__all__ = ["propose_instruction", "propose_instruction_tool", "MAX_INSTRUCTION_CHARS"]

MAX_INSTRUCTION_CHARS = 300


def propose_instruction(user: UserMemory, args: dict[str, Any], *, scope: TurnScope | None = None) -> str:
    """``propose_instruction(instruction, reason)``: add one standing instruction (a new recorded version)."""
    _check_keys(args, ("instruction", "reason"), ("instruction",))
    instruction, reason = args["instruction"], args.get("reason", "")
    if not isinstance(instruction, str) or not instruction.strip():
        raise _BadArgument(f"instruction must be one sentence of text, got {_show(instruction)}.")
    if len(instruction) > MAX_INSTRUCTION_CHARS:
        raise _BadArgument(f"instruction is {len(instruction)} characters; keep it under {MAX_INSTRUCTION_CHARS}.")
    if not isinstance(reason, str):
        raise _BadArgument(f"reason must be text, got {_show(reason)}.")
    why = " ".join(reason.split())[:120]
    version = user.instructions.add_note(instruction, source=f"propose_instruction: {why}" if why else
                                         "propose_instruction")
    if version is None:
        return "That instruction is already in place."
    return f"Instruction added as version {version.version} (the user can restore the previous version)."


def propose_instruction_tool(user: UserMemory) -> BaseTool:
    """The tool bound to ``user``."""

    def run(args: dict[str, Any], *, scope: TurnScope | None = None) -> str:
        return propose_instruction(user, args, scope=scope)

    return MemoryTools._tool(
        "propose_instruction", run,
        "Add a standing instruction for how you should work with this user from now on (a style, a rule they "
        "asked for, e.g. 'Answer in French' or 'Keep replies under five sentences'). Only when the user asks for "
        "it or clearly wants it; give the reason.",
        _schema({"instruction": {"type": "string", "description": "One short imperative sentence."},
                 "reason": {"type": "string", "description": "Why, in a few words.", "default": ""}},
                ["instruction"]))
