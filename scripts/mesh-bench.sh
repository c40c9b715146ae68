#!/usr/bin/env bash
# Delaunay refinement by the grail program `dmr` on generated meshes, on the CPU and GPU targets,
# every result verified, as a markdown table (the benchmark notes' dmr tables come from it).
#
#   scripts/mesh-bench.sh [--grail BIN] [--targets "cpu gpu"] [--repeat N] [--timeout S]
#                         [--min-angle DEG] [--out DIR] POINTS...
#
# For each POINTS it generates the Delaunay triangulation of that many random points in the unit
# square (`grail mesh gen --seed 7`), refines it with `grail mesh refine --target T --verify
# --json` on each target (best of --repeat runs; the first GPU run compiles the program, which
# the reported time excludes), and prints points, triangles in and out, and the time with the
# kernels' share of it (the rest: filling the mesh in and reading it back, on a GPU copying it up
# and back, and the spatial ordering on the CPU). A run that
# fails, is rejected by the verifier or passes --timeout seconds is reported as such. With the
# `triangle` Python package installed, scripts/mesh-compare.py adds Triangle's time on the same
# meshes. Needs python3 (to read the JSON).
set -euo pipefail

grail=target/release/grail
targets="cpu gpu"
repeat=3
timeout_s=300
min_angle=30
out=""
points=()
while [[ $# -gt 0 ]]; do
    case "$1" in
        --grail) grail=$2; shift 2 ;;
        --targets) targets=$2; shift 2 ;;
        --repeat) repeat=$2; shift 2 ;;
        --timeout) timeout_s=$2; shift 2 ;;
        --min-angle) min_angle=$2; shift 2 ;;
        --out) out=$2; shift 2 ;;
        -h|--help) sed -n '2,14p' "$0"; exit 0 ;;
        -*) echo "error: unknown option $1 (see --help)" >&2; exit 2 ;;
        *)
            if ! [[ $1 =~ ^[0-9]+$ ]] || (( $1 < 3 )); then
                echo "error: $1: expected a number of points (3 or more)" >&2
                exit 2
            fi
            points+=("$1"); shift ;;
    esac
done
if [[ ${#points[@]} -eq 0 ]]; then
    echo "error: give at least one number of points (see --help)" >&2
    exit 2
fi
if [[ ! -x $grail ]]; then
    echo "error: $grail is not an executable grail (build it with cargo build --release, or pass --grail)" >&2
    exit 2
fi
here="$(cd "$(dirname "$0")/.." && pwd)"
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
[[ -n $out ]] && mkdir -p "$out"

# shellcheck source=mesh-runs.sh
source "$(dirname "$0")/mesh-runs.sh"

echo "| points | triangles in | target | triangles out | best ms of $repeat | of which kernels | verified |"
echo "| ---: | ---: | --- | ---: | ---: | ---: | --- |"
meshes=()
for n in "${points[@]}"; do
    mesh="$work/m$n"
    "$grail" -q mesh gen --points "$n" --seed 7 -o "$mesh" >/dev/null
    meshes+=("$mesh.node")
    for target in $targets; do
        best_refinement "$repeat" "$timeout_s" "$work" "$grail" -q mesh refine "$mesh.node" --target "$target" \
            --min-angle "$min_angle"
        if [[ $status == yes ]]; then
            [[ -n $out ]] && cp "$work/best.json" "$out/r$n-$target.json"
            printf '| %s | %s | %s | %s | %.1f | %s | yes |\n' "$n" "$(field "$work/best.json" triangles_in)" "$target" \
                "$(field "$work/best.json" triangles_out)" "$best" "$(best_kernels "$work")"
        else
            printf '| %s | | %s | | | | %s |\n' "$n" "$target" "$status"
        fi
    done
done
if python3 -c "import triangle" 2>/dev/null; then
    echo
    python3 "$here/scripts/mesh-compare.py" --grail "$grail" --target cpu --repeat "$repeat" \
        --min-angle "$min_angle" "${meshes[@]}"
fi
