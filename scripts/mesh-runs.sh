# Sourced by mesh-bench.sh and mesh-ablation.sh: the best of several verified refinements.

# The field `key` of the JSON object in file $1.
field() { python3 -c 'import json, sys; print(json.load(open(sys.argv[1]))[sys.argv[2]])' "$1" "$2"; }

# best_refinement REPEAT TIMEOUT WORK COMMAND...: runs COMMAND (a `grail mesh refine` command line)
# with `--verify --json -o WORK/out` up to REPEAT times, each within TIMEOUT seconds. Sets
# `status` ("yes", or why not: the exit code and the last line of the error) and `best` (the
# fastest run's time_ms), and leaves the fastest run's JSON summary in WORK/best.json.
best_refinement() {
    local repeat=$1 timeout_s=$2 work=$3
    shift 3
    local run code ms
    best=""
    status="yes"
    for ((run = 0; run < repeat; run++)); do
        code=0
        timeout "$timeout_s" "$@" --verify --json -o "$work/out" >"$work/run.json" 2>"$work/err" || code=$?
        if [[ $code -ne 0 ]]; then
            status="no: exit $code ($(tail -1 "$work/err"))"
            [[ $code -eq 124 ]] && status="no: over ${timeout_s} s"
            return 0
        fi
        ms=$(field "$work/run.json" time_ms)
        if [[ -z $best ]] || python3 -c "import sys; sys.exit(0 if float(sys.argv[1]) < float(sys.argv[2]) else 1)" "$ms" "$best"; then
            best=$ms
            cp "$work/run.json" "$work/best.json"
        fi
    done
}

# The kernels' share of the best run (empty off the GPU), to one decimal.
best_kernels() {
    local kernels
    kernels=$(field "$1/best.json" kernel_ms)
    [[ $kernels == None ]] || printf '%.1f' "$kernels"
}
