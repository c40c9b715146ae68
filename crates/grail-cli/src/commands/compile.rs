//! `grail compile`: run the compiler up to a stage and write that stage out.

use std::io::Write;

use anyhow::{Context, Result};

use crate::cli::{CompileArgs, Emit};

pub fn compile(args: CompileArgs) -> Result<()> {
    let program = super::check::parse_file(&args.program)?;
    let text = match args.emit {
        Emit::Ast => grail_lang::print_program(&program),
    };
    std::io::stdout().write_all(text.as_bytes()).context("cannot write to standard output")
}
