//! [`Program`]: a grail program of one's own, compiled once, run on graphs with named
//! parameters, its output properties read back typed.

use std::path::Path;
use std::time::Duration;

use grail_algos::OptChoice;
use grail_algos::tuning::{self, ProgramId, TargetKey};
use grail_graph::Column;
use grail_ir::{Module, OptConfig, Owner, optimize};
use grail_lang::SourceMap;
use grail_lang::diagnostics::render_to_string;
use grail_runtime::cpu::{CCompiler, CpuProgram, RunOptions, RunOutput, Value};
use grail_runtime::gpu::{Device, GpuProgram};
use grail_runtime::{ModuleCache, Table, limits};

use crate::algorithms::Target;
use crate::error::{Error, Result};
use crate::graph::Graph;

/// A grail program, checked and lowered; compiled for a target when it runs.
///
/// ```
/// let program = grail::Program::from_source("degrees", "
///     graph { node deg: u32 = 0; }
///     output deg;
///     kernel count() { forall u in G.nodes() { u.deg = u.degree(); } }
///     fn main() { invoke count(); }
/// ")?;
/// assert_eq!(program.outputs(), ["deg"]);
/// let graph = grail::Graph::from_edges(3, [(0, 1), (0, 2), (1, 2)])?;
/// let run = program.on(&graph).run()?;
/// assert_eq!(run.property::<u32>("deg")?, &[2, 1, 0]);
/// # Ok::<(), grail::Error>(())
/// ```
#[derive(Debug, Clone)]
pub struct Program {
    module: Module,
}

impl Program {
    /// Reads and compiles a `.grail` file; its errors come back rendered, with file, line and
    /// column, as `grail check` prints them.
    pub fn from_file(path: impl AsRef<Path>) -> Result<Program> {
        let path = path.as_ref();
        let source = std::fs::read_to_string(path)
            .map_err(|e| Error::Usage(format!("cannot read the program {}: {e}", path.display())))?;
        let name = path.file_stem().and_then(|s| s.to_str()).unwrap_or("program").to_string();
        Program::compile(&name, &path.display().to_string(), &source)
    }

    /// Compiles a program from its source text; `name` names it in messages.
    pub fn from_source(name: &str, source: &str) -> Result<Program> {
        Program::compile(name, &format!("{name}.grail"), source)
    }

    /// One of the suite's programs by name (`bfs_do`, `sssp_nf`, `pr_pull32`, `traverse`, ...).
    pub fn suite(name: &str) -> Result<Program> {
        let source = grail_algos::program_source(name).ok_or_else(|| {
            let names: Vec<&str> = grail_algos::PROGRAMS.iter().map(|(n, _)| *n).collect();
            Error::Usage(format!("the suite has no program `{name}` (it has {})", names.join(", ")))
        })?;
        Program::from_source(name, source)
    }

    fn compile(name: &str, file_name: &str, source: &str) -> Result<Program> {
        let mut files = SourceMap::new();
        let file = files.add(file_name, source);
        let (module, diagnostics) = grail_lang::compile(files.text(file), file, name);
        match module {
            Some(module) => Ok(Program { module }),
            None => Err(Error::Compile(render_to_string(&diagnostics, &files))),
        }
    }

    /// The program's name.
    pub fn name(&self) -> &str {
        &self.module.name
    }

    /// The parameters, by name, with their types as the language writes them.
    pub fn params(&self) -> Vec<(&str, String)> {
        self.module.params.iter().map(|p| (p.name.as_str(), p.ty.to_string())).collect()
    }

    /// The properties the program declares as `output`.
    pub fn outputs(&self) -> Vec<&str> {
        self.module.outputs.iter().map(|&p| self.module.properties[p.index()].name.as_str()).collect()
    }

    /// An empty table shaped for the elements of collection `name` (its rows hold the element
    /// struct's leaves), to fill and give to [`ProgramRun::input_table`].
    pub fn table(&self, name: &str) -> Result<Table> {
        let module = &self.module;
        let id = module
            .collections
            .iter()
            .position(|c| c.name == name)
            .ok_or_else(|| Error::Usage(format!("the program `{}` has no collection `{name}`", module.name)))?;
        Ok(Table::for_collection(module, grail_ir::CollectionId(id as u32)))
    }

