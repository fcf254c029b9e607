"""Demo data (sample data shared by the notebooks, the tests and ``agentmem-nb seed``): a user with several conversations over several days, in English and Chinese, with real tool calls.

The conversations are played through :class:`~agentmem_nb.agent.ChatService` on the offline model (unless another
model is passed explicitly, never the configured one), so every search, window and ``remember_note`` in the seeded files was really made by the agent — the inspector and
the timeline have something true to show the first time they open.
"""

from __future__ import annotations

import datetime as _dt
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING

from agentmem_nb.timeutil import resolve_zone

if TYPE_CHECKING:
    from langchain_core.language_models import BaseChatModel

    from agentmem_nb.store import MemoryStore

__all__ = ["DEMO_USER", "DEMO_CONVERSATIONS", "DemoConversation", "SteppingClock", "seed_demo"]

DEMO_USER = "demo"


@dataclass(frozen=True, slots=True)
class DemoConversation:
    """One scripted conversation: what the user says, starting at ``start`` (local time of the demo zone)."""

    session_id: str
    start: _dt.datetime
    messages: tuple[str, ...]


def _at(day: int, hour: int, minute: int = 0) -> _dt.datetime:
    return _dt.datetime(2026, 4, day, hour, minute)


DEMO_CONVERSATIONS: tuple[DemoConversation, ...] = (
    DemoConversation("moving-to-lyon", _at(6, 9, 15), (
        "Hi! My name is Maya and I just moved to Lyon for a new job at a robotics startup.",
        "I prefer short answers with bullet points, please.",
        "Can you suggest a few things to do on a rainy Sunday in a new city?",
        "The apartment is near the Croix-Rousse hill, lots of stairs.",
        "I need to buy a desk lamp and a kettle this week.",
        "My sister Lena is visiting on the 18th.",
    )),
    DemoConversation("java-study", _at(6, 20, 40), (
        "我正在学习Java，目前在看多线程。",
        "记住：我喜欢用例子来学习新概念。",
        "synchronized 和 ReentrantLock 有什么区别？",
        "线程池的核心参数有哪些？",
        "我下周要做一个关于并发的小分享。",
    )),
    DemoConversation("weekend-plans", _at(7, 18, 5), (
        "Planning the weekend: maybe a hike at the Monts d'Or.",
        "I love swimming more than hiking, to be honest.",
        "What should I pack for a half-day hike?",
        "Do you remember what I said about my sister's visit?",
        "What did I say about the apartment?",
    )),
    DemoConversation("recipes", _at(8, 12, 30), (
        "我喜欢吃折耳根，也喜欢花香蓝莓。",
        "今天想做一个简单的午饭，有什么建议？",
        "要不做番茄炒蛋吧，需要准备什么？",
        "还记得我之前说的学习方式吗？",
        "上次我说要做什么分享？",
    )),
    DemoConversation("job-first-week", _at(8, 21, 10), (
        "First week at the startup done. The team uses ROS 2 and Python.",
        "My manager is called Priya, she is very supportive.",
        "Do you remember where I moved to?",
        "What do I need to buy this week?",
    )),
)


class SteppingClock:
    """A settable clock: ``set(moment)`` jumps, each call then advances by ``step`` (turns get distinct times)."""

    def __init__(self, start: _dt.datetime, step: _dt.timedelta = _dt.timedelta(seconds=37)) -> None:
        self._now = start
        self._step = step

    def set(self, moment: _dt.datetime) -> None:
        self._now = moment

    def __call__(self) -> _dt.datetime:
        current = self._now
        self._now += self._step
        return current


def seed_demo(
    store: MemoryStore,
    *,
    user_id: str = DEMO_USER,
    conversations: tuple[DemoConversation, ...] = DEMO_CONVERSATIONS,
    progress: Callable[[str], None] | None = None,
    model: BaseChatModel | None = None,
) -> int:
    """Play the demo conversations for ``user_id`` into ``store``; returns the number of turns played.

    ``store`` should be built with a :class:`SteppingClock` so the turns land on the scripted days; with another
    clock the turns are stamped with that clock's times instead. A conversation that already exists is skipped, so
    seeding twice does not duplicate anything.

    ``model`` is the chat model that plays the turns; ``None`` means :class:`~agentmem_nb.agent.OfflineChatModel`,
    even when an API key is configured (``AGENTMEM_API_KEY``, ``OPENAI_API_KEY`` or ``config/llm.yaml``): seeding
    is deterministic, free and needs no network. Pass a real model explicitly to seed through it.
    """
    # The agent layer sits above the store: import only when seeding.
    from agentmem_nb.agent import ChatService, OfflineChatModel

    # Facts are extracted before each turn returns ("hot"), not by the background worker: the next turn's context
    # (and so its tool calls and the stepping clock) must not depend on how fast a thread ran.
    service = ChatService(store, model=model if model is not None else OfflineChatModel(), facts="hot")
    user = store.user(user_id)
    zone = store.zone
    turns = 0
    for conversation in conversations:
        if conversation.session_id in user.session_ids():
            continue
        if isinstance(store.clock, SteppingClock):
            start = conversation.start
            store.clock.set(start.replace(tzinfo=zone) if zone is not None else start.astimezone())
        user.conversations.create(conversation.session_id)
        for text in conversation.messages:
            result = service.turn(user_id, conversation.session_id, text)
            turns += 1
            if progress is not None:
                progress(f"[{conversation.session_id}] {text[:40]} -> {len(result.tool_calls)} tool call(s)")
    return turns


def demo_store(root: str, *, zone: str = "Europe/Paris") -> MemoryStore:
    """A store whose clock follows the demo script (used by ``agentmem-nb seed`` and the notebooks)."""
    from agentmem_nb.store import MemoryStore

    tz = resolve_zone(zone)
    return MemoryStore(root, zone=tz, clock=SteppingClock(_at(6, 9).replace(tzinfo=tz)))
