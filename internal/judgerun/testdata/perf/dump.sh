#!/bin/bash
# dump.sh DB: every score of every judge, by sample and field (compare two runs' dumps).
sqlite3 "$1" "SELECT t.sample_id, j.name, s.field, s.value, s.rule_version FROM judge_scores s
  JOIN turns t ON t.id = s.turn_id JOIN judges j ON j.id = s.judge_id ORDER BY t.sample_id, s.field"
