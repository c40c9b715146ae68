//! Type rules shared by expressions and statements: what operators, casts and literals accept,
//! and the names types and suggestions are shown with.

use grail_ir::{Scalar, Type};

use crate::ast;

/// The IR type of a built-in type name; `None` for a struct name.
pub(super) fn builtin(kind: &ast::TypeKind) -> Option<Type> {
    Some(match kind {
        ast::TypeKind::Bool => Type::BOOL,
        ast::TypeKind::I32 => Type::Scalar(Scalar::I32),
        ast::TypeKind::I64 => Type::Scalar(Scalar::I64),
        ast::TypeKind::U32 => Type::U32,
        ast::TypeKind::U64 => Type::U64,
        ast::TypeKind::F32 => Type::Scalar(Scalar::F32),
        ast::TypeKind::F64 => Type::Scalar(Scalar::F64),
        ast::TypeKind::Node => Type::Node,
        ast::TypeKind::Edge => Type::Edge,
        ast::TypeKind::Named(_) | ast::TypeKind::Array(..) => return None,
    })
}

pub(super) fn is_integer(ty: Type) -> bool {
    ty.scalar().is_some_and(Scalar::is_integer)
}

pub(super) fn is_float(ty: Type) -> bool {
    ty.scalar().is_some_and(Scalar::is_float)
}

/// Integers and floats (not `bool`, `Node`, `Edge`).
pub(super) fn is_numeric(ty: Type) -> bool {
    ty.is_numeric()
}

/// A value a kernel parameter, a param, a constant or `main`'s result can have.
pub(super) fn is_plain(ty: Type) -> bool {
    matches!(ty, Type::Scalar(_) | Type::Node | Type::Edge)
}

/// Whether `value as target` is allowed: numbers among themselves, `Node` with `u32` and `Edge`
/// with `u64` (both ways), an element handle to `u32`, and each of these to itself; never
/// `bool` or structs.
pub(super) fn castable(from: Type, to: Type) -> bool {
    match (from, to) {
        (Type::Node, Type::U32) | (Type::U32, Type::Node) => true,
        (Type::Edge, Type::U64) | (Type::U64, Type::Edge) => true,
        (Type::Node, Type::Node) | (Type::Edge, Type::Edge) => true,
        // An element handle converts to its index, never back: handles come from `add` and
        // `forall`, so each names an element that exists.
        (Type::Element(_), Type::U32) => true,
        // A conversion to the type a value has already is allowed (and does nothing).
        (a, b) if a == b => matches!(a, Type::Element(_)) || is_numeric(a),
        _ => is_numeric(from) && is_numeric(to),
    }
}

/// Whether an unsuffixed integer literal of this value can have type `ty`.
pub(super) fn literal_fits(value: u64, ty: Type) -> bool {
    match ty {
        Type::Scalar(Scalar::I32) => value <= i32::MAX as u64,
        Type::Scalar(Scalar::I64) => value <= i64::MAX as u64,
        Type::Scalar(Scalar::U32) | Type::Node => value <= u32::MAX as u64,
        _ => true,
    }
}

/// The number of single-character edits (insertions, deletions, substitutions and swaps of
/// neighbours) between two names.
pub(super) fn distance(a: &str, b: &str) -> usize {
    let (a, b): (Vec<char>, Vec<char>) = (a.chars().collect(), b.chars().collect());
    let mut d = vec![vec![0usize; b.len() + 1]; a.len() + 1];
    for (i, row) in d.iter_mut().enumerate() {
        row[0] = i;
    }
    for (j, cell) in d[0].iter_mut().enumerate() {
        *cell = j;
    }
    for i in 1..=a.len() {
        for j in 1..=b.len() {
            let cost = usize::from(a[i - 1] != b[j - 1]);
            let mut best = (d[i - 1][j] + 1).min(d[i][j - 1] + 1).min(d[i - 1][j - 1] + cost);
            if i > 1 && j > 1 && a[i - 1] == b[j - 2] && a[i - 2] == b[j - 1] {
                best = best.min(d[i - 2][j - 2] + 1);
            }
            d[i][j] = best;
        }
    }
    d[a.len()][b.len()]
}

/// The candidate closest to `name`, if it is close enough to be a likely typo.
pub(super) fn suggest<'c>(name: &str, candidates: impl IntoIterator<Item = &'c str>) -> Option<&'c str> {
    let limit = (name.chars().count() / 3).max(1);
    candidates
        .into_iter()
        .filter(|c| *c != name)
        .map(|c| (distance(name, c), c))
        .filter(|(d, _)| *d <= limit)
        .min_by_key(|(d, _)| *d)
        .map(|(_, c)| c)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn distances() {
        assert_eq!(distance("level", "levle"), 1);
        assert_eq!(distance("dist", "dst"), 1);
        assert_eq!(distance("", "abc"), 3);
        assert_eq!(suggest("nosuch", ["level", "dist"]), None);
        assert_eq!(suggest("levl", ["level", "dist"]), Some("level"));
        assert_eq!(suggest("levle", ["level", "dist"]), Some("level"));
    }

    #[test]
    fn casts() {
        assert!(castable(Type::Node, Type::U32));
        assert!(castable(Type::U64, Type::Edge));
        assert!(!castable(Type::Node, Type::U64));
        assert!(castable(Type::U32, Type::Scalar(Scalar::F64)));
        assert!(!castable(Type::BOOL, Type::U32));
    }
}
