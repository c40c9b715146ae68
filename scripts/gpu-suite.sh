#!/usr/bin/env bash
# The GPU test: runs the whole suite with --target gpu --verify on generated graphs of every
# kind, on a machine with an NVIDIA GPU and a prebuilt release binary (no Rust toolchain, no
# network needed). Prints a table per step and exits non-zero on the first failure.
#
#   scripts/gpu-suite.sh [--quick] [--baseline] [--device N] [--opt CONFIG]... [--steps LIST]
#                        [--multi-graphs LIST] [GRAIL_BINARY] [OUT_DIR]
#
#   --quick     small graphs only, and the sanitizers on four algorithms with every optimization
#   --opt       an optimization configuration to verify every variant under (repeatable; default:
#               none, all, and each optimization alone with every scheduler combination)
#   --baseline  also the baseline table: every algorithm's default variant on kron:22, road:24,
#               grid:20 and urand:23 on the GPU and on the CPU backend (every core), best of 3
#   --steps     only these steps, comma-separated (default: all): device, variants, hubs,
#               sanitizer, unweighted, real, collections, inputs, mesh, dsssp, sp, pta, multi,
#               update, several, ring, routers, sections, errors, baseline (which also needs
#               --baseline). On a machine of four GPUs the whole suite takes longer than one
#               call to a lent machine allows: run it in parts.
#   --multi-graphs  the several-devices steps' graphs, comma-separated (default: kron16,road:
#               R-MAT of 2^16 nodes and a road network of 200,000)
#   GRAIL_BINARY  default: target/release/grail
#   OUT_DIR       where logs and JSON go (default: gpu-suite-out)
#
# Steps: the device self-test (`grail devices`); every variant of every algorithm on small
# graphs of each kind under each --opt configuration, then on graphs of several million edges;
# compute-sanitizer's memcheck and racecheck on every default variant, unoptimized and with
# every optimization, on a small graph (skipped where compute-sanitizer is not installed); the
# real-weighted graphs (SSSP and MST, verified); the collection programs, whose GPU output must
# equal the CPU's; the morph programs; the suite partitioned over GPUs and GPU + CPU
# (`--devices`), both modes, a program's own update functions, routers (`grail pbf`) and
# parallel sections (`grail sections`); the
# error paths (a bad device index, a kernel fault, --checks finding a
# division by zero and a pushed non-node, --timeout stopping a kernel that never ends, a full
# device heap).
set -euo pipefail

quick=0
baseline=0
device=0
positional=()
opts=()
steps=""
multi_graphs=(kron16 road)
known_steps=",device,variants,hubs,sanitizer,unweighted,real,collections,inputs,mesh,dsssp,sp,pta,multi,update,several,ring,routers,sections,errors,baseline,"
while [[ $# -gt 0 ]]; do
    case "$1" in
        --quick) quick=1 ;;
        --baseline) baseline=1 ;;
        --device) device="$2"; shift ;;
        --opt) opts+=("$2"); shift ;;
        --steps)
            steps="$2"; shift
            for s in ${steps//,/ }; do
                [[ $known_steps == *",$s,"* ]] || { echo "error: --steps: no step '$s' (see --help)" >&2; exit 2; }
            done ;;
        --multi-graphs)
            IFS=, read -r -a multi_graphs <<<"$2"; shift
            for g in "${multi_graphs[@]}"; do
                [[ $g == kron16 || $g == road ]] || { echo "error: --multi-graphs: '$g' is not kron16 or road" >&2; exit 2; }
            done ;;
        -h|--help) sed -n '2,34p' "$0"; exit 0 ;;
        *) positional+=("$1") ;;
    esac
    shift
done
grail="${positional[0]:-target/release/grail}"
out="${positional[1]:-gpu-suite-out}"
here="$(cd "$(dirname "$0")/.." && pwd)"
mkdir -p "$out"
[[ -x "$grail" ]] || { echo "error: no grail binary at $grail (build with cargo build --release)" >&2; exit 1; }
export GRAIL_CACHE_DIR="${GRAIL_CACHE_DIR:-${TMPDIR:-/tmp}/grail-gpu-suite-cache}"

failures=0
# want STEP: whether --steps (if given) names STEP.
want() { [[ -z $steps || ",$steps," == *",$1,"* ]]; }
step() { echo; echo "== $*"; }
pass() { echo "   ok: $*"; }
fail() { echo "   FAILED: $*"; failures=$((failures + 1)); }
# expect_exit LABEL STATUS PATTERN LOG COMMAND...: runs COMMAND into LOG; passes when it exits
# with STATUS and LOG matches PATTERN (grep).
expect_exit() {
    local label=$1 want=$2 pattern=$3 log=$4 code
    shift 4
    set +e
    "$@" >"$log" 2>&1
    code=$?
    set -e
    if [[ $code -eq $want ]] && grep -q "$pattern" "$log"; then
        pass "$label: exit $code, $(head -1 "$log")"
    else
        fail "$label (exit $code): $(cat "$log")"
    fi
}


# What several steps share, made whatever steps run.
sanitizer="$(command -v compute-sanitizer || ls /usr/local/cuda/bin/compute-sanitizer 2>/dev/null || true)"

