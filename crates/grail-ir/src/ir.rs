//! The IR's data structures.
//!
//! Ids ([`PropertyId`], [`KernelId`], ...) index the vectors of the [`Module`]; [`LocalId`]s index
//! the `locals` of the body they appear in. Ids are plain indices so that passes can copy and
//! rewrite freely; [`crate::validate`] checks that each is in range.

use std::fmt;

macro_rules! id {
    ($(#[$doc:meta])* $name:ident) => {
        $(#[$doc])*
        #[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
        pub struct $name(pub u32);

        impl $name {
            pub fn index(self) -> usize {
                self.0 as usize
            }
        }
    };
}

id!(
    /// A node or edge property of the module.
    PropertyId
);
id!(
    /// A union-find set over the nodes.
    SetId
);
id!(
    /// A graph-level collection of elements.
    CollectionId
);
id!(
    /// A program parameter.
    ParamId
);
id!(
    /// A struct type.
    StructId
);
id!(
    /// A fixed-length array type (`Module::arrays`).
    ArrayId
);
id!(
    /// A device-and-host function.
    FunctionId
);
id!(
    /// A kernel.
    KernelId
);
id!(
    /// A local variable of one body (function, kernel or host).
    LocalId
);
id!(
    /// A push statement of one kernel; cooperative conversion rewrites pushes site by site.
    PushSite
);
id!(
    /// An `Iterate` or `Pipe` region of the host code: a candidate for iteration outlining.
    OutlineId
);

/// A scalar type.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Scalar {
    Bool,
    I32,
    I64,
    U32,
    U64,
    F32,
    F64,
}

impl Scalar {
    pub fn is_integer(self) -> bool {
        matches!(self, Scalar::I32 | Scalar::I64 | Scalar::U32 | Scalar::U64)
    }

    pub fn is_float(self) -> bool {
        matches!(self, Scalar::F32 | Scalar::F64)
    }

    pub fn name(self) -> &'static str {
        match self {
            Scalar::Bool => "bool",
            Scalar::I32 => "i32",
            Scalar::I64 => "i64",
            Scalar::U32 => "u32",
            Scalar::U64 => "u64",
            Scalar::F32 => "f32",
            Scalar::F64 => "f64",
        }
    }
}

/// The type of a value.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub enum Type {
    Scalar(Scalar),
    /// A node id (`u32`).
    Node,
    /// An edge id (`u64`).
    Edge,
    Struct(StructId),
    /// A handle to an element of a collection (its index, a `u32`).
    Element(CollectionId),
    /// A fixed-length array (`[T; N]`), a local of kernels and the functions they call.
    Array(ArrayId),
    /// No value: statements' calls, functions without a result.
    #[default]
    Unit,
}

impl Type {
    pub const BOOL: Type = Type::Scalar(Scalar::Bool);
    pub const U32: Type = Type::Scalar(Scalar::U32);
    pub const U64: Type = Type::Scalar(Scalar::U64);
    pub const F32: Type = Type::Scalar(Scalar::F32);
    pub const F64: Type = Type::Scalar(Scalar::F64);

    pub fn scalar(self) -> Option<Scalar> {
        match self {
            Type::Scalar(s) => Some(s),
            _ => None,
        }
    }

    /// Numbers, nodes and edges: values with an order and `INF`.
    pub fn is_numeric(self) -> bool {
        matches!(self, Type::Scalar(s) if s != Scalar::Bool)
    }
}

/// Whose property it is.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Owner {
    Node,
    Edge,
}

/// A property: one value per node or per edge. Initial values are set by code the front end
/// lowers into `main`, so the IR has no initialisers.
#[derive(Debug, Clone, PartialEq)]
pub struct Property {
    pub name: String,
    pub owner: Owner,
    pub ty: Type,
    /// Bound to the input graph's edge weights.
    pub is_weight: bool,
}

#[derive(Debug, Clone, PartialEq)]
pub struct StructDef {
    pub name: String,
    pub fields: Vec<(String, Type)>,
}

