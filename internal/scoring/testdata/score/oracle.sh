#!/bin/sh
# Reference values of score_test.go; run in this folder after gen.py.
set -e
/usr/bin/python3 ../../../../../shared/oracle/oracle.py ratings.csv --auto auto_gpt.csv --schema schema.json -o oracle_gpt.json
/usr/bin/python3 ../../../../../shared/oracle/oracle.py ratings.csv --auto auto_rules.csv --schema schema.json -o oracle_rules.json
/usr/bin/python3 ../../../../../shared/oracle/oracle.py ratings.csv --auto auto_gpt.csv --schema schema_na.json --na-category -o oracle_gpt_na.json
/usr/bin/python3 ../../../../../shared/oracle/oracle.py ratings.csv --auto auto_gpt.csv --schema schema.json --bootstrap 1000 --seed 12345 -o oracle_gpt_boot.json
/usr/bin/python3 ../../../../../shared/oracle/oracle.py ratings_follow_up.csv --auto auto_gpt.csv --schema schema.json -o oracle_gpt_follow_up.json
/usr/bin/python3 ../../../../../shared/oracle/oracle.py ratings_guidance.csv --auto auto_gpt.csv --schema schema.json -o oracle_gpt_guidance.json
/usr/bin/python3 ../../../../../shared/oracle/oracle.py ratings_initial.csv --auto auto_gpt.csv --schema schema.json -o oracle_gpt_initial.json
/usr/bin/python3 ../../../../../shared/oracle/oracle.py ratings_memory_injection.csv --auto auto_gpt.csv --schema schema.json -o oracle_gpt_memory_injection.json
/usr/bin/python3 ../../../../../shared/oracle/oracle.py ratings_mislead.csv --auto auto_gpt.csv --schema schema.json -o oracle_gpt_mislead.json
/usr/bin/python3 ../../../../../shared/oracle/oracle.py ratings_mislead_subtle.csv --auto auto_gpt.csv --schema schema.json -o oracle_gpt_mislead_subtle.json
