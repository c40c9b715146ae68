//! [`Table`]: a collection's elements as rows of their scalar leaves, the form the targets copy
//! in bulk. Input and output collections travel as tables: a mesh of millions of triangles goes
//! up and comes back as one buffer of words per collection, with no value per field on the heap.

use grail_ir::{CollectionId, Module, Type};

use super::value::Value;
use super::{leaf_types, unflatten};
use crate::cpu::ffi::GrailValue;
use crate::error::{Result, RuntimeError};

/// Elements of one collection: each row holds an element's scalar leaves (its fields in
/// declaration order, nested structs' fields inline), each leaf as the 64-bit word the generated
/// code keeps it in (`grail_value`: integers, bools and handles as unsigned or signed integers,
/// `f32` and `f64` as a double).
#[derive(Debug, Clone, PartialEq)]
pub struct Table {
    leaves: Vec<Type>,
    words: Vec<u64>,
    /// Rows (kept apart from the words: a struct without fields has rows of none).
    rows: usize,
}

impl Table {
    /// An empty table whose rows have leaves of these types (scalars, nodes, edges, handles).
    pub fn new(leaves: Vec<Type>) -> Table {
        Table { leaves, words: Vec::new(), rows: 0 }
    }

    /// An empty table for the elements of collection `id` of `module`.
    pub fn for_collection(module: &Module, id: CollectionId) -> Table {
        let mut leaves = Vec::new();
        leaf_types(module, Type::Struct(module.collections[id.index()].element), &mut leaves);
        Table::new(leaves)
    }

    /// A table of `leaves` holding `words`, row after row; refused when `words` is not a whole
    /// number of rows.
    pub fn from_words(leaves: Vec<Type>, words: Vec<u64>) -> Result<Table> {
        if leaves.is_empty() || words.len() % leaves.len() != 0 {
            return Err(RuntimeError::Input(format!(
                "{} words are not whole rows of {} leaves",
                words.len(),
                leaves.len()
            )));
        }
        let rows = words.len() / leaves.len();
        Ok(Table { leaves, words, rows })
    }

    /// A table of collection `id`'s elements from their values (`Value::Struct`s of its element
    /// struct), each checked to be one.
    pub fn from_values(module: &Module, id: CollectionId, values: &[Value]) -> Result<Table> {
        let element = Type::Struct(module.collections[id.index()].element);
        let mut table = Table::for_collection(module, id);
        table.words.reserve(values.len() * table.leaves.len());
        for (i, value) in values.iter().enumerate() {
            if !value.fits(element) {
                return Err(RuntimeError::Input(format!(
                    "element {i} of collection `{}` is not a `{}`: {value:?}",
                    module.collections[id.index()].name,
                    module.structs[module.collections[id.index()].element.index()].name,
                )));
            }
            push_leaves(value, &mut table.words);
            table.rows += 1;
        }
        Ok(table)
    }

    /// The types of a row's leaves.
    pub fn leaves(&self) -> &[Type] {
        &self.leaves
    }

