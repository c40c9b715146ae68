//! Name resolution, type checking and lowering from the AST to the IR.
//!
//! One pass over a parsed [`ast::Program`] resolves every name, checks every type and builds the
//! [`grail_ir::Module`]: declarations first (this file), then the bodies of functions, kernels, the
//! property initialisers and `main` (`stmt.rs`, `expr.rs`). Errors do not stop it: an expression
//! that fails to check lowers to nothing (`None`), which its users pass on without reporting
//! again, so one mistake gives one diagnostic and the rest of the program is still checked.
//!
//! Conventions of the module it builds:
//! - structs, properties, sets, params, functions and kernels keep their declaration order
//!   (structs reordered only so that a struct comes after the structs it contains);
//! - property initialisers become one more kernel, appended after the program's own kernels and
//!   named `init` (or `init_1`, `init_2`, ... when the program uses the name), with one `forall`
//!   over all nodes and one over all edges, each present only when some property of that kind has
//!   an initialiser; `main` invokes it first. Properties without an initialiser start at zero
//!   (the runtime's promise) and the integer `edge weight` is bound to the graph's weights;
//! - `const`s are evaluated at compile time and inlined as typed constants;
//! - a param's default is a folded constant (`Const::Inf` for `INF`);
//! - `output` lists node properties and `bool` edge properties;
//! - `fn main() -> T` sets `main_result`; its `return`s carry the value.

mod consts;
mod expr;
mod scope;
mod stmt;
mod types;

use std::collections::HashMap;

use grail_ir::{
    self as ir, CollectionId, Const, FunctionId, KernelId, Owner, ParamId, PropertyId, ReduceOp, SetId, StructId, Type,
};

use crate::ast;
use crate::diagnostics::{Diagnostic, has_errors};
use crate::span::{FileId, Span};
use scope::{BodyCx, BodyKind};

/// Resolves names, type-checks and lowers a parsed program to the IR. Returns the module when
/// there are no errors; diagnostics (several per run where possible) either way.
pub fn lower(program: &ast::Program, file: FileId) -> (Option<ir::Module>, Vec<Diagnostic>) {
    let mut lowerer = Lowerer::new(file);
    lowerer.declare(program);
    lowerer.signatures();
    lowerer.merges();
    lowerer.bodies();
    lowerer.check_recursion();
    let module = lowerer.assemble();
    lowerer.check_edge_changes(&module);
    let mut diagnostics = lowerer.diagnostics;
    diagnostics.sort_by_key(|d| (d.primary.file, d.primary.start));
    if has_errors(&diagnostics) { (None, diagnostics) } else { (Some(module), diagnostics) }
}

/// Parse + lower in one call; the module is named `module_name`.
pub fn compile(source: &str, file: FileId, module_name: &str) -> (Option<ir::Module>, Vec<Diagnostic>) {
    let (program, mut diagnostics) = crate::parse(source, file);
    let Some(program) = program else { return (None, diagnostics) };
    let (module, more) = lower(&program, file);
    diagnostics.extend(more);
    let module = module.map(|mut module| {
        module.name = module_name.to_string();
        module
    });
    (module, diagnostics)
}

/// The names of the built-in functions; no `fn` or `kernel` may take them.
const BUILTINS: &[&str] = &[
    "min",
    "max",
    "abs",
    "sqrt",
    "ln",
    "exp",
    "orient2d",
    "incircle",
    "print",
    "atomic_min",
    "atomic_max",
    "atomic_add",
    "atomic_sub",
    "atomic_and",
    "atomic_or",
    "atomic_cas",
];

struct PropDecl<'a> {
    name: String,
    span: Span,
    owner: Owner,
    ast_ty: &'a ast::Type,
    ty: Option<Type>,
    init: Option<&'a ast::Expr>,
    is_weight: bool,
}

struct CollDecl<'a> {
    name: String,
    ast_ty: &'a ast::Type,
    /// The element struct, once resolved.
    element: Option<StructId>,
}

struct ParamDecl<'a> {
    name: String,
    ast: &'a ast::Param,
    ty: Option<Type>,
    default: Option<Const>,
}

#[derive(Clone, Copy, PartialEq)]
enum ConstState {
    Todo,
    Busy,
    Done(Option<Const>),
}

struct ConstDecl<'a> {
    ast: &'a ast::Const,
    ty: Option<Type>,
    state: ConstState,
}

struct StructInfo<'a> {
    ast: &'a ast::StructDecl,
    fields: Vec<(String, Option<Type>)>,
}

struct Signature {
    params: Vec<(String, Span, Option<Type>)>,
}

struct FnDecl<'a> {
    ast: &'a ast::Function,
    sig: Signature,
    /// `Type::Unit` without `-> T`; `None` when `T` did not resolve.
    result: Option<Type>,
}

struct KernelDecl<'a> {
    ast: &'a ast::Kernel,
    sig: Signature,
    reduction: Option<(ReduceOp, Option<Type>)>,
}

/// What a plain name at item level stands for.
#[derive(Clone, Copy, Debug, PartialEq)]
enum Global {
    Param(ParamId),
    Const(usize),
    Function(FunctionId),
    Kernel(KernelId),
    Main,
}

/// What `G.name` or `x.name` stands for.
#[derive(Clone, Copy, Debug, PartialEq)]
enum GraphName {
    Property(PropertyId),
    Set(SetId),
    Collection(CollectionId),
}

