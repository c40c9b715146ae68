//! The host interpreter: `main` and the functions it calls, over [`Value`]s, for every backend.
//!
//! A backend is a [`Machine`]: it runs kernels, keeps the worklist stack, and stores the
//! property columns, union-find parents and collections wherever its kernels need them (the GPU
//! executor moves them between host and device only when the other side reads them).
//! Orchestration (`invoke`, `iterate`, `pipe`) drives the machine's worklist stack: a region
//! with `initial` pushes a fresh worklist and pops it at its end, one without shares the
//! enclosing worklist (the outermost starts empty). Host code reads and writes property
//! elements, union-find sets and the graph; every index is checked, so a program that strays
//! outside the graph gets an error naming what it touched.

use grail_ir::*;

use super::memory::Memory;
use super::ops;
use super::table::Table;
use super::value::Value;
use crate::error::{Result, RuntimeError};

/// What the interpreter needs from a backend.
pub(crate) trait Machine {
    /// The host's copy of the graph arrays (never written, so always current).
    fn memory(&self) -> &Memory<'_>;
    /// The program's parameters, by id.
    fn params(&self) -> &[Value];
    /// Writes one line of `print` output (with its newline).
    fn print(&mut self, line: &str) -> Result<()>;
    /// Element `index` (checked against [`Memory::columns`]' lengths) of a property.
    fn read_property(&mut self, property: PropertyId, index: usize) -> Result<Value>;
    /// The number of elements of a property (nodes or edges).
    fn property_len(&self, property: PropertyId) -> usize {
        self.memory().columns[property.index()].len()
    }
    /// Stores element `index` of a property; false when the value does not fit the column.
    fn write_property(&mut self, property: PropertyId, index: usize, value: &Value) -> Result<bool>;
    /// Union-find parent number `index` (set s, node u at `s * n + u`).
    fn parent(&mut self, index: usize) -> Result<u32>;
    fn set_parent(&mut self, index: usize, parent: u32) -> Result<()>;
    /// Runs a kernel once; its reduction's value.
    fn invoke(&mut self, kernel: KernelId, args: &[Value]) -> Result<Option<Value>>;
    fn collection_add(&mut self, id: CollectionId, value: &Value) -> Result<Value>;
    /// Every slot of a collection in handle order (removed ones too), and which were removed.
    fn collection_read(&mut self, id: CollectionId) -> Result<(Table, Vec<bool>)>;
    /// Empties a collection (its memory given back).
    fn collection_clear(&mut self, id: CollectionId) -> Result<()>;
    /// Compacts a collection: its elements present move down to handles 0.., in order, and
    /// every handle to them held in any collection is renumbered; the new count. Refused when
    /// an element present holds a handle to a removed one (it would dangle).
    fn collection_compact(&mut self, module: &Module, id: CollectionId) -> Result<u32> {
        if let Some(property) = module.properties.iter().find(|p| p.ty == Type::Element(id)) {
            return Err(RuntimeError::program(format!(
                "cannot compact `{}`: the property `{}` holds handles to its elements (only handles held in \
                 collections are renumbered)",
                module.collections[id.index()].name,
                property.name
            )));
        }
        let (slots, removed) = self.collection_read(id)?;
        let mut renumber = vec![u32::MAX; slots.len()];
        let mut next = 0u32;
        for (old, gone) in removed.iter().enumerate() {
            if !gone {
                renumber[old] = next;
                next += 1;
            }
        }
        let name = &module.collections[id.index()].name;
        // Every collection whose elements hold handles into this one is rewritten (this one too).
        for other in 0..module.collections.len() {
            let other = CollectionId(other as u32);
            let handles: Vec<usize> = Table::for_collection(module, other)
                .leaves()
                .iter()
                .enumerate()
                .filter(|(_, ty)| **ty == Type::Element(id))
                .map(|(leaf, _)| leaf)
                .collect();
            if other != id && handles.is_empty() {
                continue;
            }
            let (mut table, removed) =
                if other == id { (slots.clone(), removed.clone()) } else { self.collection_read(other)? };
            // `other`'s removed slots (or the unused ones kernels' additions leave) go with this
            // compaction where nothing holds handles to `other`: renumbering it then changes no
            // stored handle. Otherwise `other` must be compacted first.
            if other != id && removed.iter().any(|&gone| gone) && holds_handles_to(module, other) {
                return Err(RuntimeError::Input(format!(
                    "cannot compact `{name}`: `{}` has removed elements and handles to them are held elsewhere, \
                     compact it first",
                    module.collections[other.index()].name
                )));
            }
            table.retain_rows(|row| !removed[row]);
            let width = table.leaves().len();
            for (index, row) in table.words_mut().chunks_mut(width.max(1)).enumerate() {
                for &leaf in &handles {
                    let old = row[leaf];
                    match renumber.get(old as usize) {
                        Some(&new) if new != u32::MAX => row[leaf] = u64::from(new),
                        _ => {
                            return Err(RuntimeError::program(format!(
                                "cannot compact `{name}`: element {index} of `{}` holds a handle to its removed element {old}",
                                module.collections[other.index()].name
                            )));
                        }
                    }
                }
            }
            self.collection_clear(other)?;
            self.collection_fill(other, &table)?;
        }
        Ok(next)
    }
    /// Fills an empty collection with the rows of `table` (of the collection's leaves), row `i`
    /// getting handle `i` (an input collection, before `main` starts).
    fn collection_fill(&mut self, id: CollectionId, table: &Table) -> Result<()>;
    /// Gives node property `property` the values of `table` (one leaf of the property's type,
    /// row `i` for node `i`), before `main` starts (an input property).
    fn fill_property(&mut self, property: PropertyId, table: &Table) -> Result<()> {
        for row in 0..table.len() {
            self.write_property(property, row, &table.value(row, 0))?;
        }
        Ok(())
    }
    fn collection_len(&mut self, id: CollectionId) -> Result<u32>;
    /// Starts a region's own worklist.
    fn push_worklist(&mut self, items: Vec<u32>) -> Result<()>;
    /// Ends the innermost region's worklist.
    fn pop_worklist(&mut self);
    /// Whether the current worklist is empty.
    fn worklist_is_empty(&mut self) -> Result<bool>;
    /// Runs the outlined region `region` (an `iterate` or `pipe` of `main` that iteration
    /// outlining marked) whole, on the current worklist, reading and updating `main`'s
    /// `locals`; false when this machine does not run outlined regions, and the interpreter
    /// runs the region itself.
    fn run_outlined(&mut self, _region: OutlineId, _locals: &mut [Value]) -> Result<bool> {
        Ok(false)
    }
    /// Runs `iterate kernel(args) initial ...` (the kernel again and again until the worklist
    /// is empty) its own way, on the current worklist, without its body (empty, or only counting:
    /// [`counting_body`]); the number of rounds the body is to run for, or `None` when this
    /// machine does not, and the interpreter runs the loop (a partitioned machine's
    /// asynchronous mode does). `region`: the loop's outlined region, if outlining marked it
    /// (a part may run it whole on its device), with `main`'s locals.
    fn run_worklist_loop(
        &mut self,
        _kernel: KernelId,
        _args: &[Value],
        _region: Option<OutlineId>,
        _locals: &[Value],
    ) -> Result<Option<u64>> {
        Ok(None)
    }
    /// An outlined `iterate` or `pipe` starts (`true`) or ends: the whole loop is one unit of
    /// work for the machine (on the CPU, one persistent parallel region). Regions do not nest.
    fn outlined_region(&mut self, _open: bool) {}
}

