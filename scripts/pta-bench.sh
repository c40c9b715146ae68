#!/usr/bin/env bash
# Andersen's analysis by the grail program beside the sequential reference, as a markdown
# table (the benchmark notes' PTA rows come from it).
#
#   scripts/pta-bench.sh [--grail BIN] [--targets "cpu gpu"] [--collapse on|off] [--out DIR] PROGRAM.ll|PROGRAM.cons...
#
# Each input is extracted first when it is LLVM IR (`grail pta extract`), then solved by
# `grail pta solve --target T --verify --json` on each target: --verify solves it again with
# the sequential reference and requires the same sets, and checks every constraint holds. The
# table gives the program's size (variables, constraints, points-to facts), the reference's
# time, the grail program's run (`program_ms`: compiling and building the constraint graph
# excluded; on a GPU the copies included) with its kernels' share, its rounds and epochs (runs
# of the program, cycles of copy edges collapsed between them: `--collapse`), and the ratio.
# Needs python3 (to read the JSON).
set -euo pipefail

grail=target/release/grail
targets="cpu gpu"
collapse=on
out=""
inputs=()
while [[ $# -gt 0 ]]; do
    case "$1" in
        --grail) grail=$2; shift 2 ;;
        --targets) targets=$2; shift 2 ;;
        --collapse) collapse=$2; shift 2 ;;
        --out) out=$2; shift 2 ;;
        -h|--help) sed -n '2,11p' "$0"; exit 0 ;;
        -*) echo "error: unknown option $1 (see --help)" >&2; exit 2 ;;
        *) inputs+=("$1"); shift ;;
    esac
done
if [[ ${#inputs[@]} -eq 0 ]]; then
    echo "error: name at least one program (.ll or .cons); see --help" >&2
    exit 2
fi
out=${out:-$(mktemp -d)}
mkdir -p "$out"

echo "| program | variables | constraints | facts | target | reference ms | grail ms | of which kernels | rounds | epochs | collapsed | reference / grail |"
echo "| --- | --: | --: | --: | --- | --: | --: | --: | --: | --: | --: | --: |"
for input in "${inputs[@]}"; do
    name=$(basename "${input%.*}")
    cons=$input
    if [[ $input == *.ll ]]; then
        cons="$out/$name.cons"
        "$grail" -q pta extract "$input" -o "$cons" 2>"$out/$name.extract.txt"
    fi
    for target in $targets; do
        json="$out/$name.$target.json"
        if ! "$grail" -q pta solve "$cons" --target "$target" --collapse "$collapse" --verify --json -o "$out/$name.$target.pts" \
            >"$json" 2>"$json.err"; then
            echo "| $name | | | | $target | | failed: $(tail -1 "$json.err") | | | | | |"
            continue
        fi
        python3 - "$json" "$name" "$target" <<'PY'
import json, sys
path, name, target = sys.argv[1:]
r = json.load(open(path))
grail, reference = r["program_ms"], r["reference_ms"]
kernels = f"{r['kernels_ms']:,.1f}" if r.get("kernels_ms") is not None else ""
print(f"| {name} | {r['variables']:,} | {r['constraints']:,} | {r['facts']:,} | {target} | {reference:,.1f} | "
      f"{grail:,.1f} | {kernels} | {r['rounds']} | {r['epochs']} | {r['collapsed']:,} | {reference / max(grail, 1e-6):.1f}x |")
PY
    done
done
