//! What every backend shares on the host: the interpreter of `main` ([`interp`], over a
//! backend's [`interp::Machine`]), the host's copy of a run's memory ([`memory`]: property
//! columns, union-find parents, lock and claim words, the graph arrays a program needs beyond
//! the out-CSR), [`Value`]s and the arithmetic of the generated code ([`ops`]).

pub(crate) mod interp;
pub(crate) mod memory;
pub(crate) mod ops;
pub(crate) mod table;
pub(crate) mod value;

pub use table::Table;
pub use value::Value;

use grail_graph::Graph;
use grail_ir::{Module, ReduceOp, Scalar, Type};

use crate::cpu::ffi::GrailValue;
use crate::error::{Result, RuntimeError};

/// The highest segment a collection may hold for a run's segments to be kept for the program's
/// next run, on either target (segment `s` holds 1024 << s elements: up to index 10, about two
/// million elements in all). A larger collection's memory goes back to the allocator (on a GPU
/// the device heap, which other programs share).
pub(crate) const KEEP_SEGMENT_MAX: usize = 10;

/// Appends `values` to `out` as `grail_value`s, the form generated code takes parameters and
/// kernel arguments in; `what` names them in the error for a struct, which has no such form.
pub(crate) fn grail_values(values: &[Value], what: &str, out: &mut Vec<GrailValue>) -> Result<()> {
    for value in values {
        out.push(value.to_grail().ok_or_else(|| RuntimeError::Unsupported(format!("struct-typed {what}")))?);
    }
    Ok(())
}

/// Every param's value: given, or its default; checked against its type and the graph. The
/// graph's layout is checked first: a program that names edges by number cannot run on a graph
/// with room after its rows.
pub(crate) fn bind_params(module: &Module, graph: &Graph, given: &[Option<Value>]) -> Result<Vec<Value>> {
    if !graph.out().is_packed()
        && let Some(why) = grail_ir::analysis::room_obstacle(module)
    {
        return Err(RuntimeError::program(format!(
            "`{}` cannot run on a graph with room after its rows (a dynamic algorithm's, whose edge ids are not \
             0 to the edge count): {why}",
            module.name
        )));
    }
    let declared = &module.params;
    if given.len() != declared.len() {
        return Err(RuntimeError::ParamCount { expected: declared.len(), given: given.len() });
    }
    let mut values = Vec::with_capacity(declared.len());
    for (param, value) in declared.iter().zip(given) {
        let bad = |message: String| RuntimeError::BadParam { name: param.name.clone(), message };
        let value = match (value, param.default) {
            (Some(value), _) => value.clone(),
            (None, Some(default)) => Value::from_const(default, param.ty)
                .ok_or_else(|| bad(format!("its default {default:?} is not a value of type {}", param.ty)))?,
            (None, None) => return Err(RuntimeError::MissingParam { name: param.name.clone() }),
        };
        if !value.fits(param.ty) {
            return Err(bad(format!("expected a value of type {}, given {value:?}", param.ty)));
        }
        if let Value::Node(u) = value
            && u >= graph.num_nodes()
        {
            return Err(bad(format!("node {u} is not in the graph, which has {} nodes", graph.num_nodes())));
        }
        values.push(value);
    }
    Ok(values)
}

/// A value's scalar leaves in declaration order, as `grail_value`s (the C target's flattened
/// form of a struct).
pub(crate) fn flatten(value: &Value, out: &mut Vec<GrailValue>) -> Result<()> {
    match value {
        Value::Struct(fields) => fields.iter().try_for_each(|field| flatten(field, out)),
        scalar => {
            out.push(scalar.to_grail().ok_or_else(|| RuntimeError::program("a value that is not a scalar"))?);
            Ok(())
        }
    }
}

/// The types of a type's scalar leaves, in the order [`flatten`] visits them.
pub(crate) fn leaf_types(module: &Module, ty: Type, out: &mut Vec<Type>) {
    match ty {
        Type::Struct(id) => module.structs[id.index()].fields.iter().for_each(|(_, t)| leaf_types(module, *t, out)),
        other => out.push(other),
    }
}

/// Rebuilds a value of type `ty` from its leaves.
pub(crate) fn unflatten(module: &Module, ty: Type, leaves: &mut dyn Iterator<Item = Option<Value>>) -> Result<Value> {
    match ty {
        Type::Struct(id) => Ok(Value::Struct(
            module.structs[id.index()]
                .fields
                .iter()
                .map(|(_, t)| unflatten(module, *t, leaves))
                .collect::<Result<_>>()?,
        )),
        _ => leaves.next().flatten().ok_or_else(|| RuntimeError::program(format!("a collection field of type {ty}"))),
    }
}

