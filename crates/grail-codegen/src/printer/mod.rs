//! The C-family printer: one walk over the IR for every target.
//!
//! [`emit`] prints a module as a translation unit: the generator's comment, the target's prelude
//! (its runtime header and typed helpers), the struct typedefs, each collection's layout macros
//! and add function, the program functions, then every kernel phase. Expressions, statements,
//! locks, constants and types print the same for every target; what differs is behind
//! [`Target`]: the prelude, function qualifiers, struct literals, the host's collection entry
//! points, the phase wrapper (size function, item loop, per-thread state, reduction epilogue),
//! pushes and retries, and the adjacency loops (nested `forall` over adjacency and `for` over
//! neighbours), which default to a serial loop in the item's thread.

use std::cell::{Cell, RefCell};
use std::fmt::Write;

use grail_ir::opt::Layout;
use grail_ir::*;

use crate::CodegenError;

mod growth;

/// What one C-family target does differently. The methods that emit code take the [`Emitter`]
/// that walks the kernel or function, and write through it.
pub(crate) trait Target: Sized {
    /// What follows the generator's comment: the runtime header and the typed helpers.
    fn prelude(&self) -> String;

    /// Whether locals (and kernel arguments) the code never names are left undeclared (NVRTC
    /// warns about each); otherwise every local of the body is declared.
    const ONLY_USED_LOCALS: bool = false;

    /// The qualifier of program functions' declarations and definitions (`static`, `__device__`).
    fn function_qualifier(&self) -> &'static str;

    /// The qualifier of a collection's add function (`static inline`, `__device__ inline`).
    fn add_qualifier(&self) -> &'static str;

    /// Whether kernel threads reserve collection slots in blocks of their own and count their
    /// removals themselves (`grail_slots`, through the thread state `t`), for the collections
    /// whose count kernels do not read.
    fn per_thread_slots(&self) -> bool {
        false
    }

    /// A value of struct type `ty` from its fields' expressions, in order.
    fn struct_literal(&self, ty: &str, fields: &[String]) -> String;

    /// The functions the host runtime calls for collection `c`: adding an element given as its
    /// flattened leaves ([`leaves`]), reading elements back the same way, clearing claim words.
    /// Written after the collection's layout macros and `grail_c<c>_add`.
    fn collection_entry_points(&self, out: &mut String, module: &Module, c: usize, collection: &CollectionDecl);

