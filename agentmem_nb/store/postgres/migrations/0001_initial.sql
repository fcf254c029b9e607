-- agentmem_nb schema, version 1: users, message layers, messages, long-term memory, conversations, dialogue log.
-- Applied by agentmem_nb.store.postgres.migrations (`agentmem-nb db upgrade URL`), never by hand.

-- Exact search is a casefolded substring match (LIKE '%…%') served by a trigram index; btree_gin lets that index
-- lead with the layer, so a search in one thread reads only that thread's postings. Both are trusted extensions
-- (PostgreSQL 13+): a database owner may create them.
CREATE EXTENSION IF NOT EXISTS pg_trgm;
CREATE EXTENSION IF NOT EXISTS btree_gin;

CREATE TABLE am_users (
    user_id     text PRIMARY KEY,
    next_log_id bigint NOT NULL DEFAULT 1,          -- the dialogue log's next entry_id (its row lock orders appends)
    created_at  timestamptz NOT NULL DEFAULT now()
);

-- One row per session thread or day of a user. Appends lock this row (INSERT … ON CONFLICT DO UPDATE), so ids
-- and positions are handed out one writer at a time and commit with the message: 1, 2, 3… with no gap.
CREATE TABLE am_layers (
    layer_id   bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    user_id    text NOT NULL REFERENCES am_users ON DELETE CASCADE,
    kind       text NOT NULL CHECK (kind IN ('session', 'daily')),
    key        text NOT NULL,
    next_id    bigint NOT NULL DEFAULT 1,           -- the next message_id
    rows       bigint NOT NULL DEFAULT 0,           -- the next position (rows ever placed, readable or not)
    generation bigint NOT NULL DEFAULT 0,           -- bumped when a row is changed or removed behind the store
    UNIQUE (user_id, kind, key)
);

-- A message as the file backend stores a line (record: ts, role, content, tags, meta), at its 0-based position.
-- raw holds the record instead when jsonb cannot (a NUL or a lone surrogate in the text): ASCII JSON, exact.
-- folded is the casefolded content exact search matches (computed by the store: Python's casefold, not lower());
-- NULL for a row written by another program until the next search folds it.
CREATE TABLE am_messages (
    layer_id   bigint NOT NULL REFERENCES am_layers ON DELETE CASCADE,
    position   bigint NOT NULL,
    message_id bigint,
    record     jsonb NOT NULL,
    raw        text,
    folded     text,
    readable   boolean GENERATED ALWAYS AS
                   (message_id IS NOT NULL AND message_id > 0 AND jsonb_typeof(record) = 'object') STORED,
    PRIMARY KEY (layer_id, position)
);
CREATE INDEX am_messages_by_id ON am_messages (layer_id, message_id, position);
-- fastupdate off: with it, new rows wait in the index's pending list (up to 4 MB), which every search reads in full
-- until a vacuum merges it (6 ms at 200k pending rows against 0.1 ms merged): an append pays a little more instead.
CREATE INDEX am_messages_search ON am_messages USING gin (layer_id, folded gin_trgm_ops) WITH (fastupdate = off);
CREATE INDEX am_messages_unfolded ON am_messages (layer_id) WHERE folded IS NULL;
CREATE INDEX am_messages_unreadable ON am_messages (layer_id) WHERE NOT readable;

-- Rows written by another program (a hand fix, a restore) keep the layer's bookkeeping right, so scan() reports
-- them as the file backend reports an edited file: an insert without a position gets the next one (appended); a
-- change or a removal bumps the generation (rewritten, or truncated when rows were cut from the end).
CREATE FUNCTION am_place_message() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    UPDATE am_layers SET rows = rows + 1 WHERE layer_id = NEW.layer_id RETURNING rows - 1 INTO NEW.position;
    RETURN NEW;
END $$;
CREATE TRIGGER am_messages_place BEFORE INSERT ON am_messages
    FOR EACH ROW WHEN (NEW.position IS NULL) EXECUTE FUNCTION am_place_message();

CREATE FUNCTION am_unfold_message() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    IF NEW.record IS DISTINCT FROM OLD.record OR NEW.raw IS DISTINCT FROM OLD.raw THEN
        NEW.folded := NULL;  -- refolded by the store's next search (casefold lives in Python)
    END IF;
    RETURN NEW;
END $$;
CREATE TRIGGER am_messages_unfold BEFORE UPDATE ON am_messages
    FOR EACH ROW WHEN (NEW.folded IS NOT DISTINCT FROM OLD.folded) EXECUTE FUNCTION am_unfold_message();

CREATE FUNCTION am_layer_changed() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    IF TG_OP = 'DELETE' THEN
        UPDATE am_layers SET generation = generation + 1,
               rows = (SELECT coalesce(max(position) + 1, 0) FROM am_messages WHERE layer_id = OLD.layer_id)
         WHERE layer_id = OLD.layer_id;
    ELSIF NEW.record IS DISTINCT FROM OLD.record OR NEW.raw IS DISTINCT FROM OLD.raw
          OR NEW.message_id IS DISTINCT FROM OLD.message_id THEN
        UPDATE am_layers SET generation = generation + 1 WHERE layer_id = OLD.layer_id;
    END IF;
    RETURN NULL;
END $$;
CREATE TRIGGER am_messages_changed AFTER UPDATE OR DELETE ON am_messages
    FOR EACH ROW EXECUTE FUNCTION am_layer_changed();

-- Long-term memory: the whole text and its version; the history keeps the file backend's records (deltas with a
-- checkpoint now and then, see store/longterm.py), so any version can be rebuilt.
CREATE TABLE am_longterm (
    user_id          text PRIMARY KEY REFERENCES am_users ON DELETE CASCADE,
    text             text NOT NULL DEFAULT '',
    version          bigint NOT NULL DEFAULT 0,
    since_checkpoint bigint NOT NULL DEFAULT 0
);
CREATE TABLE am_longterm_history (
    user_id    text NOT NULL REFERENCES am_users ON DELETE CASCADE,
    version    bigint NOT NULL,
    checkpoint boolean NOT NULL,
    record     jsonb NOT NULL,
    raw        text,
    PRIMARY KEY (user_id, version)
);

CREATE TABLE am_conversations (
    user_id    text NOT NULL REFERENCES am_users ON DELETE CASCADE,
    session_id text NOT NULL,
    title      text NOT NULL DEFAULT '',
    created_at timestamptz NOT NULL,
    updated_at timestamptz NOT NULL,
    PRIMARY KEY (user_id, session_id)
);
CREATE INDEX am_conversations_recent ON am_conversations (user_id, updated_at DESC);

-- The dialogue log: one JSONB document per turn (DialogueEntry.to_record()).
CREATE TABLE am_dialogue (
    user_id  text NOT NULL REFERENCES am_users ON DELETE CASCADE,
    entry_id bigint NOT NULL,
    record   jsonb NOT NULL,
    raw      text,
    PRIMARY KEY (user_id, entry_id)
);
