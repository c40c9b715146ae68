//! Which optimization configuration a run uses: the one given (`--opt none|all|KEY=VALUE,...`)
//! or `tuned`, the default, which resolves to the tuned configuration for the program, target
//! and input class when one is recorded, else to the target's documented default
//! ([`default_config`]).

use std::fmt;
use std::str::FromStr;

use grail_ir::OptConfig;
use grail_ir::opt::ConfigError;

use crate::algorithm::Target;

/// What `--opt` says.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum OptChoice {
    /// The tuned configuration for this program, target and input class, else the default.
    #[default]
    Tuned,
    /// Exactly this configuration.
    Given(OptConfig),
}

impl FromStr for OptChoice {
    type Err = ConfigError;

    fn from_str(text: &str) -> Result<Self, Self::Err> {
        match text.trim() {
            "tuned" => Ok(OptChoice::Tuned),
            other => OptConfig::parse(other).map(OptChoice::Given),
        }
    }
}

impl fmt::Display for OptChoice {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            OptChoice::Tuned => f.write_str("tuned"),
            OptChoice::Given(config) => config.fmt(f),
        }
    }
}

/// The configuration a target uses when nothing was tuned for the input: on the GPU every
/// optimization (the passes leave alone what they cannot apply, and say why); on the CPU the
/// same passes, whose GPU-only decisions the C target ignores.
pub fn default_config(target: Target) -> OptConfig {
    match target {
        Target::Gpu | Target::Cpu | Target::Reference => OptConfig::all(),
    }
}

/// The configuration a run with `choice` uses on `target`.
pub fn resolve(choice: OptChoice, target: Target) -> OptConfig {
    match choice {
        OptChoice::Given(config) => config,
        OptChoice::Tuned => default_config(target),
    }
}