struct Lowerer<'a> {
    file: FileId,
    diagnostics: Vec<Diagnostic>,
    props: Vec<PropDecl<'a>>,
    sets: Vec<String>,
    collections: Vec<CollDecl<'a>>,
    params: Vec<ParamDecl<'a>>,
    consts: Vec<ConstDecl<'a>>,
    structs: Vec<StructInfo<'a>>,
    functions: Vec<FnDecl<'a>>,
    kernels: Vec<KernelDecl<'a>>,
    main: Option<&'a ast::Function>,
    outputs: Vec<&'a ast::Ident>,
    inputs: Vec<&'a ast::Ident>,
    values: HashMap<String, (Global, Span)>,
    graph_names: HashMap<String, (GraphName, Span)>,
    types: HashMap<String, StructId>,
    /// The array types met so far, by `ArrayId`.
    arrays: Vec<ir::ArrayDecl>,
    /// Per function: the functions it calls, with where.
    calls: Vec<Vec<(FunctionId, Span)>>,
    /// Per function: where it first reads or writes a collection element's field, which host
    /// code cannot do (so `main` may not call it, directly or not).
    element_access: Vec<Option<Span>>,
    /// The body being lowered.
    body: BodyCx,
    lowered_functions: Vec<Option<ir::Function>>,
    lowered_kernels: Vec<Option<ir::Kernel>>,
    init_kernel: Option<ir::Kernel>,
    main_body: ir::Body,
    main_result: Type,
    out_ids: Vec<PropertyId>,
    collection_outputs: Vec<CollectionId>,
    collection_inputs: Vec<CollectionId>,
    property_inputs: Vec<PropertyId>,
    /// The next `OutlineId` of `main`'s `iterate`/`pipe` regions.
    outlines: u32,
    /// Where kernels change the graph, and what reads only the input graph has.
    edge_changes: EdgeChanges,
    /// `merge property with function;` declarations, as written.
    merge_decls: Vec<(&'a ast::Ident, &'a ast::Ident)>,
    /// The resolved ones.
    merge_functions: Vec<(PropertyId, FunctionId)>,
}

/// Where the program first adds and removes edges, and where it reads what only an unchanged
/// graph has (indexed neighbours, in-edges): both together are an error.
#[derive(Default)]
struct EdgeChanges {
    added: Option<Span>,
    removed: Option<Span>,
    nodes_added: Option<Span>,
    nodes_removed: Option<Span>,
    fixed_reads: Vec<(Span, &'static str)>,
}

impl<'a> Lowerer<'a> {
    fn new(file: FileId) -> Lowerer<'a> {
        Lowerer {
            file,
            diagnostics: Vec::new(),
            props: Vec::new(),
            sets: Vec::new(),
            collections: Vec::new(),
            params: Vec::new(),
            consts: Vec::new(),
            structs: Vec::new(),
            functions: Vec::new(),
            kernels: Vec::new(),
            main: None,
            outputs: Vec::new(),
            inputs: Vec::new(),
            values: HashMap::new(),
            graph_names: HashMap::new(),
            types: HashMap::new(),
            arrays: Vec::new(),
            calls: Vec::new(),
            element_access: Vec::new(),
            edge_changes: EdgeChanges::default(),
            merge_decls: Vec::new(),
            merge_functions: Vec::new(),
            body: BodyCx::new(BodyKind::Const),
            lowered_functions: Vec::new(),
            lowered_kernels: Vec::new(),
            init_kernel: None,
            main_body: ir::Body::default(),
            main_result: Type::Unit,
            out_ids: Vec::new(),
            collection_outputs: Vec::new(),
            collection_inputs: Vec::new(),
            property_inputs: Vec::new(),
            outlines: 0,
        }
    }

    fn report(&mut self, diagnostic: Diagnostic) {
        self.diagnostics.push(diagnostic);
    }

    /// Reports an error and yields nothing, for `return self.error(...)` in lowering functions.
    fn error<T>(&mut self, message: impl Into<String>, span: Span) -> Option<T> {
        self.report(Diagnostic::error(message, span));
        None
    }

    /// A type as the program spells it (struct names instead of ids).
    fn type_name(&self, ty: Type) -> String {
        match ty {
            Type::Struct(id) => self.structs.get(id.index()).map_or("?".to_string(), |s| s.ast.name.name.clone()),
            Type::Element(id) => self.collections.get(id.index()).map_or("?".to_string(), |c| c.name.clone()),
            Type::Unit => "no value".to_string(),
            Type::Array(id) => match self.arrays.get(id.index()) {
                Some(a) => format!("[{}; {}]", self.type_name(a.element), a.len),
                None => "?".to_string(),
            },
            other => other.to_string(),
        }
    }

    // ---- declarations ----

    fn define(&mut self, name: &ast::Ident, global: Global) {
        if let Some((_, first)) = self.values.get(&name.name) {
            let first = *first;
            let message = format!("`{}` is defined more than once", name.name);
            self.report(Diagnostic::error(message, name.span).with_label(first, "first defined here"));
            return;
        }
        self.values.insert(name.name.clone(), (global, name.span));
    }

    fn define_graph_name(&mut self, name: &ast::Ident, what: GraphName) -> bool {
        if let Some((_, first)) = self.graph_names.get(&name.name) {
            let first = *first;
            let message = format!("the graph block declares `{}` more than once", name.name);
            self.report(Diagnostic::error(message, name.span).with_label(first, "first declared here"));
            return false;
        }
        self.graph_names.insert(name.name.clone(), (what, name.span));
        true
    }

    fn not_builtin(&mut self, name: &ast::Ident, what: &str) {
        if BUILTINS.contains(&name.name.as_str()) {
            let message = format!("`{}` is a built-in function and cannot name a {what}", name.name);
            self.report(Diagnostic::error(message, name.span));
        }
    }