    /// The code of one kernel phase (the kernel's top-level `forall` number `phase`): the size
    /// function, the item loop over the emitter's [`Emitter::phase_size`] items, and whatever
    /// per-thread state the phase uses ([`Emitter::uses`]).
    fn phase(&self, e: Emitter<'_, Self>, kernel: usize, phase: usize, forall: &ForAll)
    -> Result<String, CodegenError>;

    /// `push value;` (push site `site`) to the kernel's output worklist.
    fn push(&self, e: &mut Emitter<'_, Self>, site: PushSite, value: &str, depth: usize);

    /// `retry value;` to the invocation's retry list.
    fn retry(&self, e: &mut Emitter<'_, Self>, value: &str, depth: usize);

    /// `reduce value;`: folds the value into the phase's accumulator `acc_`.
    fn reduce(&self, e: &mut Emitter<'_, Self>, value: &Expr, depth: usize) -> Result<(), CodegenError> {
        e.accumulate(value, depth)
    }

    /// Host orchestration (`invoke`, `iterate`, `pipe`, `print`) in device code: only the
    /// CUDA target's control kernels of outlined regions have any.
    fn orchestration(&self, _e: &mut Emitter<'_, Self>, _stmt: &Stmt, _depth: usize) -> Result<(), CodegenError> {
        Err(CodegenError::Internal("host orchestration in device code".into()))
    }

    /// In an outlined region's host code: the store `line` to a property or element, which one
    /// thread makes for all.
    fn region_store(&self, _e: &mut Emitter<'_, Self>, _line: &str, _depth: usize) -> Result<(), CodegenError> {
        Err(CodegenError::Internal("a region store outside an outlined region".into()))
    }

    /// Item `index` of the phase's input worklist (or of the items being retried).
    fn worklist_item(&self, e: &Emitter<'_, Self>, index: &str) -> String {
        format!("{}[{index}]", e.ctx("items"))
    }

    /// Whether several phases of `module` may run inside one launch (the CUDA target's control
    /// kernels): a column one phase only reads may then be written by another phase of the same
    /// launch, so column pointers cannot be `restrict` (the compiler could read them through a
    /// non-coherent cache).
    fn phases_share_a_launch(&self, _module: &Module) -> bool {
        false
    }

    /// The entry point of the program's update function `index` (`merge property with
    /// function;`), which the runtime calls to merge changed ghosts into their owners: `body`
    /// (from [`merge_body`]) turns the words `current` and `incoming` into the merged word `w_`.
    fn merge_entry_point(&self, out: &mut String, index: usize, body: &str);

    /// What follows the kernels' phases (the CUDA target's outlined regions).
    fn epilogue(&self, _out: &mut String, _module: &Module) -> Result<(), CodegenError> {
        Ok(())
    }

    /// An integer division or remainder (`op`) of type `ty`; by default C's operator (on the
    /// CPU, the hardware faults on a zero divisor).
    fn divide(&self, op: BinaryOp, ty: Type, l: &str, r: &str) -> Result<String, CodegenError> {
        Ok(format!("(({})({l} {} {r}))", c_type(ty), op.symbol()))
    }

    /// A read of a collection element's field through `access` (an lvalue of C type `ty`);
    /// `locked`: inside a section of `atomic` or `exclusive`, whose acquire fence comes first. By
    /// default the access itself.
    fn load_element_field(&self, access: String, _ty: &str, _locked: bool) -> String {
        access
    }

    /// Whether each program function also gets a copy for calls from inside a lock's section
    /// (`grail_f<i>_locked`), whose element reads are `locked` ones.
    const LOCKED_FUNCTIONS: bool = false;

    /// The statement that sets aside a worklist item that is a ghost on a part of a partitioned
    /// graph (`var` holds the item), if the target has one: the CUDA target's, for a part's
    /// worklist loop run whole on the device.
    fn ghost_item_check(&self, _var: &str) -> Option<String> {
        None
    }

    /// A read of property `property` through `access` (`P<i>[<element>]`); by default the
    /// access itself.
    fn load_property(&self, _e: &Emitter<'_, Self>, _property: PropertyId, access: String) -> String {
        access
    }

    /// A nested parallel loop over a node's adjacency. By default the item's thread runs it as a
    /// serial loop (a filter becomes an `if` around the body).
    fn nested_forall(&self, e: &mut Emitter<'_, Self>, forall: &ForAll, depth: usize) -> Result<(), CodegenError> {
        serial_nested_forall(self, e, forall, depth)
    }

    /// A sequential loop over adjacency that the nested-parallelism pass marked as a fold the
    /// schedulers may share; by default run serially by its item's thread.
    fn scheduled_fold(&self, e: &mut Emitter<'_, Self>, stmt: &Stmt, depth: usize) -> Result<(), CodegenError> {
        let Stmt::ForEach { var, adjacency, node, body, .. } = stmt else {
            return Err(CodegenError::Internal("a scheduled fold that is not a loop over adjacency".into()));
        };
        self.adjacency_loop(e, *var, *adjacency, node, body, depth)
    }

    /// A loop over a node's edges or neighbours, run by one thread.
    fn adjacency_loop(
        &self,
        e: &mut Emitter<'_, Self>,
        var: LocalId,
        adjacency: Adjacency,
        node: &Expr,
        body: &Block,
        depth: usize,
    ) -> Result<(), CodegenError> {
        e.serial_adjacency_loop(var, adjacency, node, body, depth)
    }
}

/// A nested parallel loop run serially by its item's thread (a filter becomes an `if` around
/// the body).
pub(crate) fn serial_nested_forall<T: Target>(
    target: &T,
    e: &mut Emitter<'_, T>,
    forall: &ForAll,
    depth: usize,
) -> Result<(), CodegenError> {
    let Space::Adjacent(adjacency, node) = &forall.space else {
        return Err(CodegenError::Internal("a nested parallel loop that is not over adjacency".into()));
    };
    target.adjacency_loop(e, forall.var, *adjacency, node, &filtered_body(forall), depth)
}

/// A nested loop's body with its filter as an `if` around it.
pub(crate) fn filtered_body(forall: &ForAll) -> Block {
    match &forall.filter {
        None => forall.body.clone(),
        Some(filter) => {
            vec![Stmt::If { cond: filter.clone(), then: forall.body.clone(), otherwise: Vec::new(), uniform: false }]
        }
    }
}

/// Prints a valid module for `target`.
pub(crate) fn emit<T: Target>(module: &Module, target: &T) -> Result<String, CodegenError> {
    validate(module)?;
    let mut out = String::new();
    writeln!(out, "/* generated by grail from module `{}` */", module.name).unwrap();
    out.push_str(&target.prelude());
    // Local worklists keep this many pushed items in a thread; none in checked mode, where every
    // push is checked on its way to the worklist.
    let capacity = grail_ir::opt::local::CAPACITY;
    writeln!(
        out,
        "#ifdef GRAIL_CHECKS\n#define GRAIL_LOCAL_CAP 0u\n#else\n#define GRAIL_LOCAL_CAP {capacity}u\n#endif"
    )
    .unwrap();
    for (i, s) in module.structs.iter().enumerate() {
        let fields: String =
            s.fields.iter().enumerate().map(|(f, (_, ty))| format!(" {} f{f};", c_type(*ty))).collect();
        writeln!(out, "typedef struct grail_s{i} {{{fields} }} grail_s{i}; /* {} */", s.name).unwrap();
    }
    // Arrays are structs holding a C array, so they are values (zeroed by `{0}`), and an item
    // past the end stops the kernel (GRAIL_AT).
    for (i, a) in module.arrays.iter().enumerate() {
        writeln!(out, "typedef struct grail_a{i} {{ {} v[{}]; }} grail_a{i};", c_type(a.element), a.len).unwrap();
    }
    for (c, collection) in module.collections.iter().enumerate() {
        collection_support(target, &mut out, module, c, collection);
    }
    if let Some(growth) = &module.growth {
        growth::support(target, &mut out, module, growth);
        growth::node_removal_support(target, &mut out, growth);
    }
    let qualifier = target.function_qualifier();
    let copies: &[bool] = if T::LOCKED_FUNCTIONS { &[false, true] } else { &[false] };
    for &locked in copies {
        for (i, f) in module.functions.iter().enumerate() {
            writeln!(out, "{qualifier} {};", function_signature(i, f, locked)).unwrap();
        }
    }
    for &locked in copies {
        for (i, f) in module.functions.iter().enumerate() {
            let mut e = Emitter::new(target, module, &f.body, None);
            e.locked_body = locked;
            let body = e.capture(|e| e.block(&f.body.block, 1))?;
            e.line(0, &format!("{qualifier} {} {{", function_signature(i, f, locked)));
            e.views();
            e.locals(f.params as usize);
            e.out.push_str(&body);
            e.line(0, "}");
            out.push_str(&e.out);
        }
    }
    growth::init_node_function(target, &mut out, module)?;
    for (i, &(property, function)) in module.merge_functions.iter().enumerate() {
        target.merge_entry_point(&mut out, i, &merge_body(module, property, function));
    }
    for (index, kernel) in module.kernels.iter().enumerate() {
        for (phase, stmt) in kernel.body.block.iter().enumerate() {
            let Stmt::ForAll(forall) = stmt else {
                return Err(CodegenError::Internal(format!(
                    "kernel {} has a statement outside its loops",
                    kernel.name
                )));
            };
            let mut e = Emitter::new(target, module, &kernel.body, Some(kernel));
            e.local = module.opt.local && grail_ir::opt::local::eligible(module, KernelId(index as u32)).is_ok();
            out.push_str(&target.phase(e, index, phase, forall)?);
        }
    }
    target.epilogue(&mut out, module)?;
    Ok(out)
}

/// The statements of an update function's entry point: the words `current` and `incoming` (a
/// column's element and a ghost's, low bits first as the runtime keeps them) as values of the
/// property's type, the function called, and its result back as a word in `w_`.
pub(crate) fn merge_body(module: &Module, property: PropertyId, function: FunctionId) -> String {
    let ty = module.properties[property.index()].ty;
    let t = c_type(ty);
    let bits = match ty {
        Type::Scalar(Scalar::Bool) => 8,
        Type::Scalar(Scalar::I32 | Scalar::U32 | Scalar::F32) | Type::Node => 32,
        _ => 64,
    };
    format!(
        "    {t} a_, b_, m_;\n    \
         {{ uint{bits}_t x_ = (uint{bits}_t)current; memcpy(&a_, &x_, sizeof a_); }}\n    \
         {{ uint{bits}_t x_ = (uint{bits}_t)incoming; memcpy(&b_, &x_, sizeof b_); }}\n    \
         m_ = grail_f{}(ctx, a_, b_);\n    \
         uint{bits}_t r_;\n    memcpy(&r_, &m_, sizeof r_);\n    \
         const uint64_t w_ = (uint64_t)r_;\n",
        function.0
    )
}

/// Function `index`'s C signature; `locked`: its copy for calls from inside a lock's section.
fn function_signature(index: usize, f: &Function, locked: bool) -> String {
    let mut params = vec!["const grail_ctx *ctx".to_string()];
    for (i, local) in f.body.locals.iter().take(f.params as usize).enumerate() {
        params.push(format!("{} {}", c_type(local.ty), local_name(i, &local.name)));
    }
    let suffix = if locked { "_locked" } else { "" };
    format!("{} grail_f{index}{suffix}({}) /* {} */", c_type(f.result), params.join(", "), f.name)
}

/// Whether any `iterate` or `pipe` of `main` is outlined.
pub(crate) fn has_outlined(module: &Module) -> bool {
    let mut found = false;
    walk_block(&module.main.block, &mut |stmt| {
        found |= matches!(stmt, Stmt::Iterate(i) if i.outlined) || matches!(stmt, Stmt::Pipe(p) if p.outlined)
    });
    found
}

/// Small typed helpers every target declares with its own `qualifier`: min, max and abs without
/// evaluating an argument twice, and float-to-integer `as` (`grail_cast_<float>_<int>`).
///
/// A float-to-integer conversion is Rust's `as` (the language's): toward zero, saturating at the
/// type's bounds, NaN to 0. C and CUDA leave an out-of-range conversion undefined (x86 gives the
/// type's minimum, and a compiler may fold it to anything), so the plain cast runs only where the
/// value is known to fit: the bounds are powers of two (or zero), exact in either float type, and
/// a value just outside the lower one (which truncates to the minimum anyway, e.g. -0.5 to a
/// `u32`) takes the slower path to the same result. An in-range value costs two comparisons.
pub(crate) fn value_helpers(qualifier: &str) -> String {
    const TEMPLATE: &str = r#"
#define GRAIL_MINMAX(T, NAME) \
    QUAL T grail_min_##NAME(T a, T b) { return b < a ? b : a; } \
    QUAL T grail_max_##NAME(T a, T b) { return b > a ? b : a; }
GRAIL_MINMAX(uint32_t, u32) GRAIL_MINMAX(uint64_t, u64) GRAIL_MINMAX(int32_t, i32) GRAIL_MINMAX(int64_t, i64)
GRAIL_MINMAX(float, f32) GRAIL_MINMAX(double, f64)
QUAL int32_t grail_abs_i32(int32_t a) { return a < 0 ? (int32_t)-a : a; }
QUAL int64_t grail_abs_i64(int64_t a) { return a < 0 ? (int64_t)-a : a; }
QUAL uint32_t grail_abs_u32(uint32_t a) { return a; }
QUAL uint64_t grail_abs_u64(uint64_t a) { return a; }
QUAL float grail_abs_f32(float a) { return fabsf(a); }
QUAL double grail_abs_f64(double a) { return fabs(a); }
#define GRAIL_FLOAT_TO_INT(F, FN, T, TN, LO, HI, MIN, MAX) \
    QUAL T grail_cast_##FN##_##TN(F x) { \
        if (x >= (F)(LO) && x < (F)(HI)) return (T)x; \
        return x != x ? (T)0 : x < (F)0 ? (T)(MIN) : (T)(MAX); \
    }
#define GRAIL_FLOAT_TO_INTS(F, FN) \
    GRAIL_FLOAT_TO_INT(F, FN, int32_t, i32, -2147483648.0, 2147483648.0, INT32_MIN, INT32_MAX) \
    GRAIL_FLOAT_TO_INT(F, FN, int64_t, i64, -9223372036854775808.0, 9223372036854775808.0, INT64_MIN, INT64_MAX) \
    GRAIL_FLOAT_TO_INT(F, FN, uint32_t, u32, 0.0, 4294967296.0, 0u, UINT32_MAX) \
    GRAIL_FLOAT_TO_INT(F, FN, uint64_t, u64, 0.0, 18446744073709551616.0, 0u, UINT64_MAX)
GRAIL_FLOAT_TO_INTS(float, f32) GRAIL_FLOAT_TO_INTS(double, f64)
"#;
    TEMPLATE.replace("QUAL", qualifier)
}

/// The C type of an IR type.
pub(crate) fn c_type(ty: Type) -> String {
    match ty {
        Type::Scalar(Scalar::Bool) => "bool".into(),
        Type::Scalar(Scalar::I32) => "int32_t".into(),
        Type::Scalar(Scalar::I64) => "int64_t".into(),
        Type::Scalar(Scalar::U32) | Type::Node => "uint32_t".into(),
        Type::Scalar(Scalar::U64) | Type::Edge => "uint64_t".into(),
        Type::Scalar(Scalar::F32) => "float".into(),
        Type::Scalar(Scalar::F64) => "double".into(),
        Type::Struct(id) => format!("grail_s{}", id.0),
        Type::Array(id) => format!("grail_a{}", id.0),
        Type::Element(_) => "uint32_t".into(),
        Type::Unit => "void".into(),
    }
}

/// The scalar leaves of a value of type `ty`: each one's member path (`.f0.f2`) and type, in
/// declaration order. The host passes elements to and from collections flattened this way.
pub(crate) fn leaves(module: &Module, ty: Type, path: String, out: &mut Vec<(String, Type)>) {
    match ty {
        Type::Struct(id) => {
            for (f, (_, field_ty)) in module.structs[id.index()].fields.iter().enumerate() {
                leaves(module, *field_ty, format!("{path}.f{f}"), out);
            }
        }
        _ => out.push((path, ty)),
    }
}

/// The `grail_value` member a value of this type travels in: `f` (double) for floats, `i`
/// (int64, sign-extended) for signed integers, `u` (uint64, zero-extended) for the rest.
pub(crate) fn value_member(ty: Type) -> &'static str {
    match ty {
        Type::Scalar(Scalar::F32 | Scalar::F64) => "f",
        Type::Scalar(Scalar::I32 | Scalar::I64) => "i",
        _ => "u",
    }
}

/// The C type of a `grail_value` member.
pub(crate) fn member_type(member: &str) -> &'static str {
    match member {
        "f" => "double",
        "i" => "int64_t",
        _ => "uint64_t",
    }
}