#[derive(Debug, Clone, PartialEq)]
pub struct Param {
    pub name: String,
    pub ty: Type,
    pub default: Option<Const>,
}

#[derive(Debug, Clone, PartialEq)]
pub struct SetDecl {
    pub name: String,
}

/// A graph-level collection (Falcon's `Collection`): a growable sequence of elements, each a
/// value of struct type `element` stored field by field. It starts empty; `add` appends, from
/// host code or from kernels, and elements are never moved, so a handle stays valid.
#[derive(Debug, Clone, PartialEq)]
pub struct CollectionDecl {
    pub name: String,
    pub element: StructId,
}

/// How a program whose kernels add and remove edges (`G.add_edge`, `G.remove_edge`) keeps the
/// changes. The input graph's CSR never changes: lowering adds hidden declarations that hold
/// what changed, and the backends read them wherever the program looks at the graph.
///
/// - Added edges are the elements of a hidden collection, `added`: edge `num_edges + h` is
///   element `h`, whose fields are [`GraphGrowth::SRC`], [`GraphGrowth::DST`], [`GraphGrowth::NEXT`]
///   and then one per edge property ([`GraphGrowth::edge_fields`]). Adding never loses an edge:
///   the collection grows in segments like any other.
/// - Each node's added out-edges form a list, newest first: `first_added` (a node property) holds
///   `1 + h` of the newest, 0 when there is none, and each element's `next` field the one before.
/// - `degree_change` (a node property, wrapping) is the out-edges added minus those removed, so
///   a degree stays one read beside the CSR's.
/// - Removing marks the edge: an input edge in `removed` (an edge property, 1 = removed), an
///   added one as its collection removes elements. Both count in the collection's removed
///   count, so `num_edges + live(added)` is the number of edges present.
#[derive(Debug, Clone, PartialEq)]
pub struct GraphGrowth {
    pub added: CollectionId,
    pub first_added: PropertyId,
    pub degree_change: PropertyId,
    /// Present when a kernel removes edges.
    pub removed: Option<PropertyId>,
    /// Each edge property the program declares, with its field in `added`.
    pub edge_fields: Vec<(PropertyId, u32)>,
    /// Present when a kernel adds nodes, or removes them.
    pub nodes: Option<NodeGrowth>,
    /// Present when a kernel removes nodes: a hidden node property, 1 for a removed node.
    /// Removing a node marks it here, removes its out-edges (as `remove_edge` does; removal
    /// marks for edges are then present too) and counts it in the added nodes' collection's
    /// removed count, so that `num_nodes + live(added nodes)` is the number of nodes present. Its
    /// in-edges stay: loops over another node's neighbours may meet it (`G.has_node` says so).
    pub node_removed: Option<PropertyId>,
}

/// Nodes that kernels add (`G.add_node`): node `num_nodes + h` is element `h` of the hidden
/// collection `added`, whose fields hold every node property (the hidden ones of
/// [`GraphGrowth`] included), so additions grow on demand like any collection and the input's
/// columns never move. A new node has no input edges; `init`, the initialisation kernel, if the
/// program has one, gives its properties their initial values.
#[derive(Debug, Clone, PartialEq)]
pub struct NodeGrowth {
    pub added: CollectionId,
    /// Each node property, with its field in `added`.
    pub fields: Vec<(PropertyId, u32)>,
    pub init: Option<KernelId>,
}

impl GraphGrowth {
    /// The fields of an added edge before its properties' fields.
    pub const SRC: u32 = 0;
    pub const DST: u32 = 1;
    pub const NEXT: u32 = 2;

    /// The field of `added` that holds `property` for added edges, if it is an edge property.
    pub fn field_of(&self, property: PropertyId) -> Option<u32> {
        self.edge_fields.iter().find(|(p, _)| *p == property).map(|(_, f)| *f)
    }

    /// The collection and field that hold node property `property` for added nodes, if kernels
    /// add nodes.
    pub fn node_field_of(&self, property: PropertyId) -> Option<(CollectionId, u32)> {
        let nodes = self.nodes.as_ref()?;
        nodes.fields.iter().find(|(p, _)| *p == property).map(|(_, f)| (nodes.added, *f))
    }
}

