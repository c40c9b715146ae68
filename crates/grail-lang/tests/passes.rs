//! The optimization passes on programs written in grail: what each marks, where it leaves a
//! program alone, and the note that says why.

use grail_ir::opt::nested;
use grail_ir::{Aggregation, Module, OptConfig, ReduceOp, Schedule, Stmt, optimize, walk_block};
use grail_lang::{SourceMap, compile};

fn lower(source: &str) -> Module {
    let mut files = SourceMap::new();
    let file = files.add("test.grail", source);
    let (module, diagnostics) = compile(files.text(file), file, "test");
    module.unwrap_or_else(|| panic!("{diagnostics:?}"))
}

fn optimized(source: &str, config: &str) -> Module {
    optimize(lower(source), &config.parse().unwrap()).unwrap()
}

/// The schedule of every scheduled nested loop, by kernel name.
fn scheduled(module: &Module) -> Vec<(String, Schedule)> {
    let mut out = Vec::new();
    for kernel in &module.kernels {
        for stmt in &kernel.body.block {
            let Stmt::ForAll(phase) = stmt else { continue };
            if let Some((_, site)) = nested::site(phase) {
                let schedule = match site {
                    Stmt::ForAll(forall) => forall.schedule,
                    Stmt::ForEach { schedule, .. } => *schedule,
                    _ => unreachable!(),
                };
                out.push((kernel.name.clone(), schedule));
            }
        }
    }
    out
}

/// A pull over in-neighbours that only folds into one local: the schedulers take it as a fold.
const GATHER: &str = "
graph { node rank: f32; node next: f32; }
kernel gather() {
    forall v in G.nodes() {
        let mut incoming: f32 = 0.0;
        for u in v.in_neighbors() { incoming += u.rank; }
        v.next = incoming * 0.85;
    }
}
fn main() { invoke gather(); }
";

const BFS: &str = "
graph { node level: u32 = INF; }
param source: Node;
output level;
kernel expand(next: u32) {
    forall u in worklist {
        forall e in u.out_edges() {
            let v = e.dst;
            if v.level == INF { v.level = next; push(v); }
        }
    }
}
fn main() {
    source.level = 0;
    let mut next: u32 = 1;
    iterate expand(next) initial [source] { next += 1; }
}
";

#[test]
fn the_schedulers_take_a_nested_loop_at_the_end_of_its_item() {
    let module = optimized(BFS, "np=tb+fg");
    assert_eq!(
        scheduled(&module),
        [("expand".to_string(), Schedule { thread_block: true, warp: false, fine_grained: true })]
    );
    assert!(scheduled(&optimized(BFS, "none")).is_empty());
}

/// Whether each phase of `module`'s first kernel may post its hubs to the whole grid.
fn grid_shared(module: &Module) -> Vec<bool> {
    module.kernels[0]
        .body
        .block
        .iter()
        .map(|stmt| matches!(stmt, Stmt::ForAll(phase) if nested::grid_shared(phase)))
        .collect()
}

#[test]
fn the_grid_takes_hubs_only_of_loops_that_end_their_item_under_the_thread_block_scheduler() {
    // A loop that ends its item, the thread-block scheduler on: the item's thread may go on.
    assert_eq!(grid_shared(&optimized(BFS, "np=tb+fg")), [true]);
    assert_eq!(grid_shared(&optimized(BFS, "all")), [true]);
    // Without the thread-block scheduler, or unscheduled, nothing is posted.
    assert_eq!(grid_shared(&optimized(BFS, "np=wp+fg")), [false]);
    assert_eq!(grid_shared(&optimized(BFS, "none")), [false]);
    // Last in a branch that ends the item is the end of the item too.
    let branch = BFS
        .replace(
            "forall u in worklist {\n        forall e",
            "forall u in worklist {\n        if u.level != INF {\n        forall e",
        )
        .replace("push(v); }\n        }\n    }", "push(v); }\n        }\n        }\n    }");
    assert_eq!(grid_shared(&optimized(&branch, "all")), [true], "{branch}");
    // A statement of the item after the loop must wait for it: the block runs it.
    let after = BFS.replace("push(v); }\n        }\n    }", "push(v); }\n        }\n        u.level = next;\n    }");
    let module = optimized(&after, "all");
    assert_eq!(scheduled(&module).len(), 1, "{after}");
    assert_eq!(grid_shared(&module), [false]);
    // A fold's partial results go back to its item's thread.
    let module = optimized(GATHER, "all");
    assert_eq!(scheduled(&module).len(), 1);
    assert_eq!(grid_shared(&module), [false]);
}

