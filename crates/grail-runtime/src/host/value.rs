//! Host values: what parameters, host locals, kernel arguments and results hold while the
//! executor interprets orchestration code.

use std::fmt;

use grail_graph::PropertyType;
use grail_ir::{Const, Scalar, Type};

use crate::cpu::ffi::GrailValue;

/// A value of a grail type.
#[derive(Debug, Clone, PartialEq)]
pub enum Value {
    Bool(bool),
    I32(i32),
    I64(i64),
    U32(u32),
    U64(u64),
    F32(f32),
    F64(f64),
    Node(u32),
    Edge(u64),
    /// A handle to a collection element (its index).
    Element(u32),
    /// A struct's fields in order (also the executor's "no value" for calls without a result:
    /// the empty struct).
    Struct(Vec<Value>),
}

impl Value {
    /// Parses a value of type `ty` from text: `true`/`false`, decimal integers (hex with `0x`,
    /// `_` separators allowed), floats, and `inf` (`INF`) for the type's largest value.
    pub fn parse(ty: Type, text: &str) -> Result<Value, String> {
        let text = text.trim();
        if text.is_empty() {
            return Err("the value is empty".into());
        }
        let is_inf = text.eq_ignore_ascii_case("inf");
        let int = |max: u64| -> Result<u64, String> {
            if is_inf {
                return Ok(max);
            }
            let digits = text.replace('_', "");
            let parsed = match digits.strip_prefix("0x").or_else(|| digits.strip_prefix("0X")) {
                Some(hex) => u64::from_str_radix(hex, 16),
                None => digits.parse::<u64>(),
            };
            match parsed {
                Ok(v) if v <= max => Ok(v),
                Ok(_) => Err(format!("`{text}` is larger than {max}")),
                Err(_) => Err(format!("`{text}` is not a non-negative integer")),
            }
        };
        let signed = |min: i64, max: i64| -> Result<i64, String> {
            if is_inf {
                return Ok(max);
            }
            let digits = text.replace('_', "");
            match digits.parse::<i64>() {
                Ok(v) if (min..=max).contains(&v) => Ok(v),
                Ok(_) => Err(format!("`{text}` is out of range {min}..={max}")),
                Err(_) => Err(format!("`{text}` is not an integer")),
            }
        };
        let float = || -> Result<f64, String> {
            match text.to_ascii_lowercase().as_str() {
                "inf" | "+inf" | "infinity" => Ok(f64::INFINITY),
                "-inf" | "-infinity" => Ok(f64::NEG_INFINITY),
                _ => text.replace('_', "").parse::<f64>().map_err(|_| format!("`{text}` is not a number")),
            }
        };
        Ok(match ty {
            Type::Scalar(Scalar::Bool) => match text {
                "true" => Value::Bool(true),
                "false" => Value::Bool(false),
                _ => return Err(format!("`{text}` is not `true` or `false`")),
            },
            Type::Scalar(Scalar::I32) => Value::I32(signed(i32::MIN.into(), i32::MAX.into())? as i32),
            Type::Scalar(Scalar::I64) => Value::I64(signed(i64::MIN, i64::MAX)?),
            Type::Scalar(Scalar::U32) => Value::U32(int(u32::MAX.into())? as u32),
            Type::Scalar(Scalar::U64) => Value::U64(int(u64::MAX)?),
            Type::Scalar(Scalar::F32) => {
                // A finite number past f32's range is refused, as such a literal is in a program
                // (infinity itself may be given).
                let value = float()?;
                if value.is_finite() && !(value as f32).is_finite() {
                    return Err(format!("`{text}` is out of range for f32 (at most {:e} in size)", f32::MAX));
                }
                Value::F32(value as f32)
            }
            Type::Scalar(Scalar::F64) => Value::F64(float()?),
            Type::Node => Value::Node(int(u32::MAX.into())? as u32),
            Type::Edge => Value::Edge(int(u64::MAX)?),
            Type::Struct(_) => return Err("struct values cannot be given as text".into()),
            Type::Element(_) => return Err("collection elements cannot be given as text".into()),
            Type::Array(_) => return Err("arrays cannot be given as text".into()),
            Type::Unit => return Err("there is no value of type ()".into()),
        })
    }

