-- agentmem_nb schema, version 3: message vectors of the dense retrieval signal, kept for the next process.
-- Applied by agentmem_nb.store.postgres.migrations (`agentmem-nb db upgrade URL`), never by hand. Only adds a table.

-- One row per user, index kind (session / daily), layer and embedder (identity: a digest of the index configuration
-- and the embedder, so another model is a miss): the vectors of the layer's first `count` records, float32
-- little-endian, row after row, as retrieval/vectors.py keeps them in a file for the file store. `cursor` is the
-- layer's scan cursor when they were embedded and `last_id` the message id at position count - 1: the vectors are
-- used only while the layer is that layer grown by appends at most (the store's one change rule).
-- bytea, not pgvector's `vector`: Debian 12 (bookworm) has no pgvector package for PostgreSQL 15, and these rows are
-- read whole into the process's matrix (the similarity is computed there), never searched inside the server.
CREATE TABLE am_vectors (
    user_id  text NOT NULL REFERENCES am_users ON DELETE CASCADE,
    kind     text NOT NULL,
    key      text NOT NULL,
    identity text NOT NULL,
    count    bigint NOT NULL,
    dim      int NOT NULL,
    cursor   jsonb NOT NULL,
    last_id  bigint NOT NULL,
    data     bytea NOT NULL,
    PRIMARY KEY (user_id, kind, identity, key)
);