/// The type a thread's partial reduction is kept in: floats in double, as the C target does.
pub(crate) fn accumulator_type(ty: Type) -> Type {
    match ty {
        Type::Scalar(Scalar::F32) => Type::Scalar(Scalar::F64),
        other => other,
    }
}

/// The operator's identity for the type, in the `grail_value` member the C target uses.
pub(crate) fn identity(op: ReduceOp, ty: Type) -> GrailValue {
    let ty = accumulator_type(ty);
    let value = match op {
        ReduceOp::Sum => Value::zero_scalar(ty),
        ReduceOp::Product => Value::from_const(grail_ir::Const::Int(1), ty),
        ReduceOp::Min => Value::inf(ty),
        ReduceOp::Max => Value::lowest(ty),
        ReduceOp::Any => Some(Value::Bool(false)),
        ReduceOp::All => Some(Value::Bool(true)),
    };
    value.and_then(|v| v.to_grail()).unwrap_or_default()
}

/// Two partial reductions combined as the C target combines a value into an accumulator.
pub(crate) fn combine(op: ReduceOp, a: &Value, b: &Value) -> std::result::Result<Value, String> {
    use grail_ir::BinaryOp;
    let is = |op, x: &Value, y: &Value| ops::binary(op, x, y).map(|v| v == Value::Bool(true));
    Ok(match op {
        ReduceOp::Sum => ops::binary(BinaryOp::Add, a, b)?,
        ReduceOp::Product => ops::binary(BinaryOp::Mul, a, b)?,
        ReduceOp::Min => {
            if is(BinaryOp::Lt, b, a)? {
                b.clone()
            } else {
                a.clone()
            }
        }
        ReduceOp::Max => {
            if is(BinaryOp::Gt, b, a)? {
                b.clone()
            } else {
                a.clone()
            }
        }
        ReduceOp::Any => ops::binary(BinaryOp::Or, a, b)?,
        ReduceOp::All => ops::binary(BinaryOp::And, a, b)?,
    })
}

/// Reads the values of an input node property (`input prop;`) from text as `output` writes a
/// property's: one value per line, node by node (`inf` for the type's largest value). Blank
/// lines and lines starting with `#` are skipped. An error names the line.
pub fn read_property_values(
    module: &Module,
    id: grail_ir::PropertyId,
    text: &str,
) -> std::result::Result<Table, String> {
    let ty = module.properties[id.index()].ty;
    let mut table = Table::new(vec![ty]);
    for (number, line) in text.lines().enumerate() {
        let line = line.trim();
        if line.is_empty() || line.starts_with('#') {
            continue;
        }
        let value = Value::parse(ty, line).map_err(|e| format!("line {}: {e}", number + 1))?;
        table.push(&[value]).map_err(|e| format!("line {}: {e}", number + 1))?;
    }
    Ok(table)
}

/// Reads the elements of collection `id` from text as `output` writes them: one element per
/// line, its fields (nested structs' fields inline) separated by spaces or tabs; element handles
/// are indices. Blank lines and lines starting with `#` are skipped. An error names the line.
pub fn read_collection(module: &Module, id: grail_ir::CollectionId, text: &str) -> std::result::Result<Table, String> {
    let mut table = Table::for_collection(module, id);
    let leaves = table.leaves().to_vec();
    let mut row = Vec::with_capacity(leaves.len());
    for (number, line) in text.lines().enumerate() {
        let line = line.trim();
        if line.is_empty() || line.starts_with('#') {
            continue;
        }
        let words: Vec<&str> = line.split_whitespace().collect();
        if words.len() != leaves.len() {
            return Err(format!("line {}: {} fields, expected {}", number + 1, words.len(), leaves.len()));
        }
        row.clear();
        for (word, &ty) in words.iter().zip(&leaves) {
            let value = match ty {
                Type::Element(_) => {
                    word.parse::<u32>().map(Value::Element).map_err(|_| format!("`{word}` is not an element index"))
                }
                ty => Value::parse(ty, word),
            };
            row.push(value.map_err(|e| format!("line {}: {e}", number + 1))?);
        }
        table.push(&row).map_err(|e| format!("line {}: {e}", number + 1))?;
    }
    Ok(table)
}
