-- Labels made on earlier content of a turn that `m3eval import --replace` changed. Such a label
-- is kept, as a draft with stale = 1: out of `score` (drafts included or not) and out of the
-- annotator's "done" until re-confirmed (submitting it clears the mark).
ALTER TABLE annotations ADD COLUMN stale INTEGER NOT NULL DEFAULT 0;