/// How a union-find set's classes are joined across the parts of a partitioned run
/// ([`crate::sets`]): the hidden class property, the kernel of a join's rounds (`main`
/// invokes it), and for the runtime, which may join through the host where rounds go on
/// ([`Module::set_joins`]), a kernel over the shared slots that writes each one's root (its
/// global id) into `root`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct SetJoin {
    pub set: SetId,
    pub class: PropertyId,
    pub root: PropertyId,
    /// The kernel of a join's rounds.
    pub round: KernelId,
    pub roots: KernelId,
}

/// A fixed-length array type: `len` values of `element` (a scalar, `Node`, `Edge` or a handle).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ArrayDecl {
    pub element: Type,
    pub len: u32,
}

/// A compiled program.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Module {
    pub name: String,
    /// The array types the program uses, by `ArrayId`.
    pub arrays: Vec<ArrayDecl>,
    pub structs: Vec<StructDef>,
    pub properties: Vec<Property>,
    pub sets: Vec<SetDecl>,
    pub collections: Vec<CollectionDecl>,
    pub params: Vec<Param>,
    /// Properties the program reports: node properties (one value per node) and `bool` edge
    /// properties (the set of edges where they are true).
    pub outputs: Vec<PropertyId>,
    /// Collections the program reports, every element with its fields.
    pub collection_outputs: Vec<CollectionId>,
    /// The collections the runner fills before `main` starts (`input coll;`), in order: element
    /// `i` of an input gets handle `i`, so inputs may hold handles into each other.
    pub collection_inputs: Vec<CollectionId>,
    /// The node properties whose values the runner gives, one per input node, before `main`
    /// starts (`input prop;`), in order; they have no initialiser.
    pub property_inputs: Vec<PropertyId>,
    /// Where the graph's changes live when kernels add or remove edges; `None` when the graph
    /// never changes.
    pub growth: Option<GraphGrowth>,
    /// The program's own update functions (`merge property with function;`): on a partitioned
    /// graph, the owner of a node takes in a value a part wrote into its copy as
    /// `function(current, incoming)`, instead of by the operator the kernels' writes imply.
    pub merge_functions: Vec<(PropertyId, FunctionId)>,
    pub functions: Vec<Function>,
    pub kernels: Vec<Kernel>,
    /// The kernel that gives properties their declared initial values (lowered from the
    /// `graph` block's initialisers), which `main` invokes first; `None` when no property has
    /// one.
    pub defaults: Option<KernelId>,
    /// Kernels over all nodes that a partitioned run invokes over each part's *shared slots*
    /// alone (its ghosts, and its nodes that are ghosts elsewhere: a list the runtime gives the
    /// kernel as a retry pass's items), every write of theirs merged into the owners as a write
    /// through another node is: the joins of union-find sets across parts ([`crate::sets`]).
    /// Empty on one device.
    pub over_slots: Vec<KernelId>,
    /// Each union-find set's join across the parts ([`crate::sets`]), for the partitioned
    /// runtime; empty on one device.
    pub set_joins: Vec<SetJoin>,
    /// The entry point: orchestration and scalar code, run by the host.
    pub main: Body,
    /// What `main` returns, `Type::Unit` if nothing.
    pub main_result: Type,
    /// The optimizations applied ([`crate::opt::optimize`] sets it; lowering leaves `none`).
    pub opt: crate::opt::OptConfig,
    /// What the passes found that kept an optimization from applying somewhere, one line each
    /// (`grail compile --emit ir` prints them).
    pub opt_notes: Vec<String>,
}

/// A local variable.
#[derive(Debug, Clone, PartialEq)]
pub struct Local {
    pub name: String,
    pub ty: Type,
}

/// Statements with the locals they use.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Body {
    pub locals: Vec<Local>,
    pub block: Block,
}

pub type Block = Vec<Stmt>;

/// A function callable from kernels and host code.
#[derive(Debug, Clone, PartialEq)]
pub struct Function {
    pub name: String,
    /// The first `params` locals of the body are the parameters.
    pub params: u32,
    pub result: Type,
    pub body: Body,
}

