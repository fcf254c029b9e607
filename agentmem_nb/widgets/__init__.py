"""Jupyter widgets over the store and the agent.

::

    from agentmem_nb.widgets import ChatWidget, MemoryInspector, ToolTimeline
    ChatWidget(service, user_id="alice")        # chat, tool panels, conversations, offline banner
    MemoryInspector(store, user_id="alice")     # every layer as a DataFrame; search -> hit -> window
    ToolTimeline(store, user_id="alice")        # every tool call on a time axis; .frame is the filtered DataFrame
    inspector.follow(chat); timeline.follow(chat)   # refresh after each turn, reading only the appended lines
    chat.on_turn(callback)                      # callback(ChatEvent) after each turn and switch; returns a handle
    MemoryInspector(graph); ToolTimeline(graph) # a LangGraph agent's memory: its checkpointer's threads, its store
    MemoryInspector(LangGraphSource(checkpointer=saver, store=store))

Widgets hold layout and state only: what they show comes from :mod:`agentmem_nb.frames` and the store, and every
piece of message text reaches HTML through :mod:`agentmem_nb.widgets.html`.
"""

from agentmem_nb.widgets._langgraph_source import LangGraphSource
from agentmem_nb.widgets._turns import ChatEvent, TurnSubscription
from agentmem_nb.widgets.chat import ChatWidget
from agentmem_nb.widgets.inspector import MemoryInspector
from agentmem_nb.widgets.timeline import ToolTimeline

__all__ = ["ChatWidget", "MemoryInspector", "ToolTimeline", "ChatEvent", "TurnSubscription", "LangGraphSource"]
