//! Arithmetic on host values, exactly as the generated C computes it (`-fwrapv`): integers
//! wrap, shift counts are masked to the type's width, casts convert as the language's `as`
//! (Rust's) does, `min`/`max`/`abs` follow the C target's helpers. An integer division or
//! remainder by zero, or of the type's minimum by -1, is an error ([`fault`]), as it stops a
//! kernel.

use grail_ir::{BinaryOp, Builtin, Scalar, Type, UnaryOp};

use super::value::Value;

type OpResult = Result<Value, String>;

/// Integer operations shared by the four integer types.
trait Int: Copy + PartialOrd + PartialEq {
    const BITS: u32;
    const ZERO: Self;
    fn add(self, o: Self) -> Self;
    fn sub(self, o: Self) -> Self;
    fn mul(self, o: Self) -> Self;
    /// `None` where the language calls the division an error (see [`fault`]).
    fn div(self, o: Self) -> Option<Self>;
    fn rem(self, o: Self) -> Option<Self>;
    fn shl(self, n: u32) -> Self;
    fn shr(self, n: u32) -> Self;
    fn and(self, o: Self) -> Self;
    fn or(self, o: Self) -> Self;
    fn xor(self, o: Self) -> Self;
}

macro_rules! int {
    ($t:ty) => {
        impl Int for $t {
            const BITS: u32 = <$t>::BITS;
            const ZERO: Self = 0;
            fn add(self, o: Self) -> Self {
                self.wrapping_add(o)
            }
            fn sub(self, o: Self) -> Self {
                self.wrapping_sub(o)
            }
            fn mul(self, o: Self) -> Self {
                self.wrapping_mul(o)
            }
            fn div(self, o: Self) -> Option<Self> {
                self.checked_div(o)
            }
            fn rem(self, o: Self) -> Option<Self> {
                self.checked_rem(o)
            }
            fn shl(self, n: u32) -> Self {
                self.wrapping_shl(n)
            }
            fn shr(self, n: u32) -> Self {
                self.wrapping_shr(n)
            }
            fn and(self, o: Self) -> Self {
                self & o
            }
            fn or(self, o: Self) -> Self {
                self | o
            }
            fn xor(self, o: Self) -> Self {
                self ^ o
            }
        }
    };
}

int!(i32);
int!(i64);
int!(u32);
int!(u64);

enum Out<T> {
    Value(T),
    Bool(bool),
}

fn compare<T: PartialOrd>(op: BinaryOp, a: T, b: T) -> Option<bool> {
    Some(match op {
        BinaryOp::Eq => a == b,
        BinaryOp::Ne => a != b,
        BinaryOp::Lt => a < b,
        BinaryOp::Le => a <= b,
        BinaryOp::Gt => a > b,
        BinaryOp::Ge => a >= b,
        _ => return None,
    })
}

/// Why integer `a op b` (a division or remainder that gave no value) is an error.
fn fault_message<T: Int + std::fmt::Display>(op: BinaryOp, a: T, b: T) -> String {
    match (op, b == T::ZERO) {
        (BinaryOp::Div, true) => "division by zero".into(),
        (_, true) => "remainder by zero".into(),
        (BinaryOp::Div, false) => format!("division overflows: {a} / {b} (the type's minimum by -1)"),
        _ => format!("remainder overflows: {a} % {b} (the type's minimum by -1)"),
    }
}

/// Why `a op b` is an arithmetic fault, if it is one: an integer division or remainder by zero,
/// or of a signed type's minimum by -1 (whose quotient does not fit). The language calls these
/// errors; a kernel stops on them (on the CPU, exit status 70), and so does host code.
pub(crate) fn fault(op: BinaryOp, a: &Value, b: &Value) -> Option<String> {
    fn check<T: Int + std::fmt::Display>(op: BinaryOp, a: T, b: T) -> Option<String> {
        let value = if op == BinaryOp::Div { a.div(b) } else { a.rem(b) };
        value.is_none().then(|| fault_message(op, a, b))
    }
    if !matches!(op, BinaryOp::Div | BinaryOp::Rem) {
        return None;
    }
    match (a, b) {
        (&Value::I32(x), &Value::I32(y)) => check(op, x, y),
        (&Value::I64(x), &Value::I64(y)) => check(op, x, y),
        (&Value::U32(x), &Value::U32(y)) => check(op, x, y),
        (&Value::U64(x), &Value::U64(y)) => check(op, x, y),
        _ => None,
    }
}

