-- A team campaign: named samples of turns, their assignment to annotators, gold labels mixed
-- into the queues, repeated turns for intra-annotator agreement, and the final labels
-- adjudication settles on.

CREATE TABLE samples (
    id         INTEGER PRIMARY KEY,
    name       TEXT    NOT NULL UNIQUE,
    seed       INTEGER NOT NULL,
    size       INTEGER NOT NULL,
    params     TEXT    NOT NULL, -- JSON: by, where, min_per_stratum
    created_at TEXT    NOT NULL
);

-- One row per stratum: available in the population, allocated, drawn.
CREATE TABLE sample_strata (
    sample_id INTEGER NOT NULL REFERENCES samples (id) ON DELETE CASCADE,
    position  INTEGER NOT NULL,
    key       TEXT    NOT NULL, -- JSON array: the stratum's value of each --by attribute
    available INTEGER NOT NULL,
    allocated INTEGER NOT NULL,
    drawn     INTEGER NOT NULL,
    PRIMARY KEY (sample_id, position)
) WITHOUT ROWID;

CREATE TABLE sample_turns (
    sample_id INTEGER NOT NULL REFERENCES samples (id) ON DELETE CASCADE,
    turn_id   INTEGER NOT NULL REFERENCES turns (id) ON DELETE CASCADE,
    stratum   INTEGER NOT NULL,
    PRIMARY KEY (sample_id, turn_id)
) WITHOUT ROWID;

-- The assignment of a sample: its settings, and who labels what.
CREATE TABLE campaigns (
    sample_id   INTEGER PRIMARY KEY REFERENCES samples (id) ON DELETE CASCADE,
    overlap     INTEGER NOT NULL CHECK (overlap >= 1),
    gold_rate   REAL    NOT NULL DEFAULT 0,
    repeat_rate REAL    NOT NULL DEFAULT 0,
    seed        INTEGER NOT NULL,
    assigned_at TEXT    NOT NULL
);

-- kind: 'main' (a sampled turn), 'gold' (a turn with a known label) or 'repeat' (a turn the
-- annotator sees a second time, labeled under their hidden repeat row).
CREATE TABLE assignments (
    sample_id    INTEGER NOT NULL REFERENCES campaigns (sample_id) ON DELETE CASCADE,
    annotator_id INTEGER NOT NULL REFERENCES annotators (id),
    turn_id      INTEGER NOT NULL REFERENCES turns (id) ON DELETE CASCADE,
    kind         TEXT    NOT NULL CHECK (kind IN ('main', 'gold', 'repeat')),
    PRIMARY KEY (annotator_id, sample_id, turn_id, kind)
) WITHOUT ROWID;
CREATE INDEX assignments_by_sample ON assignments (sample_id, turn_id);

-- Known labels of gold turns (m3eval assign --gold FILE), per rubric field.
CREATE TABLE gold_labels (
    turn_id INTEGER NOT NULL REFERENCES turns (id) ON DELETE CASCADE,
    field   TEXT    NOT NULL,
    value   TEXT    NOT NULL,
    source  TEXT    NOT NULL, -- the file it came from
    PRIMARY KEY (turn_id, field)
) WITHOUT ROWID;

-- A repeated turn is labeled a second time under a hidden annotator row that points at the
-- real annotator (repeat_of): the queue machinery stays the same, and every reader of
-- labels (export, status, agreement, scores) leaves those rows out.
ALTER TABLE annotators ADD COLUMN repeat_of INTEGER REFERENCES annotators (id);
CREATE UNIQUE INDEX annotators_repeat_of ON annotators (repeat_of) WHERE repeat_of IS NOT NULL;

-- Final labels an adjudicator settled, one per turn and field, with where each came from.
CREATE TABLE final_labels (
    turn_id        INTEGER NOT NULL REFERENCES turns (id) ON DELETE CASCADE,
    field          TEXT    NOT NULL,
    value          TEXT    NOT NULL,
    source         TEXT    NOT NULL, -- the annotator whose label was taken, or '' when scored anew
    adjudicator    TEXT    NOT NULL,
    rubric_version TEXT    NOT NULL,
    decided_at     TEXT    NOT NULL,
    PRIMARY KEY (turn_id, field)
) WITHOUT ROWID;

-- Every adjudication change, newest last: the audit trail and what undo walks back.
CREATE TABLE final_changes (
    id          INTEGER PRIMARY KEY,
    turn_id     INTEGER NOT NULL REFERENCES turns (id) ON DELETE CASCADE,
    field       TEXT    NOT NULL,
    old_value   TEXT,
    old_source  TEXT,
    new_value   TEXT,
    new_source  TEXT,
    adjudicator TEXT    NOT NULL,
    at          TEXT    NOT NULL,
    undone      INTEGER NOT NULL DEFAULT 0
);
CREATE INDEX final_changes_by_turn ON final_changes (turn_id, undone, id);