/// Whether a worklist loop's body only counts: it assigns locals that the kernel's arguments
/// do not read, from locals, parameters and constants (`rounds += 1`), so running it once per
/// round after the loop, instead of between the rounds, leaves the same locals. An empty body
/// counts too. Such a loop may run without rounds ([`Machine::run_worklist_loop`]).
/// Whether the interpreter offers `iterate`'s loop whole to the machine
/// (`Machine::run_worklist_loop`): a loop until its worklist is empty whose body only counts.
pub(crate) fn offers_worklist_loop(iterate: &Iterate) -> bool {
    matches!(&iterate.until, Until::Empty { args, .. } if counting_body(&iterate.body, args))
}

pub(crate) fn counting_body(body: &[Stmt], args: &[Expr]) -> bool {
    let mut args_read = Vec::new();
    for arg in args {
        grail_ir::analysis::walk_expr(arg, &mut |e| {
            if let ExprKind::Load(Place::Local(l)) = &e.kind {
                args_read.push(*l);
            }
        });
    }
    body.iter().all(|stmt| {
        let Stmt::Assign { place: Place::Local(target), value } = stmt else { return false };
        if args_read.contains(target) {
            return false;
        }
        let mut plain = true;
        grail_ir::analysis::walk_expr(value, &mut |e| {
            plain &= matches!(
                e.kind,
                ExprKind::Const(_)
                    | ExprKind::Param(_)
                    | ExprKind::Load(Place::Local(_))
                    | ExprKind::Unary(..)
                    | ExprKind::Binary(..)
                    | ExprKind::Cast(_)
            );
        });
        plain
    })
}

/// Runs `main` on a machine; returns what it returned.
pub(crate) fn run_main<M: Machine + ?Sized>(module: &Module, machine: &mut M) -> Result<Option<Value>> {
    Interp { module, m: machine }.main()
}

/// Fills the module's input collections (`input coll;`, in order) with `inputs`, one table
/// each, checking that its rows have the leaves of the collection's element struct.
pub(crate) fn fill_inputs<M: Machine + ?Sized>(module: &Module, machine: &mut M, inputs: &[Table]) -> Result<()> {
    fill_inputs_except(module, machine, inputs, &[], &[])
}

/// [`fill_inputs`] where the input properties in `filled` and the input collections in
/// `filled_collections` hold their values already (put on the device before): `inputs` has no
/// table for them.
pub(crate) fn fill_inputs_except<M: Machine + ?Sized>(
    module: &Module,
    machine: &mut M,
    inputs: &[Table],
    filled: &[PropertyId],
    filled_collections: &[CollectionId],
) -> Result<()> {
    let property_inputs: Vec<PropertyId> =
        module.property_inputs.iter().copied().filter(|p| !filled.contains(p)).collect();
    let collection_inputs: Vec<CollectionId> =
        module.collection_inputs.iter().copied().filter(|c| !filled_collections.contains(c)).collect();
    let names = |ids: &[grail_ir::CollectionId]| -> String {
        ids.iter().map(|id| format!("`{}`", module.collections[id.index()].name)).collect::<Vec<_>>().join(", ")
    };
    let properties = |ids: &[PropertyId]| -> String {
        ids.iter().map(|id| format!("`{}`", module.properties[id.index()].name)).collect::<Vec<_>>().join(", ")
    };
    let wanted = collection_inputs.len() + property_inputs.len();
    if inputs.len() != wanted {
        let mut named = vec![names(&collection_inputs), properties(&property_inputs)];
        named.retain(|n| !n.is_empty());
        return Err(RuntimeError::Input(format!(
            "the program `{}` takes {wanted} input(s) ({}), and {} were given",
            module.name,
            named.join(", "),
            inputs.len()
        )));
    }
    for (&id, table) in collection_inputs.iter().zip(inputs) {
        let expected = Table::for_collection(module, id);
        if table.leaves() != expected.leaves() {
            return Err(RuntimeError::Input(format!(
                "input collection `{}` takes rows of ({}), given rows of ({})",
                module.collections[id.index()].name,
                leaf_names(module, expected.leaves()),
                leaf_names(module, table.leaves())
            )));
        }
        let count = table.len() as u64;
        if count >= u64::from(u32::MAX) - 1 {
            return Err(RuntimeError::program(format!(
                "input collection `{}` has {count} elements, more than the {} a collection holds",
                module.collections[id.index()].name,
                u32::MAX - 1
            )));
        }
        machine.collection_fill(id, table)?;
    }
    let nodes = machine.memory().out.num_nodes() as usize;
    for (&id, table) in property_inputs.iter().zip(&inputs[collection_inputs.len()..]) {
        let declared = &module.properties[id.index()];
        if table.leaves() != [declared.ty] || table.len() != nodes {
            return Err(RuntimeError::Input(format!(
                "input property `{}` takes one {} per node of the graph ({nodes}), given {} row(s) of ({})",
                declared.name,
                declared.ty,
                table.len(),
                table.leaves().iter().map(ToString::to_string).collect::<Vec<_>>().join(", ")
            )));
        }
        machine.fill_property(id, table)?;
    }
    Ok(())
}

