"""A chat model wrapper that replaces the agent's rules (:data:`~agentmem_nb.agent.SYSTEM_PROMPT`) in the system
message with other rules, keeping what each turn adds after them (time, long-term memory, today's messages).

Why a wrapper: the turn builds its system message itself (``agent/prompt.py``, ``Recorder.wrap_model_call``) and the
service takes no prompt, while a replay must try other rules on the very same turn. Wrapping the model touches
nothing of the agent: the wrapper sees the request the model would see and swaps one block of text in it.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from langchain_core.callbacks import CallbackManagerForLLMRun
from langchain_core.language_models import BaseChatModel
from langchain_core.messages import BaseMessage, SystemMessage
from langchain_core.outputs import ChatGeneration, ChatResult

from agentmem_nb.agent.models import model_name_of
from agentmem_nb.agent.prompt import SYSTEM_PROMPT

__all__ = ["RulesSwap"]


class RulesSwap(BaseChatModel):
    """``inner`` with ``rules`` in place of the agent's system prompt rules."""

    inner: Any
    rules: str
    bound: Any = None
    """``inner`` with the agent's tools bound (what :meth:`bind_tools` returned for it)."""

    @property
    def _llm_type(self) -> str:
        return "agentmem-rules-swap"

    @property
    def model_name(self) -> str:
        """The inner model's name, marked: ``offline+rules``."""
        return f"{model_name_of(self.inner)}+rules"

    def bind_tools(self, tools: Sequence[Any], **kwargs: Any) -> RulesSwap:
        """Bind the tools to the inner model; this wrapper keeps swapping the rules in front of it."""
        return self.model_copy(update={"bound": self.inner.bind_tools(tools, **kwargs)})

    def swap(self, messages: Sequence[BaseMessage]) -> list[BaseMessage]:
        """``messages`` with the rules replaced in every system message."""
        return [SystemMessage(content=m.text.replace(SYSTEM_PROMPT, self.rules, 1)) if isinstance(m, SystemMessage)
                else m for m in messages]

    def _generate(self, messages: list[BaseMessage], stop: list[str] | None = None,
                  run_manager: CallbackManagerForLLMRun | None = None, **kwargs: Any) -> ChatResult:
        answer = (self.bound if self.bound is not None else self.inner).invoke(self.swap(messages), stop=stop)
        return ChatResult(generations=[ChatGeneration(message=answer)])
