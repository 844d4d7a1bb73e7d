#!/bin/bash
# The 4-host ring on rig H's links (500 Mbit/s tbf, 72000 B burst), one rank per host,
# 1 MiB exchanges; while it runs, the TCP state of host h0's connections (ss -tin,
# every 0.1 s, 40 samples). Run from hopsim's source folder as root on an idle machine:
#     bash docs/validation/rigs-idle/ring-race/measure.sh
# Writes run/ (hopsim live's result) and ss-h0.txt (the cluster subnet's connections).
set -euo pipefail
here=$(dirname "$0")
rm -rf "$here/run"
.venv/bin/hopsim live --workload exchange --ranks 4 --ranks-per-node 1 --emulate-cluster 4 \
    --link-rate 500mbit --burst 72000 --sizes 1048576 --repetitions 300 --out "$here/run" \
    > /dev/null &
live=$!
sleep 6   # past the cluster's set-up and MPI's start
ns=$(ip netns list | awk '$1 ~ /-h0$/ {print $1; exit}')
for _ in $(seq 40); do
    echo "== $(date +%s.%N)"
    # The connections on the cluster's subnet (MPI's and its runtime's; summarize.py keeps
    # the ones that moved the data), each with its TCP state line.
    ip netns exec "$ns" ss -tin state established | grep -A1 -E '^[0-9]+ +[0-9]+ +10\.' \
        | grep -v '^--$' || true
    sleep 0.1
done > "$here/ss-h0.txt"
wait "$live"
