//! A run's memory: property columns, union-find parents, lock and claim words, and the graph
//! arrays beyond the out-CSR that the program needs.
//!
//! Generated code writes columns, sets, locks and claims through raw pointers in `grail_ctx`;
//! the host reads and writes them through the same pointers (derived once from the owning
//! vectors, which are not touched again until the run hands the columns back), never through
//! references that could alias the kernels' writes.

use std::borrow::Cow;
use std::ffi::c_void;

use grail_graph::{Column, Csr, Graph, PropertyType};
use grail_ir::{Module, Owner, Type, analysis};
use rayon::prelude::*;

use super::value::{Value, column_type};
use crate::error::{Result, RuntimeError};

/// An array owned elsewhere in [`Memory`], accessed only through this pointer.
#[derive(Clone, Copy)]
pub(crate) struct Raw<T> {
    pub ptr: *mut T,
    pub len: usize,
}

impl<T: Copy> Raw<T> {
    fn of(vec: &mut [T]) -> Raw<T> {
        Raw { ptr: vec.as_mut_ptr(), len: vec.len() }
    }

    pub fn get(&self, i: usize) -> Option<T> {
        // SAFETY: in bounds; no kernel runs while the host reads.
        (i < self.len).then(|| unsafe { self.ptr.add(i).read() })
    }

    pub fn set(&self, i: usize, value: T) -> bool {
        if i >= self.len {
            return false;
        }
        // SAFETY: in bounds; no kernel runs while the host writes.
        unsafe { self.ptr.add(i).write(value) };
        true
    }
}

/// One property's column, typed.
#[derive(Clone, Copy)]
pub(crate) enum ColumnRef {
    Bool(Raw<bool>),
    I32(Raw<i32>),
    I64(Raw<i64>),
    U32(Raw<u32>),
    U64(Raw<u64>),
    F32(Raw<f32>),
    F64(Raw<f64>),
}

impl ColumnRef {
    pub(crate) fn of(column: &mut Column) -> ColumnRef {
        match column {
            Column::Bool(v) => ColumnRef::Bool(Raw::of(v)),
            Column::I32(v) => ColumnRef::I32(Raw::of(v)),
            Column::I64(v) => ColumnRef::I64(Raw::of(v)),
            Column::U32(v) => ColumnRef::U32(Raw::of(v)),
            Column::U64(v) => ColumnRef::U64(Raw::of(v)),
            Column::F32(v) => ColumnRef::F32(Raw::of(v)),
            Column::F64(v) => ColumnRef::F64(Raw::of(v)),
        }
    }

    fn ptr(self) -> *mut c_void {
        match self {
            ColumnRef::Bool(r) => r.ptr.cast(),
            ColumnRef::I32(r) => r.ptr.cast(),
            ColumnRef::I64(r) => r.ptr.cast(),
            ColumnRef::U32(r) => r.ptr.cast(),
            ColumnRef::U64(r) => r.ptr.cast(),
            ColumnRef::F32(r) => r.ptr.cast(),
            ColumnRef::F64(r) => r.ptr.cast(),
        }
    }

    /// The type of the column's elements.
    pub(crate) fn property_type(self) -> PropertyType {
        match self {
            ColumnRef::Bool(_) => PropertyType::Bool,
            ColumnRef::I32(_) => PropertyType::I32,
            ColumnRef::I64(_) => PropertyType::I64,
            ColumnRef::U32(_) => PropertyType::U32,
            ColumnRef::U64(_) => PropertyType::U64,
            ColumnRef::F32(_) => PropertyType::F32,
            ColumnRef::F64(_) => PropertyType::F64,
        }
    }

    /// The column's first byte and the size of one element in bytes.
    pub fn raw_bytes(self) -> (*mut u8, usize) {
        let size = match self {
            ColumnRef::Bool(_) => 1,
            ColumnRef::I32(_) | ColumnRef::U32(_) | ColumnRef::F32(_) => 4,
            ColumnRef::I64(_) | ColumnRef::U64(_) | ColumnRef::F64(_) => 8,
        };
        (self.ptr().cast(), size)
    }