# memcheck_verified NAME JSON COMMAND...: COMMAND (a grail run printing JSON) under memcheck, within
# 300 s; passes when it exits 0 and its JSON says the result was verified.
memcheck_verified() {
    local name=$1 json=$2 code
    shift 2
    set +e
    timeout 300 "$sanitizer" --tool memcheck --error-exitcode 99 "$@" >"$json" 2>&1
    code=$?
    set -e
    if [[ $code -eq 0 ]] && grep -q '"verified": true' "$json"; then
        pass "$name, verified"
    else
        tail -20 "$json"
        fail "$name (exit $code)"
    fi
}
hub_cache="$out/hub-cache"
"$grail" -q gen rmat --scale 10 -o "$out/r10.gcsr" >/dev/null
gpus=$("$grail" devices 2>/dev/null | grep -c '^device ' || true)
device_lists=("gpu:$device,cpu")
if [[ $gpus -ge 2 ]]; then device_lists+=("gpu:0,gpu:1" "all" "gpu:0,gpu:1,cpu"); fi
if [[ $gpus -ge 3 ]]; then device_lists+=("gpu:0,gpu:1,gpu:2"); fi
if [[ $gpus -ge 4 ]]; then device_lists+=("gpu:0,gpu:1,gpu:2,gpu:3" "gpu:0,gpu:1,gpu:2,gpu:3,cpu"); fi
if want multi || want update || want several || want ring || want sections; then
    "$grail" -q gen rmat --scale 16 --max-weight 100 -o "$out/multi.kron16.gcsr" >/dev/null
    "$grail" -q gen road --nodes 200000 -o "$out/multi.road.gcsr" >/dev/null
fi

if want device; then
    step "device $device: driver, NVRTC, self-test"
    if "$grail" devices --device "$device" | tee "$out/devices.txt"; then pass "self-test"; else fail "self-test"; fi
fi