    /// Collects every item's name, in source order.
    fn declare(&mut self, program: &'a ast::Program) {
        let mut graph_block: Option<Span> = None;
        for item in &program.items {
            match &item.kind {
                ast::ItemKind::Graph(block) => {
                    if let Some(first) = graph_block {
                        let message = "a program has at most one `graph` block";
                        self.report(Diagnostic::error(message, item.span).with_label(first, "the first one is here"));
                    } else {
                        graph_block = Some(item.span);
                    }
                    for decl in &block.decls {
                        self.graph_decl(decl);
                    }
                }
                ast::ItemKind::Param(param) => {
                    let id = ParamId(self.params.len() as u32);
                    self.define(&param.name, Global::Param(id));
                    self.params.push(ParamDecl { name: param.name.name.clone(), ast: param, ty: None, default: None });
                }
                ast::ItemKind::Output(output) => self.outputs.push(&output.name),
                ast::ItemKind::Input(input) => self.inputs.push(&input.name),
                ast::ItemKind::Const(constant) => {
                    self.define(&constant.name, Global::Const(self.consts.len()));
                    self.consts.push(ConstDecl { ast: constant, ty: None, state: ConstState::Todo });
                }
                ast::ItemKind::Struct(decl) => {
                    if types::builtin(&ast::TypeKind::from_name(&decl.name.name)).is_some() {
                        let message = format!("`{}` is a built-in type and cannot name a struct", decl.name.name);
                        self.report(Diagnostic::error(message, decl.name.span));
                        continue;
                    }
                    if let Some(first) = self.structs.iter().find(|s| s.ast.name.name == decl.name.name) {
                        let first = first.ast.name.span;
                        let message = format!("struct `{}` is defined more than once", decl.name.name);
                        self.report(Diagnostic::error(message, decl.name.span).with_label(first, "first defined here"));
                        continue;
                    }
                    self.structs.push(StructInfo { ast: decl, fields: Vec::new() });
                }
                ast::ItemKind::Function(function) if function.name.name == "main" => {
                    if let Some(first) = self.main {
                        let message = "`main` is defined more than once";
                        let diagnostic = Diagnostic::error(message, function.name.span)
                            .with_label(first.name.span, "first defined here");
                        self.report(diagnostic);
                    } else {
                        self.main = Some(function);
                        self.define(&function.name, Global::Main);
                    }
                }
                ast::ItemKind::Function(function) => {
                    self.not_builtin(&function.name, "function");
                    let id = FunctionId(self.functions.len() as u32);
                    self.define(&function.name, Global::Function(id));
                    let sig = Signature { params: Vec::new() };
                    self.functions.push(FnDecl { ast: function, sig, result: None });
                }
                ast::ItemKind::Kernel(kernel) => {
                    self.not_builtin(&kernel.name, "kernel");
                    if kernel.name.name == "main" {
                        let message = "`main` must be a `fn`, not a kernel";
                        self.report(Diagnostic::error(message, kernel.name.span));
                    }
                    let id = KernelId(self.kernels.len() as u32);
                    self.define(&kernel.name, Global::Kernel(id));
                    let sig = Signature { params: Vec::new() };
                    self.kernels.push(KernelDecl { ast: kernel, sig, reduction: None });
                }
            }
        }
        if self.main.is_none() {
            let at = Span::new(self.file, program.span.start as usize, program.span.start as usize);
            let diagnostic = Diagnostic::error("the program has no `fn main()`", at)
                .with_note("`fn main() { ... }` is the entry point: it runs on the host and invokes the kernels");
            self.report(diagnostic);
        }
    }

    fn graph_decl(&mut self, decl: &'a ast::GraphDecl) {
        match &decl.kind {
            ast::GraphDeclKind::Property { owner, name, ty, init } => {
                let owner = match owner {
                    ast::PropertyOwner::Node => Owner::Node,
                    ast::PropertyOwner::Edge => Owner::Edge,
                };
                if owner == Owner::Edge && (name.name == "src" || name.name == "dst") {
                    let message =
                        format!("`e.{}` is an edge's endpoint; an edge property cannot take the name", name.name);
                    self.report(Diagnostic::error(message, name.span));
                    return;
                }
                let id = PropertyId(self.props.len() as u32);
                if self.define_graph_name(name, GraphName::Property(id)) {
                    self.props.push(PropDecl {
                        name: name.name.clone(),
                        span: name.span,
                        owner,
                        ast_ty: ty,
                        ty: None,
                        init: init.as_ref(),
                        is_weight: false,
                    });
                }
            }
            ast::GraphDeclKind::Set { name } => {
                let id = SetId(self.sets.len() as u32);
                if self.define_graph_name(name, GraphName::Set(id)) {
                    self.sets.push(name.name.clone());
                }
            }
            ast::GraphDeclKind::Collection { name, ty } => {
                let id = CollectionId(self.collections.len() as u32);
                if self.define_graph_name(name, GraphName::Collection(id)) {
                    self.collections.push(CollDecl { name: name.name.clone(), ast_ty: ty, element: None });
                }
            }
            ast::GraphDeclKind::Merge { property, function } => self.merge_decls.push((property, function)),
        }
    }

    /// Resolves `merge property with function;`: a node property of a scalar type, and a
    /// function `(current: T, incoming: T) -> T` of the property's type `T`.
    fn merges(&mut self) {
        for (property, function) in std::mem::take(&mut self.merge_decls) {
            let Some(GraphName::Property(p)) = self.graph_names.get(&property.name).map(|(g, _)| *g) else {
                let message = format!("`merge {}`: the graph has no property named `{}`", property.name, property.name);
                self.report(Diagnostic::error(message, property.span));
                continue;
            };
            let decl = &self.props[p.index()];
            if decl.owner != Owner::Node {
                let message = format!("`merge {}`: update functions are for node properties", property.name);
                let diagnostic = Diagnostic::error(message, property.span)
                    .with_note("a part owns its nodes' values; an edge lives on its source's part only");
                self.report(diagnostic);
                continue;
            }
            let Some(ty) = decl.ty else { continue };
            if ty.scalar().is_none() {
                let message = format!(
                    "`merge {}`: the property is a `{}`; update functions take scalars",
                    property.name,
                    self.type_name(ty)
                );
                self.report(Diagnostic::error(message, property.span));
                continue;
            }
            let f = match self.values.get(&function.name) {
                Some((Global::Function(f), _)) => *f,
                _ => {
                    let message = format!(
                        "`merge {} with {}`: there is no function `{}`",
                        property.name, function.name, function.name
                    );
                    self.report(Diagnostic::error(message, function.span));
                    continue;
                }
            };
            let callee = &self.functions[f.index()];
            let params: Vec<Option<Type>> = callee.sig.params.iter().map(|(_, _, t)| *t).collect();
            if params != [Some(ty), Some(ty)] || callee.result != Some(ty) {
                let t = self.type_name(ty);
                let message = format!(
                    "`merge {} with {}`: an update function for a `{t}` property takes `(current: {t}, incoming: {t})` and returns `{t}`",
                    property.name, function.name
                );
                let diagnostic =
                    Diagnostic::error(message, function.span).with_label(callee.ast.name.span, "declared here");
                self.report(diagnostic);
                continue;
            }
            if self.merge_functions.iter().any(|(q, _)| *q == p) {
                let message = format!("`{}` has two update functions", property.name);
                self.report(Diagnostic::error(message, property.span));
                continue;
            }
            self.merge_functions.push((p, f));
        }
    }

