#!/bin/bash
# IMB Exchange on emulated clusters whose tbf burst is just under or just over one 64 KiB
# TCP packet (docs/validation/rigs-idle/gso-burst/README.md). Usage:
#   bash measure.sh IMB-MPI1 OUTDIR
# Every run's IMB table (sizes from 64 KiB) goes to OUTDIR/<rate>-<burst>-<hosts>-<how>-t<trial>.txt.
set -u
imb=$1; out=$2; mkdir -p "$out"
run() {  # rate burst hosts how trial
    local f="$out/$1-$2-$3-$4-t$5.txt"
    [ -s "$f" ] && return
    local extra=""; [ "$3" = 2 ] && extra="--mca mpi_yield_when_idle 1"
    if [ "$4" = pairs ]; then  # two 2-host clusters at once, each its own bridge
        for i in a b; do
            hopsim live --workload exchange --ranks 2 --emulate-cluster 2 --link-rate "$1" \
                --burst "$2" --tool imb --tool-path "$imb" --sizes 131072,1048576 \
                --mca mpi_yield_when_idle 1 > "$f.$i" 2>&1 &
        done
        wait
        { echo "# cluster a"; grep -E '^ +[0-9]+ +[0-9]+ ' "$f.a" | awk '$1>=65536'
          echo "# cluster b"; grep -E '^ +[0-9]+ +[0-9]+ ' "$f.b" | awk '$1>=65536'; } > "$f"
        rm -f "$f.a" "$f.b"
    else
        hopsim live --workload exchange --ranks "$3" --emulate-cluster "$3" --link-rate "$1" \
            --burst "$2" --tool imb --tool-path "$imb" --sizes 131072,1048576 $extra 2>&1 \
            | grep -E '^ +[0-9]+ +[0-9]+ ' | awk '$1>=65536' > "$f"
    fi
    echo "$(date -u +%H:%M:%S) load $(cut -d' ' -f1 /proc/loadavg) $f: $(awk '$1==1048576{print $5}' "$f" | tr '\n' ' ')"
}
for t in 1 2 3; do
    for rb in "500mbit 65536" "500mbit 72000" "1gbit 65536" "1gbit 72000" "250mbit 32768" "250mbit 72000"; do
        set -- $rb
        run $1 $2 2 ring $t
        run $1 $2 4 ring $t
    done
    run 500mbit 65536 4 pairs $t
    run 500mbit 72000 4 pairs $t
done
