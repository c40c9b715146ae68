#!/usr/bin/env bash
# Several devices against one: each suite algorithm on one GPU (--target gpu) and partitioned over
# the listed device sets (--devices, bulk-synchronous), every result verified, best of REPEAT.
# Prints one row per run: the run's time, the share spent synchronizing, edges cut.
#
#   scripts/multi-bench.sh GRAIL_BINARY OUT_DIR "GRAPH_FILES" "DEVICE_LISTS" "PARTITIONS" [REPEAT]
#
# e.g. scripts/multi-bench.sh target/release/grail out "road22.gcsr kron21.gcsr" "gpu:0,gpu:1" "metis ordered" 3
set -euo pipefail
grail="$1" out="$2" graphs="$3" lists="$4" partitions="$5" repeat="${6:-3}"
mkdir -p "$out"
best() { # prints the smallest time_ms of REPEAT runs of the command, and keeps the last JSON
    local json="$1" t best=""
    shift
    for _ in $(seq "$repeat"); do
        "$@" --verify --json >"$json"
        t=$(grep -o '"time_ms": [0-9.]*' "$json" | head -1 | awk '{print $2}')
        if [[ -z "$best" ]] || awk "BEGIN{exit !($t < $best)}"; then best=$t; fi
    done
    echo "$best"
}
printf "%-14s %-5s %-22s %-8s %10s %8s %8s\n" graph algo devices split time_ms sync% cut%
for graph in $graphs; do
    name=$(basename "$graph" .gcsr)
    for algo in bfs sssp cc pr; do
        one=$(best "$out/$name.$algo.gpu.json" "$grail" -q run "$algo" -g "$graph" --target gpu --variant "$(
            "$grail" -q run "$algo" -g "$graph" --devices cpu --partition ranges --json 2>/dev/null | grep -o '"variant": "[a-z0-9]*"' | cut -d'"' -f4)")
        printf "%-14s %-5s %-22s %-8s %10.2f %8s %8s\n" "$name" "$algo" "gpu (one)" "-" "$one" "-" "-"
        for list in $lists; do
            for split in $partitions; do
                json="$out/$name.$algo.${list//[^a-z0-9]/_}.$split.json"
                t=$(best "$json" "$grail" -q run "$algo" -g "$graph" --devices "$list" --partition "$split")
                sync=$(grep -o '"sync_ms": [0-9.]*' "$json" | awk '{print $2}')
                cut=$(grep -o '"edge_cut": [0-9.e-]*' "$json" | awk '{print $2}')
                printf "%-14s %-5s %-22s %-8s %10.2f %8.1f %8.1f\n" "$name" "$algo" "$list" "$split" "$t" \
                    "$(awk "BEGIN{print 100*$sync/$t}")" "$(awk "BEGIN{print 100*$cut}")"
            done
        done
    done
done