#[test]
fn a_loop_whose_body_writes_what_its_item_reads_stays_serial() {
    let source = "
graph { node seen: u32; }
kernel count() {
    forall u in G.nodes() {
        let mut last: u32 = 0;
        forall v in u.neighbors() { last = v as u32; }
        u.seen = last;
    }
}
fn main() { invoke count(); }
";
    let module = optimized(source, "np=tb+wp+fg");
    assert!(scheduled(&module).is_empty());
    assert!(
        module.opt_notes.iter().any(|n| n.contains("stays serial") && n.contains("writes `last`")),
        "{:?}",
        module.opt_notes
    );
}

#[test]
fn a_fold_is_scheduled_and_a_float_minimum_leaves_out_the_fine_grained_scheduler() {
    let sum = GATHER;
    let module = optimized(sum, "np=tb+wp+fg");
    assert_eq!(scheduled(&module)[0].1, Schedule { thread_block: true, warp: true, fine_grained: true });
    let Stmt::ForAll(phase) = &module.kernels[0].body.block[0] else { unreachable!() };
    let (_, site) = nested::site(phase).unwrap();
    let fold = nested::fold(site, &module.kernels[0].body.locals).unwrap();
    assert_eq!(fold.op, ReduceOp::Sum);

    let min = sum.replace("incoming += u.rank;", "incoming = min(incoming, u.rank);");
    let module = optimized(&min, "np=tb+wp+fg");
    assert_eq!(scheduled(&module)[0].1, Schedule { thread_block: true, warp: true, fine_grained: false });
    assert!(module.opt_notes.iter().any(|n| n.contains("fine-grained")), "{:?}", module.opt_notes);

    // A loop that does more than fold is not a fold.
    let more = sum.replace("incoming += u.rank;", "incoming += u.rank; u.next = 0.0;");
    assert!(scheduled(&optimized(&more, "np=tb+wp+fg")).is_empty());
}

#[test]
fn warp_aggregation_marks_every_push_and_block_aggregation_needs_block_wide_rounds() {
    let module = optimized(BFS, "coop=warp");
    assert_eq!(module.kernels[0].push_sites, [Aggregation::Warp]);
    // IrGL's Listing 9: the edge loop made uniform by the schedulers, the push under the
    // non-uniform `if` recorded, the block-level push at the focal point ending the iteration.
    for np in ["tb+wp+fg", "tb", "fg", "wp+fg"] {
        let module = optimized(BFS, &format!("np={np},coop=block"));
        assert_eq!(module.kernels[0].push_sites, [Aggregation::Block], "np={np}");
    }
    // The warp scheduler alone, or none, leaves no round that a whole block makes together.
    for np in ["wp", "serial"] {
        let module = optimized(BFS, &format!("np={np},coop=block"));
        assert_eq!(module.kernels[0].push_sites, [Aggregation::Warp], "np={np}");
        assert!(
            module.opt_notes.iter().any(|n| n.contains("push #0 is not in a nested loop")),
            "{:?}",
            module.opt_notes
        );
    }
    // A push inside a sequential loop of the scheduled body may run several times an iteration.
    let looped = BFS.replace("push(v);", "for k in 0..2 { push(v); }");
    let module = optimized(&looped, "np=tb+wp+fg,coop=block");
    assert_eq!(module.kernels[0].push_sites, [Aggregation::Warp]);
}

/// The ids of the outlined regions.
fn outlined(module: &Module) -> Vec<u32> {
    let mut ids = Vec::new();
    walk_block(&module.main.block, &mut |stmt| match stmt {
        Stmt::Iterate(iterate) if iterate.outlined => ids.push(iterate.id.0),
        Stmt::Pipe(pipe) if pipe.outlined => ids.push(pipe.id.0),
        _ => {}
    });
    ids
}

#[test]
fn outlining_takes_the_root_of_an_outline_tree_and_says_why_it_cannot() {
    assert_eq!(outlined(&optimized(BFS, "outline=all")), [0]);
    assert!(outlined(&optimized(BFS, "none")).is_empty());
    // (`print` cannot stand in a region at all: the language rejects it.)
    let with_sets = BFS
        .replace("graph { node level: u32 = INF; }", "graph { node level: u32 = INF; set comp; }")
        .replace("next += 1;", "next += 1; G.comp.union(source, source);");
    let module = optimized(&with_sets, "outline=all");
    assert!(outlined(&module).is_empty());
    assert!(
        module.opt_notes.iter().any(|n| n == "iterate#0 is not outlined: its host code uses union-find sets"),
        "{:?}",
        module.opt_notes
    );
}

