#!/usr/bin/env bash
# grail's CPU backend beside the GAP benchmark suite (https://github.com/sbeamer/gapbs), on the
# same graph files, the same source nodes and the same thread count. Prints, per graph and
# kernel, grail's time, GAP's time and their ratio (grail / GAP: below 1 means grail is faster).
#
#   scripts/gap-compare.sh GAP_DIR [GRAIL_BINARY]
#
#   GAP_DIR       a checkout of gapbs, built (`make` in it); GAP is never copied into grail
#   GRAIL_BINARY  default: target/release/grail (build with `cargo build --release`)
#
# Environment (defaults in brackets):
#   BASELINE          another grail binary (say, a build of an earlier commit), run beside
#                     GRAIL_BINARY on the same files: the table gets its time and ratio too
#   THREADS [2]       threads for both: OMP_NUM_THREADS for GAP, --threads for grail
#   RUNS [5]          grail runs per cell; the minimum time_ms is reported
#   TRIALS [8]        GAP trials per run (-n); the minimum "Trial Time" is reported
#   GRAPH_DIR [gap-compare-graphs]   where the graph files are made (kept between runs)
#   GRAPHS [kron18 urand20 road20]   which graphs (any subset)
#   KERNELS [bfs sssp cc pr tc]      which kernels
#   DELTAS_kron18, DELTAS_urand20 [1 2 4 8 16], DELTAS_road20 [1000 2000 4000 8000 16000]:
#                     the SSSP deltas GAP is run with; its best is reported (GAP's own benchmark
#                     uses -d2 on kron and urand, and a road-specific delta on road graphs)
#
# The graph files, made by grail once (the same seed gives the same graph on any machine):
#   grail gen rmat --scale 18 --edge-factor 16 --undirected --max-weight 255 -o kron18.wel
#   grail gen random --nodes 1048576 --degree 16 --undirected --max-weight 255 -o urand20.wel
#   grail gen road --nodes 1048576 -o road20.wel        (Euclidean weights, symmetric)
#   grail convert G.wel -o G.el                         (the same edges without weights)
#   grail convert G.wel -o G.w.gcsr; grail convert G.el -o G.gcsr
# (grail reads the .gcsr copies, which load in a fraction of the time; loading is not timed)
# kron18 is GAP's `-g 18` (Graph500 Kronecker, edge factor 16), urand20 GAP's `-u 20` (degree
# 16); every file already holds both directions of each edge, without duplicates or self-loops,
# so GAP's -s (symmetrize, then drop duplicates and self-loops) gives it the same graph grail
# reads as it is.
#
# The commands, per graph G with source S (the tail of the file's first edge: a node with edges):
#   GAP:   OMP_NUM_THREADS=2 GAP_DIR/bfs  -f G.el  -s -n 8 -r S
#          OMP_NUM_THREADS=2 GAP_DIR/sssp -f G.wel -s -n 8 -r S -d DELTA   (each DELTA; the best)
#          OMP_NUM_THREADS=2 GAP_DIR/cc   -f G.el  -s -n 8
#          OMP_NUM_THREADS=2 GAP_DIR/pr   -f G.el  -s -n 8 -i 1000 -t 1e-4
#          OMP_NUM_THREADS=2 GAP_DIR/tc   -f G.el  -s -n 8
#   grail: grail -q run ALGO --graph G.gcsr --threads 2 --json [--source S]   (5 times, the min)
#          with G.w.gcsr for sssp; ALGO is bfs, sssp, cc, pr, tri; the first run also --verify.
# The same problems: BFS levels and SSSP distances from the same source; CC labels; PageRank to
# an L1 change below 1e-4 (GAP's -t default; -i 1000 so that GAP, like grail, stops at the
# tolerance rather than at 20 iterations); the triangle count. What each side times: GAP's
# "Trial Time" is the kernel alone (loading and building the graph excluded); grail's time_ms
# is the executor's run (property columns allocated and initialised, every kernel and host
# step), excluding loading and the input preparation a program needs (the reverse CSR; for tri
# the relabelling by degree, which GAP's tc does inside its trial when its heuristic says so).
set -euo pipefail

