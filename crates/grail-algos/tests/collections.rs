//! Graph-level collections on the CPU: programs that add elements from many threads at once,
//! iterate them, lock and claim them, and output them, checked against what they must produce
//! on random and generated graphs with one to three threads.

use std::collections::BTreeMap;

use grail_algos::suite::{compile_source, undirected_simple};
use grail_graph::builder::{BuildOptions, EdgeList, build};
use grail_graph::generate::{GenOptions, Generator, generate};
use grail_graph::properties::Column;
use grail_graph::{Graph, NoProgress};
use grail_runtime::cpu::{CCompiler, CpuProgram, RunOptions, RunOutput, Value};
use grail_runtime::{ModuleCache, Table};

const TRIANGLE_LIST: &str = include_str!("../../grail-lang/tests/programs/triangle_list.grail");
const CELLS: &str = include_str!("../../grail-lang/tests/programs/cells.grail");

fn compile(name: &str, source: &str) -> CpuProgram {
    let dir = std::env::temp_dir().join(format!("grail-test-cache-{}", std::process::id()));
    let module = compile_source(name, source).unwrap_or_else(|e| panic!("{e}"));
    let compiler = CCompiler::detect().expect("the tests need a C compiler");
    CpuProgram::compile(module, &compiler, Some(&ModuleCache::at(dir))).unwrap()
}

fn run(program: &CpuProgram, graph: &Graph, threads: usize) -> RunOutput {
    program.run(graph, &[], &RunOptions { threads }, &mut std::io::sink()).unwrap()
}

/// The undirected simple graph of a random multigraph (self-loops and duplicates drawn, then
/// removed), dense enough for triangles.
fn random_simple_graph(seed: u64) -> Graph {
    let mut state = seed.wrapping_mul(0x9e37_79b9_7f4a_7c15) | 1;
    let mut next = move |n: u64| {
        state ^= state << 13;
        state ^= state >> 7;
        state ^= state << 17;
        state % n
    };
    let n = 1 + next(30) as u32;
    let m = next(u64::from(n) * 4 + 1);
    let mut edges = EdgeList::new(n, false);
    for _ in 0..m {
        edges.push(next(u64::from(n)) as u32, next(u64::from(n)) as u32, 1);
    }
    undirected_simple(&build(edges, &BuildOptions::AS_GIVEN).unwrap()).unwrap()
}

/// A row's leaves, all nodes, u32s or handles here.
fn node_fields(row: &[u64]) -> Vec<u32> {
    row.iter().map(|&word| u32::try_from(word).expect("a u32 leaf")).collect()
}

/// Every triangle w < u < v of the graph once, as (v, u, w), and per node how many it is in.
fn triangles_of(graph: &Graph) -> (Vec<[u32; 3]>, Vec<u32>) {
    let csr = graph.out();
    let adjacent = |a: u32, b: u32| csr.neighbors(a).contains(&b);
    let mut list = Vec::new();
    let mut count = vec![0u32; graph.num_nodes() as usize];
    for v in 0..graph.num_nodes() {
        for &u in csr.neighbors(v).iter().filter(|&&u| u < v) {
            for &w in csr.neighbors(u).iter().filter(|&&w| w < u) {
                if adjacent(v, w) {
                    list.push([v, u, w]);
                    for x in [v, u, w] {
                        count[x as usize] += 1;
                    }
                }
            }
        }
    }
    list.sort_unstable();
    (list, count)
}

fn check_triangles(program: &CpuProgram, graph: &Graph, threads: usize, what: &str) {
    let output = run(program, graph, threads);
    let (expected, counts) = triangles_of(graph);
    let mut listed: Vec<[u32; 3]> = output.collections[0]
        .rows()
        .map(|t| {
            let f = node_fields(t);
            [f[0], f[1], f[2]]
        })
        .collect();
    listed.sort_unstable();
    assert_eq!(listed, expected, "the triangles of {what} with {threads} threads");
    assert_eq!(output.result, Some(Value::U32(expected.len() as u32)), "{what}: len()");
    let Column::U32(count) = &output.properties[0] else { panic!("count is a u32 column") };
    assert_eq!(count, &counts, "per-node counts of {what} with {threads} threads");
}

#[test]
fn triangle_listing_agrees_on_random_small_graphs() {
    let program = compile("triangle_list", TRIANGLE_LIST);
    for seed in 0..150 {
        let graph = random_simple_graph(seed);
        check_triangles(&program, &graph, 1 + (seed % 3) as usize, &format!("random graph {seed}"));
    }
}

