"""The synthetic conversation every store is fed: deterministic, the same bytes for every peer.

Messages alternate user/assistant, run 25-60 words (about 150-400 characters, like chat turns), one in ten carries a
short Chinese phrase (the original demo's users write Chinese), and the keyword :data:`TERM` appears in exactly 0.1%
of them (message ids 500, 1500, 2500, …; a conversation shorter than 1,000 messages gets one hit in its middle so the
keyword workload always has something to find). Nothing here depends on which store consumes the messages.
"""

from __future__ import annotations

import datetime as _dt
import random
from collections.abc import Iterator
from dataclasses import dataclass

__all__ = ["TERM", "SynthMessage", "conversation", "chunk", "term_ids", "anchors", "USER_ID", "SESSION_ID"]

TERM = "zanzibar"
"""The keyword of workload 3; absent from the vocabulary, so every hit is a planted one."""

USER_ID = "bench-user"
SESSION_ID = "bench-session"

_START = _dt.datetime(2026, 1, 5, 9, 0, tzinfo=_dt.timezone.utc)
_VOCAB = (
    "the a to and of I you it is that for on with was this my we can be have not what about will so do at but just "
    "like if get one time know think would there your they more some when all how out up from about day want going "
    "meeting project deadline coffee weekend train ticket budget report dinner friend sister doctor appointment "
    "recipe garden python notebook memory window search message thread summary holiday flight hotel museum paper "
    "review draft editor invoice schedule morning evening tomorrow yesterday remind remember prefer favourite "
    "colour music concert running marathon knee physio lunch salad noodles tea green jasmine office remote desk "
    "keyboard laptop battery charger bicycle helmet rain umbrella jacket boots library novel chapter author"
).split()
_CJK = ("我喜欢喝茉莉花茶", "明天早上九点开会", "上次说的那家餐厅", "记住我的生日", "周末去爬山吧", "还记得那本小说吗")


@dataclass(frozen=True, slots=True)
class SynthMessage:
    """One message of the benchmark conversation (the timestamp in both forms, so no store pays for converting)."""

    message_id: int
    role: str
    content: str
    ts: _dt.datetime
    ts_iso: str


def term_ids(n: int) -> list[int]:
    """Ids of the messages that contain :data:`TERM` in a conversation of ``n`` messages (0.1%, at least one)."""
    if n < 1000:
        return [max(1, n // 2)] if n else []
    return list(range(500, n + 1, 1000))


def _message(message_id: int, planted: frozenset[int] | set[int]) -> SynthMessage:
    rng = random.Random(message_id * 7919 + 13)
    words = rng.choices(_VOCAB, k=rng.randint(25, 60))
    if message_id % 10 == 3:
        words.insert(rng.randrange(len(words)), rng.choice(_CJK))
    if message_id in planted:
        words.insert(rng.randrange(len(words)), TERM.capitalize() if message_id % 2 else TERM)
    ts = _START + _dt.timedelta(seconds=7 * message_id)
    return SynthMessage(
        message_id=message_id,
        role="user" if message_id % 2 else "assistant",
        content=" ".join(words),
        ts=ts,
        ts_iso=ts.isoformat(),
    )


def conversation(n: int, *, start: int = 1) -> Iterator[SynthMessage]:
    """Messages ``start..n`` (1-based ids) of the conversation of length ``n``, generated lazily."""
    planted = set(term_ids(n))
    for message_id in range(start, n + 1):
        yield _message(message_id, planted)


def chunk(n: int, first: int, last: int) -> list[SynthMessage]:
    """Messages ``first..last`` (inclusive) of the conversation of length ``n``, as a list (built before timing)."""
    planted = set(term_ids(n))
    return [_message(i, planted) for i in range(first, last + 1)]


def anchors(n: int, count: int, *, seed: int = 11) -> list[int]:
    """``count`` window anchors spread over the conversation (ids 3..n-2, so every window has 5 messages)."""
    if n < 5:
        return [max(1, (n + 1) // 2)] * count
    rng = random.Random(seed * 1_000_003 + n)
    return [rng.randint(3, n - 2) for _ in range(count)]