/// A reduction operator of a kernel's result.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum ReduceOp {
    Sum,
    Product,
    Min,
    Max,
    Any,
    All,
}

impl ReduceOp {
    pub fn name(self) -> &'static str {
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

/// How a push reaches the worklist: one atomic per push, or combined across a warp or thread
/// block first (cooperative conversion, IrGL §4.2).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub enum Aggregation {
    #[default]
    None,
    Warp,
    Block,
}

/// A kernel: parallel loops and what they do per item.
#[derive(Debug, Clone, PartialEq)]
pub struct Kernel {
    pub name: String,
    /// The first `params` locals of the body are the parameters.
    pub params: u32,
    /// The kernel's result, combined over all iterations by `Reduce` statements.
    pub reduction: Option<(ReduceOp, Type)>,
    pub body: Body,
    /// One entry per `PushSite` in the body.
    pub push_sites: Vec<Aggregation>,
}

impl Kernel {
    /// What the kernel's worklist holds: the type of its `forall` over the worklist, or of what
    /// it pushes; nodes when it does neither (or holds nodes).
    pub fn worklist_item(&self) -> Type {
        let mut item = None;
        walk_block(&self.body.block, &mut |stmt| {
            if item.is_some() {
                return;
            }
            match stmt {
                Stmt::ForAll(forall) if forall.space == Space::Worklist => {
                    item = self.body.locals.get(forall.var.index()).map(|l| l.ty);
                }
                Stmt::Push { value, .. } => item = Some(value.ty),
                _ => {}
            }
        });
        item.unwrap_or(Type::Node)
    }

    /// Whether invoking the kernel consumes the current worklist and makes its pushes the next
    /// one: it iterates `worklist` or it pushes (language spec, section 8). Other kernels leave
    /// the worklist as it is.
    pub fn uses_worklist(&self) -> bool {
        let mut found = false;
        walk_block(&self.body.block, &mut |stmt| match stmt {
            Stmt::ForAll(forall) => found |= forall.space == Space::Worklist,
            Stmt::Push { .. } => found = true,
            _ => {}
        });
        found
    }
}

/// Visits every statement of a block, depth first, parents before children.
pub fn walk_block(block: &[Stmt], visit: &mut impl FnMut(&Stmt)) {
    for stmt in block {
        visit(stmt);
        for child in stmt.blocks() {
            walk_block(child, visit);
        }
    }
}

/// Whether some statement of `block`, at any depth, passes `test`.
pub fn block_has(block: &[Stmt], mut test: impl FnMut(&Stmt) -> bool) -> bool {
    let mut found = false;
    walk_block(block, &mut |stmt| found |= test(stmt));
    found
}