/// The conversion of a `grail_value` to a value of this type.
pub(crate) fn from_value(ty: Type, value: &str) -> String {
    format!("({})({value}.{})", c_type(ty), value_member(ty))
}

/// The flattened leaves of element `v` stored into `flat[base + k]`, one line each.
pub(crate) fn store_leaves(out: &mut String, indent: &str, flat: &[(String, Type)], base: &str) {
    for (k, (path, ty)) in flat.iter().enumerate() {
        let member = value_member(*ty);
        writeln!(out, "{indent}flat[{base}{k}].{member} = ({}){path};", member_type(member)).unwrap();
    }
}

/// Collection `c`'s field `f` of element `i`, through the `grail_coll *coll` in scope.
pub(crate) fn element_field(c: usize, f: usize, ty: Type) -> String {
    let t = c_type(ty);
    format!("(*({t} *)grail_elem(coll, GRAIL_C{c}_F{f}, sizeof({t}), i))")
}

/// A collection's layout macros, its add function for kernels (`grail_c<c>_add`: the element's
/// handle; `grail_coll_sink` when the collection could not grow), then the target's entry points.
fn collection_support<T: Target>(target: &T, out: &mut String, module: &Module, c: usize, collection: &CollectionDecl) {
    let fields = &module.structs[collection.element.index()].fields;
    let elem_ty = c_type(Type::Struct(collection.element));
    match module.opt.layout {
        Layout::Columns => {
            writeln!(out, "/* collection `{}` of {elem_ty}: the layout of its segments (columns) */", collection.name)
                .unwrap();
            let mut previous = "((uint64_t)0)".to_string();
            for (f, (name, ty)) in fields.iter().enumerate() {
                writeln!(out, "#define GRAIL_C{c}_F{f} {previous} /* {name} */").unwrap();
                previous = format!("(GRAIL_C{c}_F{f} + GRAIL_SEG_ARRAY(sizeof({})))", c_type(*ty));
            }
            writeln!(out, "#define GRAIL_C{c}_LOCKS {previous}").unwrap();
            writeln!(out, "#define GRAIL_C{c}_CLAIMS (GRAIL_C{c}_LOCKS + GRAIL_SEG_ARRAY(4))").unwrap();
            writeln!(out, "#define GRAIL_C{c}_GONE (GRAIL_C{c}_CLAIMS + GRAIL_SEG_ARRAY(4))").unwrap();
            writeln!(out, "#define GRAIL_C{c}_BYTES (GRAIL_C{c}_GONE + GRAIL_SEG_ARRAY(4))").unwrap();
        }
        Layout::Rows => {
            // Each field at the next offset its alignment allows, then the three words; the
            // row's stride a multiple of 8, so that every row's fields stay aligned.
            writeln!(out, "/* collection `{}` of {elem_ty}: the layout of its rows */", collection.name).unwrap();
            let mut end = "((uint64_t)0)".to_string();
            for (f, (name, ty)) in fields.iter().enumerate() {
                let t = c_type(*ty);
                writeln!(out, "#define GRAIL_C{c}_R{f} GRAIL_ALIGN_UP({end}, GRAIL_ALIGNOF({t})) /* {name} */")
                    .unwrap();
                end = format!("(GRAIL_C{c}_R{f} + sizeof({t}))");
            }
            writeln!(out, "#define GRAIL_C{c}_RLOCKS GRAIL_ALIGN_UP({end}, 4)").unwrap();
            writeln!(out, "#define GRAIL_C{c}_STRIDE GRAIL_ALIGN_UP(GRAIL_C{c}_RLOCKS + 12, 8)").unwrap();
            for f in 0..fields.len() {
                writeln!(out, "#define GRAIL_C{c}_F{f} GRAIL_ROW(GRAIL_C{c}_STRIDE, GRAIL_C{c}_R{f})").unwrap();
            }
            writeln!(out, "#define GRAIL_C{c}_LOCKS GRAIL_ROW(GRAIL_C{c}_STRIDE, GRAIL_C{c}_RLOCKS)").unwrap();
            writeln!(out, "#define GRAIL_C{c}_CLAIMS GRAIL_ROW(GRAIL_C{c}_STRIDE, GRAIL_C{c}_RLOCKS + 4)").unwrap();
            writeln!(out, "#define GRAIL_C{c}_GONE GRAIL_ROW(GRAIL_C{c}_STRIDE, GRAIL_C{c}_RLOCKS + 8)").unwrap();
            writeln!(out, "#define GRAIL_C{c}_BYTES GRAIL_SEG_ARRAY(GRAIL_C{c}_STRIDE)").unwrap();
        }
    }
    // An add function: `name(params)` reserves a slot with `reserve`, writes the fields, then
    // runs `publish` (if any) before returning the handle.
    let mut add_function = |signature: String, reserve: String, publish: Option<String>| {
        writeln!(out, "{} uint32_t {signature} {{", target.add_qualifier()).unwrap();
        writeln!(out, "    grail_coll *coll = &ctx->colls[{c}];\n    uint64_t i;").unwrap();
        writeln!(out, "    if (!{reserve}) return grail_coll_sink(coll);").unwrap();
        for (f, (_, ty)) in fields.iter().enumerate() {
            writeln!(out, "    {} = v.f{f};", element_field(c, f, *ty)).unwrap();
        }
        if let Some(publish) = publish {
            writeln!(out, "    {publish}").unwrap();
        }
        writeln!(out, "    return (uint32_t)i;\n}}").unwrap();
    };
    add_function(
        format!("grail_c{c}_add(const grail_ctx *ctx, {elem_ty} v)"),
        format!("grail_coll_reserve(coll, GRAIL_C{c}_BYTES, GRAIL_C{c}_LOCKS, &i)"),
        None,
    );
    if target.per_thread_slots() {
        // A kernel thread's add through its own block of slots: the fields are written before the
        // slot's removed mark is cleared (release), so nobody reads the element half-written.
        add_function(
            format!("grail_c{c}_add_slot(const grail_ctx *ctx, grail_slots *slots, {elem_ty} v)"),
            format!("grail_coll_reserve_slot(coll, GRAIL_C{c}_BYTES, GRAIL_C{c}_GONE, &slots[{c}], &i)"),
            Some(format!(
                "__atomic_store_n((uint32_t *)grail_elem(coll, GRAIL_C{c}_GONE, 4, i), 0u, __ATOMIC_RELEASE);"
            )),
        );
    }
    target.collection_entry_points(out, module, c, collection);
}

/// The suffix of the runtime's per-type helpers (`grail_atomic_min_u32`, ...).
pub(crate) fn type_suffix(ty: Type) -> Result<&'static str, CodegenError> {
    Ok(match ty {
        Type::Scalar(Scalar::Bool) => "bool",
        Type::Scalar(Scalar::I32) => "i32",
        Type::Scalar(Scalar::I64) => "i64",
        Type::Scalar(Scalar::U32) | Type::Node | Type::Element(_) => "u32",
        Type::Scalar(Scalar::U64) | Type::Edge => "u64",
        Type::Scalar(Scalar::F32) => "f32",
        Type::Scalar(Scalar::F64) => "f64",
        other => return Err(CodegenError::Internal(format!("no runtime helpers for type {other}"))),
    })
}

fn is_float(ty: Type) -> bool {
    ty.scalar().is_some_and(Scalar::is_float)
}

fn bits(ty: Type) -> u32 {
    match ty {
        Type::Scalar(Scalar::I32 | Scalar::U32) | Type::Node | Type::Element(_) => 32,
        _ => 64,
    }
}

pub(crate) fn local_name(index: usize, name: &str) -> String {
    format!("l{index}_{name}")
}

/// The fields of `grail_ctx` that generated code reads, with the C type of the local each is
/// copied into before a function's loops. The graph arrays and the item list never change while
/// a phase runs and no other pointer writes them, so they are `restrict`.
const CTX_FIELDS: &[(&str, &str)] = &[
    ("num_nodes", "const uint64_t"),
    ("num_edges", "const uint64_t"),
    ("out_offsets", "const uint64_t *const restrict"),
    ("out_ends", "const uint64_t *const restrict"),
    ("out_targets", "const uint32_t *const restrict"),
    ("in_offsets", "const uint64_t *const restrict"),
    ("in_ends", "const uint64_t *const restrict"),
    ("in_sources", "const uint32_t *const restrict"),
    ("edge_sources", "const uint32_t *const restrict"),
    ("in_edge_ids", "const uint64_t *const restrict"),
    ("items", "const uint32_t *const restrict"),
    ("item_count", "const uint64_t"),
    ("retrying", "const uint32_t"),
    ("items_cap", "const uint64_t"),
    ("items_spill", "void *const *const"),
    ("colls", "grail_coll *const"),
    ("graph_nodes", "const uint64_t"),
    ("graph_edges", "const uint64_t"),
    ("global_ids", "const uint32_t *const restrict"),
    ("ghost_degrees", "const uint32_t *const restrict"),
];

