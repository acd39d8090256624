-- Automatic judges and their scores per turn and rubric field (m3eval import-scores). They sit
-- apart from the annotations so that nothing the annotator screen reads can show them: the
-- annotators stay blind to the judges.

CREATE TABLE judges (
    id   INTEGER PRIMARY KEY,
    name TEXT NOT NULL UNIQUE
);

CREATE TABLE judge_scores (
    judge_id INTEGER NOT NULL REFERENCES judges (id) ON DELETE CASCADE,
    turn_id  INTEGER NOT NULL REFERENCES turns (id) ON DELETE CASCADE,
    field    TEXT    NOT NULL,
    -- A whole or continuous number for scale fields ("4", "3.7"), the rubric's spelling of a
    -- choice for choice fields (its NA choice included).
    value    TEXT    NOT NULL,
    PRIMARY KEY (judge_id, turn_id, field)
) WITHOUT ROWID;