/// A literal value.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Const {
    Bool(bool),
    /// An integer of any integer type, node or edge, as its two's-complement bits.
    Int(u64),
    Float(f64),
    /// The largest value of the expression's type.
    Inf,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum UnaryOp {
    Neg,
    Not,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum BinaryOp {
    Add,
    Sub,
    Mul,
    Div,
    Rem,
    Shl,
    Shr,
    BitAnd,
    BitOr,
    BitXor,
    And,
    Or,
    Eq,
    Ne,
    Lt,
    Le,
    Gt,
    Ge,
}

impl BinaryOp {
    pub fn symbol(self) -> &'static str {
        match self {
            BinaryOp::Add => "+",
            BinaryOp::Sub => "-",
            BinaryOp::Mul => "*",
            BinaryOp::Div => "/",
            BinaryOp::Rem => "%",
            BinaryOp::Shl => "<<",
            BinaryOp::Shr => ">>",
            BinaryOp::BitAnd => "&",
            BinaryOp::BitOr => "|",
            BinaryOp::BitXor => "^",
            BinaryOp::And => "&&",
            BinaryOp::Or => "||",
            BinaryOp::Eq => "==",
            BinaryOp::Ne => "!=",
            BinaryOp::Lt => "<",
            BinaryOp::Le => "<=",
            BinaryOp::Gt => ">",
            BinaryOp::Ge => ">=",
        }
    }

    /// Whether the result is `bool` whatever the operands.
    pub fn is_comparison(self) -> bool {
        matches!(self, BinaryOp::Eq | BinaryOp::Ne | BinaryOp::Lt | BinaryOp::Le | BinaryOp::Gt | BinaryOp::Ge)
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Builtin {
    Min,
    Max,
    Abs,
    Sqrt,
    /// The natural logarithm of a float.
    Ln,
    /// e to the power of a float.
    Exp,
    /// `orient2d(ax, ay, bx, by, cx, cy) -> f64`: its sign says whether a, b, c turn
    /// counterclockwise (+), clockwise (-) or are collinear (0), exactly.
    Orient2d,
    /// `incircle(ax, ay, bx, by, cx, cy, dx, dy) -> f64`: its sign says whether d is inside (+),
    /// outside (-) or on (0) the circle through the counterclockwise a, b, c, exactly.
    InCircle,
}

impl Builtin {
    /// Whether it is a function of one float (`sqrt`, `ln`, `exp`).
    pub fn is_float_math(self) -> bool {
        matches!(self, Builtin::Sqrt | Builtin::Ln | Builtin::Exp)
    }
}

/// An atomic read-modify-write; every one yields whether it changed the stored value.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum AtomicOp {
    Min,
    Max,
    Add,
    Sub,
    And,
    Or,
    /// Operands: expected, new.
    Cas,
}

impl AtomicOp {
    pub fn name(self) -> &'static str {
        match self {
            AtomicOp::Min => "min",
            AtomicOp::Max => "max",
            AtomicOp::Add => "add",
            AtomicOp::Sub => "sub",
            AtomicOp::And => "and",
            AtomicOp::Or => "or",
            AtomicOp::Cas => "cas",
        }
    }

    pub fn operands(self) -> usize {
        if self == AtomicOp::Cas { 2 } else { 1 }
    }
}

/// Which edges or neighbours of a node.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Adjacency {
    /// Yields `Edge`s leaving the node.
    OutEdges,
    /// Yields `Edge`s entering the node (needs the reverse CSR).
    InEdges,
    /// Yields the `Node`s at the heads of out-edges.
    OutNeighbors,
    /// Yields the `Node`s at the tails of in-edges.
    InNeighbors,
}

impl Adjacency {
    pub fn item(self) -> Type {
        match self {
            Adjacency::OutEdges | Adjacency::InEdges => Type::Edge,
            Adjacency::OutNeighbors | Adjacency::InNeighbors => Type::Node,
        }
    }

    pub fn uses_reverse(self) -> bool {
        matches!(self, Adjacency::InEdges | Adjacency::InNeighbors)
    }

    pub fn name(self) -> &'static str {
        match self {
            Adjacency::OutEdges => "out_edges",
            Adjacency::InEdges => "in_edges",
            Adjacency::OutNeighbors => "neighbors",
            Adjacency::InNeighbors => "in_neighbors",
        }
    }
}

/// Something that can be read and written.
#[derive(Debug, Clone, PartialEq)]
pub enum Place {
    Local(LocalId),
    /// `element.property`, where `element` is a `Node` or `Edge` as the property's owner says.
    Property {
        property: PropertyId,
        element: Box<Expr>,
    },
    /// A field of a collection element: `element` has type `Type::Element(collection)`.
    ElementField {
        collection: CollectionId,
        element: Box<Expr>,
        field: u32,
    },
    /// A field of a struct-typed place.
    Field {
        base: Box<Place>,
        field: u32,
    },
    /// An item of an array-typed place; an index past the end stops the kernel.
    Index {
        base: Box<Place>,
        index: Box<Expr>,
    },
}

/// An expression and its type.
#[derive(Debug, Clone, PartialEq)]
pub struct Expr {
    pub kind: ExprKind,
    pub ty: Type,
}

