//! The refinement program (`dmr.grail`: Bowyer-Watson with Ruppert's boundary splitting) on the
//! CPU: on random Delaunay meshes, what it leaves is a valid Delaunay triangulation of the same
//! area with no angle below 30 degrees, checked by grail-mesh's independent verifier.

use grail_algos::suite::compile_source;
use grail_graph::{Csr, Graph};
use grail_mesh::{Mesh, NO_NEIGHBOR};
use grail_runtime::ModuleCache;
use grail_runtime::cpu::{CCompiler, CpuProgram, RunOptions, Value};

const DMR: &str = include_str!("../../grail-lang/tests/programs/dmr.grail");

/// The program's inputs for `mesh`: its points, and its triangles with their neighbours.
fn inputs(mesh: &Mesh) -> Vec<Vec<Value>> {
    let points = mesh.points.iter().map(|p| Value::Struct(vec![Value::F64(p[0]), Value::F64(p[1])])).collect();
    let across = mesh.neighbors().unwrap();
    let tris = mesh
        .triangles
        .iter()
        .zip(&across)
        .map(|(t, n)| {
            let mut fields: Vec<Value> = t.iter().map(|&p| Value::Element(p)).collect();
            fields.extend(n.iter().map(|&o| Value::Element(if o == NO_NEIGHBOR { 0 } else { o })));
            fields.extend(n.iter().map(|&o| Value::Bool(o != NO_NEIGHBOR)));
            Value::Struct(fields)
        })
        .collect();
    vec![points, tris]
}

fn handles(value: &Value) -> Vec<u32> {
    let Value::Struct(fields) = value else { panic!("an element is a struct") };
    fields.iter().filter_map(|f| if let Value::Element(h) = f { Some(*h) } else { None }).collect()
}

#[test]
fn refinement_leaves_a_valid_delaunay_mesh_without_bad_triangles() {
    let dir = std::env::temp_dir().join(format!("grail-test-cache-dmr-{}", std::process::id()));
    let module = compile_source("dmr", DMR).unwrap_or_else(|e| panic!("{e}"));
    let compiler = CCompiler::detect().expect("the tests need a C compiler");
    let program = CpuProgram::compile(module, &compiler, Some(&ModuleCache::at(dir))).unwrap();
    let graph = Graph::from_csr(Csr::empty(1, false));
    for (count, seed) in [(30, 1), (200, 2), (1000, 3), (3000, 4)] {
        let mesh = grail_mesh::generate::random_points(count, 1.0, seed).unwrap();
        let before = grail_mesh::verify::check(&mesh, 30.0, None);
        for threads in [1, 2] {
            let out = program
                .run_with_inputs(&graph, &[None], &inputs(&mesh), &RunOptions { threads }, &mut std::io::sink())
                .unwrap();
            let points: Vec<[f64; 2]> = out.collections[0]
                .iter()
                .map(|p| match p {
                    Value::Struct(xy) => match (&xy[0], &xy[1]) {
                        (Value::F64(x), Value::F64(y)) => [*x, *y],
                        other => panic!("{other:?}"),
                    },
                    other => panic!("{other:?}"),
                })
                .collect();
            let triangles: Vec<[u32; 3]> = out.collections[1]
                .iter()
                .map(|t| {
                    let h = handles(t);
                    [h[0], h[1], h[2]]
                })
                .collect();
            assert_eq!(out.result, Some(Value::U32(triangles.len() as u32)));
            let refined = Mesh { points, triangles, ..Mesh::default() };
            let after = grail_mesh::verify::check(&refined, 30.0, Some(before.area));
            assert!(after.is_valid(), "{count} points, {threads} threads: {:?}", after.problems);
            assert!(before.bad > 0);
            assert_eq!(after.bad, 0, "{count} points: {} bad before, {} after", before.bad, after.bad);
            eprintln!(
                "{count} points: {} -> {} triangles, {} -> {} bad",
                before.triangles, after.triangles, before.bad, after.bad
            );
        }
    }
}
