//! What several test files share: random constraint sets for property tests.

use grail_pta::{Constraint, Constraints};
use proptest::prelude::*;

/// Up to 40 constraints of every kind over 1 to 11 variables named `v0`, `v1`, ...
pub fn random_constraints() -> impl Strategy<Value = Constraints> {
    (1u32..12).prop_flat_map(|n| {
        proptest::collection::vec((0u8..4, 0..n, 0..n), 0..40).prop_map(move |raw| {
            let mut c = Constraints::new();
            for v in 0..n {
                c.var(&format!("v{v}")).unwrap();
            }
            for (kind, dst, src) in raw {
                c.push(match kind {
                    0 => Constraint::AddressOf { dst, src },
                    1 => Constraint::Copy { dst, src },
                    2 => Constraint::Load { dst, src },
                    _ => Constraint::Store { dst, src },
                })
                .unwrap();
            }
            c
        })
    })
}