/// A row's leaf types as a program's author reads them (an element handle by its collection).
pub(crate) fn leaf_names(module: &Module, leaves: &[Type]) -> String {
    let name = |ty: &Type| match ty {
        Type::Element(c) => module.collections[c.index()].name.clone(),
        ty => ty.to_string(),
    };
    leaves.iter().map(name).collect::<Vec<_>>().join(", ")
}

/// The error for an input property's values that its column cannot hold (checked before, so an
/// internal inconsistency if it happens).
pub(crate) fn unfit_input(module: &Module, property: PropertyId) -> RuntimeError {
    RuntimeError::Input(format!(
        "input property `{}`: values of another type, or more than the graph's nodes",
        module.properties[property.index()].name
    ))
}

/// Whether some property or collection element holds handles to the elements of `id`.
fn holds_handles_to(module: &Module, id: CollectionId) -> bool {
    module.properties.iter().any(|p| p.ty == Type::Element(id))
        || (0..module.collections.len())
            .any(|c| Table::for_collection(module, CollectionId(c as u32)).leaves().contains(&Type::Element(id)))
}

/// The elements present of every output collection of `module`, in declaration order.
pub(crate) fn collection_outputs<M: Machine + ?Sized>(module: &Module, machine: &mut M) -> Result<Vec<Table>> {
    let mut outputs = Vec::with_capacity(module.collection_outputs.len());
    for &id in &module.collection_outputs {
        let (mut table, removed) = machine.collection_read(id)?;
        if removed.iter().any(|&gone| gone) {
            table.retain_rows(|row| !removed[row]);
        }
        outputs.push(table);
    }
    Ok(outputs)
}

/// What kernels added as nodes (`grail_ir::NodeGrowth`), read back: row `h` holds the
/// properties of node `num_nodes + h`. `None` when the program adds no nodes.
pub(crate) fn added_nodes<M: Machine + ?Sized>(module: &Module, machine: &mut M) -> Result<Option<Table>> {
    match module.growth.as_ref().and_then(|g| g.nodes.as_ref()) {
        Some(nodes) => Ok(Some(machine.collection_read(nodes.added)?.0)),
        None => Ok(None),
    }
}

/// Appends the added nodes' values (from [`added_nodes`]) to the node property columns that
/// came back whole (`input_nodes` long), so that outputs cover every node.
pub(crate) fn extend_with_added_nodes(
    module: &Module,
    columns: &mut [grail_graph::properties::Column],
    input_nodes: usize,
    added: &Table,
) {
    use grail_graph::properties::Column;
    let Some(nodes) = module.growth.as_ref().and_then(|g| g.nodes.as_ref()) else { return };
    let mut leaf = 0;
    for (property, _) in &nodes.fields {
        let width = leaf_count(module, module.properties[property.index()].ty);
        let column = &mut columns[property.index()];
        if width == 1 && column.len() == input_nodes {
            for row in 0..added.len() {
                match (&mut *column, added.value(row, leaf)) {
                    (Column::U32(v), Value::U32(x) | Value::Node(x) | Value::Element(x)) => v.push(x),
                    (Column::U64(v), Value::U64(x) | Value::Edge(x)) => v.push(x),
                    (Column::I32(v), Value::I32(x)) => v.push(x),
                    (Column::I64(v), Value::I64(x)) => v.push(x),
                    (Column::F32(v), Value::F32(x)) => v.push(x),
                    (Column::F64(v), Value::F64(x)) => v.push(x),
                    (Column::Bool(v), Value::Bool(x)) => v.push(x),
                    _ => break,
                }
            }
        }
        leaf += width;
    }
}

/// The scalar leaves a value of type `ty` flattens to.
fn leaf_count(module: &Module, ty: Type) -> usize {
    match ty {
        Type::Struct(id) => module.structs[id.index()].fields.iter().map(|(_, t)| leaf_count(module, *t)).sum(),
        _ => 1,
    }
}

/// The interpreter over one machine.
struct Interp<'a, 'm, M: ?Sized> {
    module: &'a Module,
    m: &'m mut M,
}

/// How a statement ended.
enum Flow {
    Normal,
    Break,
    Continue,
    Return(Option<Value>),
}

/// A body's locals.
struct Frame {
    locals: Vec<Value>,
}

/// Where an assignment or atomic writes.
enum Target {
    /// A local, then a path of struct fields.
    Local(usize, Vec<u32>),
    /// A property element.
    Property(PropertyId, usize),
}

/// The empty struct: the value of a call without a result.
fn unit() -> Value {
    Value::Struct(Vec::new())
}