    pub fn len(self) -> usize {
        match self {
            ColumnRef::Bool(r) => r.len,
            ColumnRef::I32(r) => r.len,
            ColumnRef::I64(r) => r.len,
            ColumnRef::U32(r) => r.len,
            ColumnRef::U64(r) => r.len,
            ColumnRef::F32(r) => r.len,
            ColumnRef::F64(r) => r.len,
        }
    }

    /// Element `i` as a value of the property's type `ty`.
    pub fn read(self, ty: Type, i: usize) -> Option<Value> {
        Some(match self {
            ColumnRef::Bool(r) => Value::Bool(r.get(i)?),
            ColumnRef::I32(r) => Value::I32(r.get(i)?),
            ColumnRef::I64(r) => Value::I64(r.get(i)?),
            ColumnRef::U32(r) if ty == Type::Node => Value::Node(r.get(i)?),
            ColumnRef::U32(r) => Value::U32(r.get(i)?),
            ColumnRef::U64(r) if ty == Type::Edge => Value::Edge(r.get(i)?),
            ColumnRef::U64(r) => Value::U64(r.get(i)?),
            ColumnRef::F32(r) => Value::F32(r.get(i)?),
            ColumnRef::F64(r) => Value::F64(r.get(i)?),
        })
    }

    /// Element `i`'s bits in a word (signed integers sign-extended, floats as their bits, a bool
    /// as 0 or 1): how partitioned runs move values between parts. `i` must be in range.
    pub fn bits(self, i: usize) -> u64 {
        /// An element within range (the caller's indices are the part's own).
        fn at<T: Copy>(r: Raw<T>, i: usize) -> T {
            r.get(i).unwrap_or_else(|| panic!("element {i} of a column of {}", r.len))
        }
        match self {
            ColumnRef::Bool(r) => u64::from(at(r, i)),
            ColumnRef::I32(r) => at(r, i) as i64 as u64,
            ColumnRef::I64(r) => at(r, i) as u64,
            ColumnRef::U32(r) => u64::from(at(r, i)),
            ColumnRef::U64(r) => at(r, i),
            ColumnRef::F32(r) => u64::from(at(r, i).to_bits()),
            ColumnRef::F64(r) => at(r, i).to_bits(),
        }
    }

    /// Elements `start..end` as [`ColumnRef::bits`] gives them, into `out` (cleared first), read
    /// on every core; nothing may write the column meanwhile.
    pub fn words_into(self, start: usize, end: usize, out: &mut Vec<u64>) {
        use rayon::prelude::*;
        /// The column, read by several threads at once.
        struct Shared(ColumnRef);
        // SAFETY: only read, and nothing writes the column meanwhile (the caller's promise).
        unsafe impl Sync for Shared {}
        impl Shared {
            fn bits(&self, i: usize) -> u64 {
                self.0.bits(i)
            }
        }
        let shared = Shared(self);
        out.clear();
        out.resize(end - start, 0);
        out.par_iter_mut().enumerate().with_min_len(1 << 14).for_each(|(i, w)| *w = shared.bits(start + i));
    }

