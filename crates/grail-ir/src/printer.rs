//! The IR's text form, for `grail compile --emit ir` and for tests.
//!
//! Close to the source language, with what the passes decide made visible: properties read as
//! `prop[element]`, pushes with their site and aggregation, nested parallel loops with their
//! schedule, branches marked `uniform`, and `Iterate`/`Pipe` regions with their outline id and
//! whether they are outlined.

use std::collections::HashMap;

use crate::ir::*;

/// The module as text.
pub fn print(module: &Module) -> String {
    let mut p = Printer { module, out: String::new(), names: Vec::new(), push_sites: &[], indent: 0 };
    p.module();
    p.out
}

struct Printer<'m> {
    module: &'m Module,
    out: String,
    /// Display names of the current body's locals.
    names: Vec<String>,
    /// The push sites of the kernel being printed.
    push_sites: &'m [Aggregation],
    indent: usize,
}

impl<'m> Printer<'m> {
    fn line(&mut self, text: &str) {
        for _ in 0..self.indent {
            self.out.push_str("    ");
        }
        self.out.push_str(text);
        self.out.push('\n');
    }

    fn module(&mut self) {
        let m = self.module;
        self.line(&format!("module {}", m.name));
        if !m.opt.is_none() {
            self.line(&format!("opt {}", m.opt));
        }
        for note in &m.opt_notes {
            self.line(&format!("note: {note}"));
        }
        for s in &m.structs {
            let fields: Vec<_> = s.fields.iter().map(|(n, t)| format!("{n}: {}", self.ty(*t))).collect();
            self.line(&format!("struct {} {{ {} }}", s.name, fields.join(", ")));
        }
        for p in &m.properties {
            let owner = if p.owner == Owner::Node { "node" } else { "edge" };
            let weight = if p.is_weight { " (weights)" } else { "" };
            self.line(&format!("{owner} {}: {}{weight}", p.name, self.ty(p.ty)));
        }
        for s in &m.sets {
            self.line(&format!("set {}", s.name));
        }
        for c in &m.collections {
            self.line(&format!("collection {}: {}", c.name, self.ty(Type::Struct(c.element))));
        }
        for p in &m.params {
            let default = p.default.map(|c| format!(" = {}", self.constant(c))).unwrap_or_default();
            self.line(&format!("param {}: {}{default}", p.name, self.ty(p.ty)));
        }
        for &o in &m.outputs {
            self.line(&format!("output {}", self.property(o)));
        }
        for &c in &m.collection_outputs {
            self.line(&format!("output {}", self.collection(c)));
        }
        for &c in &m.collection_inputs {
            self.line(&format!("input {}", self.collection(c)));
        }
        for &p in &m.property_inputs {
            self.line(&format!("input {}", self.property(p)));
        }
        for f in &m.functions {
            self.out.push('\n');
            self.enter(&f.body);
            let result = if f.result == Type::Unit { String::new() } else { format!(" -> {}", self.ty(f.result)) };
            self.line(&format!("fn {}({}){result} {{", f.name, self.params(&f.body, f.params)));
            self.body(&f.body.block);
        }
        for k in &m.kernels {
            self.out.push('\n');
            self.enter(&k.body);
            self.push_sites = &k.push_sites;
            let result = k.reduction.map(|(op, t)| format!(" -> {} {}", op.name(), self.ty(t))).unwrap_or_default();
            self.line(&format!("kernel {}({}){result} {{", k.name, self.params(&k.body, k.params)));
            self.body(&k.body.block);
        }
        self.out.push('\n');
        self.enter(&m.main);
        let result =
            if m.main_result == Type::Unit { String::new() } else { format!(" -> {}", self.ty(m.main_result)) };
        self.line(&format!("fn main(){result} {{"));
        self.body(&m.main.block);
    }

    /// Chooses display names for a body's locals: the source name, made unique with `_N`.
    fn enter(&mut self, body: &Body) {
        let mut count: HashMap<&str, usize> = HashMap::new();
        for local in &body.locals {
            *count.entry(local.name.as_str()).or_default() += 1;
        }
        self.names = body
            .locals
            .iter()
            .enumerate()
            .map(|(i, l)| if count[l.name.as_str()] > 1 { format!("{}_{i}", l.name) } else { l.name.clone() })
            .collect();
    }

    fn params(&self, body: &Body, count: u32) -> String {
        let params: Vec<_> = (0..count as usize)
            .map(|i| format!("{}: {}", self.local(LocalId(i as u32)), self.ty(body.locals[i].ty)))
            .collect();
        params.join(", ")
    }

