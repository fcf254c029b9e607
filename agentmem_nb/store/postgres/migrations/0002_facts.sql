-- agentmem_nb schema, version 2: structured memory — fact events, the facts extraction queue, standing instructions.
-- Applied by agentmem_nb.store.postgres.migrations (`agentmem-nb db upgrade URL`), never by hand. Only adds tables:
-- a database at version 1 keeps every row it has.

-- One row per user with facts: the writers' lock (a decision and its event are made under it, FOR UPDATE), the next
-- event id and position, and a generation bumped when an event is changed or removed behind the store, so a reader's
-- view is folded again (the store's cursor rule, as for am_layers).
CREATE TABLE am_fact_logs (
    user_id    text PRIMARY KEY REFERENCES am_users ON DELETE CASCADE,
    next_event bigint NOT NULL DEFAULT 1,
    rows       bigint NOT NULL DEFAULT 0,
    generation bigint NOT NULL DEFAULT 0
);

-- The events, append-only (store/facts.py has the record's shape and the one fold of every backend): the record
-- without its id, or raw (records.py's rule) when jsonb cannot hold it. event_key names an assertion's source
-- message and content: unique, so a replayed extraction can never be recorded twice.
CREATE TABLE am_fact_events (
    user_id   text NOT NULL REFERENCES am_users ON DELETE CASCADE,
    position  bigint NOT NULL,
    event_id  bigint NOT NULL,
    record    jsonb NOT NULL,
    raw       text,
    event_key text,
    PRIMARY KEY (user_id, position)
);
CREATE UNIQUE INDEX am_fact_events_key ON am_fact_events (user_id, event_key) WHERE event_key IS NOT NULL;

CREATE FUNCTION am_fact_event_changed() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    UPDATE am_fact_logs SET generation = generation + 1,
           rows = (SELECT coalesce(max(position) + 1, 0) FROM am_fact_events WHERE user_id = OLD.user_id)
     WHERE user_id = OLD.user_id;
    RETURN NULL;
END $$;
CREATE TRIGGER am_fact_events_changed AFTER UPDATE OR DELETE ON am_fact_events
    FOR EACH ROW EXECUTE FUNCTION am_fact_event_changed();

-- The facts queue (agent/facts_queue.py): queued / done / failed lines naming a user message. Ids only order them.
CREATE TABLE am_fact_queue (
    entry_id bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    user_id  text NOT NULL REFERENCES am_users ON DELETE CASCADE,
    record   jsonb NOT NULL,
    raw      text
);
CREATE INDEX am_fact_queue_user ON am_fact_queue (user_id, entry_id);

-- Procedural memory (instructions.md): a document versioned exactly as long-term memory is (same columns, same
-- history records, store/postgres/longterm.py).
CREATE TABLE am_instructions (
    user_id          text PRIMARY KEY REFERENCES am_users ON DELETE CASCADE,
    text             text NOT NULL DEFAULT '',
    version          bigint NOT NULL DEFAULT 0,
    since_checkpoint bigint NOT NULL DEFAULT 0
);
CREATE TABLE am_instructions_history (
    user_id    text NOT NULL REFERENCES am_users ON DELETE CASCADE,
    version    bigint NOT NULL,
    checkpoint boolean NOT NULL,
    record     jsonb NOT NULL,
    raw        text,
    PRIMARY KEY (user_id, version)
);