    /// Stores leaf 0 of every row of `table` (values of the column's type) at the row's index, on
    /// every core; false if a value is of another type or the column is shorter. Nothing else
    /// may touch the column meanwhile.
    pub fn fill_from(self, table: &crate::host::table::Table) -> bool {
        use rayon::prelude::*;
        /// The column, written by several threads at once at distinct elements.
        struct Shared(ColumnRef);
        // SAFETY: each thread writes its own elements, and nothing else touches the column.
        unsafe impl Sync for Shared {}
        impl Shared {
            fn write(&self, i: usize, value: &Value) -> bool {
                self.0.write(i, value)
            }
            fn set_bits(&self, i: usize, word: u64) -> bool {
                self.0.set_bits(i, word)
            }
        }
        /// A u64 column's first element, written as `Shared`.
        struct SharedPtr(*mut u64);
        // SAFETY: as `Shared`.
        unsafe impl Sync for SharedPtr {}
        if table.len() > self.len() {
            return false;
        }
        if let [leaf] = table.leaves()
            && column_type(*leaf) == Some(self.property_type())
        {
            // One word per row, a grail_value's bits (a u64 column's are the words): stored in
            // chunks on every core, without a value decoded per element.
            const CHUNK: usize = 1 << 15;
            let words = table.words();
            if let ColumnRef::U64(r) = self {
                let base = SharedPtr(r.ptr);
                words.par_chunks(CHUNK).enumerate().for_each(|(c, chunk)| {
                    let base = &base;
                    // SAFETY: rows c*CHUNK.. are below table.len() <= the column's length, and
                    // each chunk writes only its own rows.
                    unsafe { std::ptr::copy_nonoverlapping(chunk.as_ptr(), base.0.add(c * CHUNK), chunk.len()) };
                });
                return true;
            }
            // A table holds an f32 as a double's bits (grail_value's `f`).
            let single = matches!(self, ColumnRef::F32(_));
            let shared = Shared(self);
            words.par_chunks(CHUNK).enumerate().for_each(|(c, chunk)| {
                for (k, &word) in chunk.iter().enumerate() {
                    let bits = if single { u64::from((f64::from_bits(word) as f32).to_bits()) } else { word };
                    shared.set_bits(c * CHUNK + k, bits);
                }
            });
            return true;
        }
        let shared = Shared(self);
        (0..table.len()).into_par_iter().with_min_len(1 << 14).all(|row| shared.write(row, &table.value(row, 0)))
    }

    /// Stores element `i` from its bits as [`ColumnRef::bits`] gives them; false if out of range.
    pub fn set_bits(self, i: usize, word: u64) -> bool {
        match self {
            ColumnRef::Bool(r) => r.set(i, word != 0),
            ColumnRef::I32(r) => r.set(i, word as i32),
            ColumnRef::I64(r) => r.set(i, word as i64),
            ColumnRef::U32(r) => r.set(i, word as u32),
            ColumnRef::U64(r) => r.set(i, word),
            ColumnRef::F32(r) => r.set(i, f32::from_bits(word as u32)),
            ColumnRef::F64(r) => r.set(i, f64::from_bits(word)),
        }
    }

    /// Writes element `i`; false if out of range or the value does not fit the column.
    pub fn write(self, i: usize, value: &Value) -> bool {
        match (self, value) {
            (ColumnRef::Bool(r), Value::Bool(x)) => r.set(i, *x),
            (ColumnRef::I32(r), Value::I32(x)) => r.set(i, *x),
            (ColumnRef::I64(r), Value::I64(x)) => r.set(i, *x),
            (ColumnRef::U32(r), Value::U32(x) | Value::Node(x)) => r.set(i, *x),
            (ColumnRef::U64(r), Value::U64(x) | Value::Edge(x)) => r.set(i, *x),
            (ColumnRef::F32(r), Value::F32(x)) => r.set(i, *x),
            (ColumnRef::F64(r), Value::F64(x)) => r.set(i, *x),
            _ => false,
        }
    }
}

/// The reverse CSR as the program sees it.
pub(crate) struct Reverse<'g> {
    pub offsets: Cow<'g, [u64]>,
    pub sources: Cow<'g, [u32]>,
    /// For each position, the out-edge id of the same edge (when the program needs it).
    pub edge_ids: Option<Cow<'g, [u64]>>,
}