#[test]
fn a_root_whose_child_starts_a_worklist_stays_on_the_host_and_the_child_moves() {
    let source = "
graph { node level: u32 = INF; }
param source: Node;
kernel expand(next: u32) {
    forall u in worklist { forall v in u.neighbors() { if v.level == INF { v.level = next; push(v); } } }
}
fn main() {
    let mut rounds: u32 = 0;
    iterate {
        source.level = 0;
        let mut next: u32 = 1;
        iterate expand(next) initial [source] { next += 1; }
        rounds += 1;
    } until rounds >= 2;
}
";
    // Regions are numbered as lowering meets their ends: the inner one is #0.
    let module = optimized(source, "outline=all");
    assert_eq!(outlined(&module), [0], "{:?}", module.opt_notes);
    assert!(
        module.opt_notes.iter().any(|n| n.contains("iterate#1 is not outlined") && n.contains("worklist of its own")),
        "{:?}",
        module.opt_notes
    );
}

#[test]
fn every_configuration_of_the_suite_validates() {
    let configs: Vec<OptConfig> =
        ["none", "all", "np=tb", "np=wp+fg,coop=block", "outline=all,backoff=on,ldg=on", "all,block=64,grid=1"]
            .iter()
            .map(|c| c.parse().unwrap())
            .collect();
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../grail-algos/programs");
    for entry in std::fs::read_dir(dir).unwrap() {
        let path = entry.unwrap().path();
        if path.extension().is_none_or(|e| e != "grail") {
            continue;
        }
        let source = std::fs::read_to_string(&path).unwrap();
        for config in &configs {
            let module = lower(&source);
            optimize(module, config).unwrap_or_else(|e| panic!("{} with {config}: {e}", path.display()));
        }
    }
}

/// A kernel whose item gathers a node and its neighbours and owns them with `exclusive`; the
/// `exclusive` is `WHERE` in the item (`{}` stands for it).
fn claiming(shape: &str, main: &str) -> String {
    let exclusive = "exclusive(near.first(n)) { for i in 0..n { near[i].hits += 1; } } else { retry(u); }";
    format!(
        "graph {{ node hits: u32; }}
output hits;
kernel claim() {{
    forall u in worklist {{
        let mut near: [Node; 4];
        let mut n: u32 = 1;
        near[0] = u;
        for v in u.neighbors() {{ if n < 4 {{ near[n] = v; n += 1; }} }}
        {}
    }}
}}
fn main() {{ {main} }}",
        shape.replace("{}", exclusive)
    )
}

#[test]
fn marks_decide_an_exclusive_of_the_item_itself_in_an_outlined_region() {
    use grail_ir::KernelId;
    use grail_ir::opt::marks;
    let outlined = "iterate claim() initial G.nodes();";
    // A statement of the item, in a region the outlining pass moves onto the device.
    let module = optimized(&claiming("{}", outlined), "all,marks=on");
    let site = marks::site(&module, KernelId(0), 0).unwrap_or_else(|e| panic!("{e}"));
    let Stmt::ForAll(phase) = &module.kernels[0].body.block[0] else { panic!("a phase") };
    assert!(matches!(phase.body[site], Stmt::Lock { kind: grail_ir::LockKind::Exclusive, .. }));
    assert!(module.opt_notes.iter().all(|n| !n.contains("marks")), "{:?}", module.opt_notes);
    // Each reason it keeps its locks, in the pass's note.
    let refused = [
        (claiming("if n > 1 { {} }", outlined), "all,marks=on", "a statement of the item itself"),
        (claiming("{}", outlined), "all,marks=on,outline=none", "no outlined region invokes it"),
        (claiming("atomic(u) { u.hits += 0; } {}", outlined), "all,marks=on", "takes a lock before"),
        (claiming("{}", outlined).replace("retry(u)", "push(u)"), "all,marks=on,local=on", "local worklists"),
    ];
    for (source, config, why) in refused {
        let module = optimized(&source, config);
        let site = marks::site(&module, KernelId(0), 0);
        assert!(site.as_ref().is_err_and(|e| e.contains(why)), "{config}: {site:?}");
        assert!(
            module.opt_notes.iter().any(|n| n.contains("takes locks, not marks") && n.contains(why)),
            "{config}: {:?}",
            module.opt_notes
        );
    }
    // Without the key, nothing is noted.
    let module = optimized(&claiming("if n > 1 { {} }", outlined), "all");
    assert!(module.opt_notes.iter().all(|n| !n.contains("marks")), "{:?}", module.opt_notes);
}