/// The per-thread state a phase uses: pushes, retries, a partial reduction.
#[derive(Default, Clone, Copy)]
pub(crate) struct ThreadUse {
    pub pushes: bool,
    pub retries: bool,
    pub acc: bool,
}

/// Where a phase's item `i` comes from.
pub(crate) enum Items {
    /// The item is this expression of `i`.
    Each(String),
    /// All nodes: `i` itself, or `item` (the retried item `i`) when retrying.
    AllNodes { retrying: String, item: String },
}

/// A node's row of the out- or in-CSR, as C expressions over the context's arrays: where it
/// starts and where it ends. The end is its own array (`out_ends`), not the next row's start:
/// on a packed CSR the runtime passes the offsets shifted by one, on a graph with room per node
/// (`grail_graph::Csr::with_room`) a row may be followed by unused slots.
pub struct Row {
    starts: String,
    ends: String,
}

impl Row {
    fn new<T: Target>(e: &Emitter<'_, T>, reverse: bool) -> Row {
        let (starts, ends) = if reverse { ("in_offsets", "in_ends") } else { ("out_offsets", "out_ends") };
        Row { starts: e.ctx(starts), ends: e.ctx(ends) }
    }

    /// The position of node `n`'s first item.
    pub fn begin(&self, n: &str) -> String {
        format!("{}[{n}]", self.starts)
    }

    /// The position past node `n`'s last item.
    pub fn end(&self, n: &str) -> String {
        format!("{}[{n}]", self.ends)
    }

    /// Node `n`'s item count (64 bits).
    pub fn size(&self, n: &str) -> String {
        format!("({} - {})", self.end(n), self.begin(n))
    }
}

/// The walk over one function's or kernel's body.
pub(crate) struct Emitter<'m, T: Target> {
    pub target: &'m T,
    pub module: &'m Module,
    pub body: &'m Body,
    pub kernel: Option<&'m Kernel>,
    pub out: String,
    /// Which of [`CTX_FIELDS`] the emitted code reads (copied into locals by the prologue).
    ctx_used: Cell<u32>,
    /// Whether the emitted code calls a program function (which reads and writes properties
    /// through its own pointers, so the caller's column pointers cannot be `restrict`).
    calls: Cell<bool>,
    /// Which locals the emitted code names, by index.
    locals_used: RefCell<Vec<bool>>,
    /// The per-thread state the emitted code uses.
    pub uses: ThreadUse,
    /// The release statement of every lock held at this point of the emitted code (`None`
    /// for a claim, which is never released), innermost last.
    held: Vec<Option<String>>,
    /// Emitting an outlined region's host code (on the device, in a control kernel).
    pub region: bool,
    /// The kernel keeps some of its pushes in the thread (local worklists,
    /// [`grail_ir::opt::local`]): [`Emitter::item_chain`] runs them.
    pub local: bool,
    /// For each enclosing loop, innermost last, how many locks were held when it started:
    /// `break` and `continue` release the ones taken since.
    loops: Vec<usize>,
    /// By collection, whether kernel code reads its count (see [`Target::per_thread_slots`]).
    counted: Vec<bool>,
    /// Emitting a function's copy for calls from inside a lock's section
    /// ([`Target::LOCKED_FUNCTIONS`]).
    pub locked_body: bool,
    /// The locals of a kernel's loops over all nodes or its worklist (none elsewhere): nodes a
    /// part owns, whose out-degree its CSR holds (see [`grail_ir::analysis::loop_items`]).
    items: Vec<LocalId>,
    /// Emitting a staged item ([`Emitter::item_staged`]): the loop depth of the item's own
    /// statements and the label after the statement being emitted, to which the item's
    /// `continue` goes (clearing `live_`) instead of leaving the trip.
    skip: Option<(usize, String)>,
}

impl<'m, T: Target> Emitter<'m, T> {
    pub fn new(target: &'m T, module: &'m Module, body: &'m Body, kernel: Option<&'m Kernel>) -> Self {
        Emitter {
            target,
            module,
            body,
            kernel,
            out: String::new(),
            ctx_used: Cell::new(0),
            calls: Cell::new(false),
            locals_used: RefCell::new(vec![false; body.locals.len()]),
            uses: ThreadUse::default(),
            held: Vec::new(),
            loops: Vec::new(),
            region: false,
            local: false,
            locked_body: false,
            skip: None,
            items: if kernel.is_some() { grail_ir::analysis::loop_items(body) } else { Vec::new() },
            counted: if target.per_thread_slots() {
                grail_ir::analysis::collections_counted_in_kernels(module)
            } else {
                Vec::new()
            },
        }
    }

    /// Whether the code being emitted runs inside the section of an `atomic` or `exclusive` (whose
    /// acquire fence comes first), or is a function's copy for such calls.
    fn in_section(&self) -> bool {
        self.locked_body || self.held.iter().any(Option::is_some)
    }

    /// Whether this code adds to and removes from collection `c` through the thread's own slots.
    fn thread_slots_for(&self, c: grail_ir::CollectionId) -> bool {
        self.target.per_thread_slots() && self.kernel.is_some() && !self.region && !self.counted[c.index()]
    }

    /// The emitted code calls a function that reads or writes properties through its own
    /// pointers: the phase's column pointers cannot be `restrict`.
    pub(crate) fn note_call(&self) {
        self.calls.set(true);
    }

    /// The local holding `ctx->field` (one of [`CTX_FIELDS`]), marked as used.
    pub fn ctx(&self, field: &str) -> String {
        let index = CTX_FIELDS.iter().position(|(name, _)| *name == field).expect("a grail_ctx field");
        self.ctx_used.set(self.ctx_used.get() | 1 << index);
        format!("G_{field}")
    }

    /// Forgets which context fields and functions the code emitted so far used (for a second
    /// function with its own prologue).
    pub fn reset_uses(&mut self) {
        self.ctx_used.set(0);
        self.calls.set(false);
        self.locals_used.borrow_mut().fill(false);
    }

    pub fn line(&mut self, depth: usize, text: &str) {
        for _ in 0..depth {
            self.out.push_str("    ");
        }
        self.out.push_str(text);
        self.out.push('\n');
    }

    pub fn local(&self, id: LocalId) -> String {
        self.locals_used.borrow_mut()[id.index()] = true;
        local_name(id.index(), &self.body.locals[id.index()].name)
    }

    /// Takes back that local `id` is named: for code where every use binds to a shadow of it
    /// (a block-scoped copy of the same name), so the function need not declare it.
    pub fn unmark_local(&self, id: LocalId) {
        self.locals_used.borrow_mut()[id.index()] = false;
    }

    /// The body's locals the emitted code names, by index.
    pub fn used_locals(&self) -> Vec<usize> {
        self.locals_used.borrow().iter().enumerate().filter(|(_, used)| **used).map(|(i, _)| i).collect()
    }

    /// Whether the body's local `i` is to be declared.
    fn declared(&self, i: usize) -> bool {
        !T::ONLY_USED_LOCALS || self.locals_used.borrow()[i]
    }

    /// Declares the body's locals from `first` on, zero-initialised.
    fn locals(&mut self, first: usize) {
        for i in first..self.body.locals.len() {
            if !self.declared(i) {
                continue;
            }
            let local = &self.body.locals[i];
            let zero = if matches!(local.ty, Type::Struct(_) | Type::Array(_)) { "{0}" } else { "0" };
            self.line(1, &format!("{} {} = {zero};", c_type(local.ty), local_name(i, &local.name)));
        }
    }

    /// Everything a phase's item loop needs before it starts: typed views of the property
    /// columns, the parameters, and the kernel's arguments. Emitted after the code that uses
    /// them, which tells which context fields to copy into locals.
    pub fn prologue(&mut self) {
        self.views();
        let params = self.kernel.map_or(0, |k| k.params as usize);
        for i in 0..params {
            if !self.declared(i) {
                continue;
            }
            let local = &self.body.locals[i];
            let value = from_value(local.ty, &format!("args[{i}]"));
            self.line(1, &format!("{} {} = {value};", c_type(local.ty), local_name(i, &local.name)));
        }
        self.locals(params);
    }

    /// Typed views of the property columns, the program's parameters (`P<i>`, `Q<i>`), and the
    /// context fields the code uses (`G_<field>`). Two property columns never overlap, so in a
    /// kernel phase, where no other pointer reaches them, the columns are `restrict` (unless
    /// the phase calls a function, which reaches them through its own views).
    pub fn views(&mut self) {
        let restrict = self.kernel.is_some() && !self.calls.get() && !self.target.phases_share_a_launch(self.module);
        let qualifier = if restrict { "const restrict" } else { "const" };
        for (i, p) in self.module.properties.iter().enumerate() {
            let ty = c_type(p.ty);
            self.line(1, &format!("{ty} *{qualifier} P{i} = ({ty} *)ctx->props[{i}]; (void)P{i}; /* {} */", p.name));
        }
        for (i, (field, ty)) in CTX_FIELDS.iter().enumerate() {
            if self.ctx_used.get() & 1 << i != 0 {
                self.line(1, &format!("{ty} G_{field} = ctx->{field};"));
            }
        }
        for (i, p) in self.module.params.iter().enumerate() {
            let value = from_value(p.ty, &format!("ctx->params[{i}]"));
            self.line(1, &format!("const {} Q{i} = {value}; (void)Q{i}; /* {} */", c_type(p.ty), p.name));
        }
    }

