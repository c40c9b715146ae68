//! Small modules built by hand, as lowering will produce them: fixtures for the tests of the
//! passes and the emitters, and examples of what the IR looks like.

use crate::ir::*;

pub const LEVEL: PropertyId = PropertyId(0);

/// The data-driven BFS of `docs/language.md`: property 0 is `level`, param 0 is `source`.
pub fn bfs() -> Module {
    let node = |l: u32| Expr::local(LocalId(l), Type::Node);
    // kernel expand(next: u32): locals next, u, e, v
    let expand_body = Body {
        locals: vec![
            Local { name: "next".into(), ty: Type::U32 },
            Local { name: "u".into(), ty: Type::Node },
            Local { name: "e".into(), ty: Type::Edge },
            Local { name: "v".into(), ty: Type::Node },
        ],
        block: vec![Stmt::ForAll(Box::new(ForAll {
            var: LocalId(1),
            space: Space::Worklist,
            filter: None,
            schedule: Schedule::SERIAL,
            body: vec![Stmt::ForEach {
                var: LocalId(2),
                adjacency: Adjacency::OutEdges,
                node: node(1),
                schedule: Schedule::SERIAL,
                body: vec![
                    Stmt::Assign {
                        place: Place::Local(LocalId(3)),
                        value: Expr::new(
                            ExprKind::EdgeTarget(Box::new(Expr::local(LocalId(2), Type::Edge))),
                            Type::Node,
                        ),
                    },
                    Stmt::If {
                        cond: Expr::binary(
                            BinaryOp::Eq,
                            Expr::property(LEVEL, node(3), Type::U32),
                            Expr::inf(Type::U32),
                        ),
                        then: vec![
                            Stmt::Assign {
                                place: Place::Property { property: LEVEL, element: Box::new(node(3)) },
                                value: Expr::local(LocalId(0), Type::U32),
                            },
                            Stmt::Push { site: PushSite(0), value: node(3) },
                        ],
                        otherwise: vec![],
                        uniform: false,
                    },
                ],
            }],
        }))],
    };
    let source = Expr::new(ExprKind::Param(ParamId(0)), Type::Node);
    let main = Body {
        locals: vec![Local { name: "next".into(), ty: Type::U32 }],
        block: vec![
            Stmt::Assign {
                place: Place::Property { property: LEVEL, element: Box::new(source.clone()) },
                value: Expr::int(0, Type::U32),
            },
            Stmt::Assign { place: Place::Local(LocalId(0)), value: Expr::int(1, Type::U32) },
            Stmt::Iterate(Box::new(Iterate {
                id: OutlineId(0),
                until: Until::Empty {
                    kernel: KernelId(0),
                    args: vec![Expr::local(LocalId(0), Type::U32)],
                    initial: Some(Initial::Items(vec![source])),
                },
                body: vec![Stmt::Assign {
                    place: Place::Local(LocalId(0)),
                    value: Expr::binary(BinaryOp::Add, Expr::local(LocalId(0), Type::U32), Expr::int(1, Type::U32)),
                }],
                outlined: false,
            })),
        ],
    };
    Module {
        name: "bfs".into(),
        properties: vec![Property { name: "level".into(), owner: Owner::Node, ty: Type::U32, is_weight: false }],
        params: vec![Param { name: "source".into(), ty: Type::Node, default: None }],
        outputs: vec![LEVEL],
        kernels: vec![Kernel {
            name: "expand".into(),
            params: 1,
            reduction: None,
            body: expand_body,
            push_sites: vec![Aggregation::None],
        }],
        main,
        ..Module::default()
    }
}