    /// The value's type; `None` for a struct or an element (whose ids the value does not carry).
    pub fn ty(&self) -> Option<Type> {
        Some(match self {
            Value::Bool(_) => Type::Scalar(Scalar::Bool),
            Value::I32(_) => Type::Scalar(Scalar::I32),
            Value::I64(_) => Type::Scalar(Scalar::I64),
            Value::U32(_) => Type::Scalar(Scalar::U32),
            Value::U64(_) => Type::Scalar(Scalar::U64),
            Value::F32(_) => Type::Scalar(Scalar::F32),
            Value::F64(_) => Type::Scalar(Scalar::F64),
            Value::Node(_) => Type::Node,
            Value::Edge(_) => Type::Edge,
            Value::Struct(_) | Value::Element(_) => return None,
        })
    }

    /// Whether the value can be stored where `ty` is expected (structs by shape only).
    pub fn fits(&self, ty: Type) -> bool {
        match (self, ty) {
            (Value::Struct(_), Type::Struct(_)) | (Value::Element(_), Type::Element(_)) => true,
            _ => self.ty() == Some(ty),
        }
    }

    /// The largest value of a numeric, node or edge type (`+inf` for floats): the language's
    /// `INF`.
    pub fn inf(ty: Type) -> Option<Value> {
        Some(match ty {
            Type::Scalar(Scalar::I32) => Value::I32(i32::MAX),
            Type::Scalar(Scalar::I64) => Value::I64(i64::MAX),
            Type::Scalar(Scalar::U32) => Value::U32(u32::MAX),
            Type::Scalar(Scalar::U64) => Value::U64(u64::MAX),
            Type::Scalar(Scalar::F32) => Value::F32(f32::INFINITY),
            Type::Scalar(Scalar::F64) => Value::F64(f64::INFINITY),
            Type::Node => Value::Node(u32::MAX),
            Type::Edge => Value::Edge(u64::MAX),
            _ => return None,
        })
    }

    /// The smallest value of a numeric type (`-inf` for floats).
    pub(crate) fn lowest(ty: Type) -> Option<Value> {
        Some(match ty {
            Type::Scalar(Scalar::I32) => Value::I32(i32::MIN),
            Type::Scalar(Scalar::I64) => Value::I64(i64::MIN),
            Type::Scalar(Scalar::U32) => Value::U32(0),
            Type::Scalar(Scalar::U64) => Value::U64(0),
            Type::Scalar(Scalar::F32) => Value::F32(f32::NEG_INFINITY),
            Type::Scalar(Scalar::F64) => Value::F64(f64::NEG_INFINITY),
            Type::Node => Value::Node(0),
            Type::Edge => Value::Edge(0),
            _ => return None,
        })
    }

    /// A constant as a value of type `ty` (integers are two's-complement bits, truncated).
    pub(crate) fn from_const(c: Const, ty: Type) -> Option<Value> {
        match c {
            Const::Bool(b) => Some(Value::Bool(b)),
            Const::Int(bits) => Some(match ty {
                Type::Scalar(Scalar::I32) => Value::I32(bits as i32),
                Type::Scalar(Scalar::I64) => Value::I64(bits as i64),
                Type::Scalar(Scalar::U32) => Value::U32(bits as u32),
                Type::Scalar(Scalar::U64) => Value::U64(bits),
                Type::Scalar(Scalar::F32) => Value::F32(bits as i64 as f32),
                Type::Scalar(Scalar::F64) => Value::F64(bits as i64 as f64),
                Type::Node => Value::Node(bits as u32),
                Type::Edge => Value::Edge(bits),
                Type::Element(_) => Value::Element(bits as u32),
                _ => return None,
            }),
            Const::Float(x) => match ty {
                Type::Scalar(Scalar::F32) => Some(Value::F32(x as f32)),
                Type::Scalar(Scalar::F64) => Some(Value::F64(x)),
                _ => None,
            },
            Const::Inf => Value::inf(ty),
        }
    }