    /// The lowered IR, for the lower-level crates.
    pub fn module(&self) -> &Module {
        &self.module
    }

    /// Prepares a run on `graph`: choose the target and parameters, then [`ProgramRun::run`].
    pub fn on<'a>(&'a self, graph: &'a Graph) -> ProgramRun<'a> {
        ProgramRun {
            program: self,
            graph,
            target: Target::Cpu,
            params: Vec::new(),
            inputs: Vec::new(),
            opt: OptChoice::Tuned,
            threads: 0,
            time_limit: None,
        }
    }
}

/// A program about to run on a graph.
#[must_use = "a run does nothing until `.run()`"]
#[derive(Debug, Clone)]
pub struct ProgramRun<'a> {
    program: &'a Program,
    graph: &'a Graph,
    target: Target,
    params: Vec<(String, String)>,
    /// Input collections by name: their elements as values, or as text to read.
    inputs: Vec<(String, InputElements)>,
    opt: OptChoice,
    threads: usize,
    time_limit: Option<Duration>,
}

/// An input collection's elements: values, a table, or text in the format `output` writes.
#[derive(Debug, Clone)]
enum InputElements {
    Values(Vec<Value>),
    Table(Table),
    Text(String),
}

impl ProgramRun<'_> {
    /// Runs on `target` (default: [`Target::Cpu`]).
    pub fn target(mut self, target: Target) -> Self {
        self.target = target;
        self
    }

    /// Sets parameter `name` (a `param` of the program), from any value whose text form the
    /// parameter's type reads (`3`, `0.85`, `true`, `inf`). Unknown names and values of the
    /// wrong type are reported by [`ProgramRun::run`].
    pub fn param(mut self, name: &str, value: impl ToString) -> Self {
        self.params.push((name.to_string(), value.to_string()));
        self
    }

    /// Fills input collection `name` (`input name;`) with `elements` (`Value::Struct`s of its
    /// element struct, handles as `Value::Element(index)`); element `i` gets handle `i`. For an
    /// input node property, `elements` are its values, one per node in node order.
    pub fn input(mut self, name: &str, elements: Vec<Value>) -> Self {
        self.inputs.push((name.to_string(), InputElements::Values(elements)));
        self
    }

    /// Fills input collection `name` with the rows of `table` ([`Table::for_collection`] of the
    /// program's module makes one of the right shape); row `i` gets handle `i`. The fastest way
    /// in for millions of elements.
    pub fn input_table(mut self, name: &str, table: Table) -> Self {
        self.inputs.push((name.to_string(), InputElements::Table(table)));
        self
    }

    /// Fills input collection `name` from text as `output` writes collections: one element per
    /// line, its fields separated by spaces (an input node property: one value per line).
    pub fn input_text(mut self, name: &str, text: impl Into<String>) -> Self {
        self.inputs.push((name.to_string(), InputElements::Text(text.into())));
        self
    }

    /// The optimization configuration instead of the tuned one (`"none"`, `"all"`, ...).
    pub fn opt(mut self, config: &str) -> Result<Self> {
        let config: OptConfig = config.parse().map_err(|e: grail_ir::opt::ConfigError| Error::Usage(e.to_string()))?;
        self.opt = OptChoice::Given(config);
        Ok(self)
    }

    /// Worker threads on the CPU (default: one per core).
    pub fn threads(mut self, threads: usize) -> Self {
        self.threads = threads;
        self
    }

    /// Stops the run (not the compile) once it has taken longer than `limit`, with
    /// an error for which [`Error::is_timeout`] holds; see [`crate::Run::time_limit`] for where it is checked.
    pub fn time_limit(mut self, limit: Duration) -> Self {
        self.time_limit = Some(limit);
        self
    }

    /// The inputs in declaration order (the collections, then the node properties), from what
    /// [`ProgramRun::input`], [`ProgramRun::input_table`] and [`ProgramRun::input_text`] gave.
    fn input_tables(&self) -> Result<Vec<Table>> {
        let module = &self.program.module;
        let collection = |n: &String| module.collection_inputs.iter().any(|c| &module.collections[c.index()].name == n);
        let property = |n: &String| module.property_inputs.iter().any(|p| &module.properties[p.index()].name == n);
        if let Some((name, _)) = self.inputs.iter().find(|(n, _)| !collection(n) && !property(n)) {
            return Err(Error::Usage(format!("the program `{}` has no input `{name}`", module.name)));
        }
        let given = |name: &String, what: &str| {
            self.inputs.iter().rev().find(|(n, _)| n == name).map(|(_, elements)| elements).ok_or_else(|| {
                Error::Usage(format!(
                    "the program `{}` takes input {what} `{name}`: give it with .input(\"{name}\", ...)",
                    module.name
                ))
            })
        };
        let mut inputs = Vec::with_capacity(module.collection_inputs.len() + module.property_inputs.len());
        for &id in &module.collection_inputs {
            let name = &module.collections[id.index()].name;
            inputs.push(match given(name, "collection")? {
                InputElements::Values(values) => Table::from_values(module, id, values)?,
                InputElements::Table(table) => table.clone(),
                InputElements::Text(text) => grail_runtime::read_collection(module, id, text)
                    .map_err(|e| Error::Usage(format!("input `{name}`: {e}")))?,
            });
        }
        for &id in &module.property_inputs {
            let name = &module.properties[id.index()].name;
            inputs.push(match given(name, "property")? {
                InputElements::Values(values) => {
                    let mut table = Table::new(vec![module.properties[id.index()].ty]);
                    for value in values {
                        table.push(std::slice::from_ref(value))?;
                    }
                    table
                }
                InputElements::Table(table) => table.clone(),
                InputElements::Text(text) => grail_runtime::read_property_values(module, id, text)
                    .map_err(|e| Error::Usage(format!("input `{name}`: {e}")))?,
            });
        }
        Ok(inputs)
    }

    /// Compiles the program for the target (cached on disk after the first time) and runs it.
    /// What the program prints goes to standard output.
    pub fn run(self) -> Result<ProgramOutput> {
        let module = &self.program.module;
        let mut values: Vec<Option<Value>> = vec![None; module.params.len()];
        grail_algos::suite::bind_named(module, &self.params, &mut values)?;
        let inputs = self.input_tables()?;
        let graph = self.graph.as_inner();
        let id = ProgramId::of(&module.name, module);
        let cache = ModuleCache::default_location();
        let mut stdout = std::io::stdout();
        let optimized = |key: &TargetKey| -> Result<Module> {
            let config = tuning::resolve(self.opt, key, &id, Some(graph)).config;
            optimize(module.clone(), &config)
                .map_err(|e| Error::Usage(format!("internal error (a bug in grail): optimizing with {config}: {e}")))
        };
        let output: RunOutput = match self.target {
            Target::Cpu => {
                let program = CpuProgram::compile(optimized(&TargetKey::cpu())?, &CCompiler::detect()?, Some(&cache))?;
                limits::with_time_limit(self.time_limit, || {
                    program.run_with_inputs(graph, &values, &inputs, &RunOptions { threads: self.threads }, &mut stdout)
                })?
            }
            Target::Gpu(device) => {
                let device = Device::open(device)?;
                let key = TargetKey::gpu(&device.info().name);
                let program = GpuProgram::compile(optimized(&key)?, device, Some(&cache))?;
                limits::with_time_limit(self.time_limit, || {
                    program.run_with_inputs(graph, &values, &inputs, &mut stdout)
                })?
                .0
            }
            Target::Reference => {
                return Err(Error::Usage(
                    "a program runs on Target::Cpu or Target::Gpu; the reference target runs suite algorithms".into(),
                ));
            }
        };
        let size = (graph.num_nodes() as usize, graph.num_edges() as usize);
        Ok(ProgramOutput { module: module.clone(), time: output.stats.elapsed, output, size })
    }
}