    fn body(&mut self, block: &Block) {
        self.block(block);
        self.line("}");
    }

    fn block(&mut self, block: &Block) {
        self.indent += 1;
        for stmt in block {
            self.stmt(stmt);
        }
        self.indent -= 1;
    }

    fn open(&mut self, header: String, block: &Block) {
        self.line(&format!("{header} {{"));
        self.block(block);
    }

    /// Closes an opened block, with an `else` part if there is one.
    fn close_with(&mut self, otherwise: &Block) {
        if !otherwise.is_empty() {
            self.line("} else {");
            self.block(otherwise);
        }
        self.line("}");
    }

    fn stmt(&mut self, stmt: &Stmt) {
        match stmt {
            Stmt::Assign { place, value } => self.line(&format!("{} = {}", self.place(place), self.expr(value))),
            Stmt::If { cond, then, otherwise, uniform } => {
                self.open(format!("if{} {}", uniformity(*uniform), self.expr(cond)), then);
                self.close_with(otherwise);
            }
            Stmt::While { cond, body, uniform } => {
                self.open(format!("while{} {}", uniformity(*uniform), self.expr(cond)), body);
                self.line("}");
            }
            Stmt::For { var, start, end, body } => {
                self.open(format!("for {} in {}..{}", self.local(*var), self.expr(start), self.expr(end)), body);
                self.line("}");
            }
            Stmt::ForEach { var, adjacency, node, body, schedule: shared } => {
                // A fold the schedulers may share shows its schedule; a serial loop shows nothing.
                let shared =
                    if *shared == Schedule::SERIAL { String::new() } else { format!(" fold {}", schedule(*shared)) };
                self.open(
                    format!("for {} in {}({}){shared}", self.local(*var), adjacency.name(), self.expr(node)),
                    body,
                );
                self.line("}");
            }
            Stmt::ForAll(forall) => {
                let space = match &forall.space {
                    Space::Worklist => "worklist".to_string(),
                    Space::AllNodes => "nodes".to_string(),
                    Space::AllEdges => "edges".to_string(),
                    Space::Range(start, end) => format!("{}..{}", self.expr(start), self.expr(end)),
                    Space::Collection(c) => self.collection(*c),
                    Space::Adjacent(adjacency, node) => format!("{}({})", adjacency.name(), self.expr(node)),
                };
                let filter = forall.filter.as_ref().map(|f| format!(" where {}", self.expr(f))).unwrap_or_default();
                let schedule = match forall.space {
                    Space::Adjacent(..) => format!(" {}", schedule(forall.schedule)),
                    _ => String::new(),
                };
                self.open(format!("forall {} in {space}{filter}{schedule}", self.local(forall.var)), &forall.body);
                self.line("}");
            }
            Stmt::Push { site, value } => {
                let aggregation = self.push_aggregation(*site);
                self.line(&format!("push#{}[{aggregation}] {}", site.0, self.expr(value)));
            }
            Stmt::Retry { value } => self.line(&format!("retry {}", self.expr(value))),
            Stmt::Reduce { value } => self.line(&format!("reduce {}", self.expr(value))),
            Stmt::Lock { kind, elements, body, otherwise } => {
                let elements: Vec<_> = elements.iter().map(|e| self.expr(e)).collect();
                self.open(format!("{}({})", kind.name(), elements.join(", ")), body);
                self.close_with(otherwise);
            }
            Stmt::Break => self.line("break"),
            Stmt::Continue => self.line("continue"),
            Stmt::Return(None) => self.line("return"),
            Stmt::Return(Some(value)) => self.line(&format!("return {}", self.expr(value))),
            Stmt::Eval(expr) => self.line(&self.expr(expr)),
            Stmt::Invoke { kernel, args, result } => {
                let call = self.invocation(*kernel, args);
                match result {
                    Some(local) => self.line(&format!("{} = invoke {call}", self.local(*local))),
                    None => self.line(&format!("invoke {call}")),
                }
            }
            Stmt::Iterate(iterate) => {
                let header = match &iterate.until {
                    Until::Empty { kernel, args, initial } => {
                        format!("until empty: {}{}", self.invocation(*kernel, args), self.initial(initial.as_ref()))
                    }
                    Until::Condition { cond, stop_when } => format!("until {} == {stop_when}", self.expr(cond)),
                };
                let outlined = if iterate.outlined { " outlined" } else { "" };
                self.open(format!("iterate#{}{outlined} {header}", iterate.id.0), &iterate.body);
                self.line("}");
            }
            Stmt::Pipe(pipe) => {
                let once = if pipe.once { " once" } else { "" };
                let outlined = if pipe.outlined { " outlined" } else { "" };
                let unroll = if pipe.unroll > 1 { format!(" unroll {}", pipe.unroll) } else { String::new() };
                self.open(
                    format!("pipe#{}{once}{outlined}{unroll}{}", pipe.id.0, self.initial(pipe.initial.as_ref())),
                    &pipe.body,
                );
                self.line("}");
            }
            Stmt::Print(args) => {
                let args: Vec<_> = args
                    .iter()
                    .map(|a| match a {
                        PrintArg::Text(t) => format!("{t:?}"),
                        PrintArg::Value(e) => self.expr(e),
                    })
                    .collect();
                self.line(&format!("print({})", args.join(", ")));
            }
        }
    }

