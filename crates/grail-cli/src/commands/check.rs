//! `grail check`: parse a program and report its diagnostics.

use std::path::Path;

use anyhow::{Context, Result, bail};
use grail_lang::ast::Program;
use grail_lang::diagnostics::emit_to_stderr;
use grail_lang::{SourceMap, has_errors, parse};

use crate::cli::CheckArgs;

pub fn check(args: CheckArgs) -> Result<()> {
    parse_file(&args.program)?;
    eprintln!("{}: ok", args.program.display());
    Ok(())
}

/// Reads and parses a program, rendering its diagnostics to standard error. Fails if it cannot
/// be read or has errors; warnings alone are printed and the program returned.
pub fn parse_file(path: &Path) -> Result<Program> {
    let source = std::fs::read_to_string(path).with_context(|| format!("cannot read {}", path.display()))?;
    let mut files = SourceMap::new();
    let file = files.add(path.display().to_string(), source);
    let (program, diagnostics) = parse(files.text(file), file);
    emit_to_stderr(&diagnostics, &files).context("cannot write diagnostics")?;
    match program {
        Some(program) if !has_errors(&diagnostics) => Ok(program),
        _ => {
            let errors = diagnostics.iter().filter(|d| d.is_error()).count();
            bail!("{}: {errors} error{}", path.display(), if errors == 1 { "" } else { "s" })
        }
    }
}
