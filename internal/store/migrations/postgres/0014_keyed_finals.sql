-- PostgreSQL twin of ../0014_keyed_finals.sql. The adjudication screen's writes name
-- themselves as the annotator's do (#38, #40): a final value or a flag clearing retried after
-- a lost COMMIT reply finds its op_key in final_changes and is not applied twice, and a
-- retried undo finds what it reverted by its undone_by instead of undoing the change before it.
ALTER TABLE final_changes ADD COLUMN op_key TEXT COLLATE "C";
ALTER TABLE final_changes ADD COLUMN undone_by TEXT COLLATE "C";

-- The key of the last write to an annotation. A write that changes nothing (a skip of an item
-- already last, a value set to what it is) logs no change to carry its key, yet adds its
-- active time: a retry of it finds its key here and adds that time only once.
ALTER TABLE annotations ADD COLUMN last_op_key TEXT COLLATE "C";