    fn push_aggregation(&self, site: PushSite) -> &'static str {
        match self.push_sites.get(site.index()) {
            Some(Aggregation::Warp) => "warp",
            Some(Aggregation::Block) => "block",
            _ => "single",
        }
    }

    fn invocation(&self, kernel: KernelId, args: &[Expr]) -> String {
        let name = self.module.kernels.get(kernel.index()).map_or("?", |k| k.name.as_str());
        let args: Vec<_> = args.iter().map(|a| self.expr(a)).collect();
        format!("{name}({})", args.join(", "))
    }

    fn initial(&self, initial: Option<&Initial>) -> String {
        match initial {
            None => String::new(),
            Some(Initial::AllNodes) => " initial nodes".to_string(),
            Some(Initial::Items(items)) => {
                let items: Vec<_> = items.iter().map(|e| self.expr(e)).collect();
                format!(" initial [{}]", items.join(", "))
            }
        }
    }

    fn local(&self, id: LocalId) -> String {
        self.names.get(id.index()).cloned().unwrap_or_else(|| format!("local#{}", id.0))
    }

    fn property(&self, id: PropertyId) -> String {
        self.module.properties.get(id.index()).map_or_else(|| format!("property#{}", id.0), |p| p.name.clone())
    }

    fn ty(&self, ty: Type) -> String {
        match ty {
            Type::Struct(id) => self.module.structs.get(id.index()).map_or_else(|| ty.to_string(), |s| s.name.clone()),
            Type::Element(id) => format!("{}.element", self.collection(id)),
            Type::Array(id) => match self.module.arrays.get(id.index()) {
                Some(a) => format!("[{}; {}]", self.ty(a.element), a.len),
                None => ty.to_string(),
            },
            _ => ty.to_string(),
        }
    }

    fn constant(&self, c: Const) -> String {
        match c {
            Const::Bool(b) => b.to_string(),
            Const::Int(i) => i.to_string(),
            Const::Float(x) => format!("{x:?}"),
            Const::Inf => "INF".to_string(),
        }
    }

    fn place(&self, place: &Place) -> String {
        match place {
            Place::Local(id) => self.local(*id),
            Place::Property { property, element } => format!("{}[{}]", self.property(*property), self.expr(element)),
            Place::ElementField { collection, element, field } => {
                format!(
                    "{}[{}].{}",
                    self.collection(*collection),
                    self.expr(element),
                    self.element_field(*collection, *field)
                )
            }
            Place::Field { base, field } => format!("{}.{field}", self.place(base)),
            Place::Index { base, index } => format!("{}[{}]", self.place(base), self.expr(index)),
        }
    }

    fn expr(&self, expr: &Expr) -> String {
        match &expr.kind {
            ExprKind::Const(c) => match c {
                Const::Int(_) | Const::Float(_) | Const::Inf => format!("{}:{}", self.constant(*c), self.ty(expr.ty)),
                Const::Bool(_) => self.constant(*c),
            },
            ExprKind::Load(place) => self.place(place),
            ExprKind::Zeroed => format!("zeroed:{}", self.ty(expr.ty)),
            ExprKind::ArrayPrefix { array, count } => format!("{}.first({})", self.expr(array), self.expr(count)),
            ExprKind::Param(id) => {
                format!("${}", self.module.params.get(id.index()).map_or("?", |p| p.name.as_str()))
            }
            ExprKind::NumNodes => "num_nodes".to_string(),
            ExprKind::NumEdges => "num_edges".to_string(),
            ExprKind::AddEdge { src, dst, weight } => match weight {
                Some(w) => format!("add_edge({}, {}, {})", self.expr(src), self.expr(dst), self.expr(w)),
                None => format!("add_edge({}, {})", self.expr(src), self.expr(dst)),
            },
            ExprKind::RemoveEdge(e) => format!("remove_edge({})", self.expr(e)),
            ExprKind::AddNode => "add_node()".to_string(),
            ExprKind::RemoveNode(n) => format!("remove_node({})", self.expr(n)),
            ExprKind::HasNode(n) => format!("has_node({})", self.expr(n)),
            ExprKind::HasEdge(e) => format!("has_edge({})", self.expr(e)),
            ExprKind::NodeIds => "node_ids".to_string(),
            ExprKind::EdgeIds => "edge_ids".to_string(),
            ExprKind::EdgeSource(e) => format!("src({})", self.expr(e)),
            ExprKind::EdgeTarget(e) => format!("dst({})", self.expr(e)),
            ExprKind::Degree { node, reverse } => {
                format!("{}({})", if *reverse { "in_degree" } else { "degree" }, self.expr(node))
            }
            ExprKind::Neighbor { node, index, reverse } => format!(
                "{}({}, {})",
                if *reverse { "in_neighbor" } else { "neighbor" },
                self.expr(node),
                self.expr(index)
            ),
            ExprKind::Unary(UnaryOp::Neg, e) => format!("-{}", self.expr(e)),
            ExprKind::Unary(UnaryOp::Not, e) => format!("!{}", self.expr(e)),
            ExprKind::Binary(op, l, r) => format!("({} {} {})", self.expr(l), op.symbol(), self.expr(r)),
            ExprKind::Cast(e) => format!("({} as {})", self.expr(e), self.ty(expr.ty)),
            ExprKind::Call(id, args) => {
                let name = self.module.functions.get(id.index()).map_or("?", |f| f.name.as_str());
                let args: Vec<_> = args.iter().map(|a| self.expr(a)).collect();
                format!("{name}({})", args.join(", "))
            }
            ExprKind::Builtin(b, args) => {
                let args: Vec<_> = args.iter().map(|a| self.expr(a)).collect();
                format!("{}({})", format!("{b:?}").to_lowercase(), args.join(", "))
            }
            ExprKind::Atomic { op, place, operands } => {
                let mut args = vec![self.place(place)];
                args.extend(operands.iter().map(|o| self.expr(o)));
                format!("atomic_{}({})", op.name(), args.join(", "))
            }
            ExprKind::SetFind { set, node } => format!("{}.find({})", self.set(*set), self.expr(node)),
            ExprKind::SetUnion { set, a, b } => format!("{}.union({}, {})", self.set(*set), self.expr(a), self.expr(b)),
            ExprKind::Struct(id, fields) => {
                let fields: Vec<_> = fields.iter().map(|f| self.expr(f)).collect();
                format!("{} {{ {} }}", self.ty(Type::Struct(*id)), fields.join(", "))
            }
            ExprKind::Field(base, field) => format!("{}.{field}", self.expr(base)),
            ExprKind::CollectionAdd { collection, value } => {
                format!("{}.add({})", self.collection(*collection), self.expr(value))
            }
            ExprKind::CollectionLen(c) => format!("{}.len()", self.collection(*c)),
            ExprKind::CollectionCompact(c) => format!("{}.compact()", self.collection(*c)),
            ExprKind::CollectionRemove { collection, element } => {
                format!("{}.remove({})", self.collection(*collection), self.expr(element))
            }
            ExprKind::CollectionHas { collection, element } => {
                format!("{}.has({})", self.collection(*collection), self.expr(element))
            }
        }
    }

    fn collection(&self, id: CollectionId) -> String {
        self.module.collections.get(id.index()).map_or_else(|| format!("collection#{}", id.0), |c| c.name.clone())
    }

    /// A collection element's field by name, or by number when the ids are out of range.
    fn element_field(&self, id: CollectionId, field: u32) -> String {
        self.module
            .collections
            .get(id.index())
            .and_then(|c| self.module.structs.get(c.element.index()))
            .and_then(|s| s.fields.get(field as usize))
            .map_or_else(|| field.to_string(), |(name, _)| name.clone())
    }

    fn set(&self, id: SetId) -> String {
        self.module.sets.get(id.index()).map_or_else(|| format!("set#{}", id.0), |s| s.name.clone())
    }
}

fn uniformity(uniform: bool) -> &'static str {
    if uniform { " uniform" } else { "" }
}

fn schedule(s: Schedule) -> String {
    let mut parts = Vec::new();
    if s.thread_block {
        parts.push("block");
    }
    if s.warp {
        parts.push("warp");
    }
    if s.fine_grained {
        parts.push("fine");
    }
    if parts.is_empty() { "[serial]".to_string() } else { format!("[{}]", parts.join("+")) }
}
