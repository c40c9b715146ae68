#!/usr/bin/env bash
# Incremental SSSP against SSSP from scratch, as a markdown table (the benchmark notes' dsssp
# rows come from it).
#
#   scripts/dsssp-bench.sh [--grail BIN] [--targets "cpu gpu"] [--batches K] [--sizes "0.1% 1%"]
#                          [--out DIR] GRAPH...
#
# For each GRAPH (a file, or `rmat:S` / `road:S` to generate a graph of 2^S nodes with integer
# weights) and each batch size, it runs `grail dsssp --random-batches K --batch-size SIZE
# --verify --json` on each target: every batch is inserted, the distances repaired, the graph
# solved again from scratch by the suite's SSSP program on the same target, and both checked
# against Dijkstra's. The table gives the median over the batches of the repair's and the fresh
# run's computing time (on a GPU the kernels' time) and their ratio; the same for the whole runs
# (on a GPU each run with its inputs taken on the device and the distances left there; on the
# CPU the program's run with its inputs filled); and the batch's insertion into the graph (on
# the host, and on a GPU into the graph on the device too), which both runs need, with the
# ratio of the whole steps counting it in both. Needs python3 (to read the JSON).
set -euo pipefail

grail=target/release/grail
targets="cpu gpu"
batches=3
sizes="0.1% 1%"
out=""
graphs=()
while [[ $# -gt 0 ]]; do
    case "$1" in
        --grail) grail=$2; shift 2 ;;
        --targets) targets=$2; shift 2 ;;
        --batches) batches=$2; shift 2 ;;
        --sizes) sizes=$2; shift 2 ;;
        --out) out=$2; shift 2 ;;
        -h|--help) sed -n '2,14p' "$0"; exit 0 ;;
        -*) echo "error: unknown option $1 (see --help)" >&2; exit 2 ;;
        *) graphs+=("$1"); shift ;;
    esac
done
if [[ ${#graphs[@]} -eq 0 ]]; then
    echo "error: name at least one graph (a file, rmat:S or road:S); see --help" >&2
    exit 2
fi
out=${out:-$(mktemp -d)}
mkdir -p "$out"

echo "| graph | nodes | edges | target | batch | repair ms | from scratch ms | ratio | repair, whole run ms | from scratch, whole run ms | whole-run ratio | insertion ms | step ratio (insertion in both) |"
echo "| --- | --: | --: | --- | --: | --: | --: | --: | --: | --: | --: | --: | --: |"
for spec in "${graphs[@]}"; do
    case "$spec" in
        rmat:*) file="$out/rmat${spec#rmat:}.gcsr"
            [[ -f $file ]] || "$grail" -q gen rmat --scale "${spec#rmat:}" --max-weight 255 --seed 1 -o "$file" >/dev/null ;;
        road:*) file="$out/road${spec#road:}.gcsr"
            [[ -f $file ]] || "$grail" -q gen road --nodes $((1 << ${spec#road:})) --seed 1 -o "$file" >/dev/null ;;
        *) file=$spec ;;
    esac
    for target in $targets; do
        for size in $sizes; do
            json="$out/$(basename "$file").$target.${size%\%}.json"
            if ! "$grail" -q dsssp --graph "$file" --source max-degree --target "$target" --random-batches "$batches" \
                --batch-size "$size" --verify --json >"$json" 2>"$json.err"; then
                echo "| $spec | | | $target | $size | failed: $(tail -1 "$json.err") | | | | | | | |"
                continue
            fi
            python3 - "$json" "$spec" "$target" "$size" <<'PY'
import json, statistics, sys
path, spec, target, size = sys.argv[1:]
r = json.load(open(path))
b = r["batches"]
med = lambda key: statistics.median(x[key] for x in b)
repair, fresh = med("update_ms"), med("fresh_ms")
run_repair, run_fresh = med("update_total_ms"), med("fresh_total_ms")
ratio = lambda a, b: f"{a / max(b, 1e-6):.1f}x"
# The batch inserted into the graph (on the host, and on a GPU into its copy there too), which a
# step of either kind needs, counted in both.
inserting = lambda x: x["merge_ms"] + x["insert_ms"]
insert = f"{statistics.median(inserting(x) for x in b):.2f}"
step = ratio(statistics.median(inserting(x) + x["fresh_total_ms"] for x in b),
             statistics.median(inserting(x) + x["update_total_ms"] for x in b))
print(f"| {spec} | {r['nodes']:,} | {r['edges_before']:,} | {target} | {size} | {repair:.2f} | {fresh:.2f} | "
      f"{ratio(fresh, repair)} | {run_repair:.2f} | {run_fresh:.2f} | {ratio(run_fresh, run_repair)} | {insert} | {step} |")
PY
        done
    done
done
