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
-- The bounded plans of a day search (agentmem_nb/store/postgres/layer.py, _DAY_SEARCH), as a session search has with
-- the primary key: a common keyword walks these backwards and stops at `limit` hits, a rare one asks the trigram
-- index; the planner chooses per keyword. Without them a day search asked the trigram index for EVERY matching row,
-- then sorted them (40 to 130 ms for a keyword in a tenth of a 200k-message day, against 0.7 ms in version 5).
-- A day's copies in day order (one entry per append, on its session row: the copy's place):
CREATE INDEX am_messages_copies ON am_messages (copy_layer, copy_position) WHERE copy_layer IS NOT NULL;
-- A layer's own rows, neither side of a link (migrated lines, rows of version 5, copies cut loose): an append adds
-- nothing to it, and a day of linked copies has no entry, so walking it finds no own row at once.
CREATE INDEX am_messages_own ON am_messages (layer_id, position) WHERE copy_layer IS NULL AND source_layer IS NULL;

-- ... and which of the two the planner takes rests on its estimate of `folded LIKE '%…%'`, drawn from the column's
-- histogram: with 100 entries a keyword in 0.1 % of a day was thought in 1 % and the walk read half the day (92 ms
-- instead of 3). The next ANALYZE (autovacuum's) keeps 1000.
ALTER TABLE am_messages ALTER COLUMN folded SET STATISTICS 1000;

DROP INDEX am_messages_unfolded;
CREATE INDEX am_messages_unfolded ON am_messages (layer_id) WHERE folded IS NULL AND source_layer IS NULL;

-- Keeping the link honest when rows are changed behind the store: a linked row whose text, id, place or link
-- changes stands alone from then on (the store itself never updates a link: an append writes both sides at once, so
-- a link re-pointed by hand is cut, never half-kept; a half link made the copy unsearchable for good) (so a linked copy is always readable, and a session row's link is always true: a search
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
                            OR NEW.layer_id <> OLD.layer_id OR NEW.position <> OLD.position
                            OR (NEW.copy_layer, NEW.copy_position) IS DISTINCT FROM (OLD.copy_layer, OLD.copy_position)
                            OR (NEW.source_layer, NEW.source_position)
                               IS DISTINCT FROM (OLD.source_layer, OLD.source_position)))
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
    FOR EACH ROW WHEN ((OLD.copy_layer IS NOT NULL
                        AND (NEW.copy_layer, NEW.copy_position) IS DISTINCT FROM (OLD.copy_layer, OLD.copy_position))
                       OR (OLD.source_layer IS NOT NULL
                           AND (NEW.source_layer, NEW.source_position)
                               IS DISTINCT FROM (OLD.source_layer, OLD.source_position)))
    EXECUTE FUNCTION am_cut_copy();