    /// Runs `emit` with an empty output and returns what it wrote, restoring the output.
    pub fn capture(
        &mut self,
        emit: impl FnOnce(&mut Self) -> Result<(), CodegenError>,
    ) -> Result<String, CodegenError> {
        let saved = std::mem::take(&mut self.out);
        let result = emit(self);
        let captured = std::mem::replace(&mut self.out, saved);
        result.map(|()| captured)
    }

    /// The number of items of a kernel phase, a `uint64_t` expression.
    pub fn phase_size(&self, forall: &ForAll) -> Result<String, CodegenError> {
        Ok(match &forall.space {
            Space::Worklist => self.ctx("item_count"),
            Space::AllNodes => {
                let nodes = match self.module.growth.as_ref().and_then(|g| g.nodes.as_ref()) {
                    // The input's nodes and those added so far.
                    Some(grown) => {
                        format!(
                            "({} + grail_coll_len(&{}[{}]))",
                            self.ctx("num_nodes"),
                            self.ctx("colls"),
                            grown.added.0
                        )
                    }
                    None => self.ctx("num_nodes"),
                };
                format!("({} ? {} : {nodes})", self.ctx("retrying"), self.ctx("item_count"))
            }
            Space::AllEdges => match &self.module.growth {
                Some(growth) => {
                    format!("({} + grail_coll_len(&{}[{}]))", self.ctx("num_edges"), self.ctx("colls"), growth.added.0)
                }
                None => self.ctx("num_edges"),
            },
            Space::Collection(c) => format!("grail_coll_len(&{}[{}])", self.ctx("colls"), c.0),
            Space::Range(start, end) => {
                let (s, e) = (self.expr(start)?, self.expr(end)?);
                format!("({e} > {s} ? (uint64_t)({e} - {s}) : 0)")
            }
            Space::Adjacent(..) => return Err(CodegenError::Internal("a nested loop as a kernel phase".into())),
        })
    }

    /// Item `i` of a kernel phase.
    pub fn phase_items(&self, forall: &ForAll) -> Result<Items, CodegenError> {
        Ok(match &forall.space {
            Space::Worklist => Items::Each(self.target.worklist_item(self, "i")),
            Space::AllNodes => {
                Items::AllNodes { retrying: self.ctx("retrying"), item: self.target.worklist_item(self, "i") }
            }
            Space::AllEdges => Items::Each("i".to_string()),
            Space::Collection(_) => Items::Each("(uint32_t)i".to_string()),
            Space::Range(start, _) => {
                let ty = c_type(start.ty);
                Items::Each(format!("({ty})({} + ({ty})i)", self.expr(start)?))
            }
            Space::Adjacent(..) => return Err(CodegenError::Internal("a nested loop as a kernel phase".into())),
        })
    }

    /// The inside of a phase's item loop: the loop variable set to `item`, the filter (a
    /// `continue` to the next item), and the body, where `continue` also goes to the next item.
    pub fn item(&mut self, forall: &ForAll, item: &str, depth: usize) -> Result<(), CodegenError> {
        self.item_part(forall, Some(item), &forall.body, depth)
    }

    /// A phase's item and, with local worklists, the chain of items it keeps in the thread: each
    /// runs as [`Emitter::item`] does (its `continue` leaves only its own `do ... while (0)`),
    /// then the kept items in the order they were pushed, until none is left or the budget is
    /// spent, when the rest go to the worklist.
    pub fn item_chain(&mut self, forall: &ForAll, item: &str, depth: usize) -> Result<(), CodegenError> {
        if !self.local {
            return self.item(forall, item, depth);
        }
        let budget = grail_ir::opt::local::BUDGET;
        self.line(depth, "{");
        // Kept items lq_[lh_..ln_]; pushes append while ln_ is below the capacity.
        self.line(
            depth + 1,
            &format!(
                "uint32_t lq_[{}]; uint32_t lh_ = 0u, ln_ = 0u; uint32_t lit_ = {item}; uint32_t lb_ = {budget}u;",
                grail_ir::opt::local::CAPACITY
            ),
        );
        self.line(depth + 1, "for (;;) {");
        self.line(depth + 2, "do {");
        self.item(forall, "lit_", depth + 3)?;
        self.line(depth + 2, "} while (0);");
        self.line(depth + 2, "if (lh_ == ln_) break;");
        self.line(depth + 2, "if (--lb_ == 0u) {");
        self.line(depth + 3, "for (; lh_ < ln_; lh_++) {");
        let target = self.target;
        target.push(self, PushSite(0), "lq_[lh_]", depth + 4);
        self.line(depth + 3, "}");
        self.line(depth + 3, "break;");
        self.line(depth + 2, "}");
        self.line(depth + 2, "lit_ = lq_[lh_++];");
        // Room again once every kept item has been taken.
        self.line(depth + 2, "if (lh_ == ln_) lh_ = ln_ = 0u;");
        self.line(depth + 1, "}");
        self.line(depth, "}");
        Ok(())
    }

    /// A phase's item in stages, for a warp-uniform item loop: every lane of the warp passes
    /// every stage (the item's filter, then each of its top-level statements), running it only
    /// while its item is live (`live_`, which the item's `continue` clears), and the lanes meet
    /// after each stage (`__syncwarp`). Without the meetings, lanes that part at a branch of a
    /// long item body run the rest of it in groups, one group after another. `live` is the
    /// lane's condition for having an item at all; `prologue` lines run for live lanes first.
    pub fn item_staged(
        &mut self,
        forall: &ForAll,
        item: &str,
        live: &str,
        prologue: &[String],
        depth: usize,
    ) -> Result<(), CodegenError> {
        self.line(depth, &format!("bool live_ = {live};"));
        self.line(depth, "if (live_) {");
        let before = self.out.len();
        for line in prologue {
            self.line(depth + 1, line);
        }
        let outer = self.skip.take();
        let result = self.item_part(forall, Some(item), &[], depth + 1);
        // The filter's and the prologue's `continue`s end the item for this lane.
        let tail = self.out.split_off(before).replace("continue;", "{ live_ = false; goto grail_stage0_; }");
        let jumped = tail.contains("goto grail_stage0_;");
        self.out.push_str(&tail);
        self.line(depth, "}");
        if jumped {
            self.line(depth, "grail_stage0_:;");
        }
        result?;
        let stages = item_stages(&forall.body);
        self.loops.push(self.held.len());
        let mut result = Ok(());
        for (k, stage) in stages.into_iter().enumerate() {
            let label = format!("grail_stage{}_", k + 1);
            self.skip = Some((self.loops.len(), label.clone()));
            self.line(depth, "__syncwarp();");
            self.line(depth, "if (live_) {");
            let begin = self.out.len();
            result = stage.iter().try_for_each(|stmt| self.stmt(stmt, depth + 1));
            let jumped = self.out[begin..].contains(&format!("goto {label};"));
            self.line(depth, "}");
            if jumped {
                self.line(depth, &format!("{label}:;"));
            }
            if result.is_err() {
                break;
            }
        }
        self.loops.pop();
        self.skip = outer;
        result
    }

    /// Part of a phase's item: with `item`, the loop variable set to it and the filter first,
    /// then `stmts` (a slice of the item's body), where `continue` goes to the next item.
    pub fn item_part(
        &mut self,
        forall: &ForAll,
        item: Option<&str>,
        stmts: &[Stmt],
        depth: usize,
    ) -> Result<(), CodegenError> {
        self.loops.push(self.held.len());
        if let Some(item) = item {
            let var = self.local(forall.var);
            self.line(depth, &format!("{var} = {item};"));
            if forall.space == Space::Worklist
                && self.kernel.is_some_and(|k| k.worklist_item() == Type::Node)
                && let Some(check) = self.target.ghost_item_check(&var)
            {
                self.line(depth, &check);
            }
            if let Space::Collection(c) = forall.space {
                // Removed elements are not visited.
                let colls = self.ctx("colls");
                self.line(
                    depth,
                    &format!("if (!grail_coll_has(&{colls}[{}], GRAIL_C{}_GONE, {var})) continue;", c.0, c.0),
                );
            }
            if forall.space == Space::AllNodes
                && let Some(skip) = self.removed_node_skip(&var)
            {
                // Removed nodes are not visited.
                self.line(depth, &skip);
            }
            if forall.space == Space::AllEdges && self.module.growth.is_some() {
                // Removed edges are not visited.
                self.line(depth, &format!("if (!grail_edge_present(ctx, {var})) continue;"));
            }
            if let Some(filter) = &forall.filter {
                let filter = self.expr(filter)?;
                self.line(depth, &format!("if (!{filter}) continue;"));
            }
        }
        let result = stmts.iter().try_for_each(|stmt| self.stmt(stmt, depth));
        self.loops.pop();
        result
    }

    /// The C type of the kernel's reduction accumulator and the `grail_value` member that holds
    /// it: floats in double, so partial sums keep their precision.
    pub fn accumulator(&self) -> Result<(ReduceOp, Type, String, &'static str), CodegenError> {
        let Some((op, ty)) = self.kernel.and_then(|k| k.reduction) else {
            return Err(CodegenError::Internal("`reduce` outside a reduction kernel".into()));
        };
        Ok(match ty {
            Type::Scalar(Scalar::F32 | Scalar::F64) => (op, ty, "double".to_string(), "f"),
            Type::Scalar(Scalar::I32 | Scalar::I64) => (op, ty, c_type(ty), "i"),
            _ => (op, ty, c_type(ty), "u"),
        })
    }

    pub fn block(&mut self, block: &Block, depth: usize) -> Result<(), CodegenError> {
        block.iter().try_for_each(|stmt| self.stmt(stmt, depth))
    }

