//! Compile-time evaluation of lowered expressions: the values of `const` items and `param`
//! defaults. Arithmetic wraps at the type's width, as at run time.

use grail_ir::{BinaryOp, Builtin, Const, Expr, ExprKind, Scalar, Type, UnaryOp};

/// A value during evaluation: integers as two's-complement bits, normalised to their type (signed
/// types sign-extended to 64 bits, unsigned ones zero-extended).
#[derive(Clone, Copy, Debug, PartialEq)]
enum Value {
    Int(u64),
    Float(f64),
    Bool(bool),
}

/// Why an expression has no compile-time value.
#[derive(Clone, Copy, Debug, PartialEq)]
pub(super) enum FoldError {
    /// It reads something only known at run time: a param, the graph, a property.
    NotConstant,
    DivisionByZero,
    /// A signed type's minimum divided by -1 (or its remainder taken): the quotient does not fit,
    /// which the language calls an error, as Rust does.
    Overflow,
}

/// The value of `expr` as a constant of its type.
pub(super) fn fold(expr: &Expr) -> Result<Const, FoldError> {
    // A bare `INF` stays symbolic: its meaning is exact for every type.
    if let ExprKind::Const(c) = expr.kind {
        return Ok(c);
    }
    Ok(match eval(expr)? {
        Value::Int(bits) => Const::Int(bits),
        Value::Float(x) => Const::Float(x),
        Value::Bool(b) => Const::Bool(b),
    })
}

fn width(ty: Type) -> u32 {
    match ty {
        Type::Scalar(Scalar::I32 | Scalar::U32) | Type::Node => 32,
        _ => 64,
    }
}

fn signed(ty: Type) -> bool {
    matches!(ty, Type::Scalar(Scalar::I32 | Scalar::I64))
}

fn normalize(bits: u64, ty: Type) -> u64 {
    match (width(ty), signed(ty)) {
        (32, true) => bits as u32 as i32 as i64 as u64,
        (32, false) => bits as u32 as u64,
        _ => bits,
    }
}

fn max_of(ty: Type) -> Option<Value> {
    Some(match ty {
        Type::Scalar(Scalar::F32) | Type::Scalar(Scalar::F64) => Value::Float(f64::INFINITY),
        Type::Scalar(Scalar::I32) => Value::Int(i32::MAX as u64),
        Type::Scalar(Scalar::I64) => Value::Int(i64::MAX as u64),
        Type::Scalar(Scalar::U32) | Type::Node => Value::Int(u32::MAX as u64),
        Type::Scalar(Scalar::U64) | Type::Edge => Value::Int(u64::MAX),
        _ => return None,
    })
}

fn eval(expr: &Expr) -> Result<Value, FoldError> {
    let ty = expr.ty;
    let not_constant = FoldError::NotConstant;
    match &expr.kind {
        ExprKind::Const(c) => match *c {
            Const::Bool(b) => Ok(Value::Bool(b)),
            Const::Int(bits) => Ok(Value::Int(normalize(bits, ty))),
            Const::Float(x) => Ok(Value::Float(round(x, ty))),
            Const::Inf => max_of(ty).ok_or(not_constant),
        },
        ExprKind::Unary(op, operand) => match (op, eval(operand)?) {
            (UnaryOp::Neg, Value::Int(bits)) => Ok(Value::Int(normalize(bits.wrapping_neg(), ty))),
            (UnaryOp::Neg, Value::Float(x)) => Ok(Value::Float(-x)),
            (UnaryOp::Not, Value::Int(bits)) => Ok(Value::Int(normalize(!bits, ty))),
            (UnaryOp::Not, Value::Bool(b)) => Ok(Value::Bool(!b)),
            _ => Err(not_constant),
        },
        ExprKind::Binary(op, left, right) => {
            let (l, r) = (eval(left)?, eval(right)?);
            if matches!(op, BinaryOp::Div | BinaryOp::Rem) && r == Value::Int(0) {
                return Err(FoldError::DivisionByZero);
            }
            if overflows(*op, left.ty, l, r) {
                return Err(FoldError::Overflow);
            }
            binary(*op, left.ty, l, r).ok_or(not_constant)
        }
        ExprKind::Cast(value) => cast(value.ty, eval(value)?, ty).ok_or(not_constant),
        ExprKind::Builtin(builtin, args) => {
            let values = args.iter().map(eval).collect::<Result<Vec<_>, _>>()?;
            builtin_value(*builtin, ty, &values).ok_or(not_constant)
        }
        _ => Err(not_constant),
    }
}