/// What a program's run produced: its properties' final values, what `main` returned, its
/// output collections.
#[derive(Debug)]
pub struct ProgramOutput {
    module: Module,
    output: RunOutput,
    time: Duration,
    /// The graph's nodes and edges, the length of a column that came back.
    size: (usize, usize),
}

impl ProgramOutput {
    /// The final values of property `name` (one per node, or per edge for an edge property),
    /// as a slice of its type: `u32` (also for `Node` values), `u64`, `i32`, `i64`, `f32`,
    /// `f64` or `bool`. A GPU run copies back its outputs and what `main` reads or writes; any
    /// other property of it is an error here (declare it `output`).
    pub fn property<T: PropertyType>(&self, name: &str) -> Result<&[T]> {
        let Some(index) = self.module.properties.iter().position(|p| p.name == name) else {
            let names: Vec<&str> = self.module.properties.iter().map(|p| p.name.as_str()).collect();
            return Err(Error::Usage(format!(
                "the program `{}` has no property `{name}` (it has {})",
                self.module.name,
                names.join(", ")
            )));
        };
        let property = &self.module.properties[index];
        if property.is_weight && matches!(self.output.properties[index], Column::U32(ref v) if v.is_empty()) {
            return Err(Error::Usage(format!(
                "property `{name}` is the graph's edge weights, which the program does not change: read them from the graph"
            )));
        }
        self.check_copied_back(index)?;
        T::slice(&self.output.properties[index]).ok_or_else(|| {
            let owner = match property.owner {
                Owner::Node => "node",
                Owner::Edge => "edge",
            };
            Error::Usage(format!(
                "property `{name}` is a {owner} property of type {}, not {}",
                property.ty,
                std::any::type_name::<T>()
            ))
        })
    }

