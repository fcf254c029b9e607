"""The ReAct memory agent: tools over the store, per-turn context, an offline model, and the turn pipeline.

::

    from agentmem_nb import MemoryStore
    from agentmem_nb.agent import ChatService

    svc = ChatService(MemoryStore("memory"))          # no API key configured -> the offline model
    sid = svc.new_conversation("alice")
    result = svc.turn("alice", sid, "My sister lives in Lyon")
    for event in svc.stream_turn("alice", sid, "What did I say about my sister?"):
        print(event.kind, event.text or event.tool_call)
    # a stream you stop reading early: close it (or use contextlib.closing) so the session is free again

Importing this package imports langchain (about a second); ``agentmem_nb.store`` does not, nor does
:mod:`agentmem_nb.turns`, where :class:`TurnResult` and :class:`TurnEvent` live (re-exported here).
"""

from agentmem_nb.agent.config import LLMConfig, load_config
from agentmem_nb.agent.models import make_chat_model
from agentmem_nb.agent.offline import OfflineChatModel
from agentmem_nb.agent.prompt import SYSTEM_PROMPT
from agentmem_nb.turns import TurnEvent, TurnResult
from agentmem_nb.agent.service import ChatService, SessionBusy
from agentmem_nb.agent.tools import MemoryTools

__all__ = [
    "ChatService",
    "SessionBusy",
    "TurnResult",
    "TurnEvent",
    "LLMConfig",
    "load_config",
    "make_chat_model",
    "OfflineChatModel",
    "MemoryTools",
    "SYSTEM_PROMPT",
]
