-- Every table that refers to a turn with ON DELETE CASCADE gets an index that starts with
-- turn_id: removing a failed import's turns otherwise scans these tables once per deleted
-- turn (500 turns: 4.39 s with judge scores present, 0.15 s with the indexes), holding the
-- write lock while annotators wait (#38). annotations, gold_labels, final_labels and
-- final_changes have theirs already.
CREATE INDEX IF NOT EXISTS judge_scores_by_turn ON judge_scores (turn_id);
CREATE INDEX IF NOT EXISTS judge_turns_by_turn ON judge_turns (turn_id);
CREATE INDEX IF NOT EXISTS sample_turns_by_turn ON sample_turns (turn_id);
CREATE INDEX IF NOT EXISTS assignments_by_turn ON assignments (turn_id);

-- A write the annotator's screen retries after a lost COMMIT reply names itself (op_key), and
-- an undo marks what it reverted with its own key (undone_by): a retry whose key is already
-- in the change log is not applied twice (an undo retried after its COMMIT landed undid the
-- batch before it too: #38).
ALTER TABLE changes ADD COLUMN op_key TEXT;
ALTER TABLE changes ADD COLUMN undone_by TEXT;
