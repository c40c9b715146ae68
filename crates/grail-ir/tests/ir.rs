//! The IR on the language specification's BFS: it validates, prints readably, and every broken
//! invariant is caught with a message that says what is wrong.

use grail_ir::*;

use grail_ir::samples::bfs;

#[test]
fn bfs_validates_and_prints() {
    let module = bfs();
    validate(&module).unwrap();
    assert!(module.kernels[0].uses_worklist());
    let expected = "\
module bfs
node level: u32
param source: Node
output level

kernel expand(next: u32) {
    forall u in worklist {
        for e in out_edges(u) {
            v = dst(e)
            if (level[v] == INF:u32) {
                level[v] = next
                push#0[single] v
            }
        }
    }
}

fn main() {
    level[$source] = 0:u32
    next = 1:u32
    iterate#0 until empty: expand(next) initial [$source] {
        next = (next + 1:u32)
    }
}
";
    assert_eq!(print(&module), expected);
}

#[test]
fn pass_decisions_show_in_the_text() {
    let mut module = bfs();
    module.kernels[0].push_sites[0] = Aggregation::Block;
    let Stmt::Iterate(iterate) = &mut module.main.block[2] else { panic!("the third statement is the iterate") };
    iterate.outlined = true;
    validate(&module).unwrap();
    let text = print(&module);
    assert!(text.contains("push#0[block] v"), "{text}");
    assert!(text.contains("iterate#0 outlined until empty"), "{text}");
}

/// Breaks `bfs` with `edit` and checks the validator's message.
fn rejects(edit: impl FnOnce(&mut Module), message: &str) {
    let mut module = bfs();
    edit(&mut module);
    let err = validate(&module).unwrap_err().to_string();
    assert!(err.contains(message), "expected '{message}' in: {err}");
}

fn expand_items(module: &mut Module) -> &mut Block {
    let Stmt::ForAll(forall) = &mut module.kernels[0].body.block[0] else { panic!("a forall") };
    &mut forall.body
}

#[test]
fn broken_invariants_are_named() {
    let push = || Stmt::Push { site: PushSite(0), value: Expr::local(LocalId(0), Type::U32) };
    rejects(|m| expand_items(m).push(push()), "a worklist item has type u32, expected Node");
    rejects(
        |m| expand_items(m).push(Stmt::Push { site: PushSite(0), value: Expr::local(LocalId(1), Type::Node) }),
        "push site #0 is used 2 times",
    );
    rejects(
        |m| m.kernels[0].body.block.push(Stmt::Retry { value: Expr::local(LocalId(1), Type::Node) }),
        "a kernel's body holds only parallel loops",
    );
    rejects(
        |m| m.main.block.push(Stmt::Retry { value: Expr::local(LocalId(0), Type::U32) }),
        "`retry` outside a kernel's parallel loop",
    );
    rejects(
        |m| {
            let Stmt::ForAll(forall) = &mut m.kernels[0].body.block[0] else { unreachable!() };
            forall.space = Space::AllEdges;
            forall.var = LocalId(2);
            forall.body = vec![Stmt::Retry { value: Expr::local(LocalId(1), Type::Node) }];
        },
        "`retry` in a loop whose items are neither the worklist's nor all nodes",
    );
    rejects(|m| m.main.block.push(push()), "outside a kernel's parallel loop");
    rejects(
        |m| expand_items(m).push(Stmt::Invoke { kernel: KernelId(0), args: vec![], result: None }),
        "an invocation outside `main`",
    );
    rejects(
        |m| m.main.block.push(Stmt::Invoke { kernel: KernelId(0), args: vec![], result: None }),
        "expand takes 1 arguments, given 0",
    );
    rejects(
        |m| {
            let Stmt::Iterate(iterate) = &mut m.main.block[2] else { unreachable!() };
            iterate.body.push(Stmt::Print(vec![PrintArg::Text("x".into())]));
        },
        "`print` inside `iterate` or `pipe`",
    );
    rejects(
        |m| {
            expand_items(m).push(Stmt::ForAll(Box::new(ForAll {
                var: LocalId(3),
                space: Space::AllNodes,
                filter: None,
                schedule: Schedule::SERIAL,
                body: vec![],
            })))
        },
        "only a node's edges or neighbours can be iterated by a nested parallel loop",
    );
    rejects(|m| expand_items(m).push(Stmt::Break), "`break` or `continue` outside a loop");
    rejects(
        |m| expand_items(m).push(Stmt::Reduce { value: Expr::bool(true) }),
        "`reduce` in a kernel without a reduction result",
    );
    rejects(
        |m| {
            m.main.block[1] = Stmt::Assign { place: Place::Local(LocalId(0)), value: Expr::int(1, Type::U64) };
        },
        "the assigned value has type u64, expected u32",
    );
    rejects(
        |m| {
            let add = Expr::binary(BinaryOp::Add, Expr::local(LocalId(0), Type::U32), Expr::int(1, Type::U64));
            m.main.block[1] = Stmt::Assign { place: Place::Local(LocalId(0)), value: add };
        },
        "`+` between u32 and u64",
    );
    rejects(
        |m| {
            let atomic = Expr::new(
                ExprKind::Atomic {
                    op: AtomicOp::Min,
                    place: Place::Local(LocalId(0)),
                    operands: vec![Expr::int(1, Type::U32)],
                },
                Type::BOOL,
            );
            expand_items(m).push(Stmt::Eval(atomic));
        },
        "an atomic operation on a local variable",
    );
    rejects(|m| m.outputs.push(PropertyId(7)), "output #7 is not a node property");
    rejects(
        |m| {
            let bad = Expr::property(PropertyId(0), Expr::local(LocalId(2), Type::Edge), Type::U32);
            expand_items(m).push(Stmt::Eval(bad));
        },
        "the element of property level has type Edge, expected Node",
    );
}
