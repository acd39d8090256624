#!/bin/bash
# run.sh BIN SRC.db LABEL: m3eval judge on a fresh copy of SRC.db (RUN-LABEL.db), with its wall
# time, user and system CPU seconds and maximum resident set size (/usr/bin/time), and the load
# average before and after: the machine these figures come from is shared.
set -u
bin=$1 src=$2 label=$3
cp "$src" "run-$label.db"
rm -f "run-$label.db-wal" "run-$label.db-shm"
l0=$(cut -d' ' -f1-3 /proc/loadavg)
/usr/bin/time -f "%e %U %S %M" -o "time-$label.txt" "$bin" --db "run-$label.db" judge --quiet > "out-$label.txt" 2>&1
rc=$?
l1=$(cut -d' ' -f1-3 /proc/loadavg)
read -r e u s m < "time-$label.txt"
echo "$label rc=$rc wall=${e}s cpu=$(echo "$u+$s" | bc)s (user $u, sys $s) rss=${m}KB load=[$l0]→[$l1]"
