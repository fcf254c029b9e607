-- agentmem_nb schema, version 7: the indexes of schema 6's links (0006_day_copy_by_reference.sql), built beside the
-- old ones. Applied by agentmem_nb.store.postgres.migrations (`agentmem-nb db upgrade URL`), never by hand.
--
-- A file of its own because version 6 adds columns, which holds the table's strongest lock until its file commits:
-- built there, the indexes blocked every read of am_messages for the whole build (3 s at 400k rows). Here each new
-- index is built under a new name first (CREATE INDEX takes a SHARE lock: readers keep working, writers wait until
-- this file commits), then the old one is dropped and the new one renamed (the strongest lock again, but only from
-- the first DROP to the commit, a moment).

-- Partial: a row without folded text has no postings to give (a linked copy, or a row the next search folds), and
-- `folded LIKE …` implies folded IS NOT NULL, so every search can use it. copy_layer is NULL (one entry) on every
-- row but a session row with a linked copy.
CREATE INDEX am_messages_search_7 ON am_messages USING gin (layer_id, copy_layer, folded gin_trgm_ops)
    WITH (fastupdate = on, gin_pending_list_limit = 256) WHERE folded IS NOT NULL;

-- The rows the next search must fold: never a linked copy (its session row's text is its text).
CREATE INDEX am_messages_unfolded_7 ON am_messages (layer_id) WHERE folded IS NULL AND source_layer IS NULL;

-- The bounded plans of a day search (agentmem_nb/store/postgres/layer.py, _DAY_SEARCH), as a session search has with
-- the primary key: a common keyword walks these backwards and stops at `limit` hits, a rare one asks the trigram
-- index; the planner chooses per keyword. Without them a day search asked the trigram index for EVERY matching row,
-- then sorted them (40 to 130 ms for a keyword in a tenth of a 200k-message day, against 0.7 ms in version 5).
-- A day's copies in day order (one entry per append, on its session row: the copy's place):
CREATE INDEX IF NOT EXISTS am_messages_copies ON am_messages (copy_layer, copy_position) WHERE copy_layer IS NOT NULL;
-- A layer's own rows, neither side of a link (migrated lines, rows of version 5, copies cut loose): an append adds
-- nothing to it, and a day of linked copies has no entry, so walking it finds no own row at once.
CREATE INDEX IF NOT EXISTS am_messages_own ON am_messages (layer_id, position) WHERE copy_layer IS NULL AND source_layer IS NULL;

-- The swap waits for every open transaction on am_messages, and while it waits every new statement queues behind
-- it: bounded, so that a long reader (an export, an idle-in-transaction notebook) makes the upgrade fail with a clear
-- error (nothing of it kept; try again) instead of stopping every read for as long as that reader stays open.
SET LOCAL lock_timeout = '10s';
DROP INDEX am_messages_search;
ALTER INDEX am_messages_search_7 RENAME TO am_messages_search;
DROP INDEX am_messages_unfolded;
ALTER INDEX am_messages_unfolded_7 RENAME TO am_messages_unfolded;
