//! Typed property columns: per-node or per-edge values stored as structure of arrays.
//!
//! Later stages hang a program's declared properties here (`dist: u64` on nodes, `weight: u32`
//! on edges, ...). A column is one contiguous vector, so a backend can copy it to a device or
//! hand it to generated code as a plain pointer.

use std::collections::BTreeMap;

use rayon::prelude::*;

use crate::error::{GraphError, Result};

/// The element type of a property column.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, serde::Serialize)]
#[serde(rename_all = "lowercase")]
pub enum PropertyType {
    Bool,
    U32,
    U64,
    I32,
    I64,
    F32,
    F64,
}

/// One property column.
#[derive(Debug, Clone, PartialEq)]
pub enum Column {
    Bool(Vec<bool>),
    U32(Vec<u32>),
    U64(Vec<u64>),
    I32(Vec<i32>),
    I64(Vec<i64>),
    F32(Vec<f32>),
    F64(Vec<f64>),
}

impl Column {
    /// A column of `len` copies of the type's zero value.
    pub fn zeroed(ty: PropertyType, len: usize) -> Column {
        match ty {
            PropertyType::Bool => Column::Bool(vec![false; len]),
            PropertyType::U32 => Column::U32(vec![0; len]),
            PropertyType::U64 => Column::U64(vec![0; len]),
            PropertyType::I32 => Column::I32(vec![0; len]),
            PropertyType::I64 => Column::I64(vec![0; len]),
            PropertyType::F32 => Column::F32(vec![0.0; len]),
            PropertyType::F64 => Column::F64(vec![0.0; len]),
        }
    }

    pub fn ty(&self) -> PropertyType {
        match self {
            Column::Bool(_) => PropertyType::Bool,
            Column::U32(_) => PropertyType::U32,
            Column::U64(_) => PropertyType::U64,
            Column::I32(_) => PropertyType::I32,
            Column::I64(_) => PropertyType::I64,
            Column::F32(_) => PropertyType::F32,
            Column::F64(_) => PropertyType::F64,
        }
    }

    pub fn len(&self) -> usize {
        match self {
            Column::Bool(v) => v.len(),
            Column::U32(v) => v.len(),
            Column::U64(v) => v.len(),
            Column::I32(v) => v.len(),
            Column::I64(v) => v.len(),
            Column::F32(v) => v.len(),
            Column::F64(v) => v.len(),
        }
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
}

/// Rust types that can be the element type of a column.
pub trait PropertyValue: Copy + Send + Sync + 'static {
    const TYPE: PropertyType;
    fn slice(column: &Column) -> Option<&[Self]>;
    fn slice_mut(column: &mut Column) -> Option<&mut [Self]>;
    fn into_column(values: Vec<Self>) -> Column;
}

macro_rules! property_value {
    ($t:ty, $variant:ident) => {
        impl PropertyValue for $t {
            const TYPE: PropertyType = PropertyType::$variant;
            fn slice(column: &Column) -> Option<&[Self]> {
                match column {
                    Column::$variant(v) => Some(v),
                    _ => None,
                }
            }
            fn slice_mut(column: &mut Column) -> Option<&mut [Self]> {
                match column {
                    Column::$variant(v) => Some(v),
                    _ => None,
                }
            }
            fn into_column(values: Vec<Self>) -> Column {
                Column::$variant(values)
            }
        }
    };
}

property_value!(bool, Bool);
property_value!(u32, U32);
property_value!(u64, U64);
property_value!(i32, I32);
property_value!(i64, I64);
property_value!(f32, F32);
property_value!(f64, F64);

/// Named columns that all have the same length (the number of nodes, or of edges).
#[derive(Debug, Clone, PartialEq)]
pub struct Properties {
    len: usize,
    columns: BTreeMap<String, Column>,
}

impl Properties {
    /// An empty table for `len` elements.
    pub fn new(len: usize) -> Self {
        Properties { len, columns: BTreeMap::new() }
    }

    /// The number of elements each column has.
    pub fn element_count(&self) -> usize {
        self.len
    }

    /// Adds or replaces a column; it must have one value per element.
    pub fn insert(&mut self, name: &str, column: Column) -> Result<()> {
        if column.len() != self.len {
            return Err(GraphError::invalid(format!(
                "property '{name}' has {} values, but there are {} elements",
                column.len(),
                self.len
            )));
        }
        self.columns.insert(name.to_string(), column);
        Ok(())
    }

    /// Adds or replaces a typed column.
    pub fn insert_values<T: PropertyValue>(&mut self, name: &str, values: Vec<T>) -> Result<()> {
        self.insert(name, T::into_column(values))
    }

    pub fn remove(&mut self, name: &str) -> Option<Column> {
        self.columns.remove(name)
    }

    pub fn column(&self, name: &str) -> Option<&Column> {
        self.columns.get(name)
    }

    /// The column `name` as a slice of `T`; `None` if absent or of another type.
    pub fn get<T: PropertyValue>(&self, name: &str) -> Option<&[T]> {
        self.columns.get(name).and_then(T::slice)
    }

    pub fn get_mut<T: PropertyValue>(&mut self, name: &str) -> Option<&mut [T]> {
        self.columns.get_mut(name).and_then(T::slice_mut)
    }

    /// Column names and types, in name order.
    pub fn schema(&self) -> impl Iterator<Item = (&str, PropertyType)> {
        self.columns.iter().map(|(name, column)| (name.as_str(), column.ty()))
    }

    pub fn is_empty(&self) -> bool {
        self.columns.is_empty()
    }

    /// Reorders every column: element `i` of the result is element `order[i]` of the input.
    /// `order` holds node ids (`u32`) or edge ids (`u64`).
    pub(crate) fn gather<I: Copy + Into<u64> + Sync>(&self, order: &[I]) -> Properties {
        fn pick<T: Copy + Send + Sync, I: Copy + Into<u64> + Sync>(values: &[T], order: &[I]) -> Vec<T> {
            order.par_iter().map(|&i| values[i.into() as usize]).collect()
        }
        let columns = self
            .columns
            .iter()
            .map(|(name, column)| {
                let gathered = match column {
                    Column::Bool(v) => Column::Bool(pick(v, order)),
                    Column::U32(v) => Column::U32(pick(v, order)),
                    Column::U64(v) => Column::U64(pick(v, order)),
                    Column::I32(v) => Column::I32(pick(v, order)),
                    Column::I64(v) => Column::I64(pick(v, order)),
                    Column::F32(v) => Column::F32(pick(v, order)),
                    Column::F64(v) => Column::F64(pick(v, order)),
                };
                (name.clone(), gathered)
            })
            .collect();
        Properties { len: order.len(), columns }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn typed_access_checks_type_and_length() {
        let mut props = Properties::new(3);
        props.insert_values("dist", vec![1u64, 2, 3]).unwrap();
        assert_eq!(props.get::<u64>("dist"), Some(&[1u64, 2, 3][..]));
        assert_eq!(props.get::<u32>("dist"), None);
        assert!(props.insert_values("short", vec![1u32]).is_err());
        props.get_mut::<u64>("dist").unwrap()[0] = 9;
        assert_eq!(props.gather(&[2u32, 0]).get::<u64>("dist"), Some(&[3u64, 9][..]));
    }
}