    /// Resolves a type name.
    fn resolve_type(&mut self, ty: &ast::Type) -> Option<Type> {
        if let Some(builtin) = types::builtin(&ty.kind) {
            return Some(builtin);
        }
        if let ast::TypeKind::Array(element, len) = &ty.kind {
            let element = self.resolve_type(element)?;
            if !matches!(element, Type::Scalar(_) | Type::Node | Type::Edge | Type::Element(_)) {
                let message = format!(
                    "an array holds numbers, `bool`, `Node`, `Edge` or handles, not `{}`",
                    self.type_name(element)
                );
                return self.error(message, ty.span);
            }
            if *len == 0 || *len > 4096 {
                return self.error(format!("an array holds 1 to 4096 items, not {len}"), ty.span);
            }
            let decl = ir::ArrayDecl { element, len: *len as u32 };
            let id = match self.arrays.iter().position(|a| *a == decl) {
                Some(i) => i,
                None => {
                    self.arrays.push(decl);
                    self.arrays.len() - 1
                }
            };
            return Some(Type::Array(ir::ArrayId(id as u32)));
        }
        let name = ty.kind.name();
        let name = name.as_ref();
        if let Some(id) = self.types.get(name) {
            return Some(Type::Struct(*id));
        }
        // A collection's name is the type of its elements' handles.
        if let Some((GraphName::Collection(id), _)) = self.graph_names.get(name) {
            return Some(Type::Element(*id));
        }
        let builtins = ["bool", "i32", "i64", "u32", "u64", "f32", "f64", "Node", "Edge"];
        let collections = self.collections.iter().map(|c| c.name.as_str());
        let candidates: Vec<&str> =
            builtins.iter().copied().chain(self.types.keys().map(String::as_str)).chain(collections).collect();
        let mut diagnostic = Diagnostic::error(format!("unknown type `{name}`"), ty.span);
        if let Some(close) = types::suggest(name, candidates) {
            diagnostic = diagnostic.with_note(format!("did you mean `{close}`?"));
        }
        self.report(diagnostic);
        None
    }

    /// Orders the structs so that each follows those it contains, resolves their fields, then
    /// every other signature: property, param and constant types, function and kernel
    /// signatures, outputs, constant values and param defaults.
    fn signatures(&mut self) {
        self.order_structs();
        for i in 0..self.structs.len() {
            let decl = self.structs[i].ast;
            let mut fields: Vec<(String, Option<Type>)> = Vec::new();
            for field in &decl.fields {
                if fields.iter().any(|(name, _)| *name == field.name.name) {
                    let message = format!("struct `{}` has two fields named `{}`", decl.name.name, field.name.name);
                    self.report(Diagnostic::error(message, field.name.span));
                    continue;
                }
                let ty = self.resolve_type(&field.ty);
                fields.push((field.name.name.clone(), ty));
            }
            self.structs[i].fields = fields;
        }
        for i in 0..self.collections.len() {
            let name = self.collections[i].name.clone();
            if types::builtin(&ast::TypeKind::from_name(&name)).is_some() || self.types.contains_key(&name) {
                let span = self.graph_names[&name].1;
                let message = format!("`{name}` names a type, so it cannot name a collection");
                let diagnostic = Diagnostic::error(message, span)
                    .with_note("a collection's name is also the type of its elements' handles: `fn f(t: tris)`");
                self.report(diagnostic);
            }
            let ast_ty = self.collections[i].ast_ty;
            self.collections[i].element = match self.resolve_type(ast_ty) {
                Some(Type::Struct(id)) => Some(id),
                Some(other) => {
                    let message = format!("a collection holds structs, not `{}`", self.type_name(other));
                    let diagnostic = Diagnostic::error(message, ast_ty.span).with_note(
                        "declare the element's fields as a struct: `struct Tri { a: Node, b: Node, c: Node }`, then `collection tris: Tri;`",
                    );
                    self.report(diagnostic);
                    None
                }
                None => None,
            };
        }
        for i in 0..self.props.len() {
            let ty = self.resolve_type(self.props[i].ast_ty);
            let prop = &self.props[i];
            let is_weight = prop.owner == Owner::Edge && prop.name == "weight" && ty.is_some_and(types::is_numeric);
            if is_weight && let Some(init) = prop.init {
                let message = "`edge weight` is bound to the graph's weights and cannot have an initialiser";
                self.report(Diagnostic::error(message, init.span));
            }
            let prop = &mut self.props[i];
            prop.ty = ty;
            prop.is_weight = is_weight;
        }
        for i in 0..self.params.len() {
            let ast = self.params[i].ast;
            let ty = self.resolve_type(&ast.ty);
            let ty = match ty {
                Some(t) if types::is_plain(t) && t != Type::Edge => Some(t),
                Some(t) => {
                    let message = format!("a param cannot have type `{}`", self.type_name(t));
                    let diagnostic = Diagnostic::error(message, ast.ty.span)
                        .with_note("params are numbers, `bool` or `Node`, bound from the command line");
                    self.report(diagnostic);
                    None
                }
                None => None,
            };
            self.params[i].ty = ty;
        }
        for i in 0..self.consts.len() {
            let ast = self.consts[i].ast;
            let ty = match self.resolve_type(&ast.ty) {
                Some(t) if types::is_plain(t) => Some(t),
                Some(t) => {
                    let message = format!("a constant cannot have type `{}`", self.type_name(t));
                    self.error::<()>(message, ast.ty.span);
                    None
                }
                None => None,
            };
            self.consts[i].ty = ty;
        }
        for i in 0..self.functions.len() {
            let ast = self.functions[i].ast;
            let sig = self.signature(&ast.params, false);
            let result = match &ast.ret {
                Some(t) => self.resolve_type(t),
                None => Some(Type::Unit),
            };
            self.functions[i].sig = sig;
            self.functions[i].result = result;
        }
        for i in 0..self.kernels.len() {
            let ast = self.kernels[i].ast;
            let sig = self.signature(&ast.params, true);
            let reduction = ast.reduction.as_ref().map(|r| (reduce_op(r.op), self.reduction_type(r)));
            self.kernels[i].sig = sig;
            self.kernels[i].reduction = reduction;
        }
        if let Some(main) = self.main {
            if let Some(first) = main.params.first() {
                let message = "`main` takes no parameters";
                let diagnostic = Diagnostic::error(message, first.span)
                    .with_note("values from the command line are `param` items: `param source: Node;`");
                self.report(diagnostic);
            }
            self.main_result = match &main.ret {
                None => Type::Unit,
                Some(t) => match self.resolve_type(t) {
                    Some(ty) if types::is_plain(ty) => ty,
                    Some(ty) => {
                        let message = format!(
                            "`main` cannot return a `{}`; it returns a number, `bool`, `Node` or `Edge`",
                            self.type_name(ty)
                        );
                        self.error::<()>(message, t.span);
                        Type::Unit
                    }
                    None => Type::Unit,
                },
            };
        }
        self.check_outputs();
        self.check_inputs();
        for i in 0..self.consts.len() {
            let span = self.consts[i].ast.name.span;
            self.const_value(i, span);
        }
        for i in 0..self.params.len() {
            self.param_default(i);
        }
    }