#[test]
fn triangle_listing_agrees_on_generated_graphs() {
    // Enough triangles (tens of thousands) that many threads allocate segments at once.
    let program = compile("triangle_list", TRIANGLE_LIST);
    let options = GenOptions { seed: 5, max_weight: None };
    for (label, generator) in [
        ("rmat", Generator::graph500(10)),
        ("grid", Generator::Grid { rows: 20, cols: 30 }),
        ("road", Generator::Road { nodes: 2000 }),
    ] {
        let graph = undirected_simple(&generate(&generator, &options, true, &NoProgress).unwrap()).unwrap();
        for threads in [1, 2, 3] {
            check_triangles(&program, &graph, threads, label);
        }
    }
}

#[test]
fn cells_are_added_locked_claimed_and_copied_exactly() {
    let program = compile("cells", CELLS);
    for (nodes, threads) in [(0u32, 1), (1, 1), (5, 2), (3000, 3), (20_000, 2)] {
        let graph = build(EdgeList::new(nodes, false), &BuildOptions::AS_GIVEN).unwrap();
        let output = run(&program, &graph, threads);
        let n = u64::from(nodes);
        // 1 + 2n cells, doubled by `grow`, and n links.
        assert_eq!(output.result, Some(Value::U32((2 * (1 + 2 * n) + n) as u32)), "{nodes} nodes");
        let mut kinds: BTreeMap<(u32, u32), u64> = BTreeMap::new();
        let mut per_owner = vec![0u32; nodes as usize];
        for cell in output.collections[0].rows() {
            let f = node_fields(cell);
            *kinds.entry((f[1], f[2])).or_default() += 1;
            if f[1] != 7 {
                per_owner[f[0] as usize] += 1;
            }
        }
        // `from` cells: hit once per invocation; `to` cells: twice per invocation and won
        // once per invocation (the second `single` never wins); the host's cell untouched.
        let mut expected = BTreeMap::from([((7, 0), 2)]);
        if nodes > 0 {
            expected.extend([((2, 0), 2 * n), ((4, 2), 2 * n)]);
        }
        assert_eq!(kinds, expected, "{nodes} nodes, {threads} threads");
        assert!(per_owner.iter().all(|&c| c == 4), "every node owns two cells, copied");
    }
}

const REMOVAL: &str = include_str!("../../grail-lang/tests/programs/removal.grail");

/// What `removal.grail` must leave: the groups removed (nodes with an edge of odd id sum), and
/// the edges whose source keeps its group, in (source, target) order.
fn removal_expected(graph: &Graph) -> (u32, Vec<(u32, u32)>) {
    let csr = graph.out();
    let mut removed = 0;
    let mut alive = Vec::new();
    for u in 0..graph.num_nodes() {
        let neighbors = csr.neighbors(u);
        if neighbors.iter().any(|&v| (u + v) % 2 == 1) {
            removed += 1;
        } else {
            alive.extend(neighbors.iter().map(|&v| (u, v)));
        }
    }
    (removed, alive)
}

#[test]
fn removed_elements_go_once_are_skipped_and_not_output() {
    let program = compile("removal", REMOVAL);
    let options = GenOptions { seed: 9, max_weight: None };
    let mut graphs: Vec<(String, Graph)> = (0..40).map(|s| (format!("random {s}"), random_simple_graph(s))).collect();
    graphs.push(("rmat".into(), generate(&Generator::graph500(10), &options, true, &NoProgress).unwrap()));
    for (what, graph) in &graphs {
        let (removed, alive) = removal_expected(graph);
        for threads in [1, 2, 3] {
            let out = run(&program, graph, threads);
            let expected = removed * 1_048_576 + alive.len() as u32;
            assert_eq!(out.result, Some(Value::U32(expected)), "{what}, {threads} threads");
            // Output holds only live elements: groups of nodes without an odd edge; members of
            // those (the handle printed is the group's index, so compare the targets in order).
            let groups = &out.collections[0];
            let kept: Vec<u32> = (0..graph.num_nodes())
                .filter(|&u| graph.out().degree(u) > 0 && !graph.out().neighbors(u).iter().any(|&v| (u + v) % 2 == 1))
                .collect();
            let mut group_nodes: Vec<u32> = groups.rows().map(|g| node_fields(g)[0]).collect();
            group_nodes.sort_unstable();
            assert_eq!(group_nodes, kept, "{what}: live groups");
            let mut member_targets: Vec<u32> = out.collections[1].rows().map(|m| node_fields(m)[1]).collect();
            let mut expected_targets: Vec<u32> = alive.iter().map(|e| e.1).collect();
            member_targets.sort_unstable();
            expected_targets.sort_unstable();
            assert_eq!(member_targets, expected_targets, "{what}: live members");
        }
    }
}

