-- The rule-based judge (m3eval judge) records, with every score, the version of the rule set
-- that made it, and keeps each rule set's text, so a score can always be traced to its rules
-- and a changed rule set re-scores only when asked to (--replace). Scores imported with
-- import-scores have no rule version (NULL).

ALTER TABLE judge_scores ADD COLUMN rule_version TEXT;

CREATE TABLE judge_rule_sets (
    version TEXT PRIMARY KEY,
    body    BLOB NOT NULL
);