    fn stmt(&mut self, stmt: &Stmt, depth: usize) -> Result<(), CodegenError> {
        let target = self.target;
        match stmt {
            Stmt::Assign { place, value } => {
                let line = format!("{} = {};", self.place(place)?, self.expr(value)?);
                if self.region && !matches!(analysis::root_place(place), Place::Local(_)) {
                    target.region_store(self, &line, depth)?;
                } else {
                    self.line(depth, &line);
                }
            }
            Stmt::If { cond, then, otherwise, .. } => {
                let cond = self.expr(cond)?;
                self.line(depth, &format!("if ({cond}) {{"));
                self.block(then, depth + 1)?;
                if !otherwise.is_empty() {
                    self.line(depth, "} else {");
                    self.block(otherwise, depth + 1)?;
                }
                self.line(depth, "}");
            }
            Stmt::While { cond, body, .. } => {
                let cond = self.expr(cond)?;
                self.line(depth, &format!("while ({cond}) {{"));
                self.looped(body, depth + 1)?;
                self.line(depth, "}");
            }
            Stmt::For { var, start, end, body } => {
                let (var, start, end) = (self.local(*var), self.expr(start)?, self.expr(end)?);
                self.line(depth, &format!("for ({var} = {start}; {var} < {end}; {var}++) {{"));
                self.looped(body, depth + 1)?;
                self.line(depth, "}");
            }
            Stmt::ForEach { schedule, .. } if *schedule != Schedule::SERIAL => {
                target.scheduled_fold(self, stmt, depth)?
            }
            Stmt::ForEach { var, adjacency, node, body, .. } => {
                target.adjacency_loop(self, *var, *adjacency, node, body, depth)?
            }
            Stmt::ForAll(forall) => target.nested_forall(self, forall, depth)?,
            Stmt::Push { site, value } if self.local => {
                // Kept in the thread while there is room (see `item_chain`).
                let value = self.expr(value)?;
                self.uses.pushes = true;
                self.line(depth, &format!("if (ln_ < GRAIL_LOCAL_CAP) {{ lq_[ln_++] = {value}; }} else {{"));
                target.push(self, *site, &value, depth + 1);
                self.line(depth, "}");
            }
            Stmt::Push { site, value } => {
                let value = self.expr(value)?;
                self.uses.pushes = true;
                target.push(self, *site, &value, depth);
            }
            Stmt::Retry { value } => {
                let value = self.expr(value)?;
                self.uses.retries = true;
                target.retry(self, &value, depth);
            }
            Stmt::Reduce { value } => {
                self.uses.acc = true;
                target.reduce(self, value, depth)?;
            }
            Stmt::Lock { kind, elements, body, otherwise } => self.lock(*kind, elements, body, otherwise, depth)?,
            Stmt::Break | Stmt::Continue => {
                // Leaving a lock's body: release what was taken inside the loop being left.
                let taken = self.loops.last().copied().unwrap_or(0);
                self.release(taken, depth);
                match &self.skip {
                    Some((level, label)) if matches!(stmt, Stmt::Continue) && *level == self.loops.len() => {
                        let line = format!("{{ live_ = false; goto {label}; }}");
                        self.line(depth, &line);
                    }
                    _ => self.line(depth, if matches!(stmt, Stmt::Break) { "break;" } else { "continue;" }),
                }
            }
            Stmt::Return(value) => {
                let value = value.as_ref().map(|v| self.expr(v)).transpose()?;
                self.release(0, depth);
                match value {
                    None => self.line(depth, "return;"),
                    Some(value) => self.line(depth, &format!("return {value};")),
                }
            }
            Stmt::Eval(expr) => {
                let expr = self.expr(expr)?;
                self.line(depth, &format!("(void){expr};"));
            }
            Stmt::Invoke { .. } | Stmt::Iterate(_) | Stmt::Pipe(_) | Stmt::Print(_) => {
                target.orchestration(self, stmt, depth)?;
            }
        }
        Ok(())
    }

    /// A loop's body: `break` and `continue` in it leave only the locks taken inside it.
    pub fn looped(&mut self, body: &Block, depth: usize) -> Result<(), CodegenError> {
        self.loops.push(self.held.len());
        let result = self.block(body, depth);
        self.loops.pop();
        result
    }

    /// Releases the locks held beyond the first `keep`, innermost first.
    fn release(&mut self, keep: usize, depth: usize) {
        let releases: Vec<String> = self.held[keep..].iter().rev().flatten().cloned().collect();
        for release in releases {
            self.line(depth, &release);
        }
    }

    /// The arrays of a node's first and past-the-last positions, and the item at position `k`
    /// of a node's adjacency. A row's end is its own array, not the next row's start: a graph
    /// with room per node (`grail_graph::Csr::with_room`) leaves unused slots after a row.
    pub fn adjacency(&self, adjacency: Adjacency) -> (Row, String) {
        let row = match adjacency {
            Adjacency::OutEdges | Adjacency::OutNeighbors => Row::new(self, false),
            Adjacency::InNeighbors | Adjacency::InEdges => Row::new(self, true),
        };
        (row, self.adjacency_item(adjacency))
    }

    /// The item at position `k` of a node's adjacency (without naming the row's arrays, for
    /// code that has the position already).
    pub fn adjacency_item(&self, adjacency: Adjacency) -> String {
        match adjacency {
            Adjacency::OutEdges => "k".to_string(),
            Adjacency::OutNeighbors => format!("{}[k]", self.ctx("out_targets")),
            Adjacency::InNeighbors => format!("{}[k]", self.ctx("in_sources")),
            Adjacency::InEdges => format!("{}[k]", self.ctx("in_edge_ids")),
        }
    }

    /// A loop over a node's edges or neighbours in one thread.
    pub fn serial_adjacency_loop(
        &mut self,
        var: LocalId,
        adjacency: Adjacency,
        node: &Expr,
        body: &Block,
        depth: usize,
    ) -> Result<(), CodegenError> {
        let (var, node) = (self.local(var), self.expr(node)?);
        let (row, item) = self.adjacency(adjacency);
        self.line(depth, "{");
        self.line(depth + 1, &format!("const uint32_t n_ = {node};"));
        let (begin, end) = self.input_edge_range(&row);
        self.line(depth + 1, &format!("for (uint64_t k = {begin}, k_end = {end}; k < k_end; k++) {{"));
        if let Some(skip) = self.removed_input_edge_skip() {
            self.line(depth + 2, skip);
        }
        self.line(depth + 2, &format!("{var} = {item};"));
        self.looped(body, depth + 2)?;
        self.line(depth + 1, "}");
        self.added_adjacency_loop(&var, adjacency, body, depth + 1)?;
        self.line(depth, "}");
        Ok(())
    }

    /// `a` combined with `b` by the reduction operator, in the accumulator's type `t`.
    pub fn combine(op: ReduceOp, t: &str, a: &str, b: &str) -> String {
        match op {
            ReduceOp::Sum => format!("({t})({a} + ({t}){b})"),
            ReduceOp::Product => format!("({t})({a} * ({t}){b})"),
            ReduceOp::Min => format!("(({t}){b} < {a} ? ({t}){b} : {a})"),
            ReduceOp::Max => format!("(({t}){b} > {a} ? ({t}){b} : {a})"),
            ReduceOp::Any => format!("({a} || {b})"),
            ReduceOp::All => format!("({a} && {b})"),
        }
    }

    /// Folds `value` into the local `acc_`, the thread's partial reduction.
    pub fn accumulate(&mut self, value: &Expr, depth: usize) -> Result<(), CodegenError> {
        let (op, ty, t, _) = self.accumulator()?;
        let value = self.expr(value)?;
        let combined = Self::combine(op, &t, "acc_", "r_");
        // The value is evaluated once, into r_: it may have effects (an atomic).
        let value_ty =
            if matches!(ty, Type::Scalar(Scalar::F32 | Scalar::F64)) { "double".to_string() } else { c_type(ty) };
        self.line(depth, "{");
        self.line(depth + 1, &format!("const {value_ty} r_ = {value};"));
        self.line(depth + 1, &format!("acc_ = {combined};"));
        self.line(depth, "}");
        Ok(())
    }

