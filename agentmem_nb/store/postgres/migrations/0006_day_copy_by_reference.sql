-- agentmem_nb schema, version 6: an append's day copy is found through its session row's trigram postings.
-- Applied by agentmem_nb.store.postgres.migrations (`agentmem-nb db upgrade URL`), never by hand.
--
-- Until version 5 an append indexed the same text twice: the session row's ~90 trigram postings, then the same ones
-- again for its day copy. The trigram index was most of an append's server time (benchmarks/POSTGRES.md, run H).
-- Now the copy an append writes keeps its whole record (every read of a day reads the day's own rows, as before) but
-- no folded text, so it is not in the trigram index at all; the session row names its copy (copy_layer,
-- copy_position), the copy names its session row (source_layer, source_position), and the index (version 7) leads
-- with both layers: a session search asks `layer_id = X AND folded LIKE`, a day search asks `copy_layer = Y AND
-- folded LIKE` (then reads those copies by primary key) beside `layer_id = Y AND folded LIKE` for the day's own rows
-- (lines migrated from files, copies whose link was cut). Both sides name each other and a search checks both
-- names, so a link half cut (by a row put back at a reused position) finds nothing rather than a wrong row.
--
-- Rows already in the table stay as they are: their day rows are own rows (folded, indexed under their own layer).
-- Adding nullable columns rewrites nothing, but takes the table's strongest lock until this file commits: the indexes
-- are built by version 7, in a transaction of their own, while readers keep working.

ALTER TABLE am_messages
    ADD COLUMN copy_layer bigint,       -- on a session row: where its day copy is (layer, position)
    ADD COLUMN copy_position bigint,
    ADD COLUMN source_layer bigint,     -- on a day copy: the session row whose folded text it is searched by
    ADD COLUMN source_position bigint;

-- A day search's plan (the trigram index, or a backward walk of a btree: version 7) rests on the planner's estimate
-- of `folded LIKE '%…%'`, drawn from the column's histogram: with 100 entries a keyword in 0.1 % of a day was thought
-- in 1 % and the walk read half the day (92 ms instead of 3). The next ANALYZE (autovacuum's) keeps 1000.
ALTER TABLE am_messages ALTER COLUMN folded SET STATISTICS 1000;

-- Keeping the link honest when rows are changed behind the store: a linked row whose text, id, place or link
-- changes stands alone from then on (so a linked copy is always readable, and a session row's link is always true: a
-- search may take the copies' places from the session rows alone, and read only the `limit` it keeps). The store
-- itself never updates a link (an append writes both sides at once): a link re-pointed by hand is cut, never kept half
-- (a half link left the copy unsearchable for good). A copy so cut has no folded text and no source: the next search
-- folds it (am_messages_unfolded, version 7), as any row written by another program.
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
