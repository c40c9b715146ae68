//! Modules the targets' tests share.

#![allow(dead_code)]

use grail_ir::*;

pub fn local(name: &str, ty: Type) -> Local {
    Local { name: name.into(), ty }
}

/// Components by union-find plus a sum of a per-node score: sets, locks, reductions, structs,
/// functions, filters, ranges, float atomics and both adjacency directions.
pub fn kitchen_sink() -> Module {
    let f64_ = Type::Scalar(Scalar::F64);
    let pair = StructId(0);
    let node = |l: u32| Expr::local(LocalId(l), Type::Node);
    let score = PropertyId(1);
    // fn half(x: f64) -> f64 { return x * 0.5; }
    let half = Function {
        name: "half".into(),
        params: 1,
        result: f64_,
        body: Body {
            locals: vec![local("x", f64_)],
            block: vec![Stmt::Return(Some(Expr::binary(
                BinaryOp::Mul,
                Expr::local(LocalId(0), f64_),
                Expr::new(ExprKind::Const(Const::Float(0.5)), f64_),
            )))],
        },
    };
    // kernel join(): forall u in nodes where degree(u) > 0 { for v in neighbors(u) { union } }
    let join = Kernel {
        name: "join".into(),
        params: 0,
        reduction: None,
        push_sites: vec![],
        body: Body {
            locals: vec![local("u", Type::Node), local("v", Type::Node), local("w", Type::Node)],
            block: vec![Stmt::ForAll(Box::new(ForAll {
                var: LocalId(0),
                space: Space::AllNodes,
                filter: Some(Expr::binary(
                    BinaryOp::Gt,
                    Expr::new(ExprKind::Degree { node: Box::new(node(0)), reverse: false }, Type::U32),
                    Expr::int(0, Type::U32),
                )),
                schedule: Schedule::SERIAL,
                body: vec![
                    Stmt::ForAll(Box::new(ForAll {
                        var: LocalId(1),
                        space: Space::Adjacent(Adjacency::OutNeighbors, node(0)),
                        filter: None,
                        schedule: Schedule { thread_block: true, warp: true, fine_grained: true },
                        body: vec![Stmt::Eval(Expr::new(
                            ExprKind::SetUnion { set: SetId(0), a: Box::new(node(0)), b: Box::new(node(1)) },
                            Type::BOOL,
                        ))],
                    })),
                    Stmt::ForEach {
                        var: LocalId(2),
                        adjacency: Adjacency::InNeighbors,
                        node: node(0),
                        schedule: Schedule::SERIAL,
                        body: vec![Stmt::Lock {
                            kind: LockKind::Exclusive,
                            elements: vec![node(0), node(2)],
                            body: vec![Stmt::Eval(Expr::new(
                                ExprKind::Atomic {
                                    op: AtomicOp::Add,
                                    place: Place::Property { property: score, element: Box::new(node(2)) },
                                    operands: vec![Expr::new(
                                        ExprKind::Call(
                                            FunctionId(0),
                                            vec![Expr::new(ExprKind::Const(Const::Float(1.0)), f64_)],
                                        ),
                                        f64_,
                                    )],
                                },
                                Type::BOOL,
                            ))],
                            otherwise: vec![Stmt::Retry { value: node(0) }],
                        }],
                    },
                ],
            }))],
        },
    };
    // kernel total(limit: u32) -> sum f64: forall i in 0..limit { p = Pair{..}; single(i) { reduce } }
    let total = Kernel {
        name: "total".into(),
        params: 1,
        reduction: Some((ReduceOp::Sum, f64_)),
        push_sites: vec![],
        body: Body {
            locals: vec![local("limit", Type::U32), local("i", Type::U32), local("p", Type::Struct(pair))],
            block: vec![Stmt::ForAll(Box::new(ForAll {
                var: LocalId(1),
                space: Space::Range(Expr::int(0, Type::U32), Expr::local(LocalId(0), Type::U32)),
                filter: None,
                schedule: Schedule::SERIAL,
                body: vec![
                    Stmt::Assign {
                        place: Place::Local(LocalId(2)),
                        value: Expr::new(
                            ExprKind::Struct(
                                pair,
                                vec![
                                    Expr::cast(Expr::local(LocalId(1), Type::U32), Type::Node),
                                    Expr::new(ExprKind::Const(Const::Inf), f64_),
                                ],
                            ),
                            Type::Struct(pair),
                        ),
                    },
                    Stmt::Lock {
                        kind: LockKind::Single,
                        elements: vec![Expr::new(
                            ExprKind::Field(Box::new(Expr::local(LocalId(2), Type::Struct(pair))), 0),
                            Type::Node,
                        )],
                        body: vec![Stmt::Reduce {
                            value: Expr::new(
                                ExprKind::Builtin(
                                    Builtin::Min,
                                    vec![
                                        Expr::property(
                                            score,
                                            Expr::cast(Expr::local(LocalId(1), Type::U32), Type::Node),
                                            f64_,
                                        ),
                                        Expr::new(
                                            ExprKind::Builtin(
                                                Builtin::Sqrt,
                                                vec![Expr::new(ExprKind::Const(Const::Float(2.0)), f64_)],
                                            ),
                                            f64_,
                                        ),
                                    ],
                                ),
                                f64_,
                            ),
                        }],
                        otherwise: vec![],
                    },
                ],
            }))],
        },
    };
    Module {
        name: "kitchen_sink".into(),
        structs: vec![StructDef {
            name: "Pair".into(),
            fields: vec![("node".into(), Type::Node), ("cost".into(), f64_)],
        }],
        properties: vec![
            Property { name: "weight".into(), owner: Owner::Edge, ty: Type::U32, is_weight: true },
            Property { name: "score".into(), owner: Owner::Node, ty: f64_, is_weight: false },
        ],
        sets: vec![SetDecl { name: "comp".into() }],
        collections: vec![],
        params: vec![Param { name: "rounds".into(), ty: Type::U32, default: Some(Const::Int(3)) }],
        outputs: vec![score],
        collection_outputs: vec![],
        functions: vec![half],
        kernels: vec![join, total],
        main: Body {
            locals: vec![local("sum", f64_)],
            block: vec![
                Stmt::Invoke { kernel: KernelId(0), args: vec![], result: None },
                Stmt::Invoke {
                    kernel: KernelId(1),
                    args: vec![Expr::new(ExprKind::Param(ParamId(0)), Type::U32)],
                    result: Some(LocalId(0)),
                },
            ],
        },
        main_result: Type::Unit,
        ..Module::default()
    }
}

