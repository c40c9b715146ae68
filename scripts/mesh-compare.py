#!/usr/bin/env python3
"""Delaunay refinement side by side: grail against Triangle (the `triangle` Python package),
on the same mesh and the same quality bound.

    scripts/mesh-compare.py [--min-angle 30] [--grail target/release/grail] [--target reference] MESH.node ...

For each mesh (a .node file with its .ele beside it, as `grail mesh gen` writes them) it runs
Triangle's quality refinement of that triangulation (`rpq<angle>`: the mesh's triangles, with
its outline as segments, the domain grail refines) and `grail mesh refine --json`, and prints
both times (best of --repeat runs; the refinement alone on both sides: Triangle's call includes
reading the arrays, grail's time is its program's run with the spatial ordering around it
on the CPU) and both output sizes. Needs
`pip install triangle numpy`.
"""

import argparse
import json
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

try:
    import triangle
except ImportError:
    sys.exit("error: the `triangle` package is not installed (pip install triangle)")


def read_table(path, columns):
    rows = []
    for line in Path(path).read_text().splitlines():
        line = line.split("#", 1)[0].split()
        if line:
            rows.append(line)
    count = int(rows[0][0])
    return np.array([[float(x) for x in row[1 : 1 + columns]] for row in rows[1 : 1 + count]])


def outline(triangles):
    """The sides no other triangle shares."""
    sides = {}
    for a, b, c in triangles:
        for u, v in ((a, b), (b, c), (c, a)):
            key = (min(u, v), max(u, v))
            sides[key] = sides.get(key, 0) + 1
    return np.array([k for k, n in sides.items() if n == 1], dtype=np.int32)


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("meshes", nargs="+")
    parser.add_argument("--min-angle", type=float, default=30.0)
    parser.add_argument("--grail", default="target/release/grail")
    parser.add_argument("--target", default="reference")
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--threads", type=int, help="grail's --threads (default: one per core)")
    args = parser.parse_args()
    print(f"{'mesh':<28} {'triangles in':>12} {'Triangle ms':>12} {'Triangle out':>13} {'grail ms':>10} {'grail out':>10}  grail/Triangle")
    for mesh in args.meshes:
        node = Path(mesh).with_suffix(".node")
        points = read_table(node, 2)
        tris = read_table(node.with_suffix(".ele"), 3).astype(np.int64)
        first = int(next(l for l in node.read_text().splitlines()[1:] if l.split() and not l.startswith("#")).split()[0])
        tris -= first
        segments = outline(tris)
        best = float("inf")
        out = None
        for _ in range(args.repeat):
            start = time.perf_counter()
            mesh_in = {"vertices": points, "triangles": tris.astype(np.int32), "segments": segments}
            out = triangle.triangulate(mesh_in, f"rpq{args.min_angle}Q")
            best = min(best, time.perf_counter() - start)
        grail_best = float("inf")
        grail_out = None
        with tempfile.TemporaryDirectory() as tmp:
            for _ in range(args.repeat):
                result = subprocess.run(
                    [args.grail, "-q", *(["--threads", str(args.threads)] if args.threads else []), "mesh", "refine", str(node), "--min-angle", str(args.min_angle),
                     "--target", args.target, "--json", "-o", str(Path(tmp) / "out")],
                    capture_output=True, text=True, check=True)
                summary = json.loads(result.stdout)
                grail_best = min(grail_best, summary["time_ms"])
                grail_out = summary["triangles_out"]
        print(f"{node.name:<28} {len(tris):>12} {best * 1e3:>12.1f} {len(out['triangles']):>13} "
              f"{grail_best:>10.1f} {grail_out:>10}  {grail_best / (best * 1e3):.2f}x")


if __name__ == "__main__":
    main()