    /// The zero of a scalar, node or edge type.
    pub(crate) fn zero_scalar(ty: Type) -> Option<Value> {
        Some(match ty {
            Type::Scalar(Scalar::Bool) => Value::Bool(false),
            other => Value::from_const(Const::Int(0), other)?,
        })
    }

    /// The value as a `grail_value`: floats in `f`, signed integers in `i`, the rest in `u`.
    pub(crate) fn to_grail(&self) -> Option<GrailValue> {
        Some(match *self {
            Value::Bool(b) => GrailValue { u: b as u64 },
            Value::I32(x) => GrailValue { i: x.into() },
            Value::I64(x) => GrailValue { i: x },
            Value::U32(x) | Value::Node(x) | Value::Element(x) => GrailValue { u: x.into() },
            Value::U64(x) | Value::Edge(x) => GrailValue { u: x },
            Value::F32(x) => GrailValue { f: x.into() },
            Value::F64(x) => GrailValue { f: x },
            Value::Struct(_) => return None,
        })
    }

    /// A `grail_value` read as type `ty` (the member [`Value::to_grail`] uses for it).
    pub(crate) fn from_grail(ty: Type, value: GrailValue) -> Option<Value> {
        // SAFETY: every member of the union is a plain 64-bit value, valid for any bits.
        let (u, i, f) = unsafe { (value.u, value.i, value.f) };
        Some(match ty {
            Type::Scalar(Scalar::Bool) => Value::Bool(u != 0),
            Type::Scalar(Scalar::I32) => Value::I32(i as i32),
            Type::Scalar(Scalar::I64) => Value::I64(i),
            Type::Scalar(Scalar::U32) => Value::U32(u as u32),
            Type::Scalar(Scalar::U64) => Value::U64(u),
            Type::Scalar(Scalar::F32) => Value::F32(f as f32),
            Type::Scalar(Scalar::F64) => Value::F64(f),
            Type::Node => Value::Node(u as u32),
            Type::Edge => Value::Edge(u),
            Type::Element(_) => Value::Element(u as u32),
            _ => return None,
        })
    }

    pub(crate) fn as_bool(&self) -> Option<bool> {
        match *self {
            Value::Bool(b) => Some(b),
            _ => None,
        }
    }

    /// An integer, node or edge value as its bits, sign-extended to 64 (for shift counts, ranges
    /// and indices).
    pub(crate) fn as_u64(&self) -> Option<u64> {
        Some(match *self {
            Value::I32(x) => x as i64 as u64,
            Value::I64(x) => x as u64,
            Value::U32(x) | Value::Node(x) | Value::Element(x) => x.into(),
            Value::U64(x) | Value::Edge(x) => x,
            Value::Bool(b) => b as u64,
            _ => return None,
        })
    }
}

/// The column type that stores values of type `ty`, if a column can.
pub(crate) fn column_type(ty: Type) -> Option<PropertyType> {
    Some(match ty {
        Type::Scalar(Scalar::Bool) => PropertyType::Bool,
        Type::Scalar(Scalar::I32) => PropertyType::I32,
        Type::Scalar(Scalar::I64) => PropertyType::I64,
        // An element handle is its index (a node's list head, say).
        Type::Scalar(Scalar::U32) | Type::Node | Type::Element(_) => PropertyType::U32,
        Type::Scalar(Scalar::U64) | Type::Edge => PropertyType::U64,
        Type::Scalar(Scalar::F32) => PropertyType::F32,
        Type::Scalar(Scalar::F64) => PropertyType::F64,
        Type::Struct(_) | Type::Array(_) | Type::Unit => return None,
    })
}

