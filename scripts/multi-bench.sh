#!/usr/bin/env bash
# The several-devices benchmark (the scaling curve of the benchmark notes): every algorithm of
# the several-devices issue over 2, 3, ... all GPUs of this machine beside one GPU, verified.
#
#   scripts/multi-bench.sh [--grail BIN] [--graphs "road:24 kron:22"] [--algorithms pr,bfs,sssp,cc]
#                          [--modes bsp,async] [--partition ordered[,metis]] [--repeat N] [--out DIR]
#                          [--opt CONFIG] [--topology direct|ring] [--workers fused[,host]]
#
# First a verified run of each algorithm over every GPU list on small graphs (an R-MAT graph of
# 2^16 nodes and a road network of 2^17), with the GPU-region exchange forced on and off
# (`GRAIL_PEER_REGIONS=1|0`), then, per graph, `grail bench multi --baseline gpu` with the
# lists 2, 3, ... GPUs (each result verified by the command; the asynchronous rows once per
# worker: the fused worker kernel and the host-driven loop), its table printed and its
# speedups drawn (`--plot`) as DIR/speedups-GRAPH.svg. METIS is added to the splits where the
# system's library can be loaded. Exits non-zero when a run fails verification.
set -euo pipefail

grail=target/release/grail
graphs="road:24 kron:22"
algorithms="pr,bfs,sssp,cc"
modes="bsp,async"
partition=""
repeat=2
opt=tuned
topology=direct
workers=fused,host
out=""
while [[ $# -gt 0 ]]; do
    case "$1" in
        --grail) grail=$2; shift 2 ;;
        --graphs) graphs=$2; shift 2 ;;
        --algorithms) algorithms=$2; shift 2 ;;
        --modes) modes=$2; shift 2 ;;
        --partition) partition=$2; shift 2 ;;
        --repeat) repeat=$2; shift 2 ;;
        --opt) opt=$2; shift 2 ;;
        --topology) topology=$2; shift 2 ;;
        --workers) workers=$2; shift 2 ;;
        --out) out=$2; shift 2 ;;
        -h|--help) sed -n '2,15p' "$0"; exit 0 ;;
        *) echo "error: unknown argument $1 (see --help)" >&2; exit 2 ;;
    esac
done
out=${out:-$(mktemp -d)}
mkdir -p "$out"

gpus=$("$grail" devices 2>/dev/null | grep -c '^device ' || true)
if [[ $gpus -lt 2 ]]; then
    echo "error: this machine has $gpus GPU(s); the several-devices benchmark needs 2 or more" >&2
    exit 1
fi
lists=()
for ((k = 2; k <= gpus; k++)); do
    list=$(seq -s, 0 $((k - 1)) | sed "s/\([0-9][0-9]*\)/gpu:\1/g")
    lists+=("$list")
done
if [[ -z $partition ]]; then
    partition=ordered
    "$grail" -q gen rmat --scale 10 -o "$out/probe.gcsr" >/dev/null
    if "$grail" -q partition "$out/probe.gcsr" -k 2 -m metis >/dev/null 2>&1; then partition=ordered,metis; fi
fi

echo "== verified runs over ${lists[*]}"
"$grail" -q gen rmat --scale 16 --max-weight 100 -o "$out/kron16.gcsr" >/dev/null
"$grail" -q gen road --nodes 131072 -o "$out/road17.gcsr" >/dev/null
failed=0
for graph in kron16 road17; do
    for devices in "${lists[@]}"; do
        for regions in 0 1; do
            for algo in ${algorithms//,/ }; do
                log="$out/verify.$graph.$algo.${devices//[^a-z0-9]/_}.$regions.txt"
                if GRAIL_PEER_REGIONS=$regions timeout 300 "$grail" -q run "$algo" -g "$out/$graph.gcsr" \
                    --devices "$devices" --partition ordered --opt "$opt" --verify >"$log" 2>&1; then
                    echo "ok    $algo on $graph over $devices (GRAIL_PEER_REGIONS=$regions)"
                else
                    echo "FAIL  $algo on $graph over $devices (GRAIL_PEER_REGIONS=$regions): $(tail -1 "$log")"
                    failed=1
                fi
            done
        done
    done
done

device_args=()
for devices in "${lists[@]}"; do device_args+=(--devices "$devices"); done
for graph in $graphs; do
    echo "== grail bench multi --graphs $graph (best of $repeat, every result verified)"
    if ! "$grail" -q bench multi --graphs "$graph" --algorithms "$algorithms" "${device_args[@]}" --baseline gpu \
        --modes "$modes" --topology "$topology" --workers "$workers" --partition "$partition" --repeat "$repeat" \
        --opt "$opt" --plot "$out/speedups-${graph//:/}.svg"; then
        failed=1
    fi
done
echo "charts and logs in $out"
exit $failed