if [[ $# -lt 1 || "$1" == -h || "$1" == --help ]]; then
    sed -n '2,52p' "$0"
    exit $(( $# < 1 ))
fi
gap="$(cd "$1" && pwd)"
grail="${2:-target/release/grail}"
threads="${THREADS:-2}"
runs="${RUNS:-5}"
trials="${TRIALS:-8}"
graph_dir="${GRAPH_DIR:-gap-compare-graphs}"
read -r -a graphs <<<"${GRAPHS:-kron18 urand20 road20}"
read -r -a kernels <<<"${KERNELS:-bfs sssp cc pr tc}"

[[ -x "$grail" ]] || { echo "error: no grail binary at $grail (cargo build --release)" >&2; exit 1; }
for k in "${kernels[@]}"; do
    [[ -x "$gap/$k" ]] || { echo "error: no GAP binary $gap/$k (run make in $gap)" >&2; exit 1; }
done
command -v python3 >/dev/null || { echo "error: python3 is needed to read grail's JSON" >&2; exit 1; }
mkdir -p "$graph_dir"

make_graph() { # name
    local name="$1" wel="$graph_dir/$1.wel" el="$graph_dir/$1.el"
    if [[ ! -s "$wel" ]]; then
        case "$name" in
            kron18) "$grail" -q gen rmat --scale 18 --edge-factor 16 --undirected --max-weight 255 -o "$wel" ;;
            urand20) "$grail" -q gen random --nodes 1048576 --degree 16 --undirected --max-weight 255 -o "$wel" ;;
            road20) "$grail" -q gen road --nodes 1048576 -o "$wel" ;;
            *) echo "error: unknown graph $name (kron18, urand20, road20)" >&2; exit 1 ;;
        esac
    fi
    [[ -s "$el" ]] || "$grail" -q convert "$wel" -o "$el"
    [[ -s "$graph_dir/$name.w.gcsr" ]] || "$grail" -q convert "$wel" -o "$graph_dir/$name.w.gcsr"
    [[ -s "$graph_dir/$name.gcsr" ]] || "$grail" -q convert "$el" -o "$graph_dir/$name.gcsr"
}

# The minimum "Trial Time" of a GAP run, in ms.
gap_time() { # kernel file args...
    local kernel="$1" file="$2"
    shift 2
    OMP_NUM_THREADS="$threads" "$gap/$kernel" -f "$file" -s -n "$trials" "$@" |
        awk '/^Trial Time:/ { t = $3 * 1000; if (min == "" || t < min) min = t } END { if (min == "") exit 1; printf "%.2f", min }'
}

# The minimum time_ms of RUNS runs of a grail binary (the first verified), in ms.
grail_time() { # binary algo file args...
    local grail="$1" algo="$2" file="$3" best="" time json
    shift 3
    for ((r = 0; r < runs; r++)); do
        local verify=()
        [[ $r -eq 0 ]] && verify=(--verify)
        json="$("$grail" -q run "$algo" --graph "$file" --threads "$threads" --json "${verify[@]}" "$@")"
        time="$(python3 -c 'import json,sys; d=json.load(sys.stdin); assert d.get("verified") in (True, None); print(d["time_ms"])' <<<"$json")"
        best="$(python3 -c "import sys; a, b = sys.argv[1:]; print(f'{min(float(a), float(b)) if a else float(b):.2f}')" "$best" "$time")"
    done
    echo "$best"
}

baseline="${BASELINE:-}"
[[ -z "$baseline" || -x "$baseline" ]] || { echo "error: no grail binary at BASELINE=$baseline" >&2; exit 1; }
# Both grail binaries, the baseline's time into base_ms.
grail_both() { # cell algo file args...
    local cell="$1"
    shift
    grail_ms[$cell]="$(grail_time "$grail" "$@")"
    [[ -z "$baseline" ]] || base_ms[$cell]="$(grail_time "$baseline" "$@")"
}

