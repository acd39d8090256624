-- Turns, annotators and their annotations, with the change history that makes undo survive a
-- restart. Queue order is (episode_id, turn): episodes in the order they were first imported.

CREATE TABLE episodes (
    id          INTEGER PRIMARY KEY,
    episode_key TEXT NOT NULL UNIQUE
);

CREATE TABLE turns (
    id              INTEGER PRIMARY KEY,
    sample_id       TEXT    NOT NULL UNIQUE,
    episode_id      INTEGER NOT NULL REFERENCES episodes (id),
    turn            INTEGER NOT NULL CHECK (turn >= 1),
    action_type     TEXT    NOT NULL,
    task_type       TEXT    NOT NULL,
    user_message    TEXT    NOT NULL,
    vlm_response    TEXT    NOT NULL,
    expected_answer TEXT    NOT NULL,
    images          TEXT    NOT NULL, -- JSON array of paths or URLs
    model           TEXT    NOT NULL,
    meta            TEXT,             -- the record's meta object as given, NULL when absent
    content_hash    BLOB    NOT NULL,
    UNIQUE (episode_id, turn)
);

-- The queue filter seeks by action type, then walks in queue order.
CREATE INDEX turns_by_action_type ON turns (action_type, episode_id, turn);

CREATE TABLE annotators (
    id   INTEGER PRIMARY KEY,
    name TEXT NOT NULL UNIQUE
);

-- Every rubric an annotation was made under, by content hash.
CREATE TABLE rubrics (
    version TEXT PRIMARY KEY,
    body    BLOB NOT NULL
);

CREATE TABLE annotations (
    id             INTEGER PRIMARY KEY,
    turn_id        INTEGER NOT NULL REFERENCES turns (id) ON DELETE CASCADE,
    annotator_id   INTEGER NOT NULL REFERENCES annotators (id),
    status         TEXT    NOT NULL DEFAULT 'draft' CHECK (status IN ('draft', 'done')),
    flagged        INTEGER NOT NULL DEFAULT 0,
    flag_reason    TEXT    NOT NULL DEFAULT '',
    skip_seq       INTEGER,          -- set once skipped: the item moves to the end of the queue
    rubric_version TEXT    NOT NULL,
    active_ms      INTEGER NOT NULL DEFAULT 0,
    created_at     TEXT    NOT NULL,
    updated_at     TEXT    NOT NULL,
    annotated_at   TEXT,             -- submission time of done annotations
    UNIQUE (annotator_id, turn_id)
);
CREATE INDEX annotations_by_turn ON annotations (turn_id);
CREATE INDEX annotations_by_status ON annotations (annotator_id, status, active_ms);
CREATE INDEX annotations_skipped ON annotations (annotator_id, skip_seq) WHERE skip_seq IS NOT NULL;

CREATE TABLE annotation_values (
    annotation_id INTEGER NOT NULL REFERENCES annotations (id) ON DELETE CASCADE,
    field         TEXT    NOT NULL,
    value         TEXT    NOT NULL,
    PRIMARY KEY (annotation_id, field)
) WITHOUT ROWID;

-- One row per change an annotator made, newest last; undo walks it backwards.
CREATE TABLE changes (
    id            INTEGER PRIMARY KEY,
    annotation_id INTEGER NOT NULL REFERENCES annotations (id) ON DELETE CASCADE,
    batch         INTEGER NOT NULL, -- the changes of one key press share a batch; undo reverts a batch
    kind          TEXT    NOT NULL CHECK (kind IN ('value', 'flag', 'status')),
    field         TEXT    NOT NULL DEFAULT '',
    old_value     TEXT,             -- NULL: unset
    new_value     TEXT,
    at            TEXT    NOT NULL,
    undone        INTEGER NOT NULL DEFAULT 0
);
CREATE INDEX changes_by_annotation ON changes (annotation_id, undone, batch);