/// A run's memory.
pub(crate) struct Memory<'g> {
    pub out: &'g Csr,
    pub reverse: Option<Reverse<'g>>,
    pub edge_sources: Option<Vec<u32>>,
    /// The property columns, by property id; read only through `columns` until the run ends.
    owned: Vec<Column>,
    pub columns: Vec<ColumnRef>,
    pub props: Vec<*mut c_void>,
    _sets: Vec<u32>,
    pub sets: Raw<u32>,
    _locks: Vec<u32>,
    pub locks: Raw<u32>,
    _claims: Vec<u32>,
    pub claims: Raw<u32>,
}

/// `column` with every element set to its type's zero, in chunks on every core.
pub(crate) fn zeroed_on_every_core(mut column: Column) -> Column {
    use rayon::prelude::*;
    const CHUNK: usize = 1 << 16;
    match &mut column {
        Column::Bool(v) => v.par_chunks_mut(CHUNK).for_each(|c| c.fill(false)),
        Column::U32(v) => v.par_chunks_mut(CHUNK).for_each(|c| c.fill(0)),
        Column::U64(v) => v.par_chunks_mut(CHUNK).for_each(|c| c.fill(0)),
        Column::I32(v) => v.par_chunks_mut(CHUNK).for_each(|c| c.fill(0)),
        Column::I64(v) => v.par_chunks_mut(CHUNK).for_each(|c| c.fill(0)),
        Column::F32(v) => v.par_chunks_mut(CHUNK).for_each(|c| c.fill(0.0)),
        Column::F64(v) => v.par_chunks_mut(CHUNK).for_each(|c| c.fill(0.0)),
    }
    column
}

/// What [`Memory::with`] builds on the host.
#[derive(Debug, Clone, Copy)]
pub(crate) struct HostArrays {
    /// The weight properties' columns from the graph's weights (else left zero, for a backend
    /// that holds them elsewhere).
    pub weights: bool,
    /// The graph arrays beyond the out-CSR that the program reads (else only those `main`
    /// reads itself).
    pub graph_arrays: bool,
}