    fn signature(&mut self, params: &[ast::FieldDecl], kernel: bool) -> Signature {
        let mut out: Vec<(String, Span, Option<Type>)> = Vec::new();
        for param in params {
            if let Some((_, first, _)) = out.iter().find(|(name, _, _)| *name == param.name.name) {
                let first = *first;
                let message = format!("parameter `{}` is declared twice", param.name.name);
                self.report(Diagnostic::error(message, param.name.span).with_label(first, "first declared here"));
            }
            let mut ty = self.resolve_type(&param.ty);
            if kernel && let Some(t) = ty.filter(|t| !types::is_plain(*t)) {
                let message = format!("a kernel parameter cannot have type `{}`", self.type_name(t));
                let diagnostic = Diagnostic::error(message, param.ty.span)
                    .with_note("kernel parameters are numbers, `bool`, `Node` or `Edge`");
                self.report(diagnostic);
                ty = None;
            }
            out.push((param.name.name.clone(), param.name.span, ty));
        }
        Signature { params: out }
    }

    fn reduction_type(&mut self, reduction: &ast::Reduction) -> Option<Type> {
        let ty = self.resolve_type(&reduction.ty)?;
        let op = reduce_op(reduction.op);
        let ok = match op {
            ReduceOp::Any | ReduceOp::All => ty == Type::BOOL,
            _ => types::is_numeric(ty),
        };
        if !ok {
            let wanted = if matches!(op, ReduceOp::Any | ReduceOp::All) { "`bool` values" } else { "numbers" };
            let message = format!("the `{}` reduction combines {wanted}, not `{}`", op.name(), self.type_name(ty));
            return self.error(message, reduction.ty.span);
        }
        Some(ty)
    }

    /// `input name;` names a collection or a node property without an initialiser, once each.
    fn check_inputs(&mut self) {
        for name in self.inputs.clone() {
            match self.graph_names.get(&name.name).map(|(g, _)| *g) {
                Some(GraphName::Collection(id)) if self.collection_inputs.contains(&id) => {
                    self.report(Diagnostic::error(format!("`{}` is an input twice", name.name), name.span));
                }
                Some(GraphName::Property(id)) if self.property_inputs.contains(&id) => {
                    self.report(Diagnostic::error(format!("`{}` is an input twice", name.name), name.span));
                }
                Some(GraphName::Collection(id)) => self.collection_inputs.push(id),
                Some(GraphName::Property(id)) => {
                    let declared = &self.props[id.index()];
                    if declared.owner != Owner::Node {
                        let message = format!(
                            "`input` names a collection or a node property, and `{}` is an edge property",
                            name.name
                        );
                        let diagnostic = Diagnostic::error(message, name.span)
                            .with_note("edge properties come from the graph (its weights) or start at zero");
                        self.report(diagnostic);
                    } else if let Some(init) = declared.init {
                        let message = format!("input property `{}` has an initial value", name.name);
                        let diagnostic = Diagnostic::error(message, init.span)
                            .with_note("the runner gives every node's value of an input property; drop the `= ...`");
                        self.report(diagnostic);
                    } else {
                        self.property_inputs.push(id);
                    }
                }
                _ => {
                    let message =
                        format!("`input` names a collection or a node property, and `{}` is neither", name.name);
                    let diagnostic = Diagnostic::error(message, name.span)
                        .with_note("an input collection, or an input node property's values, are given by the runner before `main`");
                    self.report(diagnostic);
                }
            }
        }
    }