const SPLIT_CELLS: &str = include_str!("../../grail-lang/tests/programs/split_cells.grail");

#[test]
fn a_worklist_of_elements_morphs_under_exclusive_and_retry() {
    let program = compile("split_cells", SPLIT_CELLS);
    let options = GenOptions { seed: 4, max_weight: None };
    let mut graphs: Vec<(String, Graph)> = (0..30).map(|s| (format!("random {s}"), random_simple_graph(s))).collect();
    graphs.push(("rmat".into(), generate(&Generator::graph500(9), &options, false, &NoProgress).unwrap()));
    for (what, graph) in &graphs {
        let expected_cells = u64::from(graph.num_nodes()) + graph.num_edges();
        for threads in [1, 2, 3] {
            let out = run(&program, graph, threads);
            assert_eq!(out.result, Some(Value::U32(expected_cells as u32)), "{what}, {threads} threads");
            assert_eq!(out.collections[0].len() as u64, expected_cells, "{what}: cells output");
            assert!(out.collections[0].rows().all(|cell| node_fields(cell)[0] == 1), "{what}: a cell not split");
            let Some(Column::U32(splits)) =
                out.properties.iter().find(|c| matches!(c, Column::U32(v) if v.len() == graph.num_nodes() as usize))
            else {
                panic!("{what}: no splits column");
            };
            let degrees: Vec<u32> = (0..graph.num_nodes()).map(|u| graph.out().degree(u) as u32).collect();
            assert_eq!(splits, &degrees, "{what}, {threads} threads: splits per node");
        }
    }
}

const LINKED_INPUT: &str = include_str!("../../grail-lang/tests/programs/linked_input.grail");

#[test]
fn input_collections_are_filled_in_order_before_main() {
    let program = compile("linked_input", LINKED_INPUT);
    let graph = random_simple_graph(1);
    for n in [1u32, 2, 1000, 5000] {
        let values: Vec<Value> = (0..n)
            .map(|i| Value::Struct(vec![Value::U32(3 * i), Value::Element((i + 7) % n), Value::U32(0)]))
            .collect();
        let links = Table::from_values(program.module(), program.module().collection_inputs[0], &values).unwrap();
        for threads in [1, 3] {
            let out = program
                .run_with_inputs(
                    &graph,
                    &[],
                    std::slice::from_ref(&links),
                    &RunOptions { threads },
                    &mut std::io::sink(),
                )
                .unwrap();
            assert_eq!(out.result, Some(Value::U32(n)));
            let sums: Vec<u32> = out.collections[0].rows().map(|l| node_fields(l)[2]).collect();
            let expected: Vec<u32> = (0..n).map(|i| 3 * i + 3 * ((i + 7) % n)).collect();
            assert_eq!(sums, expected, "{n} links, {threads} threads");
        }
    }
    // Missing or malformed inputs are errors that say what the program takes.
    let missing = program.run(&graph, &[], &RunOptions { threads: 1 }, &mut std::io::sink()).unwrap_err();
    assert!(missing.to_string().contains("takes 1 input(s) (`links`), and 0 were given"), "{missing}");
    let mut narrow = Table::new(vec![grail_ir::Type::Scalar(grail_ir::Scalar::U32)]);
    narrow.push(&[Value::U32(1)]).unwrap();
    let wrong =
        program.run_with_inputs(&graph, &[], &[narrow], &RunOptions { threads: 1 }, &mut std::io::sink()).unwrap_err();
    assert!(
        wrong.to_string().contains("input collection `links` takes rows of (u32, links, u32), given rows of (u32)"),
        "{wrong}"
    );
    let not_a_link = Table::from_values(program.module(), program.module().collection_inputs[0], &[Value::U32(1)]);
    assert!(not_a_link.unwrap_err().to_string().contains("element 0 of collection `links` is not a `Link`"));
}

const COMPACTION: &str = include_str!("../../grail-lang/tests/programs/compaction.grail");