impl<'g> Memory<'g> {
    /// Memory with only some of the host arrays (see [`HostArrays`]).
    pub fn with(module: &Module, graph: &'g Graph, host: HostArrays) -> Result<Memory<'g>> {
        Memory::build(module, graph, host, false, &mut Vec::new(), None)
    }

    /// [`Memory::with`], with a host column only for the properties marked in `wanted`: the
    /// others are empty (a GPU run that keeps them on the device alone; zeroing a host column of
    /// millions of nodes nobody reads cost a quarter of a millisecond per run).
    pub fn with_columns(module: &Module, graph: &'g Graph, host: HostArrays, wanted: &[bool]) -> Result<Memory<'g>> {
        Memory::build(module, graph, host, false, &mut Vec::new(), Some(wanted))
    }

    /// How many elements property `property`'s column holds when it has a host copy: one per
    /// node or per edge of the graph.
    pub fn full_len(&self, property: &grail_ir::Property) -> usize {
        match property.owner {
            Owner::Node => self.out.num_nodes() as usize,
            // One per edge slot (with room after rows, more than edges).
            _ => self.out.edge_slots() as usize,
        }
    }

    /// Memory for a backend whose kernels run on the host: everything, except that a `u32`
    /// weight property that nothing writes (no kernel, function or host statement) is the
    /// graph's own weight array, read in place instead of copied into a fresh column: on a
    /// graph of 33 M edges the copy alone costs more than a BFS. Such a column comes back from [`Memory::into_columns`] empty (the graph holds it).
    /// Only for executors that never write a column nobody writes (the CPU's).
    pub fn borrowing_weights(module: &Module, graph: &'g Graph) -> Result<Memory<'g>> {
        Memory::build(module, graph, HostArrays { weights: true, graph_arrays: true }, true, &mut Vec::new(), None)
    }

    /// As [`Memory::borrowing_weights`], taking each column from `spare` where one of its type
    /// and length is there (zeroed on every core): a column of a run before, whose pages the
    /// process has touched already. Fresh pages cost a fault each on first touch, which on a
    /// graph of millions of nodes costs more than a small run's kernels.
    pub fn borrowing_weights_reusing(module: &Module, graph: &'g Graph, spare: &mut Vec<Column>) -> Result<Memory<'g>> {
        Memory::build(module, graph, HostArrays { weights: true, graph_arrays: true }, true, spare, None)
    }

    fn build(
        module: &Module,
        graph: &'g Graph,
        host: HostArrays,
        borrow_weights: bool,
        spare: &mut Vec<Column>,
        wanted: Option<&[bool]>,
    ) -> Result<Memory<'g>> {
        let n = graph.num_nodes() as usize;
        // Edge columns hold one value per edge slot (with room after rows, more than edges).
        let m = usize::try_from(graph.out().edge_slots())
            .map_err(|_| RuntimeError::OutOfMemory { what: "edge property columns".into() })?;
        let mut owned = Vec::with_capacity(module.properties.len());
        let mut borrowed: Vec<Option<ColumnRef>> = vec![None; module.properties.len()];
        let written = if borrow_weights { analysis::written_anywhere(module) } else { Vec::new() };
        let initialized = if spare.is_empty() { Vec::new() } else { analysis::written_by_defaults(module) };
        for (i, property) in module.properties.iter().enumerate() {
            let ty = column_type(property.ty).ok_or_else(|| {
                RuntimeError::Unsupported(format!(
                    "property `{}` has type {}; the CPU executor stores only scalar, node and edge properties",
                    property.name, property.ty
                ))
            })?;
            let len = if property.owner == Owner::Node { n } else { m };
            let len = if wanted.is_none_or(|w| w[i]) { len } else { 0 };
            if property.is_weight {
                check_weight_kind(module, property, graph.out())?;
            }
            let in_place = borrow_weights && property.is_weight && !written[i];
            match (in_place, property.ty, graph.out().weights(), graph.out().real_weights()) {
                // Never written through: the pointers are `*mut` only to share the column type.
                (true, Type::U32, Some(weights), _) => {
                    borrowed[i] = Some(ColumnRef::U32(Raw { ptr: weights.as_ptr().cast_mut(), len: weights.len() }));
                    owned.push(Column::U32(Vec::new()));
                    continue;
                }
                (true, Type::F32, _, Some(weights)) => {
                    borrowed[i] = Some(ColumnRef::F32(Raw { ptr: weights.as_ptr().cast_mut(), len: weights.len() }));
                    owned.push(Column::F32(Vec::new()));
                    continue;
                }
                _ => {}
            }
            let mut column = match spare.iter().position(|c| c.ty() == ty && c.len() == len) {
                // A column the defaults kernel writes whole is not cleared for it.
                Some(at) if initialized[i] => spare.swap_remove(at),
                Some(at) => zeroed_on_every_core(spare.swap_remove(at)),
                None => Column::zeroed(ty, len),
            };
            if property.is_weight && host.weights && len > 0 {
                fill_weights(&mut column, graph.out());
            }
            owned.push(column);
        }
        let columns: Vec<ColumnRef> = owned
            .iter_mut()
            .zip(borrowed)
            .map(|(column, borrowed)| borrowed.unwrap_or_else(|| ColumnRef::of(column)))
            .collect();
        let props = columns.iter().map(|c| c.ptr()).collect();

        // What the host builds of the graph: everything the program reads, or what `main` reads.
        let main_only;
        let reads = if host.graph_arrays {
            module
        } else {
            main_only = Module { main: module.main.clone(), functions: module.functions.clone(), ..Module::default() };
            &main_only
        };
        let reverse = if analysis::needs_in_edge_ids(reads) {
            Some(match (graph.reverse(), graph.in_edge_ids()) {
                (Some(csr), Some(ids)) => Reverse {
                    offsets: Cow::Borrowed(csr.offsets()),
                    sources: Cow::Borrowed(csr.targets()),
                    edge_ids: Some(Cow::Borrowed(ids)),
                },
                _ => {
                    let (csr, ids) = graph.out().transpose_with_ids();
                    let (offsets, sources, _) = csr.into_parts();
                    Reverse {
                        offsets: Cow::Owned(offsets),
                        sources: Cow::Owned(sources),
                        edge_ids: Some(Cow::Owned(ids)),
                    }
                }
            })
        } else if analysis::needs_reverse(reads) {
            Some(match graph.reverse() {
                Some(csr) => Reverse {
                    offsets: Cow::Borrowed(csr.offsets()),
                    sources: Cow::Borrowed(csr.targets()),
                    edge_ids: None,
                },
                None => {
                    let (offsets, sources, _) = graph.out().transpose().into_parts();
                    Reverse { offsets: Cow::Owned(offsets), sources: Cow::Owned(sources), edge_ids: None }
                }
            })
        } else {
            None
        };
        let edge_sources = analysis::needs_edge_sources(reads).then(|| graph.out().edge_sources());

        // Every set's parents the identity, filled on every core (a column per set).
        let mut sets: Vec<u32> = match n {
            0 => Vec::new(),
            n => (0..n * module.sets.len()).into_par_iter().with_min_len(1 << 16).map(|i| (i % n) as u32).collect(),
        };
        let mut locks = if analysis::uses_locks(module) { vec![0u32; n] } else { Vec::new() };
        let mut claims = if analysis::uses_claims(module) { vec![0u32; n] } else { Vec::new() };
        Ok(Memory {
            out: graph.out(),
            reverse,
            edge_sources,
            owned,
            columns,
            props,
            sets: Raw::of(&mut sets),
            _sets: sets,
            locks: Raw::of(&mut locks),
            _locks: locks,
            claims: Raw::of(&mut claims),
            _claims: claims,
        })
    }

    /// Sets every claim word back to 0 (when invocation numbers wrap around).
    pub fn clear_claims(&self) {
        for i in 0..self.claims.len {
            self.claims.set(i, 0);
        }
    }

    /// Hands the columns back at the end of the run (a weight column read in place comes back
    /// empty).
    pub fn into_columns(self) -> Vec<Column> {
        self.owned
    }
}

/// The graph's weights converted to the property's integer type (1 where there are none).
/// Fills a weight property's column from the graph's weights (1 each when it has none).
/// Integer columns take integer weights only ([`check_weight_kind`] refuses real ones first).
fn fill_weights(column: &mut Column, csr: &Csr) {
    let (weights, real) = (csr.weights(), csr.real_weights());
    macro_rules! fill {
        ($v:expr, $t:ty) => {
            match (weights, real) {
                (Some(w), _) => $v.iter_mut().zip(w).for_each(|(d, &s)| *d = s as $t),
                (None, Some(w)) => $v.iter_mut().zip(w).for_each(|(d, &s)| *d = s as $t),
                (None, None) => $v.fill(1 as $t),
            }
        };
    }
    match column {
        Column::U32(v) => fill!(v, u32),
        Column::U64(v) => fill!(v, u64),
        Column::I32(v) => fill!(v, i32),
        Column::I64(v) => fill!(v, i64),
        Column::F32(v) => fill!(v, f32),
        Column::F64(v) => fill!(v, f64),
        // The validator allows weights only in numeric properties.
        Column::Bool(_) => {}
    }
}

/// Refuses to bind real weights to an integer `weight` property: the program would read
/// them rounded, or as bits.
pub(crate) fn check_weight_kind(module: &Module, property: &grail_ir::Property, csr: &Csr) -> Result<()> {
    let integer = property.ty.scalar().is_some_and(|s| s.is_integer());
    if integer && csr.has_real_weights() {
        return Err(RuntimeError::Input(format!(
            "program `{}` reads integer weights (`edge weight: {}`), and this graph's weights are real: \
             declare `edge weight: f32` (or f64), or read the graph with --weights round|scale",
            module.name, property.ty
        )));
    }
    Ok(())
}
