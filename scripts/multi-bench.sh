#!/usr/bin/env bash
# Several devices against one: each suite algorithm on one GPU (--target gpu) and partitioned over
# the listed device sets (--devices, bulk-synchronous), every result verified, best of REPEAT.
# Prints one row per run: the run's whole time (setup, uploads and the split included), the
# algorithm's own time (one GPU: its kernels; several devices: the supersteps, computing and
# synchronizing), the share of that spent synchronizing, and the edges cut.
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
# A tiny graph with integer weights tells which variant a partitioned run picks (the choice
# depends on the algorithm and the kind of weights only).
"$grail" -q gen rmat --scale 6 --max-weight 10 -o "$out/tiny.gcsr" >/dev/null
printf "%-14s %-5s %-30s %-8s %10s %10s %8s %8s\n" graph algo devices split time_ms algo_ms sync% cut%
for graph in $graphs; do
    name=$(basename "$graph" .gcsr)
    for algo in bfs sssp cc pr; do
        # The variant a partitioned run picks, and one GPU with it and with the default variant.
        variant=$("$grail" -q run "$algo" -g "$out/tiny.gcsr" --devices cpu --partition ranges --json 2>/dev/null |
            grep -o '"variant": "[a-z0-9]*"' | cut -d'"' -f4)
        t=$(best "$out/$name.$algo.gpu.default.json" "$grail" -q run "$algo" -g "$graph" --target gpu)
        default=$(grep -o '"variant": "[a-z0-9]*"' "$out/$name.$algo.gpu.default.json" | cut -d'"' -f4)
        k=$(grep -o '"kernel_ms": [0-9.]*' "$out/$name.$algo.gpu.default.json" | awk '{print $2}')
        printf "%-14s %-5s %-30s %-8s %10.2f %10.2f %8s %8s\n" "$name" "$algo" "gpu:0 (variant $default)" "-" "$t" "$k" "-" "-"
        if [[ "$variant" != "$default" ]]; then
            t=$(best "$out/$name.$algo.gpu.same.json" "$grail" -q run "$algo" -g "$graph" --target gpu --variant "$variant")
            k=$(grep -o '"kernel_ms": [0-9.]*' "$out/$name.$algo.gpu.same.json" | awk '{print $2}')
            printf "%-14s %-5s %-30s %-8s %10.2f %10.2f %8s %8s\n" "$name" "$algo" "gpu:0 (variant $variant)" "-" "$t" "$k" "-" "-"
        fi
        for list in $lists; do
            for split in $partitions; do
                json="$out/$name.$algo.${list//[^a-z0-9]/_}.$split.json"
                t=$(best "$json" "$grail" -q run "$algo" -g "$graph" --devices "$list" --partition "$split")
                sync=$(grep -o '"sync_ms": [0-9.]*' "$json" | awk '{print $2}')
                compute=$(grep -o '"compute_ms": [0-9.]*' "$json" | awk '{print $2}')
                cut=$(grep -o '"edge_cut": [0-9.e-]*' "$json" | awk '{print $2}')
                printf "%-14s %-5s %-30s %-8s %10.2f %10.2f %8.1f %8.1f\n" "$name" "$algo" "$list (variant $variant)" "$split" \
                    "$t" "$(awk "BEGIN{print $compute+$sync}")" "$(awk "BEGIN{print 100*$sync/($compute+$sync)}")" \
                    "$(awk "BEGIN{print 100*$cut}")"
            done
        done
    done
done