#[test]
fn compaction_moves_elements_down_and_renumbers_handles() {
    let program = compile("compaction", COMPACTION);
    for seed in 0..25 {
        let graph = random_simple_graph(seed);
        let (removed, alive) = removal_expected(&graph);
        let groups = (0..graph.num_nodes()).filter(|&u| graph.out().degree(u) > 0).count() as u32 - removed;
        for threads in [1, 3] {
            let out = run(&program, &graph, threads);
            let expected = groups * 1_048_576 + alive.len() as u32;
            assert_eq!(out.result, Some(Value::U32(expected)), "seed {seed}, {threads} threads");
            // After compaction the handles are 0..len: every member's group handle is in range.
            let handles: Vec<u32> = out.collections[1].rows().map(|m| node_fields(m)[0]).collect();
            assert!(handles.iter().all(|&h| h < groups), "seed {seed}: {handles:?}");
        }
    }
    // Groups first: members' removed elements (and the unused slots its kernel's additions left)
    // go with the groups' compaction, since nothing holds handles to members.
    let swapped = COMPACTION.replace(
        "let members = G.members.compact();\n    let groups = G.groups.compact();",
        "let groups = G.groups.compact();\n    let members = G.members.compact();",
    );
    assert_ne!(swapped, COMPACTION);
    let program = compile("compaction_swapped", &swapped);
    for seed in 0..10 {
        let graph = random_simple_graph(seed);
        let (removed, alive) = removal_expected(&graph);
        let groups = (0..graph.num_nodes()).filter(|&u| graph.out().degree(u) > 0).count() as u32 - removed;
        let out = run(&program, &graph, 2);
        assert_eq!(out.result, Some(Value::U32(groups * 1_048_576 + alive.len() as u32)), "seed {seed}, swapped");
    }
    // Where handles to members are held elsewhere (a third collection), members must go first.
    let held = swapped
        .replace("graph {\n", "struct Note { of: members }\ngraph {\n    collection notes: Note;\n")
        .replace("    invoke orphan();\n", "    invoke orphan();\n    invoke note();\n")
        .replace("fn main()", "kernel note() { forall m in G.members { G.notes.add(Note { of: m }); } }\n\nfn main()");
    assert!(held.contains("collection notes") && held.contains("invoke note();"), "{held}");
    let program = compile("compaction_held", &held);
    let graph = random_simple_graph(3);
    let err = program.run(&graph, &[], &RunOptions { threads: 2 }, &mut std::io::sink()).unwrap_err();
    assert!(
        err.to_string()
            .contains("cannot compact `groups`: `members` has removed elements and handles to them are held"),
        "{err}"
    );
}

const ARRAYS: &str = include_str!("../../grail-lang/tests/programs/arrays.grail");

#[test]
fn arrays_are_zeroed_local_scratch() {
    let program = compile("arrays", ARRAYS);
    let options = GenOptions { seed: 8, max_weight: None };
    let mut graphs: Vec<Graph> = (0..30).map(random_simple_graph).collect();
    graphs.push(generate(&Generator::graph500(10), &options, false, &NoProgress).unwrap());
    for graph in &graphs {
        let out = run(&program, graph, 2);
        let column = |name: &str| -> Vec<u32> {
            let index = program.module().properties.iter().position(|p| p.name == name).unwrap();
            match &out.properties[index] {
                Column::U32(v) => v.clone(),
                other => panic!("{name}: {other:?}"),
            }
        };
        let (first, second, third, near) = (column("first"), column("second"), column("third"), column("near"));
        let csr = graph.out();
        for u in 0..graph.num_nodes() {
            // Largest three (with repeats, as the insertion keeps them).
            let mut ids: Vec<u32> = csr.neighbors(u).to_vec();
            ids.sort_unstable_by(|a, b| b.cmp(a));
            let at = |i: usize| ids.get(i).copied().unwrap_or(u32::MAX);
            assert_eq!((first[u as usize], second[u as usize], third[u as usize]), (at(0), at(1), at(2)), "node {u}");
            let mut distinct = std::collections::BTreeSet::new();
            for &v in csr.neighbors(u) {
                distinct.insert(v);
                distinct.extend(csr.neighbors(v).iter().copied());
            }
            distinct.remove(&u);
            assert_eq!(near[u as usize] as usize, distinct.len().min(64), "node {u}");
        }
    }
}

const CAVITIES: &str = include_str!("../../grail-lang/tests/programs/cavities.grail");

#[test]
fn exclusive_owns_sets_gathered_at_run_time() {
    let program = compile("cavities", CAVITIES);
    let options = GenOptions { seed: 2, max_weight: None };
    let mut graphs: Vec<Graph> = (0..30).map(random_simple_graph).collect();
    graphs.push(generate(&Generator::graph500(9), &options, true, &NoProgress).unwrap());
    for (g, graph) in graphs.iter().enumerate() {
        let csr = graph.out();
        let mut expected = vec![1u32; graph.num_nodes() as usize];
        for u in 0..graph.num_nodes() {
            for &v in csr.neighbors(u).iter().filter(|&&v| v != u).take(8) {
                expected[v as usize] += 1;
            }
        }
        for threads in [1, 3] {
            let out = run(&program, graph, threads);
            let Column::U32(hits) = &out.properties[0] else { panic!("hits is u32") };
            assert_eq!(hits, &expected, "graph {g}, {threads} threads");
        }
    }
}