    fn lock(
        &mut self,
        kind: LockKind,
        elements: &[Expr],
        body: &Block,
        otherwise: &Block,
        depth: usize,
    ) -> Result<(), CodegenError> {
        // An array's first items (`exclusive(q.first(n))`): the set is known only now.
        let prefix = match elements {
            [Expr { kind: ExprKind::ArrayPrefix { array, count }, ty: Type::Array(id) }] => Some((array, count, *id)),
            _ => None,
        };
        let (coll, lock_offset, claim_offset) = self.lock_words(elements);
        // Named by nesting, so a release of an outer lock inside an inner one's body (before a
        // `break`) names the outer lock.
        let nest = self.held.len();
        if let Some((array, count, id)) = prefix {
            let (array, count) = (self.expr(array)?, self.expr(count)?);
            self.line(depth, "{");
            self.line(depth + 1, &format!("grail_a{} ex{nest}_ = {array};", id.0));
            let len = format!("(sizeof(ex{nest}_.v) / sizeof(ex{nest}_.v[0]))");
            self.line(
                depth + 1,
                &format!("const int exn{nest}_ = (uint64_t)({count}) <= {len} ? (int)({count}) : (GRAIL_TRAP(), 0);"),
            );
            let acquire = format!("grail_lock_all(ctx, {coll}, {lock_offset}, ex{nest}_.v, exn{nest}_)");
            let release = format!("grail_unlock_all(ctx, {coll}, {lock_offset}, ex{nest}_.v, exn{nest}_);");
            return self.locked(depth, acquire, Some(release), body, otherwise);
        }
        let elements = elements.iter().map(|e| self.expr(e)).collect::<Result<Vec<_>, _>>()?;
        let count = elements.len();
        self.line(depth, "{");
        let (acquire, release) = match kind {
            LockKind::Atomic => {
                let word = format!("grail_lock_word(ctx, {coll}, {lock_offset}, {})", elements[0]);
                self.line(depth + 1, &format!("uint32_t *const lk{nest}_ = {word};"));
                (format!("grail_trylock(lk{nest}_)"), Some(format!("grail_unlock(lk{nest}_);")))
            }
            LockKind::Exclusive => {
                self.line(depth + 1, &format!("uint32_t ex{nest}_[{count}] = {{{}}};", elements.join(", ")));
                (
                    format!("grail_lock_all(ctx, {coll}, {lock_offset}, ex{nest}_, {count})"),
                    Some(format!("grail_unlock_all(ctx, {coll}, {lock_offset}, ex{nest}_, {count});")),
                )
            }
            LockKind::Single => (format!("grail_claim(ctx, {coll}, {claim_offset}, {})", elements[0]), None),
        };
        self.locked(depth, acquire, release, body, otherwise)
    }

    /// The words a lock statement over `elements` uses: the collection (-1 for nodes) and the
    /// offsets of its lock and claim words in the collection's segments.
    pub(crate) fn lock_words(&self, elements: &[Expr]) -> (i64, String, String) {
        match grail_ir::analysis::locked_item(self.module, elements) {
            Some(Type::Element(c)) => (c.0 as i64, format!("GRAIL_C{}_LOCKS", c.0), format!("GRAIL_C{}_CLAIMS", c.0)),
            _ => (-1, "0".to_string(), "0".to_string()),
        }
    }

    /// The section of an `exclusive` that marks decided (the CUDA target's 3-phase lowering,
    /// [`grail_ir::opt::marks`]): `body` where the C condition `won` holds (then `release`, also
    /// on `continue` or `break` out of it), else `otherwise`.
    pub(crate) fn marked_section(
        &mut self,
        won: &str,
        release: String,
        body: &Block,
        otherwise: &Block,
        depth: usize,
    ) -> Result<(), CodegenError> {
        self.line(depth, "{");
        self.locked(depth, won.to_string(), Some(release), body, otherwise)
    }

    /// The rest of a lock statement, after its opening `{` and what `acquire` needs: the body
    /// when `acquire` succeeds (then `release`), else `otherwise`, and the closing `}`.
    fn locked(
        &mut self,
        depth: usize,
        acquire: String,
        release: Option<String>,
        body: &Block,
        otherwise: &Block,
    ) -> Result<(), CodegenError> {
        self.line(depth + 1, &format!("if ({acquire}) {{"));
        self.held.push(release.clone());
        let result = self.block(body, depth + 2);
        self.held.pop();
        result?;
        if let Some(release) = release {
            self.line(depth + 2, &release);
        }
        if !otherwise.is_empty() {
            self.line(depth + 1, "} else {");
            self.block(otherwise, depth + 2)?;
        }
        self.line(depth + 1, "}");
        self.line(depth, "}");
        Ok(())
    }

    /// The input's nodes and, where kernels add nodes, the added-nodes collection's `count`
    /// (`grail_coll_live`: those present; `grail_coll_len`: every slot).
    fn node_count(&self, count: &str) -> String {
        match self.module.growth.as_ref().and_then(|g| g.nodes.as_ref()) {
            Some(nodes) => {
                format!(
                    "((uint32_t)({} + {count}(&{}[{}])))",
                    self.ctx("graph_nodes"),
                    self.ctx("colls"),
                    nodes.added.0
                )
            }
            None => format!("((uint32_t){})", self.ctx("graph_nodes")),
        }
    }

    /// The input's edges and, where kernels change edges, the added-edges collection's `count`.
    fn edge_count(&self, count: &str) -> String {
        match &self.module.growth {
            Some(growth) => {
                format!("({} + {count}(&{}[{}]))", self.ctx("graph_edges"), self.ctx("colls"), growth.added.0)
            }
            None => self.ctx("graph_edges"),
        }
    }

    fn place(&self, place: &Place) -> Result<String, CodegenError> {
        Ok(match place {
            Place::Local(id) => self.local(*id),
            Place::Property { property, element } => {
                let element = self.expr(element)?;
                match self.growth_place(*property, &element) {
                    Some(place) => place,
                    None => format!("P{}[{element}]", property.0),
                }
            }
            Place::ElementField { collection, element, field } => {
                let decl = &self.module.collections[collection.index()];
                let t = c_type(self.module.structs[decl.element.index()].fields[*field as usize].1);
                let (colls, element) = (self.ctx("colls"), self.expr(element)?);
                format!(
                    "(*({t} *)grail_elem(&{colls}[{}], GRAIL_C{}_F{field}, sizeof({t}), {element}))",
                    collection.0, collection.0
                )
            }
            Place::Field { base, field } => format!("{}.f{field}", self.place(base)?),
            Place::Index { base, index } => format!("GRAIL_AT({}.v, {})", self.place(base)?, self.expr(index)?),
        })
    }