fn int_op<T: Int + std::fmt::Display>(op: BinaryOp, a: T, b: T) -> Result<Out<T>, String> {
    if let Some(c) = compare(op, a, b) {
        return Ok(Out::Bool(c));
    }
    Ok(Out::Value(match op {
        BinaryOp::Add => a.add(b),
        BinaryOp::Sub => a.sub(b),
        BinaryOp::Mul => a.mul(b),
        BinaryOp::Div | BinaryOp::Rem => {
            let value = if op == BinaryOp::Div { a.div(b) } else { a.rem(b) };
            return value.map(Out::Value).ok_or_else(|| fault_message(op, a, b));
        }
        BinaryOp::BitAnd => a.and(b),
        BinaryOp::BitOr => a.or(b),
        BinaryOp::BitXor => a.xor(b),
        _ => return Err(format!("`{}` on integers", op.symbol())),
    }))
}

fn float_op<T: Copy + PartialOrd + std::ops::Add<Output = T> + std::ops::Sub<Output = T>>(
    op: BinaryOp,
    a: T,
    b: T,
    mul: impl Fn(T, T) -> T,
    div: impl Fn(T, T) -> T,
) -> Result<Out<T>, String> {
    if let Some(c) = compare(op, a, b) {
        return Ok(Out::Bool(c));
    }
    Ok(Out::Value(match op {
        BinaryOp::Add => a + b,
        BinaryOp::Sub => a - b,
        BinaryOp::Mul => mul(a, b),
        BinaryOp::Div => div(a, b),
        _ => return Err(format!("`{}` on floats", op.symbol())),
    }))
}

fn wrap<T>(out: Result<Out<T>, String>, make: impl Fn(T) -> Value) -> OpResult {
    Ok(match out? {
        Out::Value(v) => make(v),
        Out::Bool(b) => Value::Bool(b),
    })
}

/// `a op b`. `&&` and `||` are evaluated here on both operands; the interpreter short-circuits
/// before calling this.
pub(crate) fn binary(op: BinaryOp, a: &Value, b: &Value) -> OpResult {
    if matches!(op, BinaryOp::Shl | BinaryOp::Shr) {
        let count = b.as_u64().ok_or("a shift by a value that is not an integer")?;
        let left = op == BinaryOp::Shl;
        fn shift<T: Int>(left: bool, x: T, count: u64) -> T {
            let n = (count & u64::from(T::BITS - 1)) as u32;
            if left { x.shl(n) } else { x.shr(n) }
        }
        return Ok(match *a {
            Value::I32(x) => Value::I32(shift(left, x, count)),
            Value::I64(x) => Value::I64(shift(left, x, count)),
            Value::U32(x) => Value::U32(shift(left, x, count)),
            Value::U64(x) => Value::U64(shift(left, x, count)),
            _ => return Err("a shift of a value that is not an integer".into()),
        });
    }
    match (a, b) {
        (&Value::Bool(x), &Value::Bool(y)) => Ok(Value::Bool(match op {
            BinaryOp::And | BinaryOp::BitAnd => x && y,
            BinaryOp::Or | BinaryOp::BitOr => x || y,
            BinaryOp::BitXor | BinaryOp::Ne => x != y,
            BinaryOp::Eq => x == y,
            BinaryOp::Lt => !x & y,
            BinaryOp::Le => x <= y,
            BinaryOp::Gt => x & !y,
            BinaryOp::Ge => x >= y,
            _ => return Err(format!("`{}` on bools", op.symbol())),
        })),
        (&Value::I32(x), &Value::I32(y)) => wrap(int_op(op, x, y), Value::I32),
        (&Value::I64(x), &Value::I64(y)) => wrap(int_op(op, x, y), Value::I64),
        (&Value::U32(x), &Value::U32(y)) => wrap(int_op(op, x, y), Value::U32),
        (&Value::U64(x), &Value::U64(y)) => wrap(int_op(op, x, y), Value::U64),
        (&Value::F32(x), &Value::F32(y)) => wrap(float_op(op, x, y, |a, b| a * b, |a, b| a / b), Value::F32),
        (&Value::F64(x), &Value::F64(y)) => wrap(float_op(op, x, y, |a, b| a * b, |a, b| a / b), Value::F64),
        (&Value::Node(x), &Value::Node(y)) => {
            compare(op, x, y).map(Value::Bool).ok_or_else(|| format!("`{}` on nodes", op.symbol()))
        }
        (&Value::Edge(x), &Value::Edge(y)) => {
            compare(op, x, y).map(Value::Bool).ok_or_else(|| format!("`{}` on edges", op.symbol()))
        }
        _ => Err(format!("`{}` between {a:?} and {b:?}", op.symbol())),
    }
}