impl fmt::Display for Value {
    /// Numbers as Rust prints them, except that the type's `INF` prints as `inf`.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Value::Bool(b) => write!(f, "{b}"),
            Value::I32(i32::MAX) | Value::I64(i64::MAX) => f.write_str("inf"),
            Value::U32(u32::MAX) | Value::U64(u64::MAX) | Value::Node(u32::MAX) | Value::Edge(u64::MAX) => {
                f.write_str("inf")
            }
            Value::I32(x) => write!(f, "{x}"),
            Value::I64(x) => write!(f, "{x}"),
            Value::U32(x) | Value::Node(x) | Value::Element(x) => write!(f, "{x}"),
            Value::U64(x) | Value::Edge(x) => write!(f, "{x}"),
            Value::F32(x) => write!(f, "{x}"),
            Value::F64(x) => write!(f, "{x}"),
            Value::Struct(fields) => {
                f.write_str("{")?;
                for (i, field) in fields.iter().enumerate() {
                    if i > 0 {
                        f.write_str(", ")?;
                    }
                    write!(f, "{field}")?;
                }
                f.write_str("}")
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_and_prints() {
        assert_eq!(Value::parse(Type::U32, "inf").unwrap(), Value::U32(u32::MAX));
        assert_eq!(Value::parse(Type::U32, "1_000").unwrap(), Value::U32(1000));
        assert_eq!(Value::parse(Type::Node, "0x10").unwrap(), Value::Node(16));
        assert_eq!(Value::parse(Type::Scalar(Scalar::I32), "-5").unwrap(), Value::I32(-5));
        assert_eq!(Value::parse(Type::Scalar(Scalar::F64), "inf").unwrap(), Value::F64(f64::INFINITY));
        assert_eq!(Value::parse(Type::Scalar(Scalar::F32), "0.5").unwrap(), Value::F32(0.5));
        assert_eq!(Value::parse(Type::Scalar(Scalar::F32), "inf").unwrap(), Value::F32(f32::INFINITY));
        assert!(Value::parse(Type::Scalar(Scalar::F32), "1e50").unwrap_err().contains("out of range for f32"));
        assert!(Value::parse(Type::Scalar(Scalar::F32), "-1e39").unwrap_err().contains("out of range for f32"));
        assert_eq!(Value::parse(Type::BOOL, "true").unwrap(), Value::Bool(true));
        assert!(Value::parse(Type::U32, "4294967296").unwrap_err().contains("larger"));
        assert!(Value::parse(Type::U32, "-1").is_err());
        assert!(Value::parse(Type::Scalar(Scalar::I32), "3000000000").is_err());
        assert!(Value::parse(Type::BOOL, "yes").is_err());
        assert!(Value::parse(Type::U64, "").is_err());
        assert_eq!(Value::U32(u32::MAX).to_string(), "inf");
        assert_eq!(Value::F64(f64::INFINITY).to_string(), "inf");
        assert_eq!(Value::I32(-3).to_string(), "-3");
        assert_eq!(Value::F64(1.5).to_string(), "1.5");
        assert_eq!(Value::Struct(vec![Value::Node(1), Value::Bool(false)]).to_string(), "{1, false}");
    }

    #[test]
    fn grail_values_round_trip() {
        for (value, ty) in [
            (Value::I32(-7), Type::Scalar(Scalar::I32)),
            (Value::U64(u64::MAX), Type::U64),
            (Value::F32(0.25), Type::Scalar(Scalar::F32)),
            (Value::Bool(true), Type::BOOL),
            (Value::Node(9), Type::Node),
        ] {
            assert_eq!(Value::from_grail(ty, value.to_grail().unwrap()), Some(value));
        }
    }
}