    pub fn expr(&self, expr: &Expr) -> Result<String, CodegenError> {
        let ty = expr.ty;
        Ok(match &expr.kind {
            ExprKind::Const(c) => constant(*c, ty),
            // A property that added edges or nodes hold too is read where it is (never through a
            // read-only cache: added elements' values are written while kernels run).
            ExprKind::Load(place @ Place::Property { property, .. }) if self.grown_property(*property) => {
                self.place(place)?
            }
            ExprKind::Load(place @ Place::Property { property, .. }) => {
                self.target.load_property(self, *property, self.place(place)?)
            }
            ExprKind::Load(place @ Place::ElementField { .. }) => {
                self.target.load_element_field(self.place(place)?, &c_type(ty), self.in_section())
            }
            ExprKind::Load(place) => self.place(place)?,
            ExprKind::Zeroed => self.target.struct_literal(&c_type(ty), &["0".to_string()]),
            ExprKind::ArrayPrefix { .. } => {
                return Err(CodegenError::Internal("an array's first items outside `exclusive`".into()));
            }
            ExprKind::Param(id) => format!("Q{}", id.0),
            // The nodes present (live: added, less removed), or every id there has been.
            ExprKind::NumNodes => self.node_count("grail_coll_live"),
            ExprKind::NodeIds => self.node_count("grail_coll_len"),
            // The input's edges, and those added, less those removed (counted with the added
            // edges' removals); or every id there has been.
            ExprKind::NumEdges => self.edge_count("grail_coll_live"),
            ExprKind::EdgeIds => self.edge_count("grail_coll_len"),
            ExprKind::EdgeSource(e) if self.module.growth.is_some() => {
                format!("grail_edge_src(ctx, {})", self.expr(e)?)
            }
            ExprKind::EdgeTarget(e) if self.module.growth.is_some() => {
                format!("grail_edge_dst(ctx, {})", self.expr(e)?)
            }
            ExprKind::EdgeSource(e) => format!("{}[{}]", self.ctx("edge_sources"), self.expr(e)?),
            ExprKind::EdgeTarget(e) => format!("{}[{}]", self.ctx("out_targets"), self.expr(e)?),
            ExprKind::Degree { node, reverse } => {
                let row = Row::new(self, *reverse);
                let n = self.expr(node)?;
                let size = row.size(&n);
                let degree = if self.module.growth.as_ref().is_some_and(|g| g.nodes.is_some()) && !*reverse {
                    // An added node has no input edges.
                    let count = self.ctx("num_nodes");
                    format!("((uint32_t)((uint64_t){n} < {count} ? {size} : 0))")
                } else if !self.region && grail_ir::analysis::degree_of_non_item(expr, &self.items) {
                    // On a part the node may be a ghost (local ids from num_nodes on), whose row is
                    // empty: its out-degree is among the part's ghost degrees. On one device every
                    // node is below num_nodes.
                    let count = self.ctx("num_nodes");
                    let ghosts = self.ctx("ghost_degrees");
                    format!("((uint64_t){n} < {count} ? (uint32_t)({size}) : {ghosts}[(uint64_t){n} - {count}])")
                } else {
                    format!("((uint32_t)({size}))")
                };
                if self.module.growth.is_some() && !*reverse {
                    // Wrapping: removed input edges make the change negative.
                    format!("((uint32_t)({degree} + grail_degree_change(ctx, {n})))")
                } else {
                    degree
                }
            }
            ExprKind::AddEdge { src, dst, weight } => self.edge_add(src, dst, weight.as_deref())?,
            ExprKind::RemoveEdge(edge) => self.edge_remove(edge)?,
            ExprKind::AddNode => self.node_add(),
            ExprKind::RemoveNode(node) => self.node_remove(node)?,
            ExprKind::HasNode(node) => self.node_has(node)?,
            ExprKind::HasEdge(edge) => self.edge_has(edge)?,
            ExprKind::Neighbor { node, index, reverse } => {
                let column = self.ctx(if *reverse { "in_sources" } else { "out_targets" });
                let starts = self.ctx(if *reverse { "in_offsets" } else { "out_offsets" });
                format!("{column}[{starts}[{}] + {}]", self.expr(node)?, self.expr(index)?)
            }
            ExprKind::Unary(UnaryOp::Neg, e) => format!("(({})-{})", c_type(ty), self.expr(e)?),
            ExprKind::Unary(UnaryOp::Not, e) if ty == Type::BOOL => format!("(!{})", self.expr(e)?),
            ExprKind::Unary(UnaryOp::Not, e) => format!("(({})~{})", c_type(ty), self.expr(e)?),
            ExprKind::Binary(op, l, r) => {
                let (l, r) = (self.expr(l)?, self.expr(r)?);
                match op {
                    BinaryOp::Shl | BinaryOp::Shr => {
                        let mask = bits(ty) - 1;
                        format!("(({})({l} {} ({r} & {mask})))", c_type(ty), op.symbol())
                    }
                    _ if op.is_comparison() || matches!(op, BinaryOp::And | BinaryOp::Or) => {
                        format!("({l} {} {r})", op.symbol())
                    }
                    BinaryOp::Div | BinaryOp::Rem if matches!(ty, Type::Scalar(s) if s.is_integer()) => {
                        self.target.divide(*op, ty, &l, &r)?
                    }
                    _ => format!("(({})({l} {} {r}))", c_type(ty), op.symbol()),
                }
            }
            // A node's number is its global id: on a part of a partitioned graph, local ids
            // map through `global_ids` (only one branch of the conditional is evaluated).
            ExprKind::Cast(e) if e.ty == Type::Node && ty != Type::Node => {
                let (node, ids) = (self.expr(e)?, self.ctx("global_ids"));
                format!("(({})({ids} ? {ids}[{node}] : {node}))", c_type(ty))
            }
            // Float to integer: Rust's saturating `as` (see `value_helpers`), not C's cast, which
            // is undefined out of range.
            ExprKind::Cast(e) if is_float(e.ty) && !is_float(ty) && ty != Type::BOOL => {
                format!("grail_cast_{}_{}({})", type_suffix(e.ty)?, type_suffix(ty)?, self.expr(e)?)
            }
            ExprKind::Cast(e) => format!("(({}){})", c_type(ty), self.expr(e)?),
            ExprKind::Call(id, args) => {
                self.note_call();
                let mut parts = vec!["ctx".to_string()];
                for arg in args {
                    parts.push(self.expr(arg)?);
                }
                let suffix = if T::LOCKED_FUNCTIONS && self.in_section() { "_locked" } else { "" };
                format!("grail_f{}{suffix}({})", id.0, parts.join(", "))
            }
            ExprKind::Builtin(builtin @ (Builtin::Orient2d | Builtin::InCircle), args) => {
                let args = args.iter().map(|a| self.expr(a)).collect::<Result<Vec<_>, _>>()?;
                let name = if *builtin == Builtin::Orient2d { "grail_orient2d" } else { "grail_incircle" };
                format!("{name}({})", args.join(", "))
            }
            ExprKind::Builtin(builtin, args) => {
                let args = args.iter().map(|a| self.expr(a)).collect::<Result<Vec<_>, _>>()?;
                let suffix = type_suffix(ty)?;
                match builtin {
                    Builtin::Min => format!("grail_min_{suffix}({}, {})", args[0], args[1]),
                    Builtin::Max => format!("grail_max_{suffix}({}, {})", args[0], args[1]),
                    Builtin::Abs => format!("grail_abs_{suffix}({})", args[0]),
                    Builtin::Sqrt if ty == Type::Scalar(Scalar::F32) => format!("sqrtf({})", args[0]),
                    Builtin::Sqrt => format!("sqrt({})", args[0]),
                    Builtin::Ln if ty == Type::Scalar(Scalar::F32) => format!("logf({})", args[0]),
                    Builtin::Ln => format!("log({})", args[0]),
                    Builtin::Exp if ty == Type::Scalar(Scalar::F32) => format!("expf({})", args[0]),
                    Builtin::Exp => format!("exp({})", args[0]),
                    Builtin::Orient2d | Builtin::InCircle => unreachable!("matched above"),
                }
            }
            ExprKind::Atomic { op, place, operands } => {
                let target = self.place_type(place)?;
                let mut parts = vec![format!("&{}", self.place(place)?)];
                for operand in operands {
                    parts.push(self.expr(operand)?);
                }
                format!("grail_atomic_{}_{}({})", op.name(), type_suffix(target)?, parts.join(", "))
            }
            ExprKind::SetFind { set, node } => format!("grail_find(ctx, {}, {})", set.0, self.expr(node)?),
            ExprKind::SetUnion { set, a, b } => {
                format!("grail_union(ctx, {}, {}, {})", set.0, self.expr(a)?, self.expr(b)?)
            }
            ExprKind::Struct(_, fields) => {
                let fields = fields.iter().map(|f| self.expr(f)).collect::<Result<Vec<_>, _>>()?;
                self.target.struct_literal(&c_type(ty), &fields)
            }
            ExprKind::Field(base, field) => format!("{}.f{field}", self.expr(base)?),
            ExprKind::CollectionAdd { collection, value } if self.thread_slots_for(*collection) => {
                format!("grail_c{}_add_slot(ctx, t->slots, {})", collection.0, self.expr(value)?)
            }
            ExprKind::CollectionAdd { collection, value } => {
                format!("grail_c{}_add(ctx, {})", collection.0, self.expr(value)?)
            }
            ExprKind::CollectionLen(c) => format!("((uint32_t)grail_coll_live(&{}[{}]))", self.ctx("colls"), c.0),
            ExprKind::CollectionCompact(_) => {
                return Err(CodegenError::Internal(
                    "compacting a collection in generated code (host code only)".into(),
                ));
            }
            ExprKind::CollectionRemove { collection: c, element } if self.thread_slots_for(*c) => {
                format!(
                    "grail_coll_remove_slot(&{}[{}], GRAIL_C{}_GONE, {}, &t->slots[{}])",
                    self.ctx("colls"),
                    c.0,
                    c.0,
                    self.expr(element)?,
                    c.0
                )
            }
            ExprKind::CollectionRemove { collection: c, element } => {
                format!(
                    "grail_coll_remove(&{}[{}], GRAIL_C{}_GONE, {})",
                    self.ctx("colls"),
                    c.0,
                    c.0,
                    self.expr(element)?
                )
            }
            ExprKind::CollectionHas { collection: c, element } => {
                format!("grail_coll_has(&{}[{}], GRAIL_C{}_GONE, {})", self.ctx("colls"), c.0, c.0, self.expr(element)?)
            }
        })
    }

    fn place_type(&self, place: &Place) -> Result<Type, CodegenError> {
        Ok(match place {
            Place::Local(id) => self.body.locals[id.index()].ty,
            Place::Property { property, .. } => self.module.properties[property.index()].ty,
            Place::ElementField { collection, field, .. } => {
                let decl = &self.module.collections[collection.index()];
                self.module.structs[decl.element.index()].fields[*field as usize].1
            }
            Place::Field { base, field } => {
                let Type::Struct(id) = self.place_type(base)? else {
                    return Err(CodegenError::Internal("a field of a non-struct place".into()));
                };
                self.module.structs[id.index()].fields[*field as usize].1
            }
            Place::Index { base, .. } => {
                let Type::Array(id) = self.place_type(base)? else {
                    return Err(CodegenError::Internal("an item of a non-array place".into()));
                };
                self.module.arrays[id.index()].element
            }
        })
    }
}

pub(crate) fn constant(c: Const, ty: Type) -> String {
    let t = c_type(ty);
    match c {
        Const::Bool(b) => b.to_string(),
        Const::Int(bits) => format!("(({t})UINT64_C({bits}))"),
        Const::Float(x) if x.is_nan() => format!("(({t})NAN)"),
        Const::Float(x) if x.is_infinite() => format!("(({t}){}INFINITY)", if x < 0.0 { "-" } else { "" }),
        Const::Float(x) => format!("(({t}){x:?})"),
        Const::Inf => match ty {
            Type::Scalar(Scalar::F32 | Scalar::F64) => format!("(({t})INFINITY)"),
            Type::Scalar(Scalar::I32) => "INT32_MAX".into(),
            Type::Scalar(Scalar::I64) => "INT64_MAX".into(),
            Type::Scalar(Scalar::U32) | Type::Node => "UINT32_MAX".into(),
            _ => "UINT64_MAX".into(),
        },
    }
}

/// An item's stages (`Emitter::item_staged`): each top-level statement that loops, locks or
/// ends the item alone, and each run of the others between them (whose branches, if any, meet
/// again where they end).
fn item_stages(body: &[Stmt]) -> Vec<&[Stmt]> {
    let parts = |stmt: &Stmt| {
        block_has(std::slice::from_ref(stmt), |s| {
            matches!(
                s,
                Stmt::While { .. }
                    | Stmt::For { .. }
                    | Stmt::ForEach { .. }
                    | Stmt::ForAll(_)
                    | Stmt::Lock { .. }
                    | Stmt::Continue
                    | Stmt::Break
                    | Stmt::Return(_)
            )
        })
    };
    let mut stages = Vec::new();
    let mut start = 0;
    for (k, stmt) in body.iter().enumerate() {
        if parts(stmt) {
            if start < k {
                stages.push(&body[start..k]);
            }
            stages.push(&body[k..k + 1]);
            start = k + 1;
        }
    }
    if start < body.len() {
        stages.push(&body[start..]);
    }
    stages
}