/// `kernel k() -> <op> <ty> { forall u in nodes { reduce <degree(u) as ty>; } }` (for bools,
/// `degree(u) > 1`), invoked by main.
pub fn reduction_module(op: ReduceOp, ty: Type) -> Module {
    let u = Expr::local(LocalId(0), Type::Node);
    let degree = Expr::new(ExprKind::Degree { node: Box::new(u), reverse: false }, Type::U32);
    let value = if ty == Type::BOOL {
        Expr::binary(BinaryOp::Gt, degree, Expr::int(1, Type::U32))
    } else {
        Expr::cast(degree, ty)
    };
    Module {
        name: format!("{}_{ty}", op.name()),
        kernels: vec![Kernel {
            name: "k".into(),
            params: 0,
            reduction: Some((op, ty)),
            push_sites: vec![],
            body: Body {
                locals: vec![local("u", Type::Node)],
                block: vec![Stmt::ForAll(Box::new(ForAll {
                    var: LocalId(0),
                    space: Space::AllNodes,
                    filter: None,
                    schedule: Schedule::SERIAL,
                    body: vec![Stmt::Reduce { value }],
                }))],
            },
        }],
        main: Body {
            locals: vec![local("r", ty)],
            block: vec![Stmt::Invoke { kernel: KernelId(0), args: vec![], result: Some(LocalId(0)) }],
        },
        ..Module::default()
    }
}