    fn check_outputs(&mut self) {
        let mut seen: Vec<PropertyId> = Vec::new();
        for name in self.outputs.clone() {
            match self.graph_names.get(&name.name).map(|(g, _)| *g) {
                Some(GraphName::Property(id)) => {
                    let prop = &self.props[id.index()];
                    let ok = prop.owner == Owner::Node || prop.ty == Some(Type::BOOL) || prop.ty.is_none();
                    if !ok {
                        let message = format!(
                            "`{}` is an edge property of type `{}`; only node properties and `bool` edge properties can be output",
                            name.name,
                            self.type_name(prop.ty.unwrap_or_default())
                        );
                        self.report(Diagnostic::error(message, name.span).with_label(prop.span, "declared here"));
                    } else if seen.contains(&id) {
                        let message = format!("`{}` is output twice", name.name);
                        self.report(Diagnostic::error(message, name.span));
                    } else {
                        seen.push(id);
                    }
                }
                Some(GraphName::Set(_)) => {
                    let message = format!("`{}` is a set; `output` names a property", name.name);
                    self.report(Diagnostic::error(message, name.span));
                }
                Some(GraphName::Collection(id)) => {
                    if self.collection_outputs.contains(&id) {
                        let message = format!("`{}` is output twice", name.name);
                        self.report(Diagnostic::error(message, name.span));
                    } else {
                        self.collection_outputs.push(id);
                    }
                }
                None => {
                    let candidates: Vec<&str> = self.props.iter().map(|p| p.name.as_str()).collect();
                    let mut diagnostic =
                        Diagnostic::error(format!("there is no property named `{}` to output", name.name), name.span);
                    if let Some(close) = types::suggest(&name.name, candidates) {
                        diagnostic = diagnostic.with_note(format!("did you mean `{close}`?"));
                    }
                    self.report(diagnostic);
                }
            }
        }
        self.out_ids = seen;
    }