    /// The final values of property `name` whatever their type (for bindings that look the
    /// type up at run time); see [`ProgramOutput::property`].
    pub fn column(&self, name: &str) -> Result<&Column> {
        let Some(index) = self.module.properties.iter().position(|p| p.name == name) else {
            return Err(Error::Usage(format!("the program `{}` has no property `{name}`", self.module.name)));
        };
        self.check_copied_back(index)?;
        Ok(&self.output.properties[index])
    }

    /// Fails for a property whose values stayed on the GPU: a GPU run copies back its outputs
    /// and what host code reads or writes, not what its kernels alone use.
    fn check_copied_back(&self, index: usize) -> Result<()> {
        let property = &self.module.properties[index];
        let expected = match property.owner {
            Owner::Node => self.size.0,
            Owner::Edge => self.size.1,
        };
        if self.output.properties[index].is_empty() && expected > 0 && !property.is_weight {
            return Err(Error::Usage(format!(
                "property `{}` of `{}` was not copied back from the GPU: a run copies back its outputs (and what \
                 `main` reads or writes); declare `output {};` to read it",
                property.name, self.module.name, property.name
            )));
        }
        Ok(())
    }

    /// The elements of output collection `name` (`output name;`), removed ones left out, in no
    /// particular order (elements are added concurrently).
    pub fn collection(&self, name: &str) -> Result<&Table> {
        let module = &self.module;
        module
            .collection_outputs
            .iter()
            .position(|id| module.collections[id.index()].name == name)
            .map(|i| &self.output.collections[i])
            .ok_or_else(|| Error::Usage(format!("the program `{}` has no output collection `{name}`", module.name)))
    }

    /// The names of the properties the program declares as `output`.
    pub fn outputs(&self) -> Vec<&str> {
        self.module.outputs.iter().map(|&p| self.module.properties[p.index()].name.as_str()).collect()
    }

    /// What `main` returned, if it returns something.
    pub fn result(&self) -> Option<&Value> {
        self.output.result.as_ref()
    }

    /// The run's own time (not compiling), end to end on its target.
    pub fn time(&self) -> Duration {
        self.time
    }
}

/// The element types property columns come back as. Sealed.
pub trait PropertyType: Sized + sealed::Sealed {
    #[doc(hidden)]
    fn slice(column: &Column) -> Option<&[Self]>;
}

mod sealed {
    pub trait Sealed {}
}

macro_rules! property_types {
    ($($ty:ty => $variant:ident),*) => {$(
        impl sealed::Sealed for $ty {}
        impl PropertyType for $ty {
            fn slice(column: &Column) -> Option<&[Self]> {
                match column {
                    Column::$variant(values) => Some(values),
                    _ => None,
                }
            }
        }
    )*};
}

property_types!(bool => Bool, u32 => U32, u64 => U64, i32 => I32, i64 => I64, f32 => F32, f64 => F64);