#[derive(Debug, Clone, PartialEq)]
pub enum ExprKind {
    Const(Const),
    /// Reads a place.
    Load(Place),
    Param(ParamId),
    NumNodes,
    NumEdges,
    EdgeSource(Box<Expr>),
    EdgeTarget(Box<Expr>),
    /// The out-degree (`reverse == false`) or in-degree of a node.
    Degree {
        node: Box<Expr>,
        reverse: bool,
    },
    /// The `index`-th out-neighbour (`reverse == false`) or in-neighbour of a node, in increasing
    /// id order when the adjacency lists are sorted. The index must be below the degree.
    Neighbor {
        node: Box<Expr>,
        index: Box<Expr>,
        reverse: bool,
    },
    Unary(UnaryOp, Box<Expr>),
    Binary(BinaryOp, Box<Expr>, Box<Expr>),
    Cast(Box<Expr>),
    Call(FunctionId, Vec<Expr>),
    Builtin(Builtin, Vec<Expr>),
    Atomic {
        op: AtomicOp,
        place: Place,
        operands: Vec<Expr>,
    },
    SetFind {
        set: SetId,
        node: Box<Expr>,
    },
    /// Merges two sets; true if they were different.
    SetUnion {
        set: SetId,
        a: Box<Expr>,
        b: Box<Expr>,
    },
    Struct(StructId, Vec<Expr>),
    /// A value of the type with every bit zero (an array `let` without an initialiser).
    Zeroed,
    /// The first `count` items of an array (`q.first(n)`): only as the one element of an
    /// `Exclusive` lock, which then owns a set of elements known only as the kernel runs (a
    /// cavity). Its type is the array's.
    ArrayPrefix {
        array: Box<Expr>,
        count: Box<Expr>,
    },
    Field(Box<Expr>, u32),
    /// Appends a value of the collection's element struct; yields the new element's handle.
    CollectionAdd {
        collection: CollectionId,
        value: Box<Expr>,
    },
    /// The number of elements of a collection (`u32`): those added and not removed.
    CollectionLen(CollectionId),
    /// Removes an element (marks it removed: its handle is never reused, its fields stay
    /// readable); `true` for the one call that removed it. Kernels and functions only.
    CollectionRemove {
        collection: CollectionId,
        element: Box<Expr>,
    },
    /// Whether an element has not been removed (`bool`). Kernels and functions only.
    CollectionHas {
        collection: CollectionId,
        element: Box<Expr>,
    },
    /// Adds the edge `src -> dst` (with `weight` into the edge property bound to weights, if
    /// given; the added edge's other properties start at zero); yields it. Kernels and functions
    /// only. See [`GraphGrowth`].
    AddEdge {
        src: Box<Expr>,
        dst: Box<Expr>,
        weight: Option<Box<Expr>>,
    },
    /// Removes an edge; `true` for the one call that removed it. Kernels and functions only.
    RemoveEdge(Box<Expr>),
    /// Adds a node (its properties at their initial values, no edges); yields it. Kernels and
    /// functions only. See [`NodeGrowth`].
    AddNode,
    /// Removes a node and its out-edges; `true` for the one call that removed it. Kernels and
    /// functions only. See [`GraphGrowth::node_removed`].
    RemoveNode(Box<Expr>),
    /// Whether a node is present: an input node or an added one, not removed.
    HasNode(Box<Expr>),
    /// Whether an edge is present: an input edge or an added one, not removed.
    HasEdge(Box<Expr>),
    /// One past the largest node id there has been (`u32`): the input's nodes and every node
    /// kernels added, removed ones included. What a sequential loop over every node runs to
    /// (skipping those not [`ExprKind::HasNode`]); [`ExprKind::NumNodes`] counts those present.
    NodeIds,
    /// One past the largest edge id there has been (`u64`), as [`ExprKind::NodeIds`] for edges.
    EdgeIds,
    /// Compacts a collection (its elements present move down to handles 0.. in order, and
    /// handles to them held in collections are renumbered); yields the count (`u32`). Host code
    /// only, outside `iterate` and `pipe`.
    CollectionCompact(CollectionId),
}

