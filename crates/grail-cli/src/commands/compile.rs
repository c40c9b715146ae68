//! `grail compile`: run the compiler up to a stage and write that stage out.

use std::io::Write;

use anyhow::{Context, Result};

use crate::cli::{CompileArgs, Emit};

pub fn compile(args: CompileArgs) -> Result<()> {
    let text = match args.emit {
        Emit::Ast => grail_lang::print_program(&super::check::parse_file(&args.program)?),
        Emit::Ir => grail_ir::print(&super::check::lower_file(&args.program)?),
        Emit::C => {
            grail_codegen::emit_c(&super::check::lower_file(&args.program)?).context("the C code generator failed")?
        }
        Emit::Cuda => grail_codegen::emit_cuda(&super::check::lower_file(&args.program)?)
            .context("the CUDA code generator failed")?,
    };
    std::io::stdout().write_all(text.as_bytes()).context("cannot write to standard output")
}
