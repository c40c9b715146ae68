//! `grail check`: parse and type-check a program and report its diagnostics.

use std::path::Path;

use anyhow::{Result, bail};
use grail_ir::Module;
use grail_lang::ast::Program;
use grail_lang::diagnostics::emit_to_stderr;
use grail_lang::{Diagnostic, SourceMap, has_errors, parse};

use crate::cli::CheckArgs;

pub fn check(args: CheckArgs) -> Result<()> {
    lower_file(&args.program)?;
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

/// The program's name for the IR module: the file stem.
fn module_name(path: &Path) -> String {
    path.file_stem().map_or_else(|| "program".to_string(), |s| s.to_string_lossy().into_owned())
}

/// Runs a front-end stage over a program, rendering its diagnostics to standard error. Fails
/// if the program cannot be read or has errors; warnings alone are printed.
fn front_end<T>(
    path: &Path,
    stage: impl FnOnce(&str, grail_lang::FileId) -> (Option<T>, Vec<Diagnostic>),
) -> Result<T> {
    let (name, source) = read_program(path)?;
    let mut files = SourceMap::new();
    let file = files.add(name.clone(), source);
    let (result, diagnostics) = stage(files.text(file), file);
    emit_to_stderr(&diagnostics, &files).map_err(|e| anyhow::anyhow!("cannot write diagnostics: {e}"))?;
    match result {
        Some(result) if !has_errors(&diagnostics) => Ok(result),
        _ => {
            let errors = diagnostics.iter().filter(|d| d.is_error()).count().max(1);
            bail!("{name}: {errors} error{}", if errors == 1 { "" } else { "s" })
        }
    }
}

/// Reads and parses a program.
pub fn parse_file(path: &Path) -> Result<Program> {
    front_end(path, parse)
}

/// Reads, parses, checks and lowers a program to the IR.
pub fn lower_file(path: &Path) -> Result<Module> {
    let name = module_name(path);
    front_end(path, |source, file| grail_lang::compile(source, file, &name))
}