/// What a parallel loop iterates.
#[derive(Debug, Clone, PartialEq)]
pub enum Space {
    /// The kernel's input worklist (items are `Node`s).
    Worklist,
    AllNodes,
    AllEdges,
    /// Integers in `start..end`.
    Range(Expr, Expr),
    /// The elements a collection has when the loop starts; elements added while it runs are
    /// not visited.
    Collection(CollectionId),
    /// A node's edges or neighbours: a nested loop.
    Adjacent(Adjacency, Expr),
}

/// How the iterations of a nested parallel loop are spread over threads (IrGL §4.3). The
/// outermost loops of a kernel are always spread one item per thread.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub struct Schedule {
    /// Items with at least this many inner iterations are run by a whole thread block.
    pub thread_block: bool,
    /// Items with at least a warp's worth (and fewer than a block's) are run by a warp.
    pub warp: bool,
    /// The rest are spread over threads by a prefix sum (fine-grained).
    pub fine_grained: bool,
}

impl Schedule {
    /// Each thread runs its own item's inner iterations one after another.
    pub const SERIAL: Schedule = Schedule { thread_block: false, warp: false, fine_grained: false };
}

/// A parallel loop.
#[derive(Debug, Clone, PartialEq)]
pub struct ForAll {
    pub var: LocalId,
    pub space: Space,
    /// Items for which this is false are skipped.
    pub filter: Option<Expr>,
    pub body: Block,
    /// For nested loops; ignored on a kernel's outermost loops.
    pub schedule: Schedule,
}

/// The items a fresh worklist starts with.
#[derive(Debug, Clone, PartialEq)]
pub enum Initial {
    Items(Vec<Expr>),
    AllNodes,
}

/// The condition that ends an `Iterate`.
#[derive(Debug, Clone, PartialEq)]
pub enum Until {
    /// The worklist is empty after an invocation of the kernel.
    Empty { kernel: KernelId, args: Vec<Expr>, initial: Option<Initial> },
    /// Checked after each pass over the body: stop when `cond == stop_when`.
    Condition { cond: Expr, stop_when: bool },
}

/// A loop of kernel invocations and host code (IrGL's `Iterate`).
#[derive(Debug, Clone, PartialEq)]
pub struct Iterate {
    pub id: OutlineId,
    pub until: Until,
    /// Host code run after each invocation (`Empty`) or as the loop body (`Condition`).
    pub body: Block,
    /// Set by iteration outlining: the loop runs on the device, in one control kernel.
    pub outlined: bool,
}

/// A region that shares a worklist among its invocations (IrGL's `Pipe`).
#[derive(Debug, Clone, PartialEq)]
pub struct Pipe {
    pub id: OutlineId,
    /// Run the body once instead of until the worklist is empty.
    pub once: bool,
    pub initial: Option<Initial>,
    pub body: Block,
    pub outlined: bool,
    /// Set by pipe unrolling ([`crate::opt::unroll`]) on an outlined pipe: the control kernel
    /// runs the body this many times per trip of its loop, checking the worklist between the
    /// copies. 1: not unrolled.
    pub unroll: u32,
}

/// A lock construct's kind.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum LockKind {
    /// Acquire one element's lock (IrGL `Atomic`).
    Atomic,
    /// Try once to own every element (IrGL `Exclusive`).
    Exclusive,
    /// The first thread to claim the element in this invocation (Falcon `single`).
    Single,
}

impl LockKind {
    pub fn name(self) -> &'static str {
        match self {
            LockKind::Atomic => "atomic",
            LockKind::Exclusive => "exclusive",
            LockKind::Single => "single",
        }
    }
}

/// An argument of `print`.
#[derive(Debug, Clone, PartialEq)]
pub enum PrintArg {
    Text(String),
    Value(Expr),
}

