//! How a ghost's value, written by a kernel on one part, is merged into its owner's: the
//! operator comes from how the kernel writes the property (Falcon's update functions derived
//! from the atomic used).

use grail_graph::PropertyType;
use grail_ir::analysis::PropertyWrites;

/// The merge of a changed ghost into its owner.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Merge {
    /// `atomic_min`: the smaller value.
    Min,
    /// `atomic_max`: the larger value.
    Max,
    /// `atomic_add` / `atomic_sub`: what the part added to its ghost is added to the owner.
    Sum,
    /// `atomic_and`: the owner and-ed with the ghost.
    And,
    /// `atomic_or`: the owner or-ed with the ghost.
    Or,
    /// Plain writes (or `atomic_cas`): the ghost's new value replaces the owner's, as a racing
    /// write of another thread would on one device.
    Replace,
    /// The program's own update function `i` (`merge property with function;`,
    /// `Module::merge_functions[i]`): the owner's value becomes `function(current, incoming)`.
    Custom(u32),
}

impl Merge {
    /// The merge for a kernel's writes of a property; `None` when it does not write it. A
    /// kernel mixing two atomic operators on one property is refused earlier
    /// (`grail_ir::analysis::partition_obstacles`).
    pub fn of(writes: &PropertyWrites) -> Option<Merge> {
        Some(if writes.min {
            Merge::Min
        } else if writes.max {
            Merge::Max
        } else if writes.add {
            Merge::Sum
        } else if writes.and {
            Merge::And
        } else if writes.or {
            Merge::Or
        } else if writes.any() {
            Merge::Replace
        } else {
            return None;
        })
    }

    /// The operator's number for the device kernel `grail_merge_words`.
    pub fn code(self) -> u32 {
        match self {
            Merge::Min => 0,
            Merge::Max => 1,
            Merge::Sum => 2,
            Merge::And => 3,
            Merge::Or => 4,
            // The program's own kernel (`grail_merge_custom_<i>`) merges instead.
            Merge::Replace | Merge::Custom(_) => 5,
        }
    }

    /// The owner's new value (as the host's column words of type `ty`)
    /// from its current one and a ghost that went from `before` to `after` during the kernel.
    pub fn apply(self, ty: PropertyType, owner: u64, before: u64, after: u64) -> u64 {
        use std::cmp::Ordering::{Greater, Less};
        match self {
            // The program's function, which the part's runtime calls (this is its fallback).
            Merge::Replace | Merge::Custom(_) => after,
            Merge::And => owner & after,
            Merge::Or => owner | after,
            Merge::Min => {
                if compare(ty, after, owner) == Less {
                    after
                } else {
                    owner
                }
            }
            Merge::Max => {
                if compare(ty, after, owner) == Greater {
                    after
                } else {
                    owner
                }
            }
            Merge::Sum => match ty {
                PropertyType::Bool => owner | after,
                PropertyType::I32 => {
                    let delta = (after as i32).wrapping_sub(before as i32);
                    (owner as i32).wrapping_add(delta) as i64 as u64
                }
                PropertyType::U32 => u64::from((owner as u32).wrapping_add((after as u32).wrapping_sub(before as u32))),
                PropertyType::I64 | PropertyType::U64 => owner.wrapping_add(after.wrapping_sub(before)),
                PropertyType::F32 => {
                    let f = |w: u64| f32::from_bits(w as u32);
                    u64::from((f(owner) + (f(after) - f(before))).to_bits())
                }
                PropertyType::F64 => {
                    (f64::from_bits(owner) + (f64::from_bits(after) - f64::from_bits(before))).to_bits()
                }
            },
        }
    }
}

/// One word as [`normalize`] makes it.
pub fn normal(ty: PropertyType, word: u64) -> u64 {
    let mut words = [word];
    normalize(ty, &mut words);
    words[0]
}

/// Words of 4-byte columns as their low 32 bits and bools as 0 or 1, whatever device they came
/// from (a GPU's come zero-extended, the CPU's sign-extended): so that equal values compare
/// equal when the parts' copies are compared.
pub fn normalize(ty: PropertyType, words: &mut [u64]) {
    match ty {
        PropertyType::I32 | PropertyType::U32 | PropertyType::F32 => words.iter_mut().for_each(|w| *w &= 0xffff_ffff),
        PropertyType::Bool => words.iter_mut().for_each(|w| *w = u64::from(*w != 0)),
        _ => {}
    }
}

/// The type's number for the device kernel `grail_merge_words`.
pub fn type_code(ty: PropertyType) -> u32 {
    match ty {
        PropertyType::Bool => 0,
        PropertyType::I32 => 1,
        PropertyType::I64 => 2,
        PropertyType::U32 => 3,
        PropertyType::U64 => 4,
        PropertyType::F32 => 5,
        PropertyType::F64 => 6,
    }
}

/// Orders two words of type `ty` as the generated code's `atomic_min`/`atomic_max` do.
fn compare(ty: PropertyType, a: u64, b: u64) -> std::cmp::Ordering {
    match ty {
        PropertyType::U64 => a.cmp(&b),
        // Words of 4-byte columns may come zero-extended (from a GPU): compare the low bits.
        PropertyType::Bool | PropertyType::U32 => (a as u32).cmp(&(b as u32)),
        PropertyType::I32 => (a as i32).cmp(&(b as i32)),
        PropertyType::I64 => (a as i64).cmp(&(b as i64)),
        PropertyType::F32 => f32::from_bits(a as u32).total_cmp(&f32::from_bits(b as u32)),
        PropertyType::F64 => f64::from_bits(a).total_cmp(&f64::from_bits(b)),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn merges_combine_as_the_atomics_do() {
        let i32w = |x: i32| x as i64 as u64;
        assert_eq!(Merge::Min.apply(PropertyType::I32, i32w(3), i32w(5), i32w(-2)), i32w(-2));
        assert_eq!(Merge::Min.apply(PropertyType::U32, 3, 9, 7), 3);
        assert_eq!(Merge::Max.apply(PropertyType::U64, 3, 0, 7), 7);
        assert_eq!(Merge::Sum.apply(PropertyType::I32, i32w(10), i32w(1), i32w(-4)), i32w(5));
        assert_eq!(Merge::Sum.apply(PropertyType::U32, 10, 2, 7), 15);
        let f = |x: f64| x.to_bits();
        assert_eq!(Merge::Sum.apply(PropertyType::F64, f(1.0), f(0.5), f(0.75)), f(1.25));
        assert_eq!(Merge::Min.apply(PropertyType::F64, f(1.0), f(0.0), f(-0.5)), f(-0.5));
        assert_eq!(Merge::Replace.apply(PropertyType::U32, 1, 2, 3), 3);
        assert_eq!(Merge::Or.apply(PropertyType::U32, 0b01, 0, 0b10), 0b11);
        assert_eq!(Merge::And.apply(PropertyType::U32, 0b11, 0b11, 0b10), 0b10);
    }

    #[test]
    fn the_merge_follows_the_atomic() {
        let writes = |f: fn(&mut PropertyWrites)| {
            let mut w = PropertyWrites::default();
            f(&mut w);
            Merge::of(&w)
        };
        assert_eq!(writes(|_| {}), None);
        assert_eq!(writes(|w| w.plain = true), Some(Merge::Replace));
        assert_eq!(
            writes(|w| {
                w.plain = true;
                w.min = true
            }),
            Some(Merge::Min)
        );
        assert_eq!(writes(|w| w.add = true), Some(Merge::Sum));
        assert_eq!(writes(|w| w.cas = true), Some(Merge::Replace));
    }
}
