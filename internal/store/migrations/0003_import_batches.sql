-- Imports write a file in short transactions, so that annotators and reports never wait long
-- for the write lock. Until the whole file is stored, its rows belong to an open import batch
-- and no reader sees them; completing the file deletes the batch row (one small write) and
-- they all appear at once. A failed file's rows are deleted with its batch.
--
-- first_turn and first_annotation are the smallest row ids the batch can have written: every
-- row below the smallest of them (the fence) is visible without looking at import_batch.

CREATE TABLE import_batches (
    id               INTEGER PRIMARY KEY AUTOINCREMENT, -- never reused: old rows keep their batch id
    source           TEXT    NOT NULL,
    host             TEXT    NOT NULL,
    pid              INTEGER NOT NULL,
    started_at       TEXT    NOT NULL,
    heartbeat        TEXT    NOT NULL, -- the last chunk committed
    first_turn       INTEGER NOT NULL,
    first_annotation INTEGER NOT NULL
);

ALTER TABLE turns ADD COLUMN import_batch INTEGER;
ALTER TABLE episodes ADD COLUMN import_batch INTEGER;
ALTER TABLE annotations ADD COLUMN import_batch INTEGER;

-- Written so that a row is decided by its id alone (NOT ... rather than an OR, which SQLite
-- would turn into a scan of the table): the queue's counts then stay on covering indexes, a
-- 1,000,000-turn count reads an index, not the table. The visible rows above the fence, only
-- there while an import runs, are listed once per query.
CREATE VIEW visible_turns AS
    SELECT * FROM turns
    WHERE NOT (id >= (SELECT coalesce(min(first_turn), 9223372036854775807) FROM import_batches)
               AND id NOT IN (SELECT u.id FROM turns u
                              WHERE u.id >= (SELECT coalesce(min(first_turn), 9223372036854775807) FROM import_batches)
                                AND (u.import_batch IS NULL OR u.import_batch NOT IN (SELECT id FROM import_batches))));

CREATE VIEW visible_annotations AS
    SELECT * FROM annotations
    WHERE NOT (id >= (SELECT coalesce(min(first_annotation), 9223372036854775807) FROM import_batches)
               AND id NOT IN (SELECT u.id FROM annotations u
                              WHERE u.id >= (SELECT coalesce(min(first_annotation), 9223372036854775807) FROM import_batches)
                                AND (u.import_batch IS NULL OR u.import_batch NOT IN (SELECT id FROM import_batches))));