declare -A grail_ms base_ms gap_ms note
for g in "${graphs[@]}"; do
    make_graph "$g"
    el="$graph_dir/$g.el"
    wel="$graph_dir/$g.wel"
    sg="$graph_dir/$g.gcsr"
    wsg="$graph_dir/$g.w.gcsr"
    source="$(head -n 1 "$el" | awk '{ print $1 }')"
    for k in "${kernels[@]}"; do
        echo "$g $k ..." >&2
        case "$k" in
            bfs)
                gap_ms[$g,$k]="$(gap_time bfs "$el" -r "$source")"
                grail_both "$g,$k" bfs "$sg" --source "$source" ;;
            sssp)
                var="DELTAS_$g"
                default_deltas="1 2 4 8 16"
                [[ "$g" == road* ]] && default_deltas="1000 2000 4000 8000 16000"
                best="" best_delta=""
                for d in ${!var:-$default_deltas}; do
                    t="$(gap_time sssp "$wel" -r "$source" -d "$d")"
                    if [[ -z "$best" ]] || python3 -c "import sys; sys.exit(0 if float(sys.argv[1]) < float(sys.argv[2]) else 1)" "$t" "$best"; then
                        best="$t" best_delta="$d"
                    fi
                done
                gap_ms[$g,$k]="$best"
                note[$g,$k]="GAP -d $best_delta"
                grail_both "$g,$k" sssp "$wsg" --source "$source" ;;
            cc)
                gap_ms[$g,$k]="$(gap_time cc "$el")"
                grail_both "$g,$k" cc "$sg" ;;
            pr)
                gap_ms[$g,$k]="$(gap_time pr "$el" -i 1000 -t 1e-4)"
                grail_both "$g,$k" pr "$sg" ;;
            tc)
                gap_ms[$g,$k]="$(gap_time tc "$el")"
                grail_both "$g,$k" tri "$sg" ;;
            *) echo "error: unknown kernel $k (bfs, sssp, cc, pr, tc)" >&2; exit 1 ;;
        esac
    done
done

echo
echo "grail / GAP time, $threads threads (grail: min of $runs runs; GAP: min of $trials trials)"
echo "GAP $(git -C "$gap" rev-parse --short HEAD 2>/dev/null || echo '(not a git checkout)'); grail: $grail ($("$grail" --version))"
[[ -z "$baseline" ]] || echo "baseline: $baseline"
echo
ratio() { python3 -c "import sys; print(f'{float(sys.argv[1]) / float(sys.argv[2]):.2f}')" "$1" "$2"; }
if [[ -z "$baseline" ]]; then
    printf '| graph | kernel | grail ms | GAP ms | grail / GAP | note |\n| --- | --- | ---: | ---: | ---: | --- |\n'
else
    printf '| graph | kernel | baseline ms | grail ms | GAP ms | baseline / GAP | grail / GAP | note |\n'
    printf '| --- | --- | ---: | ---: | ---: | ---: | ---: | --- |\n'
fi
for g in "${graphs[@]}"; do
    for k in "${kernels[@]}"; do
        cell="$g,$k"
        if [[ -z "$baseline" ]]; then
            printf '| %s | %s | %s | %s | %s | %s |\n' "$g" "$k" "${grail_ms[$cell]}" "${gap_ms[$cell]}" \
                "$(ratio "${grail_ms[$cell]}" "${gap_ms[$cell]}")" "${note[$cell]:-}"
        else
            printf '| %s | %s | %s | %s | %s | %s | %s | %s |\n' "$g" "$k" "${base_ms[$cell]}" "${grail_ms[$cell]}" \
                "${gap_ms[$cell]}" "$(ratio "${base_ms[$cell]}" "${gap_ms[$cell]}")" \
                "$(ratio "${grail_ms[$cell]}" "${gap_ms[$cell]}")" "${note[$cell]:-}"
        fi
    done
done
