#!/usr/bin/env bash
# Survey propagation by the grail program on random k-SAT, as a markdown table (the benchmark
# notes' SP rows come from it).
#
#   scripts/sp-bench.sh [--grail BIN] [--targets "gpu cpu"] [--seed S] [--timeout S] [--out DIR] [--opt CONFIG] VARS:RATIO:K...
#
# For each VARS:RATIO:K it generates the formula (`grail gen sat --seed S`), runs `grail sp
# --target T --verify --json` on each target and prints the outcome (an assignment found and
# verified, or why not), the variables fixed by the surveys, the sweeps and decimation steps,
# and the times: the grail program's (on a GPU also its kernels'), split into the surveys with
# decimation and the program's own local search (its rounds, then its time), the host's local
# search on what is left, and the whole run. --opt passes an optimization configuration to
# `grail sp` (default: its own). Needs python3 (to read the JSON).
set -euo pipefail

grail=target/release/grail
targets="gpu cpu"
seed=1
timeout_s=900
out=""
opt=()
specs=()
while [[ $# -gt 0 ]]; do
    case "$1" in
        --grail) grail=$2; shift 2 ;;
        --targets) targets=$2; shift 2 ;;
        --seed) seed=$2; shift 2 ;;
        --timeout) timeout_s=$2; shift 2 ;;
        --out) out=$2; shift 2 ;;
        --opt) opt=(--opt "$2"); shift 2 ;;
        -h|--help) sed -n '2,13p' "$0"; exit 0 ;;
        -*) echo "error: unknown option $1 (see --help)" >&2; exit 2 ;;
        *)
            if ! [[ $1 =~ ^[0-9]+:[0-9.]+:[3-6]$ ]]; then
                echo "error: $1: expected VARS:RATIO:K, e.g. 1000000:4.2:3" >&2
                exit 2
            fi
            specs+=("$1"); shift ;;
    esac
done
if [[ ${#specs[@]} -eq 0 ]]; then
    echo "error: name at least one formula as VARS:RATIO:K; see --help" >&2
    exit 2
fi
out=${out:-$(mktemp -d)}
mkdir -p "$out"

echo "| variables | ratio | k | target | outcome | fixed by surveys | sweeps | steps | program s | kernels s | surveys s | search rounds | search s | host search s | total s |"
echo "| --: | --: | --: | --- | --- | --: | --: | --: | --: | --: | --: | --: | --: | --: | --: |"
for spec in "${specs[@]}"; do
    IFS=: read -r vars ratio k <<<"$spec"
    cnf="$out/sat-$vars-$ratio-$k.cnf"
    [[ -f $cnf ]] || "$grail" -q gen sat --vars "$vars" --ratio "$ratio" --k "$k" --seed "$seed" -o "$cnf" >/dev/null
    for target in $targets; do
        json="$out/sp-$vars-$ratio-$k.$target.json"
        set +e
        timeout "$timeout_s" "$grail" -q sp "$cnf" --target "$target" --seed "$seed" "${opt[@]}" --verify --json >"$json" 2>"$json.err"
        code=$?
        set -e
        if [[ $code -ne 0 && $code -ne 4 ]]; then
            echo "| $vars | $ratio | $k | $target | failed (exit $code): $(tail -1 "$json.err") | | | | | | | | | | |"
            continue
        fi
        python3 - "$json" "$vars" "$ratio" "$k" "$target" <<'PY'
import json, sys
path, vars_, ratio, k, target = sys.argv[1:]
r = json.load(open(path))
s = lambda ms: "" if ms is None else f"{ms / 1e3:.2f}"
outcome = "satisfied, verified" if r["satisfied"] and r.get("verified") else r["status"]
walksat = r.get("walksat_ms")
# The program's local search: its outlined pipe (the only pipe in sp.grail), or its kernels
# where nothing was outlined.
SEARCH = ("guesses", "unsatisfied", "pick", "flip", "stop")
search = sum(k["ms"] for k in r.get("kernels", []) if k["name"].startswith("pipe#") or k["name"] in SEARCH)
program = r.get("program_ms")
surveys = None if program is None else program - search
print(f"| {int(vars_):,} | {ratio} | {k} | {target} | {outcome} | {r['vars_fixed_by_sp']:,} | "
      f"{r['survey_sweeps']:,} | {r['decimation_steps']} | {s(program)} | {s(r.get('kernels_ms'))} | "
      f"{s(surveys)} | {r.get('search_rounds') or 0:,} | {s(search)} | {s(walksat)} | {s(r['time_ms'])} |")
PY
    done
done