pub(crate) fn unary(op: UnaryOp, a: &Value) -> OpResult {
    Ok(match (op, a) {
        (UnaryOp::Neg, &Value::I32(x)) => Value::I32(x.wrapping_neg()),
        (UnaryOp::Neg, &Value::I64(x)) => Value::I64(x.wrapping_neg()),
        (UnaryOp::Neg, &Value::U32(x)) => Value::U32(x.wrapping_neg()),
        (UnaryOp::Neg, &Value::U64(x)) => Value::U64(x.wrapping_neg()),
        (UnaryOp::Neg, &Value::F32(x)) => Value::F32(-x),
        (UnaryOp::Neg, &Value::F64(x)) => Value::F64(-x),
        (UnaryOp::Not, &Value::Bool(x)) => Value::Bool(!x),
        (UnaryOp::Not, &Value::I32(x)) => Value::I32(!x),
        (UnaryOp::Not, &Value::I64(x)) => Value::I64(!x),
        (UnaryOp::Not, &Value::U32(x)) => Value::U32(!x),
        (UnaryOp::Not, &Value::U64(x)) => Value::U64(!x),
        _ => return Err(format!("{op:?} of {a:?}")),
    })
}

/// `value as ty`, as C converts: integers are truncated or extended by their source's
/// signedness; floats to integers truncate toward zero (saturating where C leaves it
/// undefined); integers to floats round to nearest.
pub(crate) fn cast(value: &Value, ty: Type) -> OpResult {
    enum N {
        I(i128),
        F(f64),
    }
    let n = match *value {
        Value::I32(x) => N::I(x.into()),
        Value::I64(x) => N::I(x.into()),
        Value::U32(x) | Value::Node(x) => N::I(x.into()),
        Value::U64(x) | Value::Edge(x) => N::I(x.into()),
        Value::F32(x) => N::F(x.into()),
        Value::F64(x) => N::F(x),
        Value::Bool(b) => N::I(b.into()),
        Value::Element(x) => N::I(x.into()),
        Value::Struct(_) => return Err("a cast of a struct".into()),
    };
    macro_rules! to_int {
        ($t:ty, $make:expr) => {
            $make(match n {
                N::I(i) => i as $t,
                N::F(f) => f as $t,
            })
        };
    }
    Ok(match ty {
        Type::Scalar(Scalar::I32) => to_int!(i32, Value::I32),
        Type::Scalar(Scalar::I64) => to_int!(i64, Value::I64),
        Type::Scalar(Scalar::U32) => to_int!(u32, Value::U32),
        Type::Scalar(Scalar::U64) => to_int!(u64, Value::U64),
        Type::Node => to_int!(u32, Value::Node),
        Type::Edge => to_int!(u64, Value::Edge),
        Type::Scalar(Scalar::F32) => Value::F32(match (n, value) {
            (_, Value::F32(x)) => *x,
            (N::F(f), _) => f as f32,
            (N::I(i), _) => i as f32,
        }),
        Type::Scalar(Scalar::F64) => Value::F64(match n {
            N::F(f) => f,
            N::I(i) => i as f64,
        }),
        Type::Scalar(Scalar::Bool) => Value::Bool(match n {
            N::I(i) => i != 0,
            N::F(f) => f != 0.0,
        }),
        Type::Struct(_) | Type::Element(_) | Type::Array(_) | Type::Unit => return Err(format!("a cast to {ty}")),
    })
}

