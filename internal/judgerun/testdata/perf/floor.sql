-- The floor of m3eval judge's writes (#43): the SQL of inserting a judged database's scores
-- again, as a new judge, in one transaction, with the store's pragmas and foreign keys on.
-- sqlite3 FRESH.db < floor.sql, where FRESH.db is the imported database before the judge ran
-- and judged.db (attached below) the same database after `m3eval judge`.
PRAGMA journal_mode=WAL;
PRAGMA foreign_keys=ON;
PRAGMA synchronous=NORMAL;
PRAGMA cache_size=-262144;
ATTACH 'judged.db' AS src;
BEGIN IMMEDIATE;
INSERT INTO judges (name) VALUES ('floor');
INSERT INTO judge_scores (judge_id, turn_id, field, value, rule_version, import_batch)
  SELECT (SELECT id FROM judges WHERE name = 'floor'), turn_id, field, value, rule_version, 7
  FROM src.judge_scores ORDER BY turn_id, field;
COMMIT;