    /// Assigns struct ids so that a struct comes after every struct it contains; reports structs
    /// that contain themselves.
    fn order_structs(&mut self) {
        let count = self.structs.len();
        let index: HashMap<String, usize> =
            self.structs.iter().enumerate().map(|(i, s)| (s.ast.name.name.clone(), i)).collect();
        let mut state = vec![0u8; count];
        let mut order = Vec::with_capacity(count);
        let mut cyclic = vec![false; count];
        fn visit(
            i: usize,
            structs: &[StructInfo<'_>],
            index: &HashMap<String, usize>,
            state: &mut [u8],
            order: &mut Vec<usize>,
            cyclic: &mut [bool],
        ) {
            state[i] = 1;
            for field in &structs[i].ast.fields {
                if let ast::TypeKind::Named(name) = &field.ty.kind
                    && let Some(&j) = index.get(name)
                {
                    match state[j] {
                        0 => visit(j, structs, index, state, order, cyclic),
                        1 => cyclic[j] = true,
                        _ => {}
                    }
                }
            }
            state[i] = 2;
            order.push(i);
        }
        for i in 0..count {
            if state[i] == 0 {
                visit(i, &self.structs, &index, &mut state, &mut order, &mut cyclic);
            }
        }
        for (i, bad) in cyclic.iter().enumerate() {
            if *bad {
                let name = &self.structs[i].ast.name;
                let message = format!("struct `{}` contains itself", name.name);
                let diagnostic = Diagnostic::error(message, name.span)
                    .with_note("a struct is a plain value; it cannot hold a value of its own type");
                self.report(diagnostic);
            }
        }
        let mut structs: Vec<Option<StructInfo<'a>>> =
            std::mem::take(&mut self.structs).into_iter().map(Some).collect();
        for i in order {
            let info = structs[i].take().expect("each struct once");
            // A struct on a cycle gets no id: uses of its name report nothing more.
            if !cyclic[i] {
                self.types.insert(info.ast.name.name.clone(), StructId(self.structs.len() as u32));
                self.structs.push(info);
            }
        }
    }

    /// The value of constant `index`, evaluating it on first use.
    fn const_value(&mut self, index: usize, used_at: Span) -> Option<(Const, Type)> {
        let decl = &self.consts[index];
        let (ast, ty) = (decl.ast, decl.ty);
        match decl.state {
            ConstState::Done(value) => return Some((value?, ty?)),
            ConstState::Busy => {
                self.consts[index].state = ConstState::Done(None);
                let message = format!("constant `{}` is defined in terms of itself", ast.name.name);
                return self.error(message, used_at);
            }
            ConstState::Todo => {}
        }
        self.consts[index].state = ConstState::Busy;
        let value = ty.and_then(|ty| self.constant_expr(&ast.value, ty, &format!("constant `{}`", ast.name.name)));
        if self.consts[index].state == ConstState::Busy {
            self.consts[index].state = ConstState::Done(value);
        }
        Some((value?, ty?))
    }

    /// Lowers `expr` where a compile-time value of type `ty` is needed, and evaluates it.
    fn constant_expr(&mut self, expr: &ast::Expr, ty: Type, what: &str) -> Option<Const> {
        let saved = std::mem::replace(&mut self.body, BodyCx::new(BodyKind::Const));
        let lowered = self.expect(expr, ty);
        self.body = saved;
        match consts::fold(&lowered?) {
            Ok(value) => Some(value),
            Err(consts::FoldError::DivisionByZero) => {
                self.error(format!("the value of {what} divides by zero"), expr.span)
            }
            Err(consts::FoldError::Overflow) => self
                .error(format!("the value of {what} overflows: it divides a signed type's minimum by -1"), expr.span),
            Err(consts::FoldError::NotConstant) => {
                let diagnostic = Diagnostic::error(
                    format!("the value of {what} must be known at compile time"),
                    expr.span,
                )
                .with_note(
                    "it may use literals, `INF`, constants and operators, but not params, the graph or properties",
                );
                self.report(diagnostic);
                None
            }
        }
    }

    fn param_default(&mut self, index: usize) {
        let ast = self.params[index].ast;
        let (Some(default), Some(ty)) = (&ast.default, self.params[index].ty) else { return };
        let value = self.constant_expr(default, ty, &format!("the default of param `{}`", ast.name.name));
        self.params[index].default = value;
    }

    // ---- bodies ----

    fn bodies(&mut self) {
        for _ in 0..self.functions.len() {
            self.calls.push(Vec::new());
            self.element_access.push(None);
        }
        for i in 0..self.functions.len() {
            let function = self.function(FunctionId(i as u32));
            self.lowered_functions.push(function);
        }
        for i in 0..self.kernels.len() {
            let kernel = self.kernel(KernelId(i as u32));
            self.lowered_kernels.push(kernel);
        }
        self.init_kernel = self.init();
        if let Some(main) = self.main {
            self.main_body = self.host(main);
        }
    }

    /// The kernel's IR, if it lowered (for what `main` needs to know about it).
    fn lowered_kernel(&self, id: KernelId) -> Option<&ir::Kernel> {
        self.lowered_kernels.get(id.index()).and_then(Option::as_ref)
    }

    /// The name of the initialisation kernel: `init`, or `init_N` if the program uses `init`.
    fn init_name(&self) -> String {
        let taken = |name: &str| self.values.contains_key(name);
        if !taken("init") {
            return "init".to_string();
        }
        (1..).map(|n| format!("init_{n}")).find(|name| !taken(name)).expect("a free name")
    }

    /// The id the initialisation kernel will have (after the program's kernels).
    fn init_id(&self) -> Option<KernelId> {
        self.init_kernel.as_ref().map(|_| KernelId(self.kernels.len() as u32))
    }

    /// Where function `id`, or a function it calls, first touches a collection element's field.
    fn element_access_from(&self, id: FunctionId) -> Option<Span> {
        let mut seen = vec![false; self.functions.len()];
        let mut stack = vec![id.index()];
        while let Some(f) = stack.pop() {
            if std::mem::replace(&mut seen[f], true) {
                continue;
            }
            if let Some(at) = self.element_access[f] {
                return Some(at);
            }
            stack.extend(self.calls[f].iter().map(|(g, _)| g.index()));
        }
        None
    }

    /// Reports every cycle of calls among functions, once, at a call that closes it.
    fn check_recursion(&mut self) {
        let count = self.functions.len();
        // For each function, whether it can reach itself; report at its first call on the way.
        for start in 0..count {
            let mut seen = vec![false; count];
            let mut stack: Vec<usize> = self.calls[start].iter().map(|(f, _)| f.index()).collect();
            let mut recursive = false;
            while let Some(f) = stack.pop() {
                if f == start {
                    recursive = true;
                    break;
                }
                if !std::mem::replace(&mut seen[f], true) {
                    stack.extend(self.calls[f].iter().map(|(g, _)| g.index()));
                }
            }
            if !recursive {
                continue;
            }
            // Report once per cycle: at the function of the cycle declared first.
            let in_cycle = |f: usize, me: &Self| -> bool {
                // f is on a cycle through start if start reaches f and f reaches start.
                reaches(&me.calls, start, f) && reaches(&me.calls, f, start)
            };
            if (0..start).any(|f| in_cycle(f, self)) {
                continue;
            }
            let (callee, span) = self.calls[start]
                .iter()
                .find(|(g, _)| g.index() == start || reaches(&self.calls, g.index(), start))
                .copied()
                .expect("a call on the cycle");
            let name = &self.functions[start].ast.name.name;
            let message = if callee.index() == start {
                format!("function `{name}` calls itself")
            } else {
                let via = &self.functions[callee.index()].ast.name.name;
                format!("function `{name}` calls itself through `{via}`")
            };
            let diagnostic = Diagnostic::error(message, span).with_note(
                "functions may not be recursive: kernels run them on the GPU, which has no call stack to spare",
            );
            self.report(diagnostic);
        }
    }

    fn assemble(&mut self) -> ir::Module {
        let structs = self
            .structs
            .iter()
            .map(|s| ir::StructDef {
                name: s.ast.name.name.clone(),
                fields: s.fields.iter().map(|(name, ty)| (name.clone(), ty.unwrap_or(Type::U32))).collect(),
            })
            .collect();
        let properties = self
            .props
            .iter()
            .map(|p| ir::Property {
                name: p.name.clone(),
                owner: p.owner,
                ty: p.ty.unwrap_or(Type::U32),
                is_weight: p.is_weight,
            })
            .collect();
        let params = self
            .params
            .iter()
            .map(|p| ir::Param { name: p.name.clone(), ty: p.ty.unwrap_or(Type::U32), default: p.default })
            .collect();
        let functions = std::mem::take(&mut self.lowered_functions)
            .into_iter()
            .zip(&self.functions)
            .map(|(f, decl)| {
                f.unwrap_or_else(|| ir::Function {
                    name: decl.ast.name.name.clone(),
                    params: 0,
                    result: Type::Unit,
                    body: ir::Body::default(),
                })
            })
            .collect();
        let mut kernels: Vec<ir::Kernel> = std::mem::take(&mut self.lowered_kernels)
            .into_iter()
            .zip(&self.kernels)
            .map(|(k, decl)| {
                k.unwrap_or_else(|| ir::Kernel {
                    name: decl.ast.name.name.clone(),
                    params: 0,
                    reduction: None,
                    body: ir::Body::default(),
                    push_sites: Vec::new(),
                })
            })
            .collect();
        let init_id = self.init_id();
        if let Some(mut init) = self.init_kernel.take() {
            init.name = self.init_name();
            kernels.push(init);
        }
        let mut structs = structs;
        let mut properties = properties;
        let mut collections: Vec<ir::CollectionDecl> = self
            .collections
            .iter()
            .map(|c| ir::CollectionDecl { name: c.name.clone(), element: c.element.unwrap_or(StructId(0)) })
            .collect();
        let growth = self.growth_declarations(&mut structs, &mut properties, &mut collections, init_id);
        ir::Module {
            name: "program".to_string(),
            arrays: self.arrays.clone(),
            structs,
            properties,
            sets: self.sets.iter().map(|name| ir::SetDecl { name: name.clone() }).collect(),
            collections,
            growth,
            merge_functions: self.merge_functions.clone(),
            params,
            outputs: self.out_ids.clone(),
            collection_outputs: self.collection_outputs.clone(),
            collection_inputs: self.collection_inputs.clone(),
            property_inputs: self.property_inputs.clone(),
            functions,
            kernels,
            defaults: init_id,
            over_slots: Vec::new(),
            set_joins: Vec::new(),
            main: std::mem::take(&mut self.main_body),
            main_result: self.main_result,
            opt: ir::OptConfig::NONE,
            opt_notes: Vec::new(),
        }
    }
}

impl Lowerer<'_> {
    /// When kernels add or remove edges: the hidden declarations that hold the changes (see
    /// `grail_ir::GraphGrowth`), appended after the program's own so no id moves.
    fn growth_declarations(
        &self,
        structs: &mut Vec<ir::StructDef>,
        properties: &mut Vec<ir::Property>,
        collections: &mut Vec<ir::CollectionDecl>,
        init: Option<KernelId>,
    ) -> Option<ir::GraphGrowth> {
        let changes = &self.edge_changes;
        if changes.added.is_none()
            && changes.removed.is_none()
            && changes.nodes_added.is_none()
            && changes.nodes_removed.is_none()
        {
            return None;
        }
        let mut fields =
            vec![("src".to_string(), Type::Node), ("dst".to_string(), Type::Node), ("next".to_string(), Type::U32)];
        let edge_fields = property_fields(properties, Owner::Edge, &mut fields);
        let element = StructId(structs.len() as u32);
        structs.push(ir::StructDef { name: "added edge".to_string(), fields });
        let added = CollectionId(collections.len() as u32);
        collections.push(ir::CollectionDecl { name: "added edges".to_string(), element });
        let mut hidden = |name: &str, owner: Owner| {
            properties.push(ir::Property { name: name.to_string(), owner, ty: Type::U32, is_weight: false });
            PropertyId(properties.len() as u32 - 1)
        };
        let first_added = hidden("first added edge", Owner::Node);
        let degree_change = hidden("degree change", Owner::Node);
        // Removing a node removes its out-edges: edge removal marks come with it.
        let removed = changes.removed.or(changes.nodes_removed).map(|_| hidden("edge removed", Owner::Edge));
        let node_removed = changes.nodes_removed.map(|_| hidden("node removed", Owner::Node));
        // Added nodes: one field per node property, the hidden ones above included. Removing
        // nodes needs the collection too: its removed count counts the removed nodes.
        let nodes = changes.nodes_added.or(changes.nodes_removed).map(|_| {
            let mut fields = Vec::new();
            let node_fields = property_fields(properties, Owner::Node, &mut fields);
            let element = StructId(structs.len() as u32);
            structs.push(ir::StructDef { name: "added node".to_string(), fields });
            collections.push(ir::CollectionDecl { name: "added nodes".to_string(), element });
            ir::NodeGrowth { added: CollectionId(collections.len() as u32 - 1), fields: node_fields, init }
        });
        Some(ir::GraphGrowth { added, first_added, degree_change, removed, edge_fields, nodes, node_removed })
    }