/// Whether `left op right` (integers of type `ty`) is the minimum of a signed type divided by -1
/// (or its remainder), whose quotient does not fit. Values are normalised: -1 is all ones.
fn overflows(op: BinaryOp, ty: Type, left: Value, right: Value) -> bool {
    let min = match ty {
        Type::Scalar(Scalar::I32) => i32::MIN as i64 as u64,
        Type::Scalar(Scalar::I64) => i64::MIN as u64,
        _ => return false,
    };
    matches!(op, BinaryOp::Div | BinaryOp::Rem) && left == Value::Int(min) && right == Value::Int(u64::MAX)
}

/// Whether `left op right`, both known at compile time, divides a signed type's minimum by -1.
pub(super) fn folds_to_overflow(op: BinaryOp, left: &Expr, right: &Expr) -> bool {
    match (eval(left), eval(right)) {
        (Ok(l), Ok(r)) => overflows(op, left.ty, l, r),
        _ => false,
    }
}

fn round(x: f64, ty: Type) -> f64 {
    if ty == Type::Scalar(Scalar::F32) { x as f32 as f64 } else { x }
}

fn binary(op: BinaryOp, ty: Type, left: Value, right: Value) -> Option<Value> {
    use BinaryOp::*;
    match (left, right) {
        (Value::Int(a), Value::Int(b)) => {
            let (sa, sb) = (a as i64, b as i64);
            let is_signed = signed(ty);
            let int = |bits: u64| Some(Value::Int(normalize(bits, ty)));
            let shift = (b & u64::from(width(ty) - 1)) as u32;
            match op {
                Add => int(a.wrapping_add(b)),
                Sub => int(a.wrapping_sub(b)),
                Mul => int(a.wrapping_mul(b)),
                Div | Rem if b == 0 => None,
                Div if is_signed => int(sa.wrapping_div(sb) as u64),
                Div => int(a / b),
                Rem if is_signed => int(sa.wrapping_rem(sb) as u64),
                Rem => int(a % b),
                Shl => int(a << shift),
                Shr if is_signed => int((sa >> shift) as u64),
                Shr => int(a >> shift),
                BitAnd => int(a & b),
                BitOr => int(a | b),
                BitXor => int(a ^ b),
                Eq => Some(Value::Bool(a == b)),
                Ne => Some(Value::Bool(a != b)),
                Lt | Le | Gt | Ge => {
                    let order = if is_signed { sa.cmp(&sb) } else { a.cmp(&b) };
                    Some(Value::Bool(match op {
                        Lt => order.is_lt(),
                        Le => order.is_le(),
                        Gt => order.is_gt(),
                        _ => order.is_ge(),
                    }))
                }
                And | Or => None,
            }
        }
        (Value::Float(a), Value::Float(b)) => {
            let float = |x: f64| Some(Value::Float(round(x, ty)));
            match op {
                Add => float(a + b),
                Sub => float(a - b),
                Mul => float(a * b),
                Div => float(a / b),
                Eq => Some(Value::Bool(a == b)),
                Ne => Some(Value::Bool(a != b)),
                Lt => Some(Value::Bool(a < b)),
                Le => Some(Value::Bool(a <= b)),
                Gt => Some(Value::Bool(a > b)),
                Ge => Some(Value::Bool(a >= b)),
                _ => None,
            }
        }
        (Value::Bool(a), Value::Bool(b)) => Some(Value::Bool(match op {
            And | BitAnd => a && b,
            Or | BitOr => a || b,
            BitXor | Ne => a != b,
            Eq => a == b,
            _ => return None,
        })),
        _ => None,
    }
}

fn cast(from: Type, value: Value, to: Type) -> Option<Value> {
    Some(match value {
        Value::Int(bits) if is_float_type(to) => {
            let x = if signed(from) { bits as i64 as f64 } else { bits as f64 };
            Value::Float(round(x, to))
        }
        Value::Int(bits) => Value::Int(normalize(bits, to)),
        Value::Float(x) if is_float_type(to) => Value::Float(round(x, to)),
        Value::Float(x) => {
            // Rust's `as`: saturating, NaN to 0.
            let bits = match to {
                Type::Scalar(Scalar::I32) => x as i32 as i64 as u64,
                Type::Scalar(Scalar::I64) => x as i64 as u64,
                Type::Scalar(Scalar::U32) | Type::Node => x as u32 as u64,
                _ => x as u64,
            };
            Value::Int(normalize(bits, to))
        }
        Value::Bool(_) => return None,
    })
}

fn is_float_type(ty: Type) -> bool {
    ty.scalar().is_some_and(Scalar::is_float)
}

