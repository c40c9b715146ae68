//! `grail compile`: run the compiler up to a stage and write that stage out.

use std::io::Write;
use std::path::{Path, PathBuf};

use anyhow::{Context, Result};
use grail_algos::{Algorithm, Variant};

use crate::cli::{CompileArgs, Emit};

pub fn compile(args: CompileArgs) -> Result<()> {
    if let Some(algorithm) = args.program.to_str().and_then(|name| name.parse::<Algorithm>().ok())
        && !args.program.is_file()
        && super::variant_help(algorithm, args.variant.as_deref())
    {
        return Ok(());
    }
    let Some(emit) = args.emit else {
        return Err(super::UsageError("--emit STAGE is required (only `--variant help` needs none)".into()).into());
    };
    let program = resolve(&args.program, args.variant.as_deref())?;
    let optimized = || -> Result<grail_ir::Module> {
        grail_ir::optimize(super::check::lower_file(&program)?, &args.opt)
            .map_err(|e| anyhow::anyhow!("internal error (a bug in grail): {e}"))
    };
    let text = match emit {
        Emit::Ast => grail_lang::print_program(&super::check::parse_file(&program)?),
        Emit::Ir => grail_ir::print(&optimized()?),
        Emit::C => grail_codegen::emit_c(&optimized()?).context("the C code generator failed")?,
        Emit::Cuda => grail_codegen::emit_cuda(&optimized()?).context("the CUDA code generator failed")?,
    };
    std::io::stdout().write_all(text.as_bytes()).context("cannot write to standard output")
}

/// The program `grail compile` shows: a file as it is; a suite algorithm's name as the program
/// of its variant (the default, the one `grail run ALGO` runs, unless `variant` names another);
/// anything else as a suite program's name.
fn resolve(program: &Path, variant: Option<&str>) -> Result<PathBuf> {
    let name = program.to_str().unwrap_or_default();
    match name.parse::<Algorithm>() {
        Ok(algorithm) if !program.is_file() => {
            let variant = Variant::find(algorithm, variant).map_err(super::UsageError)?;
            Ok(PathBuf::from(variant.program))
        }
        _ if variant.is_some() => Err(super::UsageError(format!(
            "--variant is for a suite algorithm (bfs, sssp, cc, pr, tri, mis, mst); {name} is not one"
        ))
        .into()),
        _ => Ok(program.to_path_buf()),
    }
}
