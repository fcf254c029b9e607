-- agentmem_nb schema, version 6: an append's day copy is found through its session row's trigram postings.
-- Applied by agentmem_nb.store.postgres.migrations (`agentmem-nb db upgrade URL`), never by hand.
--
-- Until version 5 an append indexed the same text twice: the session row's ~90 trigram postings, then the same ones
-- again for its day copy. The trigram index was most of an append's server time (benchmarks/POSTGRES.md, run H).
-- Now the copy an append writes keeps its whole record (every read of a day reads the day's own rows, as before) but
-- no folded text, so it is not in the trigram index at all; the session row names its copy (copy_layer,
-- copy_position), the copy names its session row (source_layer, source_position), and the index leads with both
-- layers: a session search asks `layer_id = X AND folded LIKE`, a day search asks `copy_layer = Y AND folded LIKE`
-- (then reads those copies by primary key) beside `layer_id = Y AND folded LIKE` for the day's own rows (lines
-- migrated from files, copies whose link was cut). Both sides name each other and a search checks both names, so a
-- link half cut (by hand, or by a row put back at a reused position) finds nothing rather than a wrong row.
--
-- Rows already in the table stay as they are: their day rows are own rows (folded, indexed under their own layer).
-- Adding nullable columns rewrites nothing; only the index is built again.

ALTER TABLE am_messages
    ADD COLUMN copy_layer bigint,       -- on a session row: where its day copy is (layer, position)
    ADD COLUMN copy_position bigint,
    ADD COLUMN source_layer bigint,     -- on a day copy: the session row whose folded text it is searched by
    ADD COLUMN source_position bigint;

-- Partial: a row without folded text has no postings to give (a linked copy, or a row the next search folds), and
-- `folded LIKE …` implies folded IS NOT NULL, so every search can use it. copy_layer is NULL (one entry) on every
-- row but a session row with a linked copy.
DROP INDEX am_messages_search;
CREATE INDEX am_messages_search ON am_messages USING gin (layer_id, copy_layer, folded gin_trgm_ops)
    WITH (fastupdate = on, gin_pending_list_limit = 256) WHERE folded IS NOT NULL;

-- The rows the next search must fold: never a linked copy (its session row's text is its text).
DROP INDEX am_messages_unfolded;
CREATE INDEX am_messages_unfolded ON am_messages (layer_id) WHERE folded IS NULL AND source_layer IS NULL;

-- Keeping the link honest when rows are changed behind the store: a linked row whose text, id or place changes
-- stands alone from then on (so a linked copy is always readable, and a session row's link is always true: a search
-- may take the copies' places from the session rows alone, and read only the `limit` it keeps). A copy so cut has no folded text and no source: the next search folds it (the
-- partial index above), as any row written by another program.
CREATE FUNCTION am_unlink_message() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    NEW.copy_layer := NULL;
    NEW.copy_position := NULL;
    NEW.source_layer := NULL;
    NEW.source_position := NULL;
    RETURN NEW;
END $$;
CREATE TRIGGER am_messages_unlink BEFORE UPDATE ON am_messages
    FOR EACH ROW WHEN ((OLD.copy_layer IS NOT NULL OR OLD.source_layer IS NOT NULL)
                       AND (NEW.record IS DISTINCT FROM OLD.record OR NEW.raw IS DISTINCT FROM OLD.raw
                            OR NEW.folded IS DISTINCT FROM OLD.folded OR NEW.message_id IS DISTINCT FROM OLD.message_id
                            OR NEW.layer_id <> OLD.layer_id OR NEW.position <> OLD.position))
    EXECUTE FUNCTION am_unlink_message();

-- ... and its other side is told, after the statement's own rows are written (an AFTER trigger: a BEFORE one would
-- change rows the same DELETE may be about to remove, which PostgreSQL refuses). The names are checked on both
-- sides, so the update that cuts the other side finds nothing to cut back.
CREATE FUNCTION am_cut_copy() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    IF OLD.copy_layer IS NOT NULL THEN      -- a session row: its day copy falls back to its own text
        UPDATE am_messages SET source_layer = NULL, source_position = NULL
         WHERE layer_id = OLD.copy_layer AND position = OLD.copy_position
           AND source_layer = OLD.layer_id AND source_position = OLD.position;
    END IF;
    IF OLD.source_layer IS NOT NULL THEN    -- a day copy: its session row no longer answers for it
        UPDATE am_messages SET copy_layer = NULL, copy_position = NULL
         WHERE layer_id = OLD.source_layer AND position = OLD.source_position
           AND copy_layer = OLD.layer_id AND copy_position = OLD.position;
    END IF;
    RETURN NULL;
END $$;
CREATE TRIGGER am_messages_copy_removed AFTER DELETE ON am_messages
    FOR EACH ROW WHEN (OLD.copy_layer IS NOT NULL OR OLD.source_layer IS NOT NULL) EXECUTE FUNCTION am_cut_copy();
CREATE TRIGGER am_messages_copy_cut AFTER UPDATE ON am_messages
    FOR EACH ROW WHEN ((OLD.copy_layer IS NOT NULL AND NEW.copy_layer IS NULL)
                       OR (OLD.source_layer IS NOT NULL AND NEW.source_layer IS NULL))
    EXECUTE FUNCTION am_cut_copy();
