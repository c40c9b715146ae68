//! The abstract syntax tree. Every node carries the [`Span`] of the source it came from;
//! identifiers keep theirs, so name resolution and type checking can point at any part of the
//! program. Expressions, statements and items are `{ kind, span }` pairs around a kind enum.

use crate::span::Span;
use crate::token::{Base, FloatSuffix, IntSuffix};

#[derive(Clone, Debug, PartialEq)]
pub struct Ident {
    pub name: String,
    pub span: Span,
}

/// A whole file: its items in source order.
#[derive(Clone, Debug, PartialEq)]
pub struct Program {
    pub items: Vec<Item>,
    pub span: Span,
}

#[derive(Clone, Debug, PartialEq)]
pub struct Item {
    pub kind: ItemKind,
    pub span: Span,
}

#[derive(Clone, Debug, PartialEq)]
pub enum ItemKind {
    Graph(GraphBlock),
    Param(Param),
    Output(Output),
    /// `input coll;`: a collection the runner fills before `main` starts.
    Input(Output),
    Const(Const),
    Struct(StructDecl),
    Function(Function),
    Kernel(Kernel),
}

/// `graph { ... }`: the input graph's properties, sets and collections.
#[derive(Clone, Debug, PartialEq)]
pub struct GraphBlock {
    pub decls: Vec<GraphDecl>,
}

#[derive(Clone, Debug, PartialEq)]
pub struct GraphDecl {
    pub kind: GraphDeclKind,
    pub span: Span,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum PropertyOwner {
    Node,
    Edge,
}

#[derive(Clone, Debug, PartialEq)]
pub enum GraphDeclKind {
    /// `node name: T [= init];` or `edge name: T [= init];`
    Property { owner: PropertyOwner, name: Ident, ty: Type, init: Option<Expr> },
    /// `set name;`: a union-find over the nodes.
    Set { name: Ident },
    /// `collection name: T;`
    Collection { name: Ident, ty: Type },
    /// `merge property with function;`: on a partitioned graph, how an owner takes in what a
    /// part wrote into its copy of a node (`merge` and `with` are words only here).
    Merge { property: Ident, function: Ident },
}

/// `param name: T [= default];`
#[derive(Clone, Debug, PartialEq)]
pub struct Param {
    pub name: Ident,
    pub ty: Type,
    pub default: Option<Expr>,
}

/// `output prop;`
#[derive(Clone, Debug, PartialEq)]
pub struct Output {
    pub name: Ident,
}

/// `const NAME: T = value;`
#[derive(Clone, Debug, PartialEq)]
pub struct Const {
    pub name: Ident,
    pub ty: Type,
    pub value: Expr,
}

#[derive(Clone, Debug, PartialEq)]
pub struct StructDecl {
    pub name: Ident,
    pub fields: Vec<FieldDecl>,
}

/// A struct field or a function/kernel parameter: `name: T`.
#[derive(Clone, Debug, PartialEq)]
pub struct FieldDecl {
    pub name: Ident,
    pub ty: Type,
    pub span: Span,
}

#[derive(Clone, Debug, PartialEq)]
pub struct Function {
    pub name: Ident,
    pub params: Vec<FieldDecl>,
    pub ret: Option<Type>,
    pub body: Block,
}

#[derive(Clone, Debug, PartialEq)]
pub struct Kernel {
    pub name: Ident,
    pub params: Vec<FieldDecl>,
    /// `-> op T`: the kernel returns one value combined over its iterations.
    pub reduction: Option<Reduction>,
    pub body: Block,
}

#[derive(Clone, Debug, PartialEq)]
pub struct Reduction {
    pub op: ReduceOp,
    pub op_span: Span,
    pub ty: Type,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ReduceOp {
    Sum,
    Product,
    Min,
    Max,
    Any,
    All,
}

impl ReduceOp {
    pub fn lookup(name: &str) -> Option<ReduceOp> {
        Some(match name {
            "sum" => ReduceOp::Sum,
            "product" => ReduceOp::Product,
            "min" => ReduceOp::Min,
            "max" => ReduceOp::Max,
            "any" => ReduceOp::Any,
            "all" => ReduceOp::All,
            _ => return None,
        })
    }

