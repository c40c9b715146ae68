//! `grail check`: parse a program and report its diagnostics.

use std::path::Path;

use anyhow::{Result, bail};
use grail_lang::ast::Program;
use grail_lang::diagnostics::emit_to_stderr;
use grail_lang::{SourceMap, has_errors, parse};

use crate::cli::CheckArgs;

pub fn check(args: CheckArgs) -> Result<()> {
    parse_file(&args.program)?;
    eprintln!("{}: ok", args.program.display());
    Ok(())
}

/// Reads a program: the file if it exists, else the suite program of that name. Returns the
/// name diagnostics show and the text.
fn read_program(path: &Path) -> Result<(String, String)> {
    match std::fs::read_to_string(path) {
        Ok(text) => Ok((path.display().to_string(), text)),
        Err(error) => {
            let name = path.to_str().unwrap_or_default();
            if let Some(text) = grail_algos::program_source(name) {
                return Ok((format!("crates/grail-algos/programs/{name}.grail"), text.to_string()));
            }
            let suite: Vec<&str> = grail_algos::PROGRAMS.iter().map(|(name, _)| *name).collect();
            bail!("cannot read {}: {error} (nor is it a suite program: {})", path.display(), suite.join(", "))
        }
    }
}

/// Reads and parses a program, rendering its diagnostics to standard error. Fails if it cannot
/// be read or has errors; warnings alone are printed and the program returned.
pub fn parse_file(path: &Path) -> Result<Program> {
    let (name, source) = read_program(path)?;
    let mut files = SourceMap::new();
    let file = files.add(name.clone(), source);
    let (program, diagnostics) = parse(files.text(file), file);
    emit_to_stderr(&diagnostics, &files).map_err(|e| anyhow::anyhow!("cannot write diagnostics: {e}"))?;
    match program {
        Some(program) if !has_errors(&diagnostics) => Ok(program),
        _ => {
            let errors = diagnostics.iter().filter(|d| d.is_error()).count();
            bail!("{name}: {errors} error{}", if errors == 1 { "" } else { "s" })
        }
    }
}