    /// In a program whose kernels change the graph: errors for what only the input graph has
    /// (indexed neighbours, in-edges), for `main` reading edges, and for edge outputs.
    fn check_edge_changes(&mut self, module: &ir::Module) {
        let changes = &self.edge_changes;
        let Some(at) = changes.added.or(changes.removed).or(changes.nodes_added).or(changes.nodes_removed) else {
            return;
        };
        let verb = match (changes.added.or(changes.nodes_added).is_some(), changes.nodes_removed.is_some()) {
            (true, _) => "adds edges or nodes",
            (false, true) => "removes nodes",
            (false, false) => "removes edges",
        };
        let mut diagnostics = Vec::new();
        for (span, what) in &changes.fixed_reads {
            let message = format!("this program {verb}, so it cannot use {what}");
            diagnostics.push(
                Diagnostic::error(message, *span)
                    .with_label(at, "the graph changes here")
                    .with_note("iterate `u.neighbors()` or `u.out_edges()` instead: they visit the edges added, and skip the ones removed"),
            );
        }
        if let (Some(what), Some(main)) = (grail_ir::analysis::host_edge_reads(module), self.main) {
            let message = format!("`main` reads {what}, but this program's kernels change the graph's edges");
            diagnostics.push(
                Diagnostic::error(message, main.name.span).with_label(at, "the graph changes here").with_note(
                    "host code sees only the input graph: read edges in a kernel and reduce or store what `main` needs",
                ),
            );
        }
        for (ident, property) in self.outputs.iter().zip(&self.out_ids) {
            if module.properties[property.index()].owner == Owner::Edge {
                let message = format!(
                    "`output {}` writes a set of edges, but this program's kernels change the graph's edges",
                    ident.name
                );
                diagnostics.push(Diagnostic::error(message, ident.span).with_label(at, "the graph changes here"));
            }
        }
        for diagnostic in diagnostics {
            self.report(diagnostic);
        }
    }
}

/// Appends a field to `fields` for every property of `owner`; each such property with its
/// field's index (the hidden collections that hold added edges' and nodes' properties).
fn property_fields(
    properties: &[ir::Property],
    owner: Owner,
    fields: &mut Vec<(String, Type)>,
) -> Vec<(PropertyId, u32)> {
    let mut placed = Vec::new();
    for (i, property) in properties.iter().enumerate().filter(|(_, p)| p.owner == owner) {
        placed.push((PropertyId(i as u32), fields.len() as u32));
        fields.push((property.name.clone(), property.ty));
    }
    placed
}

fn reaches(calls: &[Vec<(FunctionId, Span)>], from: usize, to: usize) -> bool {
    let mut seen = vec![false; calls.len()];
    let mut stack = vec![from];
    while let Some(f) = stack.pop() {
        for (g, _) in &calls[f] {
            if g.index() == to {
                return true;
            }
            if !std::mem::replace(&mut seen[g.index()], true) {
                stack.push(g.index());
            }
        }
    }
    false
}

fn reduce_op(op: ast::ReduceOp) -> ReduceOp {
    match op {
        ast::ReduceOp::Sum => ReduceOp::Sum,
        ast::ReduceOp::Product => ReduceOp::Product,
        ast::ReduceOp::Min => ReduceOp::Min,
        ast::ReduceOp::Max => ReduceOp::Max,
        ast::ReduceOp::Any => ReduceOp::Any,
        ast::ReduceOp::All => ReduceOp::All,
    }
}