if [[ ${#opts[@]} -eq 0 ]]; then
    opts=(none all "outline=all" "np=tb" "np=wp" "np=fg" "np=tb+wp" "np=tb+fg" "np=wp+fg" "np=tb+wp+fg"
        "coop=warp" "np=tb+fg,coop=block" "all,coop=block" "backoff=on" "ldg=on" "all,block=128" "all,block=1024"
        "all,converge=off" "all,stages=off" "all,layout=columns" "all,adapt=on")
fi

run_suite() { # name graphs config
    local name="$1" graphs="$2" config="$3"
    step "every variant on $graphs with --opt $config (--target gpu, verified)"
    set +e
    "$grail" -q bench suite --targets gpu --device "$device" --all-variants --repeat 1 --graphs "$graphs" \
        --opt "$config" 2>&1 | tee "$out/$name.${config//[^a-z0-9+]/_}.txt"
    local code=${PIPESTATUS[0]}
    set -e
    if [[ $code -eq 0 ]]; then pass "$name with $config"; else fail "$name with $config (exit $code)"; fi
}

if want variants; then
    for config in "${opts[@]}"; do
        run_suite small "kron:12,urand:12,grid:12,road:12" "$config"
    done
    # Worklist loops as one queue (what `grail run --target gpu --mode async` asks for): the
    # variants whose loops allow it run without rounds, the others as usual.
    for config in "all,queue=on,grid=1" "all,queue=on,np=serial,coop=none" "all,queue=on,np=tb,coop=block"; do
        run_suite queue "kron:12,grid:12,road:16" "$config"
    done
    if [[ $quick -eq 0 ]]; then
        for config in none all; do
            run_suite medium "kron:16,urand:16,grid:16,road:16" "$config"
            # Several million edges each: kron:19 has about 16M directed edges, urand:19 16M, road:21
            # 2M nodes; grid:20 1M nodes.
            run_suite large "kron:19,urand:19,grid:20,road:21" "$config"
        done
    fi
fi

if want hubs; then
    # The hub executor (a nested loop of GRAIL_HUB_MIN iterations or more run by the whole grid
    # after its phase) sees only hubs of thousands of edges on the graphs above; compiled with a
    # threshold of 64, every range that long goes through it, in outlined regions and in launches
    # from the host, with pushes aggregated by warp and by block.
    for config in all "all,outline=none" "np=tb,outline=all" "np=tb+fg,coop=block,outline=all"; do
        step "the hub executor forced (GRAIL_HUB_MIN=64): every variant with --opt $config, verified"
        set +e
        GRAIL_CACHE_DIR="$hub_cache" GRAIL_NVRTC_FLAGS="-DGRAIL_HUB_MIN=64" "$grail" -q bench suite --targets gpu \
            --device "$device" --all-variants --repeat 1 --graphs "kron:14,urand:12,road:12" --opt "$config" 2>&1 |
            tee "$out/hubs.${config//[^a-z0-9+]/_}.txt"
        code=${PIPESTATUS[0]}
        set -e
        if [[ $code -eq 0 ]]; then pass "hubs forced with $config"; else fail "hubs forced with $config (exit $code)"; fi
    done
fi

if want sanitizer; then
    step "compute-sanitizer: memcheck and racecheck on a small graph"
    if [[ -z "$sanitizer" ]]; then
        echo "   skipped: compute-sanitizer is not installed"
    else
        "$grail" -q gen rmat --scale 9 --undirected --max-weight 255 -o "$out/san9.gcsr" >/dev/null
        san_algos=(bfs sssp cc pr tri mis mst)
        san_configs=(none all "all,np=tb+wp" "all,np=fg,outline=none" "all,coop=block")
        if [[ $quick -eq 1 ]]; then
            san_algos=(bfs sssp pr tri)
            san_configs=(all "all,coop=block")
        fi
        for algo in "${san_algos[@]}"; do
            for config in "${san_configs[@]}"; do
                for tool in memcheck racecheck; do
                    log="$out/sanitizer.$algo.$tool.${config//[^a-z0-9+]/_}.txt"
                    set +e
                    "$sanitizer" --tool "$tool" --error-exitcode 99 "$grail" -q run "$algo" -g "$out/san9.gcsr" \
                        --target gpu --device "$device" --opt "$config" --verify >"$log" 2>&1
                    code=$?
                    set -e
                    if [[ $code -eq 0 ]]; then
                        pass "$tool $algo --opt $config"
                    else
                        tail -20 "$log"
                        fail "$tool $algo --opt $config (exit $code, log $log)"
                    fi
                done
            done
        done
    fi
fi

if want unweighted; then
    step "unweighted graphs: every edge weighs 1 on the GPU too"
    "$grail" -q gen rmat --scale 12 --undirected -o "$out/unweighted12.gcsr" >/dev/null
    for algo in sssp mst; do
        for config in none all; do
            if "$grail" -q run "$algo" -g "$out/unweighted12.gcsr" --target gpu --device "$device" --opt "$config" --verify \
                >"$out/unweighted.$algo.$config.txt" 2>&1; then
                pass "$algo --opt $config on an unweighted graph"
            else
                fail "$algo --opt $config on an unweighted graph: $(tail -1 "$out/unweighted.$algo.$config.txt")"
            fi
        done
    done
fi

if want real; then
    step "real weights: f32 weights, f64 distances, spanning forests by value"
    "$grail" -q gen rmat --scale 14 --undirected --max-weight 255 -o "$out/int14.wel" >/dev/null
    awk '{ printf "%s %s %.4f\n", $1, $2, $3 / 7.0 }' "$out/int14.wel" >"$out/real14.wel"
    for run in "sssp --variant nf" "sssp --variant wl" "mst"; do
        for config in none all; do
            log="$out/real.${run// /_}.$config.txt"
            # shellcheck disable=SC2086 # the run's words are meant to split
            if "$grail" -q run $run -g "$out/real14.wel" --target gpu --device "$device" --opt "$config" --verify \
                >"$log" 2>&1; then
                pass "$run --opt $config on real weights"
            else
                fail "$run --opt $config on real weights: $(tail -1 "$log")"
            fi
        done
    done
fi

if want collections; then
    step "collection programs: GPU output equals CPU output"
    "$grail" -q gen road --nodes 2048 -o "$out/road11.gcsr" >/dev/null
    for program in triangle_list cells removal compaction split_cells predicates arrays cavities edge_growth node_growth \
        node_removal; do
        file="$here/crates/grail-lang/tests/programs/$program.grail"
        for graph in r10 road11; do
            if "$grail" -q run "$file" -g "$out/$graph.gcsr" --target cpu -o "$out/$program.$graph.cpu" >/dev/null \
                && "$grail" -q run "$file" -g "$out/$graph.gcsr" --target gpu --device "$device" \
                    -o "$out/$program.$graph.gpu" >"$out/$program.$graph.gpu.log" 2>&1; then
                # Elements are added in parallel, so their order differs: compare sorted.
                ok=1
                for cpu_file in "$out/$program.$graph.cpu"*; do
                    # Members hold their group's handle, which depends on the order of adds.
                    [[ ($program == removal || $program == compaction) && $cpu_file == *members* ]] && continue
                    gpu_file="${cpu_file/.cpu/.gpu}"
                    if ! cmp -s <(sort "$cpu_file") <(sort "$gpu_file"); then ok=0; fi
                done
                if [[ $ok -eq 1 ]]; then pass "$program on $graph"; else fail "$program on $graph: outputs differ"; fi
            else
                cat "$out/$program.$graph.gpu.log"
                fail "$program on $graph"
            fi
        done
    done
    # The programs whose exclusive the 3-phase marking can decide, with marks instead of locks: the
    # same output.
    for program in cavities split_cells; do
        for graph in r10 road11; do
            file="$here/crates/grail-lang/tests/programs/$program.grail"
            if "$grail" -q run "$file" -g "$out/$graph.gcsr" --target gpu --device "$device" --opt all,marks=on \
                -o "$out/$program-marks.$graph.gpu" >"$out/$program-marks.$graph.log" 2>&1 \
                && cmp -s <(sort "$out/$program.$graph.cpu"*) <(sort "$out/$program-marks.$graph.gpu"*); then
                pass "$program on $graph with marks"
            else
                cat "$out/$program-marks.$graph.log"
                fail "$program on $graph with marks: outputs differ"
            fi
        done
    done
fi

if want inputs; then
    step "input collections: 300,000 linked elements copied up in bulk, read through their handles"
    seq 0 299999 | awk '{ print 3 * $1, ($1 + 7) % 300000, 0 }' >"$out/links.txt"
    file="$here/crates/grail-lang/tests/programs/linked_input.grail"
    if "$grail" -q run "$file" -g "$out/r10.gcsr" --input "links=$out/links.txt" --target cpu -o "$out/links.cpu" >/dev/null \
        && "$grail" -q run "$file" -g "$out/r10.gcsr" --input "links=$out/links.txt" --target gpu --device "$device" \
            -o "$out/links.gpu" >"$out/links.gpu.log" 2>&1 && cmp -s "$out/links.cpu" "$out/links.gpu"; then
        pass "linked_input: the GPU's output equals the CPU's"
    else
        cat "$out/links.gpu.log"
        fail "linked_input on the GPU"
    fi
fi

if want mesh; then
    step "mesh refinement: dmr on the GPU, verified (a random mesh and a .poly domain with holes)"
    "$grail" -q mesh gen --points 2000 --seed 7 -o "$out/m2k" >/dev/null
    "$grail" -q mesh gen --points 200000 --seed 8 -o "$out/m200k" >/dev/null
    # Locks, then the 3-phase marking (--opt all,marks=on) deciding the cavities' claims.
    for marks in off on; do
        for input in "$out/m2k.node" "$here/examples/meshes/square-with-holes.poly" "$out/m200k.node"; do
            name=$(basename "$input")
            # The first run compiles the program (seconds); a refinement that does not end is a failure.
            if timeout 180 "$grail" -q mesh refine "$input" --target gpu --device "$device" --opt "all,marks=$marks" \
                --verify --json -o "$out/refined-$marks-$name" >"$out/dmr-$marks-$name.json" 2>&1 \
                && grep -q '"verified": true' "$out/dmr-$marks-$name.json"; then
                pass "dmr on $name with marks=$marks: $(grep -o '"triangles_out": [0-9]*' "$out/dmr-$marks-$name.json"), verified"
            else
                cat "$out/dmr-$marks-$name.json"
                fail "dmr on $name with marks=$marks on the GPU"
            fi
        done
    done
    if [[ -n "$sanitizer" ]]; then
        # memcheck checks the device heap the collections grow in; its malloc needs more stack
        # than dmr's frame leaves (see GRAIL_DEVICE_STACK_KIB in the GPU executor).
        GRAIL_DEVICE_STACK_KIB=64 memcheck_verified "memcheck dmr on 2,000 points, the device heap checked" \
            "$out/san-dmr.json" "$grail" -q mesh refine "$out/m2k.node" --target gpu --device "$device" --verify \
            --json -o "$out/san-m2k"
    fi
fi

if want dsssp; then
    step "incremental SSSP: dsssp on the GPU, every batch verified against Dijkstra's and a run from scratch"
    "$grail" -q gen rmat --scale 16 --max-weight 100 --seed 3 -o "$out/dsssp-rmat.gcsr" >/dev/null
    "$grail" -q gen road --nodes 65536 --seed 3 -o "$out/dsssp-road.gcsr" >/dev/null
    for graph in "$out/dsssp-rmat.gcsr" "$out/dsssp-road.gcsr"; do
        for size in 0.1% 2%; do
            name=$(basename "$graph" .gcsr)-${size%\%}
            if timeout 300 "$grail" -q dsssp --graph "$graph" --source max-degree --target gpu --device "$device" \
                --random-batches 4 --batch-size "$size" --verify --json >"$out/$name.json" 2>&1 &&
                grep -q '"verified": true' "$out/$name.json"; then
                pass "dsssp on $name: 4 batches of $size, verified"
            else
                cat "$out/$name.json"
                fail "dsssp on $name on the GPU"
            fi
        done
    done
fi

if want sp; then
    step "survey propagation: sp on the GPU, the assignment verified (3-SAT and 5-SAT near their thresholds)"
    for spec in "20000 4.0 3" "5000 20 5"; do
        read -r vars ratio k <<<"$spec"
        "$grail" -q gen sat --vars "$vars" --ratio "$ratio" --k "$k" --seed 2 -o "$out/sat-$k.cnf" >/dev/null
        if timeout 300 "$grail" -q sp "$out/sat-$k.cnf" --target gpu --device "$device" --verify --json \
            -o "$out/sat-$k.sol" >"$out/sp-$k.json" 2>&1 && grep -q '"verified": true' "$out/sp-$k.json"; then
            pass "sp on $vars variables, k $k, ratio $ratio: $(grep -o '"vars_fixed_by_sp": [0-9]*' "$out/sp-$k.json"), verified"
        else
            cat "$out/sp-$k.json"
            fail "sp on $vars variables, k $k on the GPU"
        fi
    done
    if [[ -n "$sanitizer" ]]; then
        # The program's own local search (compare-and-swap states, kept breaks) under memcheck, for
        # clauses of 3 and 4 literals.
        for spec in "3000 4.1 3" "2000 9 4"; do
            read -r vars ratio k <<<"$spec"
            "$grail" -q gen sat --vars "$vars" --ratio "$ratio" --k "$k" --seed 3 -o "$out/san-sat-$k.cnf" >/dev/null
            memcheck_verified "memcheck sp with the program's search, $vars variables, k $k" "$out/san-sp-$k.json" \
                "$grail" -q sp "$out/san-sat-$k.cnf" --target gpu --device "$device" --search-rounds 1000000 --verify --json
        done
    fi
fi

if want pta; then
    step "points-to analysis: pta on the GPU equals the reference (a ring of 400 functions through a shared table)"
    {
        for f in $(seq 0 399); do
            echo "f$f.p = &f$f.x"
            echo "f$f.q = &malloc@f$f"
            echo "*f$f.q = f$f.p"
            echo "f$f.r = *f$f.q"
            echo "f$(( (f + 1) % 400 )).arg = f$f.r"
            echo "f$f.p = f$f.arg"
            echo "@table = &malloc@f$f"
            if (( f % 7 == 0 )); then echo "f$f.t = *@table"; echo "*f$f.t = f$f.p"; fi
        done
    } >"$out/ring.cons"
    if timeout 300 "$grail" -q pta solve "$out/ring.cons" --target gpu --device "$device" --verify --json \
        -o "$out/ring.pts" >"$out/pta.json" 2>&1 && grep -q '"verified": true' "$out/pta.json"; then
        pass "pta on $(grep -o '"constraints": [0-9]*' "$out/pta.json"), $(grep -o '"facts": [0-9]*' "$out/pta.json"), equal to the reference"
    else
        cat "$out/pta.json"
        fail "pta on the GPU"
    fi
fi

if want multi; then
    step "several devices: the suite partitioned over GPUs (and GPU + CPU), bulk-synchronous and asynchronous, verified"
    partitions=(ordered random)
    if "$grail" -q partition "$out/multi.kron16.gcsr" -k 2 -m metis >/dev/null 2>&1; then
        partitions+=(metis)
    else
        echo "   skipped: METIS partitioning (the system's METIS is not installed; set GRAIL_METIS_LIB)"
    fi
    for graph in "${multi_graphs[@]}"; do
        for devices in "${device_lists[@]}"; do
            for partition in "${partitions[@]}"; do
                for mode in bsp async; do
                    for algo in bfs sssp cc pr; do
                        # pr's (push) loop runs bulk-synchronously in either mode; bfs's asynchronous
                        # runs take its `async` variant.
                        [[ $mode == async && $algo == pr ]] && continue
                        log="$out/multi.$graph.$algo.${devices//[^a-z0-9]/_}.$partition.$mode.txt"
                        if timeout 300 "$grail" -q run "$algo" -g "$out/multi.$graph.gcsr" --devices "$devices" \
                            --partition "$partition" --mode "$mode" --verify >"$log" 2>&1; then
                            pass "$algo on $graph over $devices ($partition, $mode): $(grep -o 'time .*ms' "$log" | head -1)"
                        else
                            tail -5 "$log"
                            fail "$algo on $graph over $devices ($partition, $mode), log $log"
                        fi
                    done
                done
            done
        done
    done

    # CC's union-find joins finished through the host after one and two rounds (on these small
    # graphs the default rule seldom goes there): the parts' gathers and puts on the GPUs.
    for graph in "${multi_graphs[@]}"; do
        for devices in "${device_lists[@]}"; do
            for after in 1 2; do
                for variant in uf afforest-set; do
                    log="$out/multi.$graph.cc-$variant.host$after.${devices//[^a-z0-9]/_}.txt"
                    if GRAIL_HOST_JOIN_AFTER=$after timeout 300 "$grail" -q run cc --variant "$variant" \
                        -g "$out/multi.$graph.gcsr" --devices "$devices" --partition random --verify >"$log" 2>&1; then
                        pass "cc $variant on $graph over $devices (random, host join after $after): $(grep -o 'time .*ms' "$log" | head -1)"
                    else
                        tail -5 "$log"
                        fail "cc $variant on $graph over $devices (random, host join after $after), log $log"
                    fi
                done
            done
        done
    done

    # Variants that read in-neighbours (the parts hold their nodes' in-edges and their ghosts'
    # degrees; bfs's default `do` is in the loop above) and the ordered SSSP without retries.
    for graph in "${multi_graphs[@]}"; do
        for devices in "${device_lists[@]}"; do
            for variant in "pr pull32" "pr pull" "sssp ds"; do
                read -r algo name <<<"$variant"
                log="$out/multi.$graph.$algo-$name.${devices//[^a-z0-9]/_}.txt"
                if timeout 300 "$grail" -q run "$algo" --variant "$name" -g "$out/multi.$graph.gcsr" --devices "$devices" \
                    --partition random --verify >"$log" 2>&1; then
                    pass "$algo $name on $graph over $devices (random): $(grep -o 'time .*ms' "$log" | head -1)"
                else
                    tail -5 "$log"
                    fail "$algo $name on $graph over $devices (random), log $log"
                fi
            done
        done
    done

    # The asynchronous mode's loops as one queue in turns on each GPU part (`--opt all,queue=on`),
    # with the default turn and with turns of 2 us, which end nearly every turn with items left.
    # Lists with the CPU are left out: their GPU part keeps its rounds.
    for graph in "${multi_graphs[@]}"; do
        for devices in "${device_lists[@]}"; do
            [[ $devices == *cpu* ]] && continue
            for algo in bfs sssp; do
                for turn in default 2000; do
                    flags=""
                    [[ $turn == default ]] || flags="-DGRAIL_ASYNC_QUEUE_NS=$turn"
                    log="$out/multi.turns.$graph.$algo.${devices//[^a-z0-9]/_}.$turn.txt"
                    if GRAIL_NVRTC_FLAGS="$flags" timeout 300 "$grail" -q run "$algo" -g "$out/multi.$graph.gcsr" \
                        --devices "$devices" --partition random --mode async --opt all,queue=on --verify >"$log" 2>&1; then
                        pass "$algo on $graph over $devices as queues in turns ($turn ns): $(grep -o 'time .*ms' "$log" | head -1)"
                    else
                        tail -5 "$log"
                        fail "$algo on $graph over $devices as queues in turns ($turn ns), log $log"
                    fi
                done
            done
        done
    done

    if [[ $gpus -ge 2 ]]; then
        # The asynchronous mode's loops in the fused worker kernel (one control kernel per GPU,
        # rings between the GPUs) and driven from the host, both verified; the fused runs must
        # have run on the devices (`device_regions` in the report), not fallen back. CC by label
        # propagation, a worklist loop (its partitioned default, Afforest over a set, has none).
        for worker in 1 0; do
            for graph in "${multi_graphs[@]}"; do
                for partition in ordered random; do
                    for algo in bfs sssp cc; do
                        variant=()
                        [[ $algo == bfs ]] && variant=(--variant async)
                        [[ $algo == cc ]] && variant=(--variant lp)
                        log="$out/multi.worker$worker.$graph.$algo.$partition.json"
                        if GRAIL_FUSED_WORKER=$worker timeout 120 "$grail" -q run "$algo" "${variant[@]}" \
                            -g "$out/multi.$graph.gcsr" --devices all --partition "$partition" --mode async \
                            --verify --json >"$log" 2>&1 &&
                            { [[ $worker == 0 ]] || grep -q '"device_regions": [1-9]' "$log"; }; then
                            pass "$algo on $graph over all GPUs ($partition, async, GRAIL_FUSED_WORKER=$worker): $(grep -o '"time_ms": [0-9.]*' "$log" | tail -1)"
                        else
                            tail -5 "$log"
                            fail "$algo on $graph over all GPUs ($partition, async, GRAIL_FUSED_WORKER=$worker), log $log"
                        fi
                    done
                done
            done
        done

        # The fused worker while another process loads every GPU (each part's rings must be
        # zeroed before any other part writes into them), every other run with a wait between
        # reading how far a sender has published its nodes and its records
        # (GRAIL_ASYNC_STRESS_NS): BFS in random parts, which gave wrong levels in two of seven
        # such runs over four H200s before both orders were enforced.
        stress_graph=${multi_graphs[-1]}
        load_stop="$out/multi.load.stop"
        rm -f "$load_stop"
        (while [[ ! -f $load_stop ]]; do
            "$grail" -q run pr -g "$out/multi.$stress_graph.gcsr" --devices all --partition random >/dev/null 2>&1 || true
        done) &
        load_pid=$!
        # fused_on_every_gpu WHAT LOG ALGO VARIANT [VAR=VALUE...]: ALGO's VARIANT in the fused
        # worker over every GPU, random parts of the stress graph, with the environment given,
        # verified and its loop run on the GPUs.
        fused_on_every_gpu() {
            local what=$1 log=$2 algo=$3 variant=$4
            shift 4
            if env "$@" GRAIL_FUSED_WORKER=1 timeout 120 "$grail" -q run "$algo" --variant "$variant" \
                -g "$out/multi.$stress_graph.gcsr" --devices all --partition random --mode async \
                --verify --json >"$log" 2>&1 && grep -q '"device_regions": [1-9]' "$log"; then
                pass "$what"
            else
                tail -5 "$log"
                fail "$what, log $log"
            fi
        }
        for round in 1 2 3 4 5 6; do
            flags=""
            [[ $((round % 2)) -eq 0 ]] && flags="-DGRAIL_ASYNC_STRESS_NS=20000"
            fused_on_every_gpu "bfs async on $stress_graph over all GPUs beside another run${flags:+, $flags}" \
                "$out/multi.loaded.$round.json" bfs async GRAIL_CACHE_DIR="$hub_cache" GRAIL_NVRTC_FLAGS="$flags"
        done
        touch "$load_stop"
        wait "$load_pid" || true

        # Rings that hold one step of a sender's most (GRAIL_ASYNC_RING_STEPS=1; three by
        # default): senders find them full and wait for room, taking what comes in meanwhile.
        for run in "bfs async" "sssp wl" "cc lp"; do
            read -r algo name <<<"$run"
            fused_on_every_gpu "$algo $name on $stress_graph over all GPUs, rings of one step (GRAIL_ASYNC_RING_STEPS=1)" \
                "$out/multi.full-rings.$algo.json" "$algo" "$name" GRAIL_ASYNC_RING_STEPS=1
        done

        # Regions on every GPU at once whose exchanges look only at the worklists' nodes
        # (the default), each listed pass checked by a full comparison after
        # it (=check: the run fails if the lists missed a change): every variant that pushes
        # what it changes.
        for graph in "${multi_graphs[@]}"; do
            for partition in ordered random; do
                for run in "bfs do" "bfs wl" "sssp ds" "sssp wl" "cc lp" "pr push"; do
                    read -r algo name <<<"$run"
                    log="$out/multi.lists.$graph.$algo-$name.$partition.json"
                    if GRAIL_PEER_LISTS=check GRAIL_PEER_REGIONS=1 timeout 120 "$grail" -q run "$algo" --variant "$name" \
                        -g "$out/multi.$graph.gcsr" --devices all --partition "$partition" --verify --json >"$log" 2>&1 &&
                        grep -q '"device_regions": [1-9]' "$log"; then
                        pass "$algo $name on $graph over all GPUs ($partition), GRAIL_PEER_LISTS=check: $(grep -o '"time_ms": [0-9.]*' "$log" | tail -1)"
                    else
                        tail -5 "$log"
                        fail "$algo $name on $graph over all GPUs ($partition) with GRAIL_PEER_LISTS=check, log $log"
                    fi
                done
            done
        done

        # Regions run on every GPU at once (supersteps exchanged between the GPUs) or superstep by
        # superstep from the host, whatever the default chooses for the graph: both verified.
        for regions in 0 1; do
            for graph in "${multi_graphs[@]}"; do
                for algo in bfs sssp cc pr; do
                    log="$out/multi.regions$regions.$graph.$algo.txt"
                    if GRAIL_PEER_REGIONS=$regions timeout 120 "$grail" -q run "$algo" -g "$out/multi.$graph.gcsr" \
                        --devices all --partition random --verify >"$log" 2>&1; then
                        pass "$algo on $graph over all GPUs, GRAIL_PEER_REGIONS=$regions: $(grep -o 'time .*ms' "$log" | head -1)"
                    else
                        tail -5 "$log"
                        fail "$algo on $graph over all GPUs with GRAIL_PEER_REGIONS=$regions, log $log"
                    fi
                    # The hub executor forced on the parts, as in the single-GPU step above.
                    log="$out/multi.hubs.regions$regions.$graph.$algo.txt"
                    if GRAIL_CACHE_DIR="$hub_cache" GRAIL_NVRTC_FLAGS="-DGRAIL_HUB_MIN=64" GRAIL_PEER_REGIONS=$regions \
                        timeout 120 "$grail" -q run "$algo" -g "$out/multi.$graph.gcsr" --devices all \
                        --partition random --verify >"$log" 2>&1; then
                        pass "$algo on $graph over all GPUs, hubs forced, GRAIL_PEER_REGIONS=$regions"
                    else
                        tail -5 "$log"
                        fail "$algo on $graph over all GPUs, hubs forced, GRAIL_PEER_REGIONS=$regions, log $log"
                    fi
                done
            done
        done
    fi
fi

if want update; then
    step "a program's own update functions over a GPU and the CPU: the same merges as two CPU devices make"
    file="$here/crates/grail-lang/tests/programs/update_function.grail"
    for mode in bsp async; do
        if "$grail" -q run "$file" -g "$out/multi.kron16.gcsr" --devices "gpu:$device,cpu" --partition random --mode "$mode" \
            -o "$out/update.gpu.$mode" >"$out/update.gpu.$mode.log" 2>&1 \
            && "$grail" -q run "$file" -g "$out/multi.kron16.gcsr" --devices "cpu*2" --partition random --mode "$mode" \
                -o "$out/update.cpu.$mode" >/dev/null 2>&1 \
            && cmp -s "$out/update.gpu.$mode" "$out/update.cpu.$mode"; then
            pass "update_function over gpu:$device,cpu ($mode) equals two CPU devices"
        else
            cat "$out/update.gpu.$mode.log"
            fail "update_function over gpu:$device,cpu ($mode)"
        fi
    done
fi

if want several; then
    step "several properties sent in one superstep: the same results over GPUs (and GPU + CPU) as on one CPU"
    file="$here/crates/grail-lang/tests/programs/several_properties.grail"
    "$grail" -q run "$file" -g "$out/multi.kron16.gcsr" --target cpu -o "$out/several.cpu" >/dev/null 2>&1
    for devices in "gpu:$device" "${device_lists[@]}"; do
        target=(--devices "$devices" --partition random)
        [[ $devices == "gpu:$device" ]] && target=(--target gpu --device "$device")
        if "$grail" -q run "$file" -g "$out/multi.kron16.gcsr" "${target[@]}" -o "$out/several.gpu" \
            >"$out/several.log" 2>&1 && cmp -s "$out/several.gpu" "$out/several.cpu"; then
            pass "several_properties over $devices equals one CPU"
        else
            cat "$out/several.log"
            fail "several_properties over $devices"
        fi
    done
fi

if want ring; then
    if [[ $gpus -ge 3 ]]; then
        step "the asynchronous mode around a ring of the GPUs, verified"
        for graph in "${multi_graphs[@]}"; do
            for algo in sssp cc; do
                log="$out/ring.$graph.$algo.txt"
                if timeout 120 "$grail" -q run "$algo" -g "$out/multi.$graph.gcsr" --devices all --partition random \
                    --mode async --topology ring --verify >"$log" 2>&1; then
                    pass "$algo on $graph around a ring of all GPUs: $(grep -o 'ring .*' "$log" | head -1)"
                else
                    tail -5 "$log"
                    fail "$algo on $graph around a ring of all GPUs, log $log"
                fi
            done
        done
    fi
fi

if want routers; then
    step "routers: predicate-based filtering over the GPU and the CPU, verified"
    if timeout 120 "$grail" -q pbf --devices "gpu:$device,cpu" --count 2000000 --segment 100000 --verify >"$out/pbf.txt" 2>&1; then
        pass "$(head -1 "$out/pbf.txt")"
    else
        cat "$out/pbf.txt"
        fail "pbf over gpu:$device,cpu"
    fi
fi

if want sections; then
    step "parallel sections: algorithms at once on the GPU and the CPU, each verified"
    if timeout 120 "$grail" -q sections --graph "$out/multi.kron16.gcsr" "bfs@gpu:$device" "sssp/nf@gpu:$device" "pr/push@cpu" \
        "cc@cpu" --verify >"$out/sections.txt" 2>&1; then
        pass "$(tail -1 "$out/sections.txt")"
    else
        cat "$out/sections.txt"
        fail "sections over gpu:$device and the CPU"
    fi
fi

if want errors; then
    step "errors: a device that does not exist, a kernel that faults, --checks, --timeout, a full device heap"
    set +e
    "$grail" -q run bfs -g "$out/r10.gcsr" --target gpu --device 99 >"$out/bad-device.txt" 2>&1
    code=$?
    set -e
    if [[ $code -ne 0 ]] && grep -q "device 99 requested" "$out/bad-device.txt"; then
        pass "bad device: exit $code, $(head -1 "$out/bad-device.txt")"
    else
        fail "bad device (exit $code): $(cat "$out/bad-device.txt")"
    fi
    cat >"$out/fault.grail" <<'EOF'
graph { node level: u32; }
param far: u32 = 4000000000;
kernel poke() { forall u in G.nodes() { let v = far as Node; v.level = 1; } }
fn main() { invoke poke(); }
EOF
    expect_exit "kernel fault" 70 "kernel \`poke\` stopped" "$out/fault.txt" \
        "$grail" -q run "$out/fault.grail" -g "$out/r10.gcsr" --target gpu --device "$device"

    # An array index past the end traps: exit 70, the kernel named.
    cat >"$out/past.grail" <<'EOF'
graph { node level: u32; }
param at: u32 = 4;
output level;
kernel past() { forall u in G.nodes() { let mut a: [u32; 4]; a[at] = 1; u.level = a[0]; } }
fn main() { invoke past(); }
EOF
    expect_exit "array index past the end" 70 "kernel \`past\` stopped" "$out/past.txt" \
        "$grail" -q run "$out/past.grail" -g "$out/r10.gcsr" --target gpu --device "$device"

    # Checked mode finds what the CPU finds: a division by zero (exit 70), a pushed non-node (exit 1).
    cat >"$out/divide.grail" <<'EOF'
graph { node level: u32 = 1; }
param zero: u32 = 0;
output level;
kernel split() { forall u in G.nodes() { u.level = u.level / zero; } }
fn main() { invoke split(); }
EOF
    cat >"$out/push.grail" <<'EOF'
graph { node level: u32; }
param far: u32 = 4000000000;
kernel spread() { forall u in worklist { push(far as Node); } }
fn main() { iterate spread() initial [0 as Node] {} }
EOF
    expect_exit "--checks, division by zero" 70 "kernel \`split\` stopped .*division or remainder by zero" "$out/divide.txt" \
        "$grail" -q run "$out/divide.grail" -g "$out/r10.gcsr" --target gpu --device "$device" --checks
    expect_exit "--checks, pushed non-node" 1 "kernel \`spread\` pushed node 4000000000" "$out/push.txt" \
        "$grail" -q run "$out/push.grail" -g "$out/r10.gcsr" --target gpu --device "$device" --checks

    # A kernel that never ends is stopped by --timeout: exit 124, the kernel named. (The loop holds
    # an atomic: a loop without side effects may be compiled away.)
    cat >"$out/spin.grail" <<'EOF'
graph { node x: u32 = 0; }
output x;
kernel spin() { forall u in G.nodes() { while !atomic_cas(u.x, 7, 0) {} } }
fn main() { invoke spin(); }
EOF
    expect_exit "--timeout, a kernel that never ends" 124 "stopped in kernel \`spin\`" "$out/spin.txt" \
        "$grail" -q run "$out/spin.grail" -g "$out/r10.gcsr" --target gpu --device "$device" --timeout 5

    # Four billion elements of 16 bytes (and their lock, claim and removed words) do not fit the device
    # heap (half the device's memory for a program with collections), and stay below a collection's
    # limit of 2^32 - 2: the adds that fail write their sink element, and the run stops with the error.
    cat >"$out/flood.grail" <<'EOF'
struct Cell { owner: Node, step: u32, weight: u64 }
graph { collection cells: Cell; }
param per: u32 = 4000;
kernel flood() {
    forall u in G.nodes() {
        for i in 0..per { G.cells.add(Cell { owner: u, step: i, weight: 0 }); }
    }
}
fn main() -> u32 { invoke flood(); return G.cells.len(); }
EOF
    "$grail" -q gen road --nodes 1048576 -o "$out/road20.gcsr" >/dev/null
    expect_exit "device heap exhausted" 1 "out of memory: the device heap, for collection .cells." "$out/flood.txt" \
        "$grail" -q run "$out/flood.grail" -g "$out/road20.gcsr" --target gpu --device "$device"
fi

if [[ $baseline -eq 1 ]] && want baseline; then
    step "baseline: default variants, GPU and CPU backend, best of 3"
    if "$grail" -q bench suite --targets gpu,cpu --device "$device" --repeat 3 \
        --graphs "kron:22,road:24,grid:20,urand:23" | tee "$out/baseline.txt"; then
        pass "baseline"
    else
        fail "baseline"
    fi
fi

echo
if [[ $failures -eq 0 ]]; then
    echo "gpu-suite: every step passed"
else
    echo "gpu-suite: $failures check(s) FAILED"
    exit 1
fi