/// A statement.
#[derive(Debug, Clone, PartialEq)]
pub enum Stmt {
    Assign {
        place: Place,
        value: Expr,
    },
    If {
        cond: Expr,
        then: Block,
        otherwise: Block,
        uniform: bool,
    },
    While {
        cond: Expr,
        body: Block,
        uniform: bool,
    },
    /// A sequential loop over `start..end`.
    For {
        var: LocalId,
        start: Expr,
        end: Expr,
        body: Block,
    },
    /// A sequential loop over a node's edges or neighbours.
    ForEach {
        var: LocalId,
        adjacency: Adjacency,
        node: Expr,
        body: Block,
        /// Set by the nested-parallelism pass when the body only folds a value into one local
        /// (`acc = acc op value`, [`crate::opt::nested::fold`]): the schedulers may then share
        /// the iterations among threads and combine their partial results (reassociating a
        /// floating-point sum). [`Schedule::SERIAL`] otherwise.
        schedule: Schedule,
    },
    /// A parallel loop; kernels only.
    ForAll(Box<ForAll>),
    /// Appends to the output worklist; kernels only.
    Push {
        site: PushSite,
        value: Expr,
    },
    /// Appends to the current invocation's retry list; kernels only.
    Retry {
        value: Expr,
    },
    /// Contributes to the kernel's result; reduction kernels only.
    Reduce {
        value: Expr,
    },
    Lock {
        kind: LockKind,
        elements: Vec<Expr>,
        body: Block,
        otherwise: Block,
    },
    Break,
    Continue,
    Return(Option<Expr>),
    /// An expression evaluated for its effect (a call, an atomic).
    Eval(Expr),
    /// Runs a kernel once; host only. `result` receives a reduction kernel's value.
    Invoke {
        kernel: KernelId,
        args: Vec<Expr>,
        result: Option<LocalId>,
    },
    Iterate(Box<Iterate>),
    Pipe(Box<Pipe>),
    /// Host only, never inside `Iterate` or `Pipe`.
    Print(Vec<PrintArg>),
}

impl Stmt {
    /// The statement's nested blocks.
    pub fn blocks(&self) -> Vec<&Block> {
        match self {
            Stmt::If { then, otherwise, .. } => vec![then, otherwise],
            Stmt::While { body, .. } | Stmt::For { body, .. } | Stmt::ForEach { body, .. } => vec![body],
            Stmt::ForAll(forall) => vec![&forall.body],
            Stmt::Lock { body, otherwise, .. } => vec![body, otherwise],
            Stmt::Iterate(iterate) => vec![&iterate.body],
            Stmt::Pipe(pipe) => vec![&pipe.body],
            _ => Vec::new(),
        }
    }
}

impl fmt::Display for Type {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Type::Scalar(s) => f.write_str(s.name()),
            Type::Node => f.write_str("Node"),
            Type::Edge => f.write_str("Edge"),
            Type::Struct(id) => write!(f, "struct#{}", id.0),
            Type::Element(id) => write!(f, "element#{}", id.0),
            Type::Array(id) => write!(f, "array#{}", id.0),
            Type::Unit => f.write_str("()"),
        }
    }
}

/// Shorthands for building IR in lowering, passes and tests.
impl Expr {
    pub fn new(kind: ExprKind, ty: Type) -> Expr {
        Expr { kind, ty }
    }

    pub fn int(value: u64, ty: Type) -> Expr {
        Expr::new(ExprKind::Const(Const::Int(value)), ty)
    }

    pub fn bool(value: bool) -> Expr {
        Expr::new(ExprKind::Const(Const::Bool(value)), Type::BOOL)
    }

    pub fn inf(ty: Type) -> Expr {
        Expr::new(ExprKind::Const(Const::Inf), ty)
    }

    pub fn local(id: LocalId, ty: Type) -> Expr {
        Expr::new(ExprKind::Load(Place::Local(id)), ty)
    }

    pub fn property(property: PropertyId, element: Expr, ty: Type) -> Expr {
        Expr::new(ExprKind::Load(Place::Property { property, element: Box::new(element) }), ty)
    }

    pub fn binary(op: BinaryOp, left: Expr, right: Expr) -> Expr {
        let ty = if op.is_comparison() { Type::BOOL } else { left.ty };
        Expr::new(ExprKind::Binary(op, Box::new(left), Box::new(right)), ty)
    }

    pub fn cast(value: Expr, ty: Type) -> Expr {
        Expr::new(ExprKind::Cast(Box::new(value)), ty)
    }
}