    pub fn as_str(self) -> &'static str {
        match self {
            ReduceOp::Sum => "sum",
            ReduceOp::Product => "product",
            ReduceOp::Min => "min",
            ReduceOp::Max => "max",
            ReduceOp::Any => "any",
            ReduceOp::All => "all",
        }
    }
}

#[derive(Clone, Debug, PartialEq)]
pub struct Type {
    pub kind: TypeKind,
    pub span: Span,
}

#[derive(Clone, Debug, PartialEq)]
pub enum TypeKind {
    Bool,
    I32,
    I64,
    U32,
    U64,
    F32,
    F64,
    Node,
    Edge,
    /// A struct type, resolved later.
    Named(String),
    /// `[T; N]`: a fixed-length array of `N` values of `T`.
    Array(Box<Type>, u64),
}

impl TypeKind {
    /// Built-in type names are ordinary identifiers lexically; this recognises them.
    pub fn from_name(name: &str) -> TypeKind {
        match name {
            "bool" => TypeKind::Bool,
            "i32" => TypeKind::I32,
            "i64" => TypeKind::I64,
            "u32" => TypeKind::U32,
            "u64" => TypeKind::U64,
            "f32" => TypeKind::F32,
            "f64" => TypeKind::F64,
            "Node" => TypeKind::Node,
            "Edge" => TypeKind::Edge,
            other => TypeKind::Named(other.to_string()),
        }
    }

    pub fn name(&self) -> std::borrow::Cow<'_, str> {
        std::borrow::Cow::Borrowed(match self {
            TypeKind::Bool => "bool",
            TypeKind::I32 => "i32",
            TypeKind::I64 => "i64",
            TypeKind::U32 => "u32",
            TypeKind::U64 => "u64",
            TypeKind::F32 => "f32",
            TypeKind::F64 => "f64",
            TypeKind::Node => "Node",
            TypeKind::Edge => "Edge",
            TypeKind::Named(name) => name,
            TypeKind::Array(element, len) => return format!("[{}; {len}]", element.kind.name()).into(),
        })
    }
}

#[derive(Clone, Debug, PartialEq)]
pub struct Block {
    pub stmts: Vec<Stmt>,
    pub span: Span,
}

#[derive(Clone, Debug, PartialEq)]
pub struct Stmt {
    pub kind: StmtKind,
    pub span: Span,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum AssignOp {
    Assign,
    Add,
    Sub,
    Mul,
    Div,
}

impl AssignOp {
    pub fn as_str(self) -> &'static str {
        match self {
            AssignOp::Assign => "=",
            AssignOp::Add => "+=",
            AssignOp::Sub => "-=",
            AssignOp::Mul => "*=",
            AssignOp::Div => "/=",
        }
    }
}

/// The `else` of an `if`: a block, or the next `if` of an `else if` chain.
#[derive(Clone, Debug, PartialEq)]
pub enum Else {
    Block(Block),
    If(Box<Stmt>),
}

/// What `iterate { ... }` checks after each pass.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum LoopCondition {
    While,
    Until,
}

/// The starting worklist of `iterate` and `pipe`: `[a, b]`, or one expression such as `G.nodes()`.
#[derive(Clone, Debug, PartialEq)]
pub enum Initial {
    List { items: Vec<Expr>, span: Span },
    Expr(Expr),
}

/// `k(args)` after `invoke` and `iterate`, and as a call expression.
#[derive(Clone, Debug, PartialEq)]
pub struct Call {
    pub callee: Ident,
    pub args: Vec<Expr>,
    pub span: Span,
}

