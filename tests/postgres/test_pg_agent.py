"""The agent on PostgreSQL, unchanged: a turn with the offline model searches, expands a window, logs and updates
the conversation; a turn whose connection is killed while it saves keeps nothing of its reply and fails clearly."""

from __future__ import annotations

import psycopg
import pytest
from pg_server import PASSWORD

from agentmem_nb import MemoryStore
from agentmem_nb.agent import ChatService
from agentmem_nb.agent.offline import OfflineChatModel
from agentmem_nb.errors import StoreError
from agentmem_nb.store.postgres import PostgresStore, upgrade_database


@pytest.fixture
def service(pg_url: str, clock) -> ChatService:
    upgrade_database(pg_url)
    store = MemoryStore(pg_url, zone="Asia/Shanghai", clock=clock)
    assert isinstance(store, PostgresStore)
    yield ChatService(store, model=OfflineChatModel())  # type: ignore[arg-type]  # the contract, not the class
    store.close()


def test_a_recall_turn_searches_the_database(service: ChatService) -> None:
    service.turn("alice", "s1", "I like green tea, remember that")
    result = service.turn("alice", "s1", "what did I say about tea?")
    assert result.error is None and "green tea" in result.reply
    assert [call.name for call in result.tool_calls][:1] == ["search_session"]
    assert "#1" in result.tool_calls[0].output  # the hit, with its anchor, from the database's exact search
    user = service.store.user("alice")
    assert [m.role for m in user.session("s1").messages()] == ["user", "assistant"] * 2
    assert [e.assistant_message_id for e in user.log.entries()] == [2, 4]
    conversation = user.conversations.get("s1")
    assert conversation is not None and conversation.title.startswith("I like green tea")


def test_a_turn_killed_while_saving_keeps_nothing_of_its_reply(service: ChatService, pg_url: str) -> None:
    service.turn("alice", "s1", "hello")
    with psycopg.connect(pg_url, autocommit=True) as conn:  # the log line's insert cuts its own connection
        conn.execute("CREATE FUNCTION die() RETURNS trigger LANGUAGE plpgsql AS $$ BEGIN "
                     "PERFORM pg_terminate_backend(pg_backend_pid()); RETURN NEW; END $$")
        conn.execute("CREATE TRIGGER die BEFORE INSERT ON am_dialogue FOR EACH ROW EXECUTE FUNCTION die()")
    with pytest.raises(StoreError, match="nothing of an unfinished write was kept") as caught:
        service.turn("alice", "s1", "what did I say?")
    assert PASSWORD not in str(caught.value)
    with psycopg.connect(pg_url, autocommit=True) as conn:
        conn.execute("DROP TRIGGER die ON am_dialogue")
    user = service.store.user("alice")
    # the question was saved before the model ran (a failed turn keeps it); the reply, its log line and the
    # conversation's update were one transaction: none of them is there
    assert [m.content for m in user.session("s1").messages()][2:] == ["what did I say?"]
    assert len(user.log.entries()) == 1
    day = user.session("s1").messages()[-1].day
    assert [m.content for m in user.daily(day).messages()][2:] == ["what did I say?"]
    again = service.turn("alice", "s1", "and now?")  # the next turn works, ids without a gap
    assert again.error is None and again.user_message.message_id == 4
