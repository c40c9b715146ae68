//! `grail compile`: run the compiler up to a stage and write that stage out.

use std::io::Write;

use anyhow::{Context, Result};

use crate::cli::{CompileArgs, Emit};

pub fn compile(args: CompileArgs) -> Result<()> {
    let optimized = || -> Result<grail_ir::Module> {
        grail_ir::optimize(super::check::lower_file(&args.program)?, &args.opt)
            .map_err(|e| anyhow::anyhow!("internal error (a bug in grail): {e}"))
    };
    let text = match args.emit {
        Emit::Ast => grail_lang::print_program(&super::check::parse_file(&args.program)?),
        Emit::Ir => grail_ir::print(&optimized()?),
        Emit::C => grail_codegen::emit_c(&optimized()?).context("the C code generator failed")?,
        Emit::Cuda => grail_codegen::emit_cuda(&optimized()?).context("the CUDA code generator failed")?,
    };
    std::io::stdout().write_all(text.as_bytes()).context("cannot write to standard output")
}