    /// How many rows (elements).
    pub fn len(&self) -> usize {
        self.rows
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Every row's words, row after row.
    pub fn words(&self) -> &[u64] {
        &self.words
    }

    /// The words, given back (a caller filling tables again and again reuses their memory).
    pub fn into_words(self) -> Vec<u64> {
        self.words
    }

    /// Every row's words, in order.
    pub fn rows(&self) -> impl Iterator<Item = &[u64]> {
        (0..self.rows).map(|row| self.row(row))
    }

    /// Row `row`'s words.
    pub fn row(&self, row: usize) -> &[u64] {
        let width = self.leaves.len();
        &self.words[row * width..(row + 1) * width]
    }

    /// Leaf `leaf` of row `row` as a value of its type.
    pub fn value(&self, row: usize, leaf: usize) -> Value {
        let word = self.words[row * self.leaves.len() + leaf];
        Value::from_grail(self.leaves[leaf], GrailValue { u: word }).expect("a table's leaves are scalars")
    }

    /// Leaf `leaf` of row `row`, a `u32`, node or handle, as an integer.
    pub fn u32(&self, row: usize, leaf: usize) -> u32 {
        self.words[row * self.leaves.len() + leaf] as u32
    }

    /// Leaf `leaf` of row `row`, an `f32` or `f64`, as a double.
    pub fn f64(&self, row: usize, leaf: usize) -> f64 {
        f64::from_bits(self.words[row * self.leaves.len() + leaf])
    }

    /// Appends a row from its leaves' values, each checked against its leaf's type.
    pub fn push(&mut self, leaves: &[Value]) -> Result<()> {
        if leaves.len() != self.leaves.len() {
            return Err(RuntimeError::Input(format!(
                "a row of {} fields, expected {}",
                leaves.len(),
                self.leaves.len()
            )));
        }
        for (i, (value, &ty)) in leaves.iter().zip(&self.leaves).enumerate() {
            if !value.fits(ty) || matches!(value, Value::Struct(_)) {
                return Err(RuntimeError::Input(format!("field {} is not a {ty}: {value:?}", i + 1)));
            }
        }
        leaves.iter().for_each(|value| push_leaves(value, &mut self.words));
        self.rows += 1;
        Ok(())
    }

    /// Appends a row from its words, as [`Table::words`] holds them.
    pub fn push_words(&mut self, row: &[u64]) {
        assert_eq!(row.len(), self.leaves.len(), "a row of the table's width");
        self.words.extend_from_slice(row);
        self.rows += 1;
    }

    /// Keeps the rows for which `keep(row index)` holds, in order.
    pub fn retain_rows(&mut self, mut keep: impl FnMut(usize) -> bool) {
        let width = self.leaves.len();
        let mut kept = 0;
        for row in 0..self.rows {
            if keep(row) {
                self.words.copy_within(row * width..(row + 1) * width, kept * width);
                kept += 1;
            }
        }
        self.words.truncate(kept * width);
        self.rows = kept;
    }

    /// Row `row` as a value of type `element` (the struct whose leaves the rows hold).
    pub fn element(&self, module: &Module, element: Type, row: usize) -> Result<Value> {
        let mut leaves = (0..self.leaves.len()).map(|leaf| Some(self.value(row, leaf)));
        unflatten(module, element, &mut leaves)
    }

    /// The words, to change in place (not the number of rows).
    pub(crate) fn words_mut(&mut self) -> &mut [u64] {
        &mut self.words
    }

    /// The table's rows replaced by `rows` rows of `words`.
    pub(crate) fn set_words(&mut self, rows: usize, words: Vec<u64>) {
        assert_eq!(words.len(), rows * self.leaves.len(), "whole rows");
        self.words = words;
        self.rows = rows;
    }
}

/// Appends a value's scalar leaves' words.
fn push_leaves(value: &Value, out: &mut Vec<u64>) {
    match value {
        Value::Struct(fields) => fields.iter().for_each(|field| push_leaves(field, out)),
        scalar => {
            let word = scalar.to_grail().expect("a scalar has a grail_value");
            // SAFETY: every member of the union is a plain 64-bit value.
            out.push(unsafe { word.u });
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use grail_ir::Scalar;

    #[test]
    fn rows_keep_every_leaf_type() {
        let leaves = vec![Type::Scalar(Scalar::F64), Type::Scalar(Scalar::I32), Type::Scalar(Scalar::Bool)];
        let mut table = Table::new(leaves);
        table.push(&[Value::F64(-1.5), Value::I32(-7), Value::Bool(true)]).unwrap();
        table.push(&[Value::F64(2.0), Value::I32(3), Value::Bool(false)]).unwrap();
        assert_eq!(table.len(), 2);
        assert_eq!(table.f64(0, 0), -1.5);
        assert_eq!(table.value(0, 1), Value::I32(-7));
        assert_eq!(table.value(1, 2), Value::Bool(false));
        assert!(table.push(&[Value::F64(1.0)]).is_err());
        assert!(table.push(&[Value::U64(1), Value::I32(3), Value::Bool(false)]).is_err());
        table.retain_rows(|row| row == 1);
        assert_eq!(table.len(), 1);
        assert_eq!(table.value(0, 0), Value::F64(2.0));
        assert!(Table::from_words(vec![Type::Scalar(Scalar::U32); 2], vec![1, 2, 3]).is_err());
    }
}