fn builtin_value(builtin: Builtin, ty: Type, args: &[Value]) -> Option<Value> {
    let less = |a: Value, b: Value| -> Option<bool> {
        match (a, b) {
            (Value::Int(a), Value::Int(b)) if signed(ty) => Some((a as i64) < (b as i64)),
            (Value::Int(a), Value::Int(b)) => Some(a < b),
            (Value::Float(a), Value::Float(b)) => Some(a < b),
            _ => None,
        }
    };
    match (builtin, args) {
        (Builtin::Min, &[a, b]) => Some(if less(b, a)? { b } else { a }),
        (Builtin::Max, &[a, b]) => Some(if less(a, b)? { b } else { a }),
        (Builtin::Abs, &[Value::Int(bits)]) if signed(ty) => {
            Some(Value::Int(normalize((bits as i64).wrapping_abs() as u64, ty)))
        }
        (Builtin::Abs, &[Value::Float(x)]) => Some(Value::Float(x.abs())),
        (Builtin::Abs, &[v]) => Some(v),
        (Builtin::Sqrt, &[Value::Float(x)]) => Some(Value::Float(round(x.sqrt(), ty))),
        (Builtin::Ln, &[Value::Float(x)]) => Some(Value::Float(round(x.ln(), ty))),
        (Builtin::Exp, &[Value::Float(x)]) => Some(Value::Float(round(x.exp(), ty))),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn int(v: u64, ty: Type) -> Expr {
        Expr::int(v, ty)
    }

    #[test]
    fn wraps_at_the_width() {
        let e = Expr::binary(BinaryOp::Mul, int(0x9e3779b9, Type::U32), int(3, Type::U32));
        assert_eq!(fold(&e), Ok(Const::Int(0x9e3779b9u32.wrapping_mul(3) as u64)));
        let i32_ty = Type::Scalar(Scalar::I32);
        let neg = Expr::new(ExprKind::Unary(UnaryOp::Neg, Box::new(int(1, i32_ty))), i32_ty);
        assert_eq!(fold(&Expr::binary(BinaryOp::Lt, neg, int(0, i32_ty))), Ok(Const::Bool(true)));
    }

    #[test]
    fn infinity_and_division() {
        let inf = Expr::inf(Type::U32);
        assert_eq!(fold(&inf), Ok(Const::Inf));
        let half = Expr::binary(BinaryOp::Div, Expr::inf(Type::U32), int(2, Type::U32));
        assert_eq!(fold(&half), Ok(Const::Int((u32::MAX / 2) as u64)));
        let by_zero = Expr::binary(BinaryOp::Div, int(1, Type::U32), int(0, Type::U32));
        assert_eq!(fold(&by_zero), Err(FoldError::DivisionByZero));
        assert_eq!(fold(&Expr::new(ExprKind::NumNodes, Type::U32)), Err(FoldError::NotConstant));
    }

    /// A signed type's minimum by -1 is an error, for `/` and `%`, in both widths; its neighbours
    /// and the unsigned types' all ones divide as usual.
    #[test]
    fn minimum_by_minus_one_overflows() {
        let neg = |v: u64, ty: Type| Expr::new(ExprKind::Unary(UnaryOp::Neg, Box::new(int(v, ty))), ty);
        for (ty, min) in [(Type::Scalar(Scalar::I32), i32::MIN as i64), (Type::Scalar(Scalar::I64), i64::MIN)] {
            // min = -(MAX) - 1, as a program writes it.
            let minimum = || Expr::binary(BinaryOp::Sub, neg(-(min + 1) as u64, ty), int(1, ty));
            for op in [BinaryOp::Div, BinaryOp::Rem] {
                assert_eq!(fold(&Expr::binary(op, minimum(), neg(1, ty))), Err(FoldError::Overflow), "{ty} {op:?}");
                assert!(folds_to_overflow(op, &minimum(), &neg(1, ty)));
            }
            let plus_one = Expr::binary(BinaryOp::Add, minimum(), int(1, ty));
            assert_eq!(fold(&Expr::binary(BinaryOp::Div, plus_one, neg(1, ty))), Ok(Const::Int((-(min + 1)) as u64)));
            let by_two = Expr::binary(BinaryOp::Div, minimum(), neg(2, ty));
            assert_eq!(fold(&by_two), Ok(Const::Int(normalize((min / -2) as u64, ty))));
        }
        // Unsigned: all ones by all ones is 1.
        let ones = Expr::binary(BinaryOp::Div, Expr::inf(Type::U32), Expr::inf(Type::U32));
        assert_eq!(fold(&ones), Ok(Const::Int(1)));
    }
}
