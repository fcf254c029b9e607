-- agentmem_nb schema, version 5: redaction events (store/redactions.py), one row per event as the file backend
-- keeps one line per event in redactions.jsonl: the message rows are never changed.
-- Applied by agentmem_nb.store.postgres.migrations (`agentmem-nb db upgrade URL`), never by hand.

-- The next redaction_id, taken with the user's row locked (as the dialogue log's next_log_id): 1, 2, 3… per user.
ALTER TABLE am_users ADD COLUMN next_redaction_id bigint NOT NULL DEFAULT 1;

CREATE TABLE am_redactions (
    user_id      text NOT NULL REFERENCES am_users ON DELETE CASCADE,
    redaction_id bigint NOT NULL,
    record       jsonb NOT NULL,   -- {ts, layer, key, target_id, reason, source}: the file backend's line
    raw          text,             -- the record when jsonb cannot hold it (store/postgres/records.py)
    PRIMARY KEY (user_id, redaction_id)
);