/// Worklist loops as one queue (`queue=on`): a label-correcting loop whose kernel only lowers by
/// `atomic_min` is queued; one that also writes plainly, adds, or has host code between its
/// invocations keeps its rounds, and the note says why.
#[test]
fn worklist_queues_take_only_loops_whose_order_does_not_matter() {
    use grail_ir::opt::queue;
    const LOWER: &str = "
graph { node level: u32 = INF; node seen: u32; }
param source: Node;
kernel lower() {
    forall u in worklist {
        for v in u.neighbors() {
            if atomic_min(v.level, u.level + 1) { WRITE push(v); }
        }
    }
}
fn main() { source.level = 0; iterate lower() initial [source] BODY }
";
    let program = |write: &str, body: &str| LOWER.replace("WRITE", write).replace("BODY", body);
    let iterate_of = |module: &Module| {
        let mut found = None;
        walk_block(&module.main.block, &mut |stmt| {
            if let Stmt::Iterate(iterate) = stmt {
                found = Some((**iterate).clone());
            }
        });
        found.expect("the program has an iterate")
    };
    let queued = optimized(&program("", ""), "all,queue=on");
    assert!(queue::queued(&queued, &iterate_of(&queued)).is_some(), "{:?}", queued.opt_notes);
    // Off unless asked for.
    let rounds = optimized(&program("", ""), "all");
    assert!(queue::queued(&rounds, &iterate_of(&rounds)).is_none());
    for (write, body, why) in [
        ("v.seen = 1;", "", "otherwise than only by atomic_min"),
        ("atomic_add(v.seen, 1);", "", "otherwise than only by atomic_min"),
        ("atomic_max(v.level, 0);", "", "otherwise than only by atomic_min"),
    ] {
        let module = optimized(&program(write, body), "all,queue=on");
        assert!(queue::queued(&module, &iterate_of(&module)).is_none(), "{write}");
        assert!(module.opt_notes.iter().any(|n| n.contains(why)), "{write}: {:?}", module.opt_notes);
    }
    // Host code between invocations: the loop's rounds are visible, so it keeps them.
    let counted = LOWER
        .replace("WRITE", "")
        .replace("fn main() {", "fn main() { let mut rounds: u32 = 0;")
        .replace("BODY", "{ rounds += 1; }");
    let module = optimized(&counted, "all,queue=on");
    assert!(queue::queued(&module, &iterate_of(&module)).is_none());
    assert!(module.opt_notes.iter().any(|n| n.contains("host code runs between its rounds")), "{:?}", module.opt_notes);
}

/// Items in stages (`stages=on`, in `all`): a phase that claims with `exclusive` runs its items
/// in stages with warp-uniform trips; without `converge`, or where no `exclusive` claims, it
/// does not, and a claiming phase's note says why.
#[test]
fn items_run_in_stages_where_a_phase_claims_with_exclusive() {
    use grail_ir::KernelId;
    use grail_ir::opt::stages;
    let outlined = "iterate claim() initial G.nodes();";
    let phase_of = |module: &Module| match &module.kernels[0].body.block[0] {
        Stmt::ForAll(phase) => phase.clone(),
        _ => panic!("a phase"),
    };
    let module = optimized(&claiming("{}", outlined), "all");
    assert!(stages::staged(&module, KernelId(0), &phase_of(&module)));
    assert!(module.opt_notes.iter().all(|n| !n.contains("stages")), "{:?}", module.opt_notes);
    let off = optimized(&claiming("{}", outlined), "all,stages=off");
    assert!(!stages::staged(&off, KernelId(0), &phase_of(&off)));
    let module = optimized(&claiming("{}", outlined), "all,converge=off");
    assert!(!stages::staged(&module, KernelId(0), &phase_of(&module)));
    assert!(
        module.opt_notes.iter().any(|n| n.contains("do not run in stages") && n.contains("converge=on")),
        "{:?}",
        module.opt_notes
    );
    // No claim: a short item, left as it is, without a note.
    let plain = "graph { node hits: u32; }
output hits;
kernel count() { forall u in G.nodes() { for v in u.neighbors() { atomic_add(v.hits, 1); } } }
fn main() { invoke count(); }";
    let module = optimized(plain, "all");
    assert!(!stages::staged(&module, KernelId(0), &phase_of(&module)));
    assert!(module.opt_notes.iter().all(|n| !n.contains("stages")), "{:?}", module.opt_notes);
}
