-- Imports side by side. A file may hold turns (and labels) that another import, still open,
-- has written: this import then relies on rows it does not own, which that other import's
-- failure would delete (and with a turn, every label on it). So it claims them: a claim keeps
-- a row alive while any import relying on it is open, and hands the row to the claimant
-- when the owner fails; the claimant's Commit makes the rows it claimed its own (visible).
--
-- failed marks a batch being removed: from then on nobody claims its rows; an import that
-- needs one takes it over instead (its import_batch becomes the taker's), so that the
-- removal, which goes on in short transactions, leaves it alone.
--
-- An open batch's first_turn and first_annotation are kept at or below the id of every row it
-- owns (lowered when it inserts a row under a reused id or claims an older row): the views
-- of migration 0003 rely on that fence.

ALTER TABLE import_batches ADD COLUMN failed INTEGER NOT NULL DEFAULT 0;

CREATE TABLE import_claims (
    batch  INTEGER NOT NULL,                     -- the import batch that relies on the row
    kind   TEXT    NOT NULL CHECK (kind IN ('turn', 'annotation')),
    row_id INTEGER NOT NULL,                     -- turns.id or annotations.id
    PRIMARY KEY (kind, row_id, batch)
) WITHOUT ROWID;
CREATE INDEX import_claims_by_batch ON import_claims (batch);

-- Judge runs and import-scores write in short chunk transactions too, as imports do: their
-- scores belong to an import batch until it completes, and a failed run's go with it.
ALTER TABLE judge_scores ADD COLUMN import_batch INTEGER;
CREATE INDEX judge_scores_by_batch ON judge_scores (import_batch);