fn program_error(message: impl Into<String>) -> RuntimeError {
    RuntimeError::program(message)
}

impl<'a, M: Machine + ?Sized> Interp<'a, '_, M> {
    /// Runs `main`; returns what it returned.
    fn main(&mut self) -> Result<Option<Value>> {
        let module = self.module;
        let mut frame = self.frame(&module.main, &[])?;
        match self.block(&mut frame, &module.main.block)? {
            Flow::Return(value) => Ok(value),
            _ => Ok(None),
        }
    }

    /// A fresh frame: `args` in the first locals, the rest zero.
    fn frame(&self, body: &Body, args: &[Value]) -> Result<Frame> {
        let mut locals = Vec::with_capacity(body.locals.len());
        for (i, local) in body.locals.iter().enumerate() {
            locals.push(match args.get(i) {
                Some(arg) => arg.clone(),
                None => self.zero(local.ty)?,
            });
        }
        Ok(Frame { locals })
    }

    fn zero(&self, ty: Type) -> Result<Value> {
        Ok(match ty {
            Type::Struct(id) => {
                let fields = &self.module.structs[id.index()].fields;
                Value::Struct(fields.iter().map(|(_, ty)| self.zero(*ty)).collect::<Result<_>>()?)
            }
            Type::Unit => unit(),
            other => Value::zero_scalar(other).unwrap_or_else(unit),
        })
    }

    fn block(&mut self, frame: &mut Frame, block: &'a [Stmt]) -> Result<Flow> {
        for stmt in block {
            match self.stmt(frame, stmt)? {
                Flow::Normal => {}
                other => return Ok(other),
            }
        }
        Ok(Flow::Normal)
    }

    /// Runs a loop body; `Some(flow)` when the loop must end with that flow.
    fn loop_body(&mut self, frame: &mut Frame, body: &'a [Stmt]) -> Result<Option<Flow>> {
        // Every round of a host loop is a point where a run past its time limit stops.
        crate::limits::check("the next round of a loop in `main`")?;
        Ok(match self.block(frame, body)? {
            Flow::Normal | Flow::Continue => None,
            Flow::Break => Some(Flow::Normal),
            Flow::Return(value) => Some(Flow::Return(value)),
        })
    }

    fn stmt(&mut self, frame: &mut Frame, stmt: &'a Stmt) -> Result<Flow> {
        match stmt {
            Stmt::Assign { place, value } => {
                let target = self.target(frame, place)?;
                let value = self.eval(frame, value)?;
                self.write(frame, &target, value)?;
            }
            Stmt::If { cond, then, otherwise, .. } => {
                let branch = if self.eval_bool(frame, cond)? { then } else { otherwise };
                return self.block(frame, branch);
            }
            Stmt::While { cond, body, .. } => {
                while self.eval_bool(frame, cond)? {
                    if let Some(flow) = self.loop_body(frame, body)? {
                        return Ok(flow);
                    }
                }
            }
            Stmt::For { var, start, end, body } => {
                // As the C target: `for (v = start; v < end; v++)`, `end` read before each pass.
                frame.locals[var.index()] = self.eval(frame, start)?;
                loop {
                    let end = self.eval(frame, end)?;
                    let current = &frame.locals[var.index()];
                    if !is_true(&ops::binary(BinaryOp::Lt, current, &end).map_err(program_error)?) {
                        break;
                    }
                    if let Some(flow) = self.loop_body(frame, body)? {
                        return Ok(flow);
                    }
                    let current = &frame.locals[var.index()];
                    let one = Value::from_const(Const::Int(1), body_type(current)).unwrap_or_else(unit);
                    frame.locals[var.index()] = ops::binary(BinaryOp::Add, current, &one).map_err(program_error)?;
                }
            }
            Stmt::ForEach { var, adjacency, node, body, .. } => {
                let node = self.eval_node(frame, node, "an adjacency loop")?;
                let (start, end) = self.adjacency_range(*adjacency, node)?;
                for k in start..end {
                    frame.locals[var.index()] = self.adjacent_item(*adjacency, k)?;
                    if let Some(flow) = self.loop_body(frame, body)? {
                        return Ok(flow);
                    }
                }
            }
            Stmt::Break => return Ok(Flow::Break),
            Stmt::Continue => return Ok(Flow::Continue),
            Stmt::Return(value) => {
                let value = value.as_ref().map(|v| self.eval(frame, v)).transpose()?;
                return Ok(Flow::Return(value));
            }
            Stmt::Eval(expr) => {
                self.eval(frame, expr)?;
            }
            Stmt::Invoke { kernel, args, result } => {
                let value = self.invoke_with(frame, *kernel, args)?;
                if let (Some(local), Some(value)) = (result, value) {
                    frame.locals[local.index()] = value;
                }
            }
            Stmt::Iterate(iterate) => return self.iterate(frame, iterate),
            Stmt::Pipe(pipe) => return self.pipe(frame, pipe),
            Stmt::Print(args) => {
                let mut line = String::new();
                for (i, arg) in args.iter().enumerate() {
                    if i > 0 {
                        line.push(' ');
                    }
                    match arg {
                        PrintArg::Text(text) => line.push_str(text),
                        PrintArg::Value(expr) => line.push_str(&self.eval(frame, expr)?.to_string()),
                    }
                }
                line.push('\n');
                self.m.print(&line)?;
            }
            Stmt::ForAll(_) | Stmt::Push { .. } | Stmt::Retry { .. } | Stmt::Reduce { .. } | Stmt::Lock { .. } => {
                return Err(program_error("a kernel-only statement in host code (the module is not valid)"));
            }
        }
        Ok(Flow::Normal)
    }

    fn invoke_with(&mut self, frame: &mut Frame, kernel: KernelId, args: &'a [Expr]) -> Result<Option<Value>> {
        let args = args.iter().map(|a| self.eval(frame, a)).collect::<Result<Vec<_>>>()?;
        let name = &self.module.kernels[kernel.index()].name;
        crate::limits::check(&format!("kernel `{name}`"))?;
        let value = self.m.invoke(kernel, &args)?;
        if let Some(value) = &value {
            crate::limits::record(name, value);
        }
        Ok(value)
    }

    /// A fresh worklist for a region's `initial`.
    fn initial(&mut self, frame: &mut Frame, initial: &'a Initial) -> Result<Vec<u32>> {
        Ok(match initial {
            Initial::AllNodes => (0..self.num_nodes()).collect(),
            Initial::Items(items) => {
                let mut list = Vec::with_capacity(items.len());
                for item in items {
                    list.push(self.eval_node(frame, item, "an initial worklist")?);
                }
                list
            }
        })
    }

    fn num_nodes(&self) -> u32 {
        self.m.memory().out.num_nodes()
    }

    /// Whether input node or edge `index` (of `count`) is present: below the count and not
    /// marked in `removed`, the hidden property kernels' removals set (none: nothing removes).
    fn input_present(&mut self, index: u64, count: u64, removed: Option<PropertyId>) -> Result<Value> {
        if index >= count {
            return Ok(Value::Bool(false));
        }
        Ok(Value::Bool(match removed {
            Some(removed) => self.m.read_property(removed, index as usize)? == Value::U32(0),
            None => true,
        }))
    }

    /// Runs a region with its own worklist when `initial` is given.
    fn with_worklist(
        &mut self,
        frame: &mut Frame,
        initial: Option<&'a Initial>,
        region: impl FnOnce(&mut Self, &mut Frame) -> Result<Flow>,
    ) -> Result<Flow> {
        let Some(initial) = initial else { return region(self, frame) };
        let list = self.initial(frame, initial)?;
        self.m.push_worklist(list)?;
        let flow = region(self, frame);
        self.m.pop_worklist();
        flow
    }

    /// Runs `region` between the machine's marks of an outlined region when `outlined`.
    fn outlined(
        &mut self,
        frame: &mut Frame,
        outlined: bool,
        region: impl FnOnce(&mut Self, &mut Frame) -> Result<Flow>,
    ) -> Result<Flow> {
        if !outlined {
            return region(self, frame);
        }
        self.m.outlined_region(true);
        let flow = region(self, frame);
        self.m.outlined_region(false);
        flow
    }

    fn iterate(&mut self, frame: &mut Frame, iterate: &'a Iterate) -> Result<Flow> {
        self.outlined(frame, iterate.outlined, |run, frame| run.iterate_region(frame, iterate))
    }

    fn iterate_region(&mut self, frame: &mut Frame, iterate: &'a Iterate) -> Result<Flow> {
        match &iterate.until {
            Until::Empty { kernel, args, initial } => self.with_worklist(frame, initial.as_ref(), |run, frame| {
                if offers_worklist_loop(iterate) {
                    let values = args.iter().map(|a| run.eval(frame, a)).collect::<Result<Vec<_>>>()?;
                    let region = iterate.outlined.then_some(iterate.id);
                    if let Some(rounds) = run.m.run_worklist_loop(*kernel, &values, region, &frame.locals)? {
                        // The body, once per round the machine made.
                        for _ in 0..rounds {
                            if let Some(flow) = run.loop_body(frame, &iterate.body)? {
                                return Ok(flow);
                            }
                        }
                        return Ok(Flow::Normal);
                    }
                }
                if iterate.outlined && run.m.run_outlined(iterate.id, &mut frame.locals)? {
                    return Ok(Flow::Normal);
                }
                loop {
                    run.invoke_with(frame, *kernel, args)?;
                    if let Some(flow) = run.loop_body(frame, &iterate.body)? {
                        return Ok(flow);
                    }
                    if run.m.worklist_is_empty()? {
                        return Ok(Flow::Normal);
                    }
                }
            }),
            Until::Condition { .. } if iterate.outlined && self.m.run_outlined(iterate.id, &mut frame.locals)? => {
                Ok(Flow::Normal)
            }
            Until::Condition { cond, stop_when } => loop {
                if let Some(flow) = self.loop_body(frame, &iterate.body)? {
                    return Ok(flow);
                }
                if self.eval_bool(frame, cond)? == *stop_when {
                    return Ok(Flow::Normal);
                }
            },
        }
    }

    fn pipe(&mut self, frame: &mut Frame, pipe: &'a Pipe) -> Result<Flow> {
        self.outlined(frame, pipe.outlined, |run, frame| run.pipe_region(frame, pipe))
    }

    fn pipe_region(&mut self, frame: &mut Frame, pipe: &'a Pipe) -> Result<Flow> {
        self.with_worklist(frame, pipe.initial.as_ref(), |run, frame| {
            if pipe.outlined && run.m.run_outlined(pipe.id, &mut frame.locals)? {
                return Ok(Flow::Normal);
            }
            if pipe.once {
                // Not a loop of its own: `break` and `continue` belong to the enclosing loop.
                return run.block(frame, &pipe.body);
            }
            loop {
                if let Some(flow) = run.loop_body(frame, &pipe.body)? {
                    return Ok(flow);
                }
                if run.m.worklist_is_empty()? {
                    return Ok(Flow::Normal);
                }
            }
        })
    }

    fn eval_bool(&mut self, frame: &mut Frame, expr: &'a Expr) -> Result<bool> {
        self.eval(frame, expr)?.as_bool().ok_or_else(|| program_error("a condition that is not a bool"))
    }

    /// A node-valued expression, checked against the graph.
    fn eval_node(&mut self, frame: &mut Frame, expr: &'a Expr, what: &str) -> Result<u32> {
        let value = self.eval(frame, expr)?;
        let node = match value {
            Value::Node(u) => u,
            other => return Err(program_error(format!("{what} expects a node, got {other:?}"))),
        };
        self.check_node(node, what)
    }

    fn check_node(&self, node: u32, what: &str) -> Result<u32> {
        if node >= self.num_nodes() && self.module.growth.as_ref().is_some_and(|g| g.nodes.is_some()) {
            return Err(program_error(format!(
                "{what} in host code uses node {node}, which a kernel added: host code reads the input's {} nodes only",
                self.num_nodes()
            )));
        }
        if node >= self.num_nodes() {
            return Err(program_error(format!(
                "{what} in host code uses node {node}, but the graph has {} nodes",
                self.num_nodes()
            )));
        }
        Ok(node)
    }

    fn check_edge(&self, edge: &Value, what: &str) -> Result<usize> {
        let m = self.m.memory().out.edge_slots();
        match *edge {
            Value::Edge(e) if e < m => Ok(e as usize),
            Value::Edge(e) => {
                Err(program_error(format!("{what} in host code uses edge {e}, but the graph has {m} edges")))
            }
            ref other => Err(program_error(format!("{what} expects an edge, got {other:?}"))),
        }
    }

    /// The positions `start..end` of a node's adjacency in its CSR.
    fn adjacency_range(&self, adjacency: Adjacency, node: u32) -> Result<(u64, u64)> {
        self.row(adjacency.uses_reverse(), node as usize)
    }

    /// Where node `node`'s row of the out-CSR (which may have room after its rows) or of the
    /// (packed) in-CSR begins and ends.
    fn row(&self, reverse: bool, node: usize) -> Result<(u64, u64)> {
        if !reverse {
            let out = self.m.memory().out;
            return Ok((out.offsets()[node], out.ends()[node]));
        }
        match &self.m.memory().reverse {
            Some(r) => Ok((r.offsets[node], r.offsets[node + 1])),
            None => Err(program_error("in-edges were not prepared (internal error)")),
        }
    }

    fn adjacent_item(&self, adjacency: Adjacency, k: u64) -> Result<Value> {
        let k = k as usize;
        let memory = self.m.memory();
        let reverse = memory.reverse.as_ref();
        let missing = || program_error("in-edges were not prepared (internal error)");
        Ok(match adjacency {
            Adjacency::OutEdges => Value::Edge(k as u64),
            Adjacency::OutNeighbors => Value::Node(memory.out.targets()[k]),
            Adjacency::InNeighbors => Value::Node(reverse.ok_or_else(missing)?.sources[k]),
            Adjacency::InEdges => Value::Edge(reverse.and_then(|r| r.edge_ids.as_ref()).ok_or_else(missing)?[k]),
        })
    }

    fn property_name(&self, property: PropertyId) -> &str {
        &self.module.properties[property.index()].name
    }

    /// Resolves a place to where it lives, evaluating its element expression.
    fn target(&mut self, frame: &mut Frame, place: &'a Place) -> Result<Target> {
        Ok(match place {
            Place::Local(id) => Target::Local(id.index(), Vec::new()),
            Place::Index { .. } => return Err(program_error("host code has no arrays; kernels do")),
            Place::Property { property, element } => {
                let element = self.eval(frame, element)?;
                let index = element.as_u64().ok_or_else(|| program_error("a property element that is not an id"))?;
                let len = self.m.property_len(*property);
                if index >= len as u64 {
                    let owner = self.module.properties[property.index()].owner;
                    let per = if owner == Owner::Node { "node" } else { "edge" };
                    return Err(program_error(format!(
                        "host code uses element {index} of property `{}`, which has {len} elements (one per {per})",
                        self.property_name(*property)
                    )));
                }
                Target::Property(*property, index as usize)
            }
            Place::ElementField { collection, .. } => {
                return Err(program_error(format!(
                    "host code cannot read or write the fields of collection `{}`'s elements; kernels do",
                    self.module.collections[collection.index()].name
                )));
            }
            Place::Field { base, field } => match self.target(frame, base)? {
                Target::Local(id, mut path) => {
                    path.push(*field);
                    Target::Local(id, path)
                }
                Target::Property(..) => return Err(RuntimeError::Unsupported("struct-typed properties".into())),
            },
        })
    }

    fn read(&mut self, frame: &Frame, target: &Target) -> Result<Value> {
        match target {
            Target::Local(id, path) => {
                let mut value = &frame.locals[*id];
                for &field in path {
                    value = match value {
                        Value::Struct(fields) => &fields[field as usize],
                        _ => return Err(program_error("a field of a value that is not a struct")),
                    };
                }
                Ok(value.clone())
            }
            Target::Property(property, index) => self.m.read_property(*property, *index),
        }
    }

    fn write(&mut self, frame: &mut Frame, target: &Target, value: Value) -> Result<()> {
        match target {
            Target::Local(id, path) => {
                let mut slot = &mut frame.locals[*id];
                for &field in path {
                    slot = match slot {
                        Value::Struct(fields) => &mut fields[field as usize],
                        _ => return Err(program_error("a field of a value that is not a struct")),
                    };
                }
                *slot = value;
                Ok(())
            }
            Target::Property(property, index) => {
                if self.m.write_property(*property, *index, &value)? {
                    Ok(())
                } else {
                    Err(program_error(format!(
                        "cannot store {value:?} in property `{}`",
                        self.property_name(*property)
                    )))
                }
            }
        }
    }

    fn eval(&mut self, frame: &mut Frame, expr: &'a Expr) -> Result<Value> {
        let ty = expr.ty;
        let op_error = |message: String| program_error(format!("in host code: {message}"));
        Ok(match &expr.kind {
            ExprKind::Const(c) => {
                Value::from_const(*c, ty).ok_or_else(|| program_error(format!("constant {c:?} of type {ty}")))?
            }
            ExprKind::Load(Place::Local(id)) => frame.locals[id.index()].clone(),
            ExprKind::Load(place) => {
                let target = self.target(frame, place)?;
                self.read(frame, &target)?
            }
            ExprKind::Param(id) => self.m.params()[id.index()].clone(),
            ExprKind::Zeroed | ExprKind::ArrayPrefix { .. } => {
                return Err(program_error("host code has no arrays; kernels do"));
            }
            ExprKind::NumNodes => match self.module.growth.as_ref().and_then(|g| g.nodes.as_ref()) {
                // The input's nodes and those kernels added.
                // Wrapping: removed input nodes count in that collection's removals (see
                // `grail_ir::GraphGrowth::node_removed`), so its difference may be negative.
                Some(nodes) => Value::U32(self.num_nodes().wrapping_add(self.m.collection_len(nodes.added)?)),
                None => Value::U32(self.num_nodes()),
            },
            ExprKind::CollectionAdd { collection, value } => {
                let value = self.eval(frame, value)?;
                self.m.collection_add(*collection, &value)?
            }
            ExprKind::CollectionLen(collection) => Value::U32(self.m.collection_len(*collection)?),
            ExprKind::CollectionCompact(collection) => Value::U32(self.m.collection_compact(self.module, *collection)?),
            ExprKind::CollectionRemove { collection, .. } | ExprKind::CollectionHas { collection, .. } => {
                return Err(program_error(format!(
                    "host code cannot remove or test the elements of collection `{}`; kernels do",
                    self.module.collections[collection.index()].name
                )));
            }
            ExprKind::NumEdges => {
                let input = self.m.memory().out.num_edges();
                match &self.module.growth {
                    // The input's edges, and those kernels added, less those removed.
                    // (A difference, negative when more input edges were removed than added.)
                    Some(growth) => {
                        let change = self.m.collection_len(growth.added)? as i32 as i64;
                        Value::U64(input.wrapping_add(change as u64))
                    }
                    None => Value::U64(input),
                }
            }
            ExprKind::AddEdge { .. } | ExprKind::RemoveEdge(_) | ExprKind::AddNode | ExprKind::RemoveNode(_) => {
                return Err(program_error("host code cannot add or remove nodes or edges; kernels do".to_string()));
            }
            // A loop over every node in host code (the language refuses `G.has_node` there),
            // which reads the input's nodes only: it visits the input's nodes that no kernel
            // removed.
            ExprKind::HasNode(node) => {
                let Value::Node(v) = self.eval(frame, node)? else {
                    return Err(program_error("`has_node` of a value that is not a node"));
                };
                let removed = self.module.growth.as_ref().and_then(|g| g.node_removed);
                self.input_present(u64::from(v), u64::from(self.num_nodes()), removed)?
            }
            // A loop over every edge in host code, as over every node: the input's edges that
            // no kernel removed.
            ExprKind::HasEdge(edge) => {
                let Value::Edge(e) = self.eval(frame, edge)? else {
                    return Err(program_error("`has_edge` of a value that is not an edge"));
                };
                let removed = self.module.growth.as_ref().and_then(|g| g.removed);
                self.input_present(e, self.m.memory().out.num_edges(), removed)?
            }
            // Host code reads the input's nodes and edges only: its loops over every node or
            // edge end with the input's.
            ExprKind::NodeIds => Value::U32(self.num_nodes()),
            ExprKind::EdgeIds => Value::U64(self.m.memory().out.num_edges()),
            ExprKind::EdgeSource(edge) => {
                let edge = self.eval(frame, edge)?;
                let e = self.check_edge(&edge, "`src`")?;
                let memory = self.m.memory();
                let source = match &memory.edge_sources {
                    Some(sources) => sources[e],
                    None if memory.out.is_packed() => {
                        (memory.out.offsets().partition_point(|&o| o <= e as u64) - 1) as u32
                    }
                    // Rows with room after them are not in order of position: the row holding e.
                    None => (0..memory.out.num_nodes())
                        .find(|&u| memory.out.edge_range(u).contains(&e))
                        .ok_or_else(|| program_error(format!("`src` of edge {e}, which is in no node's row")))?,
                };
                Value::Node(source)
            }
            ExprKind::EdgeTarget(edge) => {
                let edge = self.eval(frame, edge)?;
                let e = self.check_edge(&edge, "`dst`")?;
                Value::Node(self.m.memory().out.targets()[e])
            }
            ExprKind::Degree { node, reverse } => {
                let node = self.eval_node(frame, node, "a degree")? as usize;
                let (start, end) = self.row(*reverse, node)?;
                Value::U32((end - start) as u32)
            }
            ExprKind::Neighbor { node, index, reverse } => {
                let node = self.eval_node(frame, node, "a neighbour")? as usize;
                let index = self.eval(frame, index)?.as_u64().unwrap_or(u64::MAX);
                let (start, end) = self.row(*reverse, node)?;
                let degree = end - start;
                if index >= degree {
                    return Err(program_error(format!(
                        "host code asks for neighbour {index} of node {node}, which has {degree}"
                    )));
                }
                let k = start + index;
                let adjacency = if *reverse { Adjacency::InNeighbors } else { Adjacency::OutNeighbors };
                self.adjacent_item(adjacency, k)?
            }
            ExprKind::Unary(op, operand) => {
                let operand = self.eval(frame, operand)?;
                ops::unary(*op, &operand).map_err(op_error)?
            }
            ExprKind::Binary(op @ (BinaryOp::And | BinaryOp::Or), left, right) => {
                let left = self.eval_bool(frame, left)?;
                let value = match op {
                    BinaryOp::And => left && self.eval_bool(frame, right)?,
                    _ => left || self.eval_bool(frame, right)?,
                };
                Value::Bool(value)
            }
            ExprKind::Binary(op, left, right) => {
                let left = self.eval(frame, left)?;
                let right = self.eval(frame, right)?;
                if let Some(fault) = ops::fault(*op, &left, &right) {
                    return Err(RuntimeError::HostFault { message: format!("in host code: {fault}") });
                }
                ops::binary(*op, &left, &right).map_err(op_error)?
            }
            ExprKind::Cast(value) => {
                let value = self.eval(frame, value)?;
                ops::cast(&value, ty).map_err(op_error)?
            }
            ExprKind::Call(function, args) => {
                let args = args.iter().map(|a| self.eval(frame, a)).collect::<Result<Vec<_>>>()?;
                self.call(*function, &args)?
            }
            ExprKind::Builtin(builtin, args) => {
                let args = args.iter().map(|a| self.eval(frame, a)).collect::<Result<Vec<_>>>()?;
                ops::builtin(*builtin, &args).map_err(op_error)?
            }
            ExprKind::Atomic { op, place, operands } => {
                let target = self.target(frame, place)?;
                let operands = operands.iter().map(|a| self.eval(frame, a)).collect::<Result<Vec<_>>>()?;
                let old = self.read(frame, &target)?;
                let (new, changed) = atomic(*op, &old, &operands).map_err(op_error)?;
                if changed {
                    self.write(frame, &target, new)?;
                }
                Value::Bool(changed)
            }
            ExprKind::SetFind { set, node } => {
                let node = self.eval_node(frame, node, "a set's find")?;
                Value::Node(self.find(*set, node)?)
            }
            ExprKind::SetUnion { set, a, b } => {
                let a = self.eval_node(frame, a, "a set's union")?;
                let b = self.eval_node(frame, b, "a set's union")?;
                Value::Bool(self.union(*set, a, b)?)
            }
            ExprKind::Struct(_, fields) => {
                Value::Struct(fields.iter().map(|f| self.eval(frame, f)).collect::<Result<Vec<_>>>()?)
            }
            ExprKind::Field(base, field) => match self.eval(frame, base)? {
                Value::Struct(mut fields) if (*field as usize) < fields.len() => fields.swap_remove(*field as usize),
                other => return Err(program_error(format!("field {field} of {other:?}"))),
            },
        })
    }

    /// Calls a function in the host.
    fn call(&mut self, id: FunctionId, args: &[Value]) -> Result<Value> {
        let module = self.module;
        let function = &module.functions[id.index()];
        let mut frame = self.frame(&function.body, args)?;
        match self.block(&mut frame, &function.body.block)? {
            Flow::Return(Some(value)) => Ok(value),
            _ if function.result == Type::Unit => Ok(unit()),
            _ => Err(program_error(format!("function `{}` ended without returning a value", function.name))),
        }
    }

    fn parent(&mut self, base: usize, u: u32) -> Result<u32> {
        self.m.parent(base + u as usize)
    }

    /// Union-find as the C runtime does it: path halving, the smaller id becomes the root.
    fn find(&mut self, set: SetId, mut u: u32) -> Result<u32> {
        let base = set.index() * self.num_nodes() as usize;
        let mut p = self.parent(base, u)?;
        while p != u {
            let gp = self.parent(base, p)?;
            if gp != p {
                self.m.set_parent(base + u as usize, gp)?;
            }
            u = p;
            p = self.parent(base, u)?;
        }
        Ok(u)
    }

    fn union(&mut self, set: SetId, a: u32, b: u32) -> Result<bool> {
        let (a, b) = (self.find(set, a)?, self.find(set, b)?);
        if a == b {
            return Ok(false);
        }
        let base = set.index() * self.num_nodes() as usize;
        self.m.set_parent(base + a.max(b) as usize, a.min(b))?;
        Ok(true)
    }
}

