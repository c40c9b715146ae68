//! What a partitioned run needs to know of a program, on programs written in grail: how each
//! kernel writes each property (the operator that merges ghosts into owners) and why a program
//! cannot run partitioned at all.

use grail_ir::analysis::{PropertyWrites, kernel_property_writes, partition_obstacles};
use grail_ir::{KernelId, Module};
use grail_lang::{SourceMap, compile};

fn lower(source: &str) -> Module {
    let mut files = SourceMap::new();
    let file = files.add("test.grail", source);
    let (module, diagnostics) = compile(files.text(file), file, "test");
    module.unwrap_or_else(|| panic!("{diagnostics:?}"))
}

fn suite_program(name: &str) -> Module {
    let path = format!("{}/../grail-algos/programs/{name}.grail", env!("CARGO_MANIFEST_DIR"));
    lower(&std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{path}: {e}")))
}

/// How kernel `kernel` writes property `property`, both by name.
fn writes(module: &Module, kernel: &str, property: &str) -> PropertyWrites {
    let k = module.kernels.iter().position(|k| k.name == kernel).unwrap_or_else(|| panic!("no kernel {kernel}"));
    let p = module.properties.iter().position(|p| p.name == property).unwrap_or_else(|| panic!("no {property}"));
    kernel_property_writes(module, KernelId(k as u32))[p]
}

/// The obstacles, each of which must mention every one of its `needles`, one obstacle per list.
fn assert_obstacles(module: &Module, expected: &[&[&str]]) {
    let obstacles = partition_obstacles(module);
    assert_eq!(obstacles.len(), expected.len(), "{obstacles:#?}");
    for needles in expected {
        assert!(
            obstacles.iter().any(|o| needles.iter().all(|n| o.contains(n))),
            "no obstacle mentions all of {needles:?}: {obstacles:#?}"
        );
    }
}

/// Plain writes through a node other than the loop's item (a neighbour).
const PLAIN_REMOTE: PropertyWrites =
    PropertyWrites { plain: true, min: false, max: false, add: false, and: false, or: false, cas: false, remote: true };

#[test]
fn bfs_writes_its_level_plainly_and_runs_partitioned() {
    let module = suite_program("bfs");
    assert_eq!(writes(&module, "expand", "level"), PLAIN_REMOTE);
    assert!(partition_obstacles(&module).is_empty());
}

#[test]
fn sssp_merges_distances_by_min() {
    let module = suite_program("sssp_wl");
    assert_eq!(writes(&module, "relax", "dist"), PropertyWrites { min: true, remote: true, ..Default::default() });
    assert!(!writes(&module, "relax", "weight").any());
    assert!(partition_obstacles(&module).is_empty());
}

#[test]
fn atomic_add_and_atomic_sub_both_merge_by_sum() {
    // pr_residual also claims nodes with `single`, which a part can do alone.
    let module = suite_program("pr_residual");
    assert_eq!(
        writes(&module, "push_residual", "residual"),
        PropertyWrites { add: true, remote: true, ..Default::default() }
    );
    // `u.rank += r` writes the item only: no ghost can change.
    assert_eq!(writes(&module, "push_residual", "rank"), PropertyWrites { plain: true, ..Default::default() });
    assert!(partition_obstacles(&module).is_empty());
}

#[test]
fn writes_through_called_functions_count() {
    let module = lower(
        "
graph { node best: u32; node seen: bool; }
fn offer(v: Node, x: u32) { atomic_max(v.best, x); }
fn mark(v: Node) { v.seen = true; }
kernel spread() {
    forall u in G.nodes() {
        forall v in u.neighbors() { offer(v, u as u32); mark(v); }
        atomic_or(u.seen, true);
    }
}
fn main() { invoke spread(); }
",
    );
    assert_eq!(writes(&module, "spread", "best"), PropertyWrites { max: true, remote: true, ..Default::default() });
    assert_eq!(
        writes(&module, "spread", "seen"),
        PropertyWrites { plain: true, or: true, remote: true, ..Default::default() }
    );
    assert!(partition_obstacles(&module).is_empty());
}

#[test]
fn collections_sets_and_in_edges_are_obstacles() {
    // A set runs partitioned where `find` gives values (its classes joined across the parts),
    // not where a find result is a node to read or a union's result is used.
    assert!(partition_obstacles(&suite_program("cc")).is_empty());
    assert!(partition_obstacles(&suite_program("cc_afforest_set")).is_empty());
    assert_obstacles(
        &suite_program("mst"),
        &[
            &["kernel `lightest_weight`", "`find` result as a node"],
            &["kernel `lightest_edge`", "`find` result as a node"],
            &["kernel `hook`", "`union` result"],
            &["kernel `hook`", "`as Edge`"],
            &["kernel `lightest_edge`", "turns an edge into a number"],
        ],
    );
    // In-neighbours of a loop's item are on its part; in-edges as edges (ids, properties) are not.
    assert!(partition_obstacles(&suite_program("pr")).is_empty());
    let dmr = partition_obstacles(&suite_program("dmr"));
    for name in ["`points`", "`tris`", "`faces`"] {
        assert!(dmr.iter().any(|o| o.contains(name) && o.contains("collection")), "{dmr:#?}");
    }
    let module = lower(
        "
graph { node fan: u32; }
kernel count() { forall v in G.nodes() { for e in v.in_edges() { v.fan += 1; } } }
fn main() -> u32 { invoke count(); return (0 as Node).in_degree(); }
",
    );
    assert_obstacles(&module, &[&["kernel `count`", "in-edges as edges"], &["`main`", "in-degrees"]]);
    // Another node's in-neighbours or in-degree are on its own part; its out-degree is not.
    let module = lower(
        "
graph { node fan: u32; }
kernel count() {
    forall v in G.nodes() {
        for u in v.in_neighbors() { v.fan += u.degree(); }
        for w in v.neighbors() { v.fan += w.in_degree(); }
    }
}
fn main() { invoke count(); }
",
    );
    assert_obstacles(&module, &[&["kernel `count`", "other than its loop's item"]]);
    assert!(grail_ir::analysis::reads_ghost_degrees(&module));
    assert!(!grail_ir::analysis::reads_ghost_degrees(&suite_program("pr")));
    assert!(grail_ir::analysis::reads_ghost_degrees(&suite_program("bfs_do")));
}

#[test]
fn node_locks_are_an_obstacle_and_claims_are_not() {
    let module = lower(
        "
graph { node count: u32; }
kernel bump() {
    forall u in G.nodes() {
        forall v in u.neighbors() { atomic(v) { v.count += 1; } }
        exclusive(u) { u.count += 1; }
    }
}
kernel reset() { forall u in G.nodes() { single(u) { u.count = 0; } } }
fn main() { invoke bump(); invoke reset(); }
",
    );
    assert_obstacles(&module, &[&["kernel `bump`", "`atomic` and `exclusive`", "lock"]]);
}

#[test]
fn properties_holding_handles_are_obstacles() {
    let module = lower(
        "
graph { node parent: Node; node via: Edge; node depth: u32; }
kernel root() { forall u in G.nodes() { u.parent = u; u.depth = 0; } }
fn main() { invoke root(); }
",
    );
    assert_obstacles(
        &module,
        &[&["property `parent`", "a Node", "local ids"], &["property `via`", "an Edge", "local ids"]],
    );
}

#[test]
fn node_parameters_are_for_main_only() {
    let module = lower(
        "
graph { node hops: u32 = INF; }
param source: Node;
param target: Node;
param limit: u32 = 3;
fn is_target(u: Node) -> bool { return u == target; }
fn is_source(u: Node) -> bool { return u == source; }
kernel mark() {
    forall u in G.nodes() where u.hops > limit {
        if u == source || is_target(u) { u.hops = 0; }
    }
}
fn main() -> bool { invoke mark(); source.hops = 0; return is_source(target); }
",
    );
    assert_obstacles(
        &module,
        &[
            &["kernel `mark`", "Node parameter `source`", "`main`"],
            &["function `is_target` (called from the kernel `mark`)", "Node parameter `target`"],
        ],
    );
}

#[test]
fn integers_turned_into_nodes_or_edges_in_kernels_are_obstacles() {
    let module = lower(
        "
graph { node next: u32; node seen: bool; node pick: u64; edge used: bool; }
fn edge_of(u: Node) -> Edge { return u.pick as Edge; }
kernel follow() {
    forall u in G.nodes() {
        let v = u.next as Node;
        v.seen = true;
        let w = v as Node;
        w.seen = true;
    }
}
kernel choose() { forall u in G.nodes() where u.pick != INF { edge_of(u).used = true; } }
kernel ids() { forall u in G.nodes() { u.next = u as u32; } }
fn main() { (0 as Node).seen = true; invoke follow(); invoke choose(); invoke ids(); }
",
    );
    assert_obstacles(
        &module,
        &[
            &["kernel `follow`", "integer into a node (`as Node`)"],
            &["function `edge_of` (called from the kernel `choose`)", "integer into an edge (`as Edge`)"],
        ],
    );
}

#[test]
fn sequential_loops_over_the_whole_graph_in_kernels_are_obstacles() {
    let module = lower(
        "
graph { node total: u64; }
kernel sum_all() {
    forall u in G.nodes() {
        let mut s: u64 = 0;
        for v in G.nodes() { s += v.degree() as u64; }
        u.total = s;
    }
}
kernel edges_all() { forall u in G.nodes() where u.degree() == 0 { for e in G.edges() { u.total += 1; } } }
kernel scale() { forall u in G.nodes() { u.total = u.total / G.num_nodes() as u64; } }
fn main() {
    for v in G.nodes() { v.total = 1; }
    invoke sum_all();
    invoke edges_all();
    invoke scale();
}
",
    );
    // `for v in G.nodes()` casts its counter to a node: the loop is reported, not the cast (nor
    // `v.degree()`: a part holds every ghost's out-degree).
    assert_obstacles(
        &module,
        &[&["kernel `sum_all`", "every node", "G.nodes()"], &["kernel `edges_all`", "every edge", "G.edges()"]],
    );
}

#[test]
fn two_merge_operators_on_one_property_in_one_kernel_are_an_obstacle() {
    let module = lower(
        "
graph { node x: u64; node y: u64; node z: u32; }
fn lower_x(v: Node) { atomic_min(v.x, 1); }
kernel mix() {
    forall u in G.nodes() {
        forall v in u.neighbors() {
            lower_x(v);
            atomic_add(v.x, 2);
            atomic_max(v.y, 3);
            v.y = 4;
            atomic_cas(v.z, 0, 1);
            v.z = 2;
        }
    }
}
kernel add_x() { forall u in G.nodes() { atomic_add(u.x, 1); } }
fn main() { invoke mix(); invoke add_x(); }
",
    );
    let remote = PropertyWrites { remote: true, ..Default::default() };
    assert_eq!(writes(&module, "mix", "x"), PropertyWrites { min: true, add: true, ..remote });
    assert_eq!(writes(&module, "mix", "y"), PropertyWrites { plain: true, max: true, ..remote });
    assert_eq!(writes(&module, "mix", "z"), PropertyWrites { plain: true, cas: true, ..remote });
    assert!(!writes(&module, "add_x", "x").remote, "add_x writes its item only");
    // Only `x` in `mix`: `add_x` alone merges `x` by sum, and invocations merge one at a time.
    assert_obstacles(&module, &[&["kernel `mix`", "property `x`", "atomic_min and atomic_add"]]);
}

#[test]
fn retrying_a_node_other_than_the_item_is_an_obstacle() {
    // A ghost retried on a part would run where its edges are not; retrying the item (a lock
    // lost, say) stays on the item's part.
    let module = lower(
        "
graph { node dist: u64 = INF; node tries: u32; edge weight: u32; }
kernel near() {
    forall u in worklist {
        forall e in u.out_edges() {
            let v = e.dst;
            if atomic_min(v.dist, u.dist + e.weight as u64) { retry(v); }
        }
    }
}
kernel again() {
    forall u in worklist {
        u.tries += 1;
        if u.tries < 3 { retry(u); }
    }
}
fn main() { iterate near() initial [0 as Node]; iterate again() initial [0 as Node]; }
",
    );
    assert_obstacles(&module, &[&["kernel `near`", "retries a node other than its loop's item"]]);
    // The suite's near-far SSSP retries neighbours.
    let obstacles = partition_obstacles(&suite_program("sssp_nf"));
    assert!(obstacles.iter().any(|o| o.contains("retries a node other")), "{obstacles:#?}");
}

#[test]
fn every_suite_program_is_analysed() {
    let dir = format!("{}/../grail-algos/programs", env!("CARGO_MANIFEST_DIR"));
    let mut partitionable = Vec::new();
    for entry in std::fs::read_dir(&dir).unwrap() {
        let path = entry.unwrap().path();
        if path.extension().is_some_and(|e| e == "grail") {
            let module = lower(&std::fs::read_to_string(&path).unwrap());
            if partition_obstacles(&module).is_empty() {
                partitionable.push(path.file_stem().unwrap().to_string_lossy().into_owned());
            }
        }
    }
    for name in ["bfs", "sssp_wl", "pr_residual", "pr_push", "cc_lp", "mis"] {
        assert!(partitionable.iter().any(|p| p == name), "{name} not among {partitionable:?}");
    }
    // Triangle counting merges a neighbour's adjacency, which a ghost does not have.
    assert!(!partitionable.iter().any(|p| p == "tri"), "{partitionable:?}");
}

#[test]
fn remote_reads_are_found_where_kernels_read_through_neighbours() {
    let read = |program: &str, property: &str| {
        let module = suite_program(program);
        let p = module.properties.iter().position(|p| p.name == property).unwrap();
        grail_ir::analysis::remote_reads(&module)[p]
    };
    assert!(read("bfs", "level"), "bfs tests its neighbours' levels");
    assert!(read("sssp_wl", "dist"), "atomic_min's answer decides the push");
    assert!(read("pr_residual", "residual"), "a neighbour's residual decides the push");
    assert!(read("cc_lp", "label"));
    // Push PageRank only adds into its neighbours (statements whose value is unused) and reads
    // its own nodes' ranks.
    assert!(!read("pr_push", "incoming"));
    assert!(!read("pr_push", "rank"));
}

/// An input property is no obstacle: its values go to each node's owner and its ghosts.
#[test]
fn an_input_property_is_no_obstacle() {
    let module = lower(
        "graph { node start: u64; node twice: u64; }\ninput start;\n\
         kernel double() { forall u in G.nodes() { u.twice = 2 * u.start; } }\nfn main() { invoke double(); }\n",
    );
    assert_obstacles(&module, &[]);
}

#[test]
fn defaults_that_depend_on_the_node_alone_are_found() {
    use grail_ir::analysis::node_local_defaults;
    for program in ["bfs", "bfs_do", "sssp_wl", "sssp_ds", "pr_push"] {
        let module = suite_program(program);
        assert!(module.defaults.is_some(), "{program} has initialisers");
        assert_eq!(node_local_defaults(&module), module.defaults, "{program}");
    }
    // No initialiser, no defaults kernel.
    let module = lower(
        "graph { node seen: bool; } kernel mark() { forall u in G.nodes() { u.seen = true; } } fn main() { invoke mark(); }",
    );
    assert_eq!(module.defaults, None);
    assert_eq!(node_local_defaults(&module), None);
    // A value from a parameter or the graph's size is the same on every part; the node's own
    // number is its global id on any part.
    let module = lower(
        "graph { node a: u64 = scale * 2; node b: u32 = G.num_nodes(); }
param scale: u64 = 3;
kernel touch() { forall u in G.nodes() { u.a += (u as u32) as u64; } }
fn main() { invoke touch(); }",
    );
    assert!(node_local_defaults(&module).is_some());
}

/// Whether kernel `kernel` pushes every node whose `property` it writes
/// (`grail_ir::analysis::pushed_writes`), both by name.
fn pushed(module: &Module, kernel: &str, property: &str) -> bool {
    let k = module.kernels.iter().position(|k| k.name == kernel).unwrap_or_else(|| panic!("no kernel {kernel}"));
    let p = module.properties.iter().position(|p| p.name == property).unwrap_or_else(|| panic!("no {property}"));
    grail_ir::analysis::pushed_writes(module, KernelId(k as u32))[p]
}

#[test]
fn the_suites_worklist_kernels_push_every_node_they_change() {
    assert!(pushed(&suite_program("bfs"), "expand", "level"));
    assert!(pushed(&suite_program("bfs_async"), "lower", "level"));
    let bfs_do = suite_program("bfs_do");
    assert!(pushed(&bfs_do, "top_down", "level"), "atomic_cas as the last operand of `&&`");
    assert!(pushed(&bfs_do, "bottom_up", "level"), "an assignment, then push");
    assert!(pushed(&suite_program("sssp_wl"), "relax", "dist"), "push(e.dst) after atomic_min(e.dst.dist, ..)");
    let ds = suite_program("sssp_ds");
    assert!(pushed(&ds, "relax", "dist"));
    assert!(!pushed(&ds, "relax", "relaxed"), "u.relaxed is written without a push");
    let lp = suite_program("cc_lp");
    assert!(pushed(&lp, "propagate", "label"));
    assert!(!pushed(&lp, "init_labels", "label"), "a topology-driven kernel pushes nothing");
}

#[test]
fn a_write_counts_as_pushed_only_when_the_push_surely_follows() {
    let program = |body: &str| {
        lower(&format!(
            "graph {{ node d: u32 = INF; }}\nparam source: Node;\noutput d;\n\
             kernel k() {{ forall u in worklist {{ forall v in u.neighbors() {{ {body} }} }} }}\n\
             fn main() {{ source.d = 0; iterate k() initial [source] }}"
        ))
    };
    let cases = [
        ("if atomic_min(v.d, u.d + 1) { push(v); }", true),
        ("if v.d > 3 && atomic_min(v.d, u.d + 1) { push(v); }", true),
        ("atomic_min(v.d, u.d + 1); push(v);", true),
        ("v.d = u.d + 1; let w = v; push(w);", false),
        ("if atomic_min(v.d, u.d + 1) && v.d > 3 { push(v); }", false),
        ("if atomic_min(v.d, u.d + 1) || v.d > 3 { push(v); }", false),
        ("if atomic_min(v.d, u.d + 1) { if v.d > 2 { push(v); } }", false),
        ("if atomic_min(v.d, u.d + 1) { push(u); }", false),
        ("v.d = u.d + 1; if v.d > 2 { push(v); }", false),
        ("v.d = u.d + 1;", false),
    ];
    for (body, expected) in cases {
        assert_eq!(pushed(&program(body), "k", "d"), expected, "{body}");
    }
}

#[test]
fn a_kernel_with_local_worklists_lists_no_write_as_pushed() {
    // Its pushes may run in the pushing thread, within the invocation, and never reach the
    // output worklist.
    let mut module = suite_program("bfs_async");
    assert!(pushed(&module, "lower", "level"));
    module.opt.local = true;
    assert!(!pushed(&module, "lower", "level"));
}