/// `min`, `max`, `abs`, `sqrt` as the C target's helpers compute them.
pub(crate) fn builtin(builtin: Builtin, args: &[Value]) -> OpResult {
    match (builtin, args) {
        (Builtin::Min, [a, b]) => {
            Ok(if binary(BinaryOp::Lt, b, a)? == Value::Bool(true) { b.clone() } else { a.clone() })
        }
        (Builtin::Max, [a, b]) => {
            Ok(if binary(BinaryOp::Gt, b, a)? == Value::Bool(true) { b.clone() } else { a.clone() })
        }
        (Builtin::Abs, [a]) => Ok(match *a {
            Value::I32(x) => Value::I32(x.wrapping_abs()),
            Value::I64(x) => Value::I64(x.wrapping_abs()),
            Value::F32(x) => Value::F32(x.abs()),
            Value::F64(x) => Value::F64(x.abs()),
            Value::U32(_) | Value::U64(_) => a.clone(),
            _ => return Err(format!("abs of {a:?}")),
        }),
        (Builtin::Sqrt, [Value::F32(x)]) => Ok(Value::F32(x.sqrt())),
        (Builtin::Sqrt, [Value::F64(x)]) => Ok(Value::F64(x.sqrt())),
        (Builtin::Ln, [Value::F32(x)]) => Ok(Value::F32(x.ln())),
        (Builtin::Ln, [Value::F64(x)]) => Ok(Value::F64(x.ln())),
        (Builtin::Exp, [Value::F32(x)]) => Ok(Value::F32(x.exp())),
        (Builtin::Exp, [Value::F64(x)]) => Ok(Value::F64(x.exp())),
        _ => Err(format!("{builtin:?} of {args:?}")),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn integers_wrap_and_shifts_mask() {
        let add = binary(BinaryOp::Add, &Value::U32(u32::MAX), &Value::U32(2)).unwrap();
        assert_eq!(add, Value::U32(1));
        let mul = binary(BinaryOp::Mul, &Value::I32(i32::MAX), &Value::I32(2)).unwrap();
        assert_eq!(mul, Value::I32(-2));
        assert_eq!(binary(BinaryOp::Shl, &Value::U32(1), &Value::U64(33)).unwrap(), Value::U32(2));
        assert_eq!(binary(BinaryOp::Shr, &Value::I32(-8), &Value::I32(1)).unwrap(), Value::I32(-4));
        assert_eq!(binary(BinaryOp::Rem, &Value::I32(-7), &Value::I32(2)).unwrap(), Value::I32(-1));
        assert!(binary(BinaryOp::Div, &Value::U64(1), &Value::U64(0)).unwrap_err().contains("division by zero"));
        assert_eq!(binary(BinaryOp::Div, &Value::F64(1.0), &Value::F64(0.0)).unwrap(), Value::F64(f64::INFINITY));
        assert_eq!(unary(UnaryOp::Neg, &Value::U32(1)).unwrap(), Value::U32(u32::MAX));
    }

    /// Integer division and remainder by zero, and of a signed type's minimum by -1, are faults
    /// (for `fault` and `binary` alike); their neighbours divide as usual.
    #[test]
    fn division_faults() {
        let faults = [
            (BinaryOp::Div, Value::I32(i32::MIN), Value::I32(-1), "division overflows: -2147483648 / -1"),
            (BinaryOp::Rem, Value::I32(i32::MIN), Value::I32(-1), "remainder overflows: -2147483648 % -1"),
            (BinaryOp::Div, Value::I64(i64::MIN), Value::I64(-1), "division overflows"),
            (BinaryOp::Rem, Value::I64(i64::MIN), Value::I64(-1), "remainder overflows"),
            (BinaryOp::Div, Value::I32(5), Value::I32(0), "division by zero"),
            (BinaryOp::Rem, Value::I64(5), Value::I64(0), "remainder by zero"),
            (BinaryOp::Div, Value::U32(5), Value::U32(0), "division by zero"),
            (BinaryOp::Rem, Value::U64(5), Value::U64(0), "remainder by zero"),
        ];
        for (op, a, b, message) in faults {
            assert!(fault(op, &a, &b).is_some_and(|m| m.contains(message)), "{a:?} {op:?} {b:?}");
            assert!(binary(op, &a, &b).unwrap_err().contains(message), "{a:?} {op:?} {b:?}");
        }
        let fine = [
            (BinaryOp::Div, Value::I32(i32::MIN + 1), Value::I32(-1), Value::I32(i32::MAX)),
            (BinaryOp::Div, Value::I32(i32::MIN), Value::I32(1), Value::I32(i32::MIN)),
            (BinaryOp::Rem, Value::I64(i64::MIN), Value::I64(2), Value::I64(0)),
            (BinaryOp::Div, Value::U32(u32::MAX), Value::U32(u32::MAX), Value::U32(1)),
            (BinaryOp::Mul, Value::I32(i32::MIN), Value::I32(-1), Value::I32(i32::MIN)),
        ];
        for (op, a, b, want) in fine {
            assert_eq!(fault(op, &a, &b), None, "{a:?} {op:?} {b:?}");
            assert_eq!(binary(op, &a, &b).unwrap(), want, "{a:?} {op:?} {b:?}");
        }
        assert_eq!(fault(BinaryOp::Div, &Value::F64(1.0), &Value::F64(0.0)), None);
    }

    /// Floats convert to integers as Rust's `as`: toward zero, saturating, NaN to 0.
    #[test]
    fn floats_to_integers_saturate() {
        let i32_ty = Type::Scalar(Scalar::I32);
        assert_eq!(cast(&Value::F64(-5.5), Type::U32).unwrap(), Value::U32(0));
        assert_eq!(cast(&Value::F64(f64::NAN), i32_ty).unwrap(), Value::I32(0));
        assert_eq!(cast(&Value::F64(1e20), Type::Scalar(Scalar::I64)).unwrap(), Value::I64(i64::MAX));
        assert_eq!(cast(&Value::F32(-1e20), i32_ty).unwrap(), Value::I32(i32::MIN));
        assert_eq!(cast(&Value::F32(f32::INFINITY), Type::U64).unwrap(), Value::U64(u64::MAX));
    }

    #[test]
    fn casts_convert_as_c_does() {
        assert_eq!(cast(&Value::I32(-1), Type::U64).unwrap(), Value::U64(u64::MAX));
        assert_eq!(cast(&Value::U32(u32::MAX), Type::U64).unwrap(), Value::U64(u32::MAX.into()));
        assert_eq!(cast(&Value::U64(1 << 32 | 5), Type::Node).unwrap(), Value::Node(5));
        assert_eq!(cast(&Value::F64(-2.7), Type::Scalar(Scalar::I32)).unwrap(), Value::I32(-2));
        assert_eq!(cast(&Value::U64(3), Type::Scalar(Scalar::F32)).unwrap(), Value::F32(3.0));
        assert_eq!(builtin(Builtin::Min, &[Value::F64(2.0), Value::F64(1.0)]).unwrap(), Value::F64(1.0));
        assert_eq!(builtin(Builtin::Abs, &[Value::I64(-4)]).unwrap(), Value::I64(4));
    }
}
