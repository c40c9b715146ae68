//! The generated targets as the commands see them: a [`Builder`] compiles suite variants and
//! program files for the CPU (the C compiler) or one GPU, and names the target as the tuning
//! database keys it.

use std::io::Write;

use anyhow::{Context, Result, bail};
use grail_algos::Target;
use grail_algos::suite::SuiteProgram;
use grail_algos::tuning::TargetKey;
use grail_algos::{Variant, tuning};
use grail_graph::Graph;
use grail_ir::{Module, OptConfig};
use grail_runtime::cpu::{CCompiler, CpuProgram, RunOptions, RunOutput, Value};
use grail_runtime::gpu::{Device, GpuProgram, GpuTimes};
use grail_runtime::{ModuleCache, Table};

/// What compiles for a target.
pub enum Builder {
    Cpu(CCompiler),
    /// A GPU, opened once: every program compiled for it shares its primary context (opening
    /// and closing the device for each would tear the context down and build it again).
    Gpu(Device),
}

impl Builder {
    /// The C compiler, or GPU `device`.
    pub fn new(target: Target, device: usize) -> Result<Builder> {
        Builder::checked(target, device, false)
    }

    /// The C compiler, or GPU `device` in checked mode when `checks` (`--checks`; the CPU target
    /// always checks).
    pub fn checked(target: Target, device: usize, checks: bool) -> Result<Builder> {
        match target {
            Target::Cpu => Ok(Builder::Cpu(CCompiler::detect()?)),
            Target::Gpu => Ok(Builder::Gpu(Device::open(device)?.with_checks(checks))),
            Target::Reference => bail!("the reference target compiles nothing (expected cpu or gpu)"),
        }
    }

    pub fn target(&self) -> Target {
        match self {
            Builder::Cpu(_) => Target::Cpu,
            Builder::Gpu(_) => Target::Gpu,
        }
    }

    /// The target as the tuning database keys it.
    pub fn key(&self) -> TargetKey {
        match self {
            Builder::Cpu(_) => TargetKey::cpu(),
            Builder::Gpu(device) => TargetKey::gpu(&device.info().name),
        }
    }

    /// A suite variant compiled with `opt`.
    pub fn suite(&self, variant: &'static Variant, opt: &OptConfig, cache: &ModuleCache) -> Result<SuiteProgram> {
        let program = match self {
            Builder::Cpu(compiler) => SuiteProgram::compile(variant, compiler, Some(cache), opt),
            Builder::Gpu(device) => SuiteProgram::compile_gpu(variant, device.clone(), Some(cache), opt),
        };
        program.with_context(|| format!("cannot build {} with {opt} for the {} target", variant.program, self.target()))
    }

    /// A program (optimized already) compiled.
    pub fn program(&self, module: Module, cache: &ModuleCache) -> Result<FileProgram> {
        Ok(match self {
            Builder::Cpu(compiler) => FileProgram::Cpu(Box::new(CpuProgram::compile(module, compiler, Some(cache))?)),
            Builder::Gpu(device) => {
                FileProgram::Gpu(Box::new(GpuProgram::compile(module, device.clone(), Some(cache))?))
            }
        })
    }

    /// `lowered` optimized with `opt` and compiled.
    pub fn optimized(&self, lowered: &Module, opt: &OptConfig, cache: &ModuleCache) -> Result<FileProgram> {
        let module = grail_ir::optimize(lowered.clone(), opt)
            .map_err(|e| anyhow::anyhow!("internal error (a bug in grail): optimizing with {opt}: {e}"))?;
        self.program(module, cache)
    }

    /// What `--opt` resolves to for a program on this target and input.
    pub fn resolve(
        &self,
        choice: grail_algos::OptChoice,
        program: &tuning::ProgramId,
        graph: Option<&Graph>,
    ) -> tuning::Resolution {
        tuning::resolve(choice, &self.key(), program, graph)
    }
}

/// A program file (or any program outside the suite's variants) compiled for the CPU or a GPU.
pub enum FileProgram {
    Cpu(Box<CpuProgram>),
    Gpu(Box<GpuProgram>),
}

impl FileProgram {
    pub fn module(&self) -> &Module {
        match self {
            FileProgram::Cpu(program) => program.module(),
            FileProgram::Gpu(program) => program.module(),
        }
    }

    /// Runs the program; what it prints goes to `out`. On the GPU, the kernel and copy times too.
    pub fn run(
        &self,
        graph: &Graph,
        values: &[Option<Value>],
        inputs: &[Table],
        threads: usize,
        out: &mut dyn Write,
    ) -> Result<(RunOutput, Option<GpuTimes>)> {
        Ok(match self {
            FileProgram::Cpu(program) => {
                (program.run_with_inputs(graph, values, inputs, &RunOptions { threads }, out)?, None)
            }
            FileProgram::Gpu(program) => {
                let (output, times) = program.run_with_inputs(graph, values, inputs, out)?;
                (output, Some(times))
            }
        })
    }
}
