#!/usr/bin/env bash
# The morph paper's Figure 8 for grail: Delaunay refinement by `dmr` with each of its
# optimizations switched off in turn, every result verified, as a markdown table.
#
#   scripts/mesh-ablation.sh [--grail BIN] [--target gpu|cpu] [--repeat N] [--timeout S] POINTS
#
# It generates the Delaunay triangulation of POINTS random points in the unit square (`grail
# mesh gen --seed 7`; 5,000,000 points make the paper's 10 million triangles) and refines it with
# `grail mesh refine --target T --verify --json` once per configuration below (best of --repeat
# runs; compiling excluded), printing triangles out, the time and, on a GPU, the kernels' share.
# A run that fails, is rejected by the verifier or passes --timeout seconds is reported as such.
# Needs python3 (to read the JSON).
set -euo pipefail

grail=target/release/grail
target=gpu
repeat=2
timeout_s=300
points=""
while [[ $# -gt 0 ]]; do
    case "$1" in
        --grail) grail=$2; shift 2 ;;
        --target) target=$2; shift 2 ;;
        --repeat) repeat=$2; shift 2 ;;
        --timeout) timeout_s=$2; shift 2 ;;
        -h|--help) sed -n '2,12p' "$0"; exit 0 ;;
        -*) echo "error: unknown option $1 (see --help)" >&2; exit 2 ;;
        *)
            if [[ -n $points ]] || ! [[ $1 =~ ^[0-9]+$ ]] || (( $1 < 3 )); then
                echo "error: $1: expected one number of points (3 or more)" >&2
                exit 2
            fi
            points=$1; shift ;;
    esac
done
if [[ -z $points ]]; then
    echo "error: give the number of points (see --help)" >&2
    exit 2
fi
if [[ $target != gpu && $target != cpu ]]; then
    echo "error: --target $target: expected gpu or cpu" >&2
    exit 2
fi
if [[ ! -x $grail ]]; then
    echo "error: $grail is not an executable grail (build it with cargo build --release, or pass --grail)" >&2
    exit 2
fi
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

# shellcheck source=mesh-runs.sh
source "$(dirname "$0")/mesh-runs.sh"

# label | arguments of `grail mesh refine`
configs=(
    "everything on|--opt all"
    "a launch per round (no outlined loop, no grid barrier)|--opt all,outline=none"
    "first passes in worklist order (no scattering)|--opt all,scatter=off"
    "volatile loads in lock sections|--opt all,lockcache=off"
    "a warp's lanes not kept together (plain grid-stride item loop)|--opt all,converge=off"
    "an item's lanes not meeting after each stage (warp-uniform trips only)|--opt all,stages=off"
    "collections in columns (an array per field), no spatial order|--opt all,layout=columns --spatial-order off"
    "spatial order on (Hilbert renumbering before refining)|--opt all --spatial-order on"
    "one atomic per push (no warp-aggregated pushes)|--opt all,coop=none"
    "local worklists on (new bad triangles kept in the thread)|--opt all,local=on"
    "circumcenters only (no off-centers)|--opt all --circumcenters"
    "every bad triangle at once (no worst-first windows)|--opt all --windows 1"
    "nothing on|--opt none"
)

mesh="$work/m$points"
"$grail" -q mesh gen --points "$points" --seed 7 -o "$mesh" >/dev/null
echo "| configuration | triangles out | best ms of $repeat | of which kernels | verified |"
echo "| --- | ---: | ---: | ---: | --- |"
for config in "${configs[@]}"; do
    label=${config%%|*}
    read -r -a flags <<<"${config#*|}"
    best_refinement "$repeat" "$timeout_s" "$work" "$grail" -q mesh refine "$mesh.node" --target "$target" "${flags[@]}"
    if [[ $status == yes ]]; then
        printf '| %s (`%s`) | %s | %.1f | %s | yes |\n' "$label" "${flags[*]}" "$(field "$work/best.json" triangles_out)" \
            "$best" "$(best_kernels "$work")"
    else
        printf '| %s (`%s`) | | | | %s |\n' "$label" "${flags[*]}" "$status"
    fi
done
