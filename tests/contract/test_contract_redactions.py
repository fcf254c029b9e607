"""Conformance: redaction events — a message hidden from every view without being changed, on every backend."""

from __future__ import annotations

import pytest
from contract_backends import Backend

from agentmem_nb.errors import InvalidIdentifier, StoreError
from agentmem_nb.items import ItemKey
from agentmem_nb.messages import ToolCall
from agentmem_nb.retrieval import Scope, search
from agentmem_nb.store.contract import Store


def _thread(store: Store) -> list[int]:
    user = store.user("alice")
    ids = []
    for i in range(6):
        calls = [ToolCall("search_session", {"keyword": "card"}, "my card 4111")] if i == 3 else []
        ids.append(user.append("s1", "user" if i % 2 == 0 else "assistant", f"card number {i} is 4111",
                               tool_calls=calls, day="2026-04-08").session.message_id)
    return ids


def test_events_are_kept_in_order_and_read_back_by_another_store(backend: Backend, store: Store) -> None:
    red = store.user("alice").redactions
    assert red.events() == [] and red.stamp() == 0
    first = red.add(ItemKey("session", "s1", 1), reason="card number", source="inspector")
    second = red.add(ItemKey("daily", "2026-04-08", 1), reason="card number")
    stamp = red.stamp()
    third = red.add(ItemKey("session", "s1", 1), reason="card, again")
    assert red.stamp() > stamp > 0  # grows with every event
    assert [e.redaction_id for e in red.events()] == [1, 2, 3]
    assert (first.reason, first.source, first.item) == ("card number", "inspector", ("session", "s1", 1))
    assert first.ts is not None
    again = backend.reopen(store).user("alice").redactions
    assert again.events() == [first, second, third]
    assert again.active() == {first.item: third, second.item: second}  # the latest event of an item wins


@pytest.mark.parametrize("item, reason, error, match", [
    (ItemKey("session", "s1", 1), "  ", StoreError, "give a reason"),
    (ItemKey("session", "../x", 1), "r", InvalidIdentifier, "session"),
    (ItemKey("daily", "2026-4-8", 1), "r", InvalidIdentifier, "day"),
    (ItemKey("session", "s1", 0), "r", StoreError, "integers from 1"),
])
def test_bad_redactions_are_refused_and_record_nothing(store: Store, item: ItemKey, reason: str,
                                                       error: type[Exception], match: str) -> None:
    red = store.user("alice").redactions
    with pytest.raises(error, match=match):
        red.add(item, reason=reason)
    assert red.events() == []


def test_a_redacted_message_is_never_a_hit_and_shows_its_reason_in_place(store: Store) -> None:
    ids = _thread(store)
    user = store.user("alice")
    day_ids = [m.message_id for m in user.daily("2026-04-08").messages()]
    user.redactions.add(ItemKey("session", "s1", ids[3]), reason="private")
    user.redactions.add(ItemKey("daily", "2026-04-08", day_ids[3]), reason="private")
    # searches: never the hidden one, and the limit is still filled
    assert [m.message_id for m in user.search_session("s1", "card", limit=3)] == [ids[2], ids[4], ids[5]]
    assert [m.message_id for m in user.search_daily("card", day="2026-04-08", limit=3)] == [
        day_ids[2], day_ids[4], day_ids[5]]
    assert [m.message_id for m in user.search_daily("card", limit=3)] == [day_ids[2], day_ids[4], day_ids[5]]
    assert all(h.message.message_id != ids[3] for h in
               search(user, "card number 4111", scope=Scope.session("s1"), budget=6, how="ranked").hits)
    # views: in place, with its id, time and role, without its text or tool calls
    window = user.session_window("s1", ids[3], 1, 1)
    assert [m.message_id for m in window.messages] == ids[2:5]
    hidden = window.messages[1]
    assert hidden.content == "[redacted: private]" and not hidden.tool_calls and "4111" not in repr(hidden)
    assert user.daily_window("2026-04-08", day_ids[3], 0, 0).messages[0].content == "[redacted: private]"
    assert [m.content for m in user.recent("s1", 2)][0] == "card number 2 is 4111"
    assert "[redacted: private]" in [m.content for m in user.recent("s1", 3)]
    # the stored message itself is unchanged (the raw layer is the data, not a view)
    assert user.session("s1").get(ids[3]).content == "card number 3 is 4111"  # type: ignore[union-attr]
