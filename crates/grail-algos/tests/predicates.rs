//! The generated robust predicates (`orient2d`, `incircle`) give exactly the signs of the
//! `robust` crate's adaptive-precision predicates on hard cases: nearly collinear points an ulp
//! apart, cocircular points far from the origin, random points, exactly collinear points.

use grail_algos::suite::compile_source;
use grail_graph::properties::Column;
use grail_graph::{Csr, Graph};
use grail_runtime::ModuleCache;
use grail_runtime::cpu::{CCompiler, CpuProgram, RunOptions};
use robust::Coord;

const PREDICATES: &str = include_str!("../../grail-lang/tests/programs/predicates.grail");
const ULP: f64 = 1.0 / 9_007_199_254_740_992.0;

fn unit(u: u32, k: u32) -> f64 {
    ((u64::from(u) * 2_654_435_761 + u64::from(k) * 40_503) % 4_294_967_296) as f64 / 4_294_967_296.0
}

/// Case `u` as `predicates.grail` makes it: a, b, c, d.
fn case(u: u32) -> [(f64, f64); 4] {
    let i = u / 4;
    match u % 4 {
        0 => {
            let (x, y) = (f64::from(i % 64) * ULP, f64::from((i / 64) % 64) * ULP);
            [(0.5 + x, 0.5 + y), (12.0, 12.0), (24.0, 24.0), (0.5 + y, 24.0 + x)]
        }
        1 => {
            let t = 1_048_576.0 + f64::from(i % 7);
            let d = (t + 5.0 + (f64::from(i % 5) - 2.0) / 1_073_741_824.0, t);
            [(t + 3.0, t + 4.0), (t - 4.0, t + 3.0), (t - 3.0, t - 4.0), d]
        }
        2 => [(unit(u, 0), unit(u, 1)), (unit(u, 2), unit(u, 3)), (unit(u, 4), unit(u, 5)), (unit(u, 6), unit(u, 7))],
        _ => {
            let (a, b, c) = (f64::from(i % 9), f64::from(i % 5 + 1), f64::from(i % 7 + 2));
            let d = f64::from(i % 3);
            [(a, 2.0 * a), (b, 2.0 * b), (c, 2.0 * c), (d, 2.0 * d + f64::from(i % 2))]
        }
    }
}

fn sign(x: f64) -> i32 {
    if x > 0.0 {
        1
    } else if x < 0.0 {
        -1
    } else {
        0
    }
}

#[test]
fn generated_predicates_agree_with_adaptive_precision_on_hard_cases() {
    let dir = std::env::temp_dir().join(format!("grail-test-cache-{}", std::process::id()));
    let module = compile_source("predicates", PREDICATES).unwrap_or_else(|e| panic!("{e}"));
    let compiler = CCompiler::detect().expect("the tests need a C compiler");
    let program = CpuProgram::compile(module, &compiler, Some(&ModuleCache::at(dir))).unwrap();
    let n = 4 * 64 * 64;
    let graph = Graph::from_csr(Csr::empty(n, false));
    let out = program.run(&graph, &[], &RunOptions { threads: 2 }, &mut std::io::sink()).unwrap();
    let column = |name: &str| -> Vec<i32> {
        let index = program.module().properties.iter().position(|p| p.name == name).unwrap();
        match &out.properties[index] {
            Column::I32(values) => values.clone(),
            other => panic!("{name}: {other:?}"),
        }
    };
    let (orient, circle) = (column("orient"), column("circle"));
    let mut hard = [0usize; 3];
    for u in 0..n {
        let [a, b, c, d] = case(u).map(|(x, y)| Coord { x, y });
        let want_orient = sign(robust::orient2d(a, b, c));
        let want_circle = sign(robust::incircle(a, b, c, d));
        assert_eq!(orient[u as usize], want_orient, "orient2d of case {u}: {:?}", case(u));
        assert_eq!(circle[u as usize], want_circle, "incircle of case {u}: {:?}", case(u));
        // The cases are hard: plain floating point gets some of them wrong.
        let naive = (a.x - c.x) * (b.y - c.y) - (a.y - c.y) * (b.x - c.x);
        hard[0] += usize::from(sign(naive) != want_orient);
        hard[1] += usize::from(want_orient == 0);
        hard[2] += usize::from(want_circle == 0);
    }
    assert!(hard[0] > 100, "only {} cases where plain floating point errs", hard[0]);
    assert!(hard[1] > 100 && hard[2] > 100, "degenerate cases: {hard:?}");
}