fn is_true(value: &Value) -> bool {
    *value == Value::Bool(true)
}

/// The type of an integer loop variable's value.
fn body_type(value: &Value) -> Type {
    value.ty().unwrap_or(Type::Unit)
}

/// An atomic read-modify-write on a value, as `grail_cpu.h` defines it: the new value and
/// whether the stored value changed.
fn atomic(op: AtomicOp, old: &Value, operands: &[Value]) -> std::result::Result<(Value, bool), String> {
    let is = |op, x: &Value, y: &Value| ops::binary(op, x, y).map(|v| is_true(&v));
    let v = operands.first().ok_or("an atomic without operands")?;
    Ok(match op {
        AtomicOp::Min => (v.clone(), is(BinaryOp::Lt, v, old)?),
        AtomicOp::Max => (v.clone(), is(BinaryOp::Gt, v, old)?),
        AtomicOp::Add | AtomicOp::Sub | AtomicOp::And | AtomicOp::Or => {
            let binary = match op {
                AtomicOp::Add => BinaryOp::Add,
                AtomicOp::Sub => BinaryOp::Sub,
                AtomicOp::And => BinaryOp::BitAnd,
                _ => BinaryOp::BitOr,
            };
            let new = ops::binary(binary, old, v)?;
            let changed = new != *old;
            (new, changed)
        }
        AtomicOp::Cas => {
            let new = operands.get(1).ok_or("compare-and-swap without a new value")?;
            let same_bits = |x: &Value, y: &Value| match (x, y) {
                (Value::F32(x), Value::F32(y)) => x.to_bits() == y.to_bits(),
                (Value::F64(x), Value::F64(y)) => x.to_bits() == y.to_bits(),
                _ => x == y,
            };
            let swapped = same_bits(old, v);
            (new.clone(), swapped && !same_bits(v, new))
        }
    })
}
