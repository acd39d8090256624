-- A model judge (m3eval judge --endpoint) asks a VLM for a turn's scores. Its scores go to
-- judge_scores like every judge's, with rule_version naming the model judge's version: the
-- model, the prompt and the sampling parameters. judge_versions records what each version
-- is; judge_turns records, per judged turn, the version that scored it, the judge's
-- rationale and what the turn cost, written once the turn's scores are committed, so a turn
-- with a row here has all its scores (a rerun skips it).

CREATE TABLE judge_versions (
    version     TEXT PRIMARY KEY,
    model       TEXT NOT NULL,
    prompt_hash TEXT NOT NULL,  -- sha256 of the prompt template
    params      TEXT NOT NULL,  -- JSON: temperature, max_tokens, rubric version
    prompt      TEXT NOT NULL   -- the prompt template itself
);

CREATE TABLE judge_turns (
    judge_id   INTEGER NOT NULL REFERENCES judges (id) ON DELETE CASCADE,
    turn_id    INTEGER NOT NULL REFERENCES turns (id) ON DELETE CASCADE,
    version    TEXT    NOT NULL REFERENCES judge_versions (version),
    rationale  TEXT    NOT NULL,
    tokens_in  INTEGER NOT NULL,
    tokens_out INTEGER NOT NULL,
    requests   INTEGER NOT NULL, -- HTTP attempts, re-asks and retries included
    PRIMARY KEY (judge_id, turn_id)
) WITHOUT ROWID;
