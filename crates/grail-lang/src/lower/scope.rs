//! The body being lowered: its locals, the lexical scopes that name them, and where in the body a
//! statement stands (inside a `forall`, a loop, an `iterate`/`pipe` region).

use grail_ir::{FunctionId, Local, LocalId, ReduceOp, Type};

use crate::span::Span;

/// What kind of body is being lowered; decides which statements are allowed.
#[derive(Clone, Copy, Debug, PartialEq)]
pub(super) enum BodyKind {
    /// A `fn` other than `main`. `result` is `None` when the declared type did not resolve.
    Function { id: FunctionId, result: Option<Type> },
    /// A kernel, with its reduction (the type `None` when it did not resolve).
    Kernel { reduction: Option<(ReduceOp, Option<Type>)> },
    /// `fn main`: orchestration on the host.
    Host { result: Option<Type> },
    /// The property initialisers, lowered into the generated initialisation kernel.
    Init,
    /// A `const` or `param` default: no locals, a compile-time value.
    Const,
}

impl BodyKind {
    pub(super) fn is_kernel(self) -> bool {
        matches!(self, BodyKind::Kernel { .. } | BodyKind::Init)
    }

    pub(super) fn is_host(self) -> bool {
        matches!(self, BodyKind::Host { .. })
    }
}

/// Where a statement stands within its body.
#[derive(Clone, Copy, Debug, Default)]
pub(super) struct Flow {
    /// Inside a `forall` (of a kernel).
    pub in_forall: bool,
    /// Inside a sequential loop of the current item (or an `iterate`/`pipe` on the host).
    pub in_loop: bool,
    /// Inside `iterate` or `pipe`.
    pub in_region: bool,
    /// Inside a top-level `forall` over the worklist or `G.nodes()`: `retry` is allowed, of
    /// items of this type (nodes, or a worklist's collection elements).
    pub retry_items: Option<Type>,
}

/// A name bound in a scope.
#[derive(Clone, Debug)]
pub(super) enum Binding {
    Local {
        id: LocalId,
        ty: Type,
        mutable: bool,
        span: Span,
    },
    /// A local whose type could not be found; uses are silently errors (already reported).
    Poisoned,
}

/// One body under construction.
pub(super) struct BodyCx {
    pub kind: BodyKind,
    pub locals: Vec<Local>,
    /// Per local: whether every thread of a kernel sees the same value.
    pub uniform: Vec<bool>,
    scopes: Vec<Vec<(String, Binding)>>,
    pub push_sites: u32,
    /// What a kernel's worklist holds (nodes, or one collection's elements), as first said by a
    /// `forall x: T in worklist` or a `push`, and where.
    pub worklist_items: Option<(Type, Span)>,
    /// Every name the body's source declares, with where: for "used before its declaration".
    pub declared: Vec<(String, Span)>,
}

impl BodyCx {
    pub(super) fn new(kind: BodyKind) -> BodyCx {
        BodyCx {
            kind,
            locals: Vec::new(),
            uniform: Vec::new(),
            scopes: vec![Vec::new()],
            push_sites: 0,
            worklist_items: None,
            declared: Vec::new(),
        }
    }

    pub(super) fn push_scope(&mut self) {
        self.scopes.push(Vec::new());
    }

    pub(super) fn pop_scope(&mut self) {
        self.scopes.pop();
    }

    /// A new local that no name refers to (temporaries, hidden loop counters).
    pub(super) fn fresh(&mut self, name: &str, ty: Type, uniform: bool) -> LocalId {
        let id = LocalId(self.locals.len() as u32);
        self.locals.push(Local { name: name.to_string(), ty });
        self.uniform.push(uniform || self.kind.is_host());
        id
    }

    /// Declares `name` in the innermost scope; `None` for the type poisons it.
    pub(super) fn declare(
        &mut self,
        name: &str,
        ty: Option<Type>,
        mutable: bool,
        span: Span,
        uniform: bool,
    ) -> Option<LocalId> {
        let binding = match ty {
            Some(ty) => {
                let id = self.fresh(name, ty, uniform);
                Binding::Local { id, ty, mutable, span }
            }
            None => Binding::Poisoned,
        };
        let id = match binding {
            Binding::Local { id, .. } => Some(id),
            Binding::Poisoned => None,
        };
        self.scopes.last_mut().expect("a scope").push((name.to_string(), binding));
        id
    }

    pub(super) fn lookup(&self, name: &str) -> Option<&Binding> {
        self.scopes.iter().rev().flat_map(|scope| scope.iter().rev()).find(|(n, _)| n == name).map(|(_, b)| b)
    }

    /// The names in scope, innermost first (for suggestions).
    pub(super) fn names(&self) -> impl Iterator<Item = &str> {
        self.scopes.iter().rev().flat_map(|scope| scope.iter().rev()).map(|(n, _)| n.as_str())
    }
}