#[derive(Clone, Debug, PartialEq)]
pub enum StmtKind {
    Let {
        mutable: bool,
        name: Ident,
        ty: Option<Type>,
        /// `None` only for an array (`let mut q: [u32; 8];`), which starts zeroed.
        value: Option<Expr>,
    },
    /// `place op value;` where `place` is a name or a field chain.
    Assign {
        place: Expr,
        op: AssignOp,
        value: Expr,
    },
    If {
        cond: Expr,
        then: Block,
        otherwise: Option<Else>,
    },
    While {
        cond: Expr,
        body: Block,
    },
    /// `for var in iter { }`: `iter` is a `Range` or a graph iterator call.
    For {
        var: Ident,
        iter: Expr,
        body: Block,
    },
    /// `forall var [: ty] in space [where filter] { }`: `space` is `Worklist`, a `Range` or an
    /// iterator; `ty` says what a worklist holds (nodes unless it names a collection).
    ForAll {
        var: Ident,
        ty: Option<Type>,
        space: Expr,
        filter: Option<Expr>,
        body: Block,
    },
    Break,
    Continue,
    Return(Option<Expr>),
    Push(Expr),
    Retry(Expr),
    Reduce(Expr),
    Atomic {
        target: Expr,
        body: Block,
        otherwise: Option<Block>,
    },
    Exclusive {
        targets: Vec<Expr>,
        body: Block,
        otherwise: Option<Block>,
    },
    Single {
        target: Expr,
        body: Block,
        otherwise: Option<Block>,
    },
    Invoke(Call),
    /// `iterate k(args) [initial ...] [{ body }]`
    Iterate {
        call: Call,
        initial: Option<Initial>,
        body: Option<Block>,
    },
    /// `iterate { body } while|until cond;`
    IterateLoop {
        body: Block,
        condition: LoopCondition,
        cond: Expr,
    },
    Pipe {
        once: bool,
        initial: Option<Initial>,
        body: Block,
    },
    Expr(Expr),
}

#[derive(Clone, Debug, PartialEq)]
pub struct Expr {
    pub kind: ExprKind,
    pub span: Span,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum UnaryOp {
    Neg,
    Not,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum BinaryOp {
    Mul,
    Div,
    Rem,
    Add,
    Sub,
    Shl,
    Shr,
    BitAnd,
    BitXor,
    BitOr,
    Eq,
    Ne,
    Lt,
    Le,
    Gt,
    Ge,
    And,
    Or,
}

impl BinaryOp {
    pub fn as_str(self) -> &'static str {
        use BinaryOp::*;
        match self {
            Mul => "*",
            Div => "/",
            Rem => "%",
            Add => "+",
            Sub => "-",
            Shl => "<<",
            Shr => ">>",
            BitAnd => "&",
            BitXor => "^",
            BitOr => "|",
            Eq => "==",
            Ne => "!=",
            Lt => "<",
            Le => "<=",
            Gt => ">",
            Ge => ">=",
            And => "&&",
            Or => "||",
        }
    }

    /// Binding strength, Rust's order: higher binds tighter. `as` is above all of these.
    pub fn precedence(self) -> u8 {
        use BinaryOp::*;
        match self {
            Mul | Div | Rem => 10,
            Add | Sub => 9,
            Shl | Shr => 8,
            BitAnd => 7,
            BitXor => 6,
            BitOr => 5,
            Eq | Ne | Lt | Le | Gt | Ge => 4,
            And => 3,
            Or => 2,
        }
    }

    pub fn is_comparison(self) -> bool {
        self.precedence() == 4
    }
}

#[derive(Clone, Debug, PartialEq)]
pub struct FieldInit {
    pub name: Ident,
    pub value: Expr,
    pub span: Span,
}

#[derive(Clone, Debug, PartialEq)]
pub enum ExprKind {
    Int {
        value: u64,
        base: Base,
        suffix: Option<IntSuffix>,
    },
    Float {
        value: f64,
        suffix: Option<FloatSuffix>,
    },
    Bool(bool),
    /// Only as an argument of `print`; the type checker enforces that.
    Str(String),
    Name(Ident),
    /// `G`, the input graph.
    Graph,
    /// `INF`, the largest value of the expected type.
    Inf,
    /// `worklist`; the parser produces it only as a `forall` space.
    Worklist,
    Unary {
        op: UnaryOp,
        operand: Box<Expr>,
    },
    Binary {
        op: BinaryOp,
        lhs: Box<Expr>,
        rhs: Box<Expr>,
    },
    Cast {
        expr: Box<Expr>,
        ty: Type,
    },
    Call(Call),
    MethodCall {
        receiver: Box<Expr>,
        method: Ident,
        args: Vec<Expr>,
    },
    Field {
        base: Box<Expr>,
        field: Ident,
    },
    /// `base[index]`: an item of an array.
    Index {
        base: Box<Expr>,
        index: Box<Expr>,
    },
    StructLiteral {
        name: Ident,
        fields: Vec<FieldInit>,
    },
    /// `start..end`; the parser produces it only as a `for`/`forall` iteration space.
    Range {
        start: Box<Expr>,
        end: Box<Expr>,
    },
    /// `invoke k(args)` as an expression: a reduction kernel's result.
    Invoke(Call),
    /// Stands in for an expression that failed to parse, so the tree stays whole.
    Error,
}
