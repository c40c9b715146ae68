//! grail's Python bindings: the `grail._grail` extension module behind the `grail` Python
//! package (`python/grail/`). Graphs, the suite algorithms and grail programs, with results as
//! numpy arrays and errors as `grail.GrailError` carrying grail's messages. Runs release the GIL.

// A method's arguments are the Python keyword arguments it takes (target=, variant=, opt=,
// verify=, threads=, timeout=), one Rust argument each.
#![allow(clippy::too_many_arguments)]

use std::collections::HashMap;
use std::path::PathBuf;

use grail::{Column, Graph, LoadOptions, Program, Run, Target, Value};
use numpy::{PyArray1, PyArrayMethods, PyReadonlyArray1};
use pyo3::exceptions::{PyException, PyTimeoutError, PyValueError};
use pyo3::prelude::*;
use pyo3::types::{PyBool, PyDict, PyTuple};
use pyo3::{IntoPyObjectExt, create_exception};

create_exception!(grail, GrailError, PyException, "An error from grail, with grail's message.");

fn error(e: grail::Error) -> PyErr {
    if e.is_timeout() {
        return PyTimeoutError::new_err(e.to_string());
    }
    GrailError::new_err(e.to_string())
}

/// `"cpu"`, `"gpu"`, `"gpu:1"` or `"reference"`.
fn parse_target(text: &str) -> PyResult<Target> {
    match text.trim() {
        "cpu" => Ok(Target::Cpu),
        "gpu" => Ok(Target::Gpu(0)),
        "reference" => Ok(Target::Reference),
        other => match other.strip_prefix("gpu:").map(str::parse::<usize>) {
            Some(Ok(device)) => Ok(Target::Gpu(device)),
            _ => Err(PyValueError::new_err(format!(
                "target {other:?}: expected \"cpu\", \"gpu\", \"gpu:N\" or \"reference\""
            ))),
        },
    }
}

/// The options every algorithm method takes.
struct Options<'a> {
    target: &'a str,
    variant: Option<&'a str>,
    opt: Option<&'a str>,
    verify: bool,
    threads: usize,
    /// Seconds; see `time_limit`.
    timeout: Option<f64>,
}

/// A `timeout=` in seconds as a time limit: positive and finite, or an error.
fn time_limit(timeout: Option<f64>) -> PyResult<Option<std::time::Duration>> {
    match timeout {
        None => Ok(None),
        // Past what a duration holds (about 5.8e11 years) is no limit.
        Some(seconds) if seconds > 0.0 && seconds.is_finite() => {
            Ok(std::time::Duration::try_from_secs_f64(seconds).ok())
        }
        Some(seconds) => {
            Err(PyValueError::new_err(format!("timeout={seconds}: expected a positive number of seconds")))
        }
    }
}

impl Options<'_> {
    fn apply<'g, T: grail::AlgorithmOutput>(&self, mut run: Run<'g, T>) -> PyResult<Run<'g, T>> {
        run = run.on(parse_target(self.target)?).threads(self.threads);
        if let Some(variant) = self.variant {
            run = run.variant(variant);
        }
        if let Some(opt) = self.opt {
            run = run.opt(opt).map_err(error)?;
        }
        if self.verify {
            run = run.verify();
        }
        if let Some(limit) = time_limit(self.timeout)? {
            run = run.time_limit(limit);
        }
        Ok(run)
    }
}

/// Runs with the GIL released.
fn go<T: grail::AlgorithmOutput + Send>(py: Python<'_>, run: Run<'_, T>) -> PyResult<T> {
    py.detach(|| run.run()).map_err(error)
}

/// A directed graph in CSR form: `Graph.load(path)`, `Graph.from_csr(indptr, indices,
/// weights=None)`, `Graph.from_edges(num_nodes, sources, targets, weights=None)`; see also
/// `grail.from_scipy` and `grail.from_networkx`.
#[pyclass(name = "Graph", module = "grail", frozen)]
struct PyGraph {
    inner: Graph,
}

#[pymethods]
impl PyGraph {
    /// Reads a graph file (DIMACS .gr, .mtx, .el/.txt, .wel, METIS .graph, Galois .gr, .gcsr;
    /// text formats may be .gz). `undirected=True` makes it undirected and simple.
    #[staticmethod]
    #[pyo3(signature = (path, format=None, undirected=false))]
    fn load(py: Python<'_>, path: PathBuf, format: Option<String>, undirected: bool) -> PyResult<PyGraph> {
        let graph = py.detach(|| Graph::load_with(&path, LoadOptions { format, undirected })).map_err(error)?;
        Ok(PyGraph { inner: graph })
    }

    /// A graph from CSR arrays: `indptr` (uint64, one per node plus one), `indices` (uint32, each
    /// edge's head), optional `weights` (one per edge: uint32 integer weights, or float32 real
    /// ones). Every invariant is checked.
    #[staticmethod]
    #[pyo3(signature = (indptr, indices, weights=None))]
    fn from_csr(
        indptr: PyReadonlyArray1<'_, u64>,
        indices: PyReadonlyArray1<'_, u32>,
        weights: Option<Bound<'_, PyAny>>,
    ) -> PyResult<PyGraph> {
        let (indptr, indices) = (indptr.as_slice()?.to_vec(), indices.as_slice()?.to_vec());
        let graph = match weights.as_ref().map(weight_array).transpose()? {
            None => Graph::from_csr(indptr, indices, None),
            Some(Weights::Integer(w)) => Graph::from_csr(indptr, indices, Some(w)),
            Some(Weights::Real(w)) => Graph::from_csr_real(indptr, indices, w),
        };
        Ok(PyGraph { inner: graph.map_err(error)? })
    }

    /// A graph of `num_nodes` nodes from edge arrays (uint32 sources and targets, optional uint32
    /// weights), kept as given.
    #[staticmethod]
    #[pyo3(signature = (num_nodes, sources, targets, weights=None))]
    fn from_edges(
        num_nodes: u32,
        sources: PyReadonlyArray1<'_, u32>,
        targets: PyReadonlyArray1<'_, u32>,
        weights: Option<Bound<'_, PyAny>>,
    ) -> PyResult<PyGraph> {
        let (sources, targets) = (sources.as_slice()?, targets.as_slice()?);
        if sources.len() != targets.len() {
            return Err(PyValueError::new_err(format!(
                "{} sources but {} targets: one of each per edge",
                sources.len(),
                targets.len()
            )));
        }
        let weights = weights.as_ref().map(weight_array).transpose()?;
        if let Some(len) = weights.as_ref().map(Weights::len)
            && len != sources.len()
        {
            return Err(PyValueError::new_err(format!("{len} weights for {} edges: one per edge", sources.len())));
        }
        let pairs = sources.iter().copied().zip(targets.iter().copied());
        let graph = match weights {
            Some(Weights::Integer(w)) => {
                Graph::from_weighted_edges(num_nodes, pairs.zip(w).map(|((u, v), w)| (u, v, w)))
            }
            Some(Weights::Real(w)) => {
                Graph::from_real_weighted_edges(num_nodes, pairs.zip(w).map(|((u, v), w)| (u, v, w)))
            }
            None => Graph::from_edges(num_nodes, pairs),
        };
        Ok(PyGraph { inner: graph.map_err(error)? })
    }

    /// The undirected simple graph underlying this one.
    fn undirected(&self, py: Python<'_>) -> PyGraph {
        PyGraph { inner: py.detach(|| self.inner.undirected()) }
    }

    /// Writes the graph in the format its extension names.
    fn save(&self, py: Python<'_>, path: PathBuf) -> PyResult<()> {
        py.detach(|| self.inner.save(&path)).map_err(error)
    }

    #[getter]
    fn num_nodes(&self) -> u32 {
        self.inner.num_nodes()
    }

    #[getter]
    fn num_edges(&self) -> u64 {
        self.inner.num_edges()
    }

    #[getter]
    fn is_weighted(&self) -> bool {
        self.inner.is_weighted()
    }

    /// Whether the weights are real (float32) rather than integers (uint32).
    #[getter]
    fn has_real_weights(&self) -> bool {
        self.inner.has_real_weights()
    }

    /// The CSR arrays (copies): `(indptr, indices, weights or None)`; weights are uint32, or
    /// float32 when real.
    fn csr<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyTuple>> {
        let weights = match (self.inner.weights(), self.inner.real_weights()) {
            (Some(w), _) => Some(PyArray1::from_slice(py, w).into_any()),
            (None, Some(w)) => Some(PyArray1::from_slice(py, w).into_any()),
            (None, None) => None,
        };
        (PyArray1::from_slice(py, self.inner.offsets()), PyArray1::from_slice(py, self.inner.targets()), weights)
            .into_pyobject(py)
    }

    fn __repr__(&self) -> String {
        let weighted = if self.inner.is_weighted() { ", weighted" } else { "" };
        format!("<grail.Graph: {} nodes, {} edges{weighted}>", self.inner.num_nodes(), self.inner.num_edges())
    }

    /// BFS levels from `source` (uint32; 4294967295 where unreached).
    #[pyo3(signature = (source=0, target="cpu", variant=None, opt=None, verify=false, threads=0, timeout=None))]
    fn bfs<'py>(
        &self,
        py: Python<'py>,
        source: u32,
        target: &str,
        variant: Option<&str>,
        opt: Option<&str>,
        verify: bool,
        threads: usize,
        timeout: Option<f64>,
    ) -> PyResult<Bound<'py, PyArray1<u32>>> {
        let run = Options { target, variant, opt, verify, threads, timeout }.apply(self.inner.bfs(source))?;
        Ok(PyArray1::from_vec(py, go(py, run)?))
    }

    /// Shortest-path distances from `source`: uint64 over integer weights (2**64-1 where
    /// unreached), float64 over real ones (inf where unreached).
    #[pyo3(signature = (source=0, target="cpu", variant=None, opt=None, verify=false, threads=0, timeout=None))]
    fn sssp<'py>(
        &self,
        py: Python<'py>,
        source: u32,
        target: &str,
        variant: Option<&str>,
        opt: Option<&str>,
        verify: bool,
        threads: usize,
        timeout: Option<f64>,
    ) -> PyResult<Bound<'py, PyAny>> {
        let options = Options { target, variant, opt, verify, threads, timeout };
        if self.inner.has_real_weights() {
            let run = options.apply(self.inner.sssp_real(source))?;
            return Ok(PyArray1::from_vec(py, go(py, run)?).into_any());
        }
        let run = options.apply(self.inner.sssp(source))?;
        Ok(PyArray1::from_vec(py, go(py, run)?).into_any())
    }

    /// Connected component labels (the smallest node id of each component), edges taken as
    /// undirected.
    #[pyo3(signature = (target="cpu", variant=None, opt=None, verify=false, threads=0, timeout=None))]
    fn connected_components<'py>(
        &self,
        py: Python<'py>,
        target: &str,
        variant: Option<&str>,
        opt: Option<&str>,
        verify: bool,
        threads: usize,
        timeout: Option<f64>,
    ) -> PyResult<Bound<'py, PyArray1<u32>>> {
        let run =
            Options { target, variant, opt, verify, threads, timeout }.apply(self.inner.connected_components())?;
        Ok(PyArray1::from_vec(py, go(py, run)?))
    }

    /// PageRank: `(ranks as float64, iterations)`.
    #[pyo3(signature = (target="cpu", tolerance=None, max_iterations=None, variant=None, opt=None, verify=false, threads=0, timeout=None))]
    fn pagerank<'py>(
        &self,
        py: Python<'py>,
        target: &str,
        tolerance: Option<f64>,
        max_iterations: Option<u32>,
        variant: Option<&str>,
        opt: Option<&str>,
        verify: bool,
        threads: usize,
        timeout: Option<f64>,
    ) -> PyResult<(Bound<'py, PyArray1<f64>>, u32)> {
        let mut run = self.inner.pagerank();
        if let Some(tolerance) = tolerance {
            run = run.tolerance(tolerance);
        }
        if let Some(iterations) = max_iterations {
            run = run.max_iterations(iterations);
        }
        let result = go(py, Options { target, variant, opt, verify, threads, timeout }.apply(run)?)?;
        Ok((PyArray1::from_vec(py, result.ranks), result.iterations))
    }

    /// The number of triangles of the undirected simple graph underlying this one.
    #[pyo3(signature = (target="cpu", variant=None, opt=None, verify=false, threads=0, timeout=None))]
    fn triangles(
        &self,
        py: Python<'_>,
        target: &str,
        variant: Option<&str>,
        opt: Option<&str>,
        verify: bool,
        threads: usize,
        timeout: Option<f64>,
    ) -> PyResult<u64> {
        go(py, Options { target, variant, opt, verify, threads, timeout }.apply(self.inner.triangles())?)
    }

    /// A maximal independent set (bool per node) of the undirected simple graph underlying this one.
    #[pyo3(signature = (target="cpu", variant=None, opt=None, verify=false, threads=0, timeout=None))]
    fn maximal_independent_set<'py>(
        &self,
        py: Python<'py>,
        target: &str,
        variant: Option<&str>,
        opt: Option<&str>,
        verify: bool,
        threads: usize,
        timeout: Option<f64>,
    ) -> PyResult<Bound<'py, PyArray1<bool>>> {
        let run =
            Options { target, variant, opt, verify, threads, timeout }.apply(self.inner.maximal_independent_set())?;
        Ok(PyArray1::from_vec(py, go(py, run)?))
    }

    /// A minimum spanning forest: `(edges, weight)`, edges an (k, 3) uint32 array of
    /// `(u, v, weight)` rows with `u < v`.
    #[pyo3(signature = (target="cpu", variant=None, opt=None, verify=false, threads=0, timeout=None))]
    fn minimum_spanning_forest<'py>(
        &self,
        py: Python<'py>,
        target: &str,
        variant: Option<&str>,
        opt: Option<&str>,
        verify: bool,
        threads: usize,
        timeout: Option<f64>,
    ) -> PyResult<(Bound<'py, PyAny>, Py<PyAny>)> {
        let run =
            Options { target, variant, opt, verify, threads, timeout }.apply(self.inner.minimum_spanning_forest())?;
        let forest = go(py, run)?;
        let rows = forest.edges.len();
        if let Some(total) = forest.real_weight {
            // Real weights: float64 rows, so the weight column holds the value, not its bits.
            let flat: Vec<f64> = forest
                .edges
                .iter()
                .flat_map(|&(u, v, w)| [f64::from(u), f64::from(v), f64::from(f32::from_bits(w))])
                .collect();
            let edges = PyArray1::from_vec(py, flat).reshape([rows, 3])?.into_any();
            return Ok((edges, total.into_pyobject(py)?.into_any().unbind()));
        }
        let flat: Vec<u32> = forest.edges.iter().flat_map(|&(u, v, w)| [u, v, w]).collect();
        let edges = PyArray1::from_vec(py, flat).reshape([rows, 3])?.into_any();
        Ok((edges, forest.weight.into_pyobject(py)?.into_any().unbind()))
    }
}

/// One graph, many runs: `Session(graph, target="gpu")` compiles each algorithm's program
/// once, prepares the input once and, on a GPU, keeps the graph on the device between runs.
#[pyclass(name = "Session", module = "grail")]
struct PySession {
    inner: std::sync::Mutex<grail::Session>,
    /// The graph's weights are real: distances come back as float64.
    real: bool,
}

impl PySession {
    fn with<T: Send>(
        &self,
        py: Python<'_>,
        f: impl FnOnce(&mut grail::Session) -> grail::Result<T> + Send,
    ) -> PyResult<T> {
        py.detach(|| {
            let mut session = self.inner.lock().unwrap_or_else(|poisoned| poisoned.into_inner());
            f(&mut session)
        })
        .map_err(error)
    }
}

#[pymethods]
impl PySession {
    #[new]
    #[pyo3(signature = (graph, target="gpu"))]
    fn new(graph: &PyGraph, target: &str) -> PyResult<PySession> {
        let session = grail::Session::new(&graph.inner, parse_target(target)?).map_err(error)?;
        Ok(PySession { inner: std::sync::Mutex::new(session), real: graph.inner.has_real_weights() })
    }

    fn bfs<'py>(&self, py: Python<'py>, source: u32) -> PyResult<Bound<'py, PyArray1<u32>>> {
        Ok(PyArray1::from_vec(py, self.with(py, |s| s.bfs(source))?))
    }

    fn sssp<'py>(&self, py: Python<'py>, source: u32) -> PyResult<Bound<'py, PyAny>> {
        if self.real {
            return Ok(PyArray1::from_vec(py, self.with(py, |s| s.sssp_real(source))?).into_any());
        }
        Ok(PyArray1::from_vec(py, self.with(py, |s| s.sssp(source))?).into_any())
    }

    fn connected_components<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyArray1<u32>>> {
        Ok(PyArray1::from_vec(py, self.with(py, |s| s.connected_components())?))
    }

    fn pagerank<'py>(&self, py: Python<'py>) -> PyResult<(Bound<'py, PyArray1<f64>>, u32)> {
        let result = self.with(py, |s| s.pagerank())?;
        Ok((PyArray1::from_vec(py, result.ranks), result.iterations))
    }

    fn triangles(&self, py: Python<'_>) -> PyResult<u64> {
        self.with(py, |s| s.triangles())
    }
}

/// A grail program: `Program(source, name="program")`, `Program.from_file(path)`,
/// `Program.suite(name)`; `program.run(graph, target="cpu", params={...})`.
#[pyclass(name = "Program", module = "grail", frozen)]
struct PyProgram {
    inner: Program,
}

#[pymethods]
impl PyProgram {
    #[new]
    #[pyo3(signature = (source, name="program"))]
    fn new(source: &str, name: &str) -> PyResult<PyProgram> {
        Ok(PyProgram { inner: Program::from_source(name, source).map_err(error)? })
    }

    #[staticmethod]
    fn from_file(path: PathBuf) -> PyResult<PyProgram> {
        Ok(PyProgram { inner: Program::from_file(path).map_err(error)? })
    }

    /// One of the suite's programs by name (`bfs_do`, `traverse`, ...).
    #[staticmethod]
    fn suite(name: &str) -> PyResult<PyProgram> {
        Ok(PyProgram { inner: Program::suite(name).map_err(error)? })
    }

    #[getter]
    fn name(&self) -> &str {
        self.inner.name()
    }

    /// The parameters: a dict of name to type.
    #[getter]
    fn params(&self) -> HashMap<String, String> {
        self.inner.params().into_iter().map(|(n, t)| (n.to_string(), t)).collect()
    }

    /// The names of the `output` properties.
    #[getter]
    fn outputs(&self) -> Vec<String> {
        self.inner.outputs().into_iter().map(String::from).collect()
    }

    /// Compiles (cached) and runs the program on `graph`; `params` by name (numbers, bools, or
    /// text the parameter's type reads); `inputs` by name: an input collection's rows (tuples of
    /// field values) or text as `output` writes it, an input node property's values (one per
    /// node) or text of one value per line.
    #[pyo3(signature = (graph, target="cpu", params=None, opt=None, threads=0, timeout=None, inputs=None))]
    fn run(
        &self,
        py: Python<'_>,
        graph: &PyGraph,
        target: &str,
        params: Option<&Bound<'_, PyDict>>,
        opt: Option<&str>,
        threads: usize,
        timeout: Option<f64>,
        inputs: Option<&Bound<'_, PyDict>>,
    ) -> PyResult<PyProgramOutput> {
        let mut run = self.inner.on(&graph.inner).target(parse_target(target)?).threads(threads);
        // Inputs: text as `output` writes them, or rows of field values (an input node
        // property: one value per node).
        if let Some(inputs) = inputs {
            for (name, elements) in inputs.iter() {
                let name: String = name.extract()?;
                let text = match elements.extract::<String>() {
                    Ok(text) => text,
                    Err(_) => {
                        let mut text = String::new();
                        for row in elements.try_iter()? {
                            let row = row?;
                            let words: Vec<String> = match row.try_iter() {
                                Ok(fields) => {
                                    fields.map(|x| x.and_then(|x| python_word(&x))).collect::<PyResult<_>>()?
                                }
                                Err(_) => vec![python_word(&row)?],
                            };
                            text.push_str(&words.join(" "));
                            text.push('\n');
                        }
                        text
                    }
                };
                run = run.input_text(&name, text);
            }
        }
        if let Some(limit) = time_limit(timeout)? {
            run = run.time_limit(limit);
        }
        if let Some(opt) = opt {
            run = run.opt(opt).map_err(error)?;
        }
        if let Some(params) = params {
            for (name, value) in params.iter() {
                let name: String = name.extract()?;
                let text = if value.is_instance_of::<PyBool>() {
                    if value.extract::<bool>()? { "true".to_string() } else { "false".to_string() }
                } else {
                    value.str()?.to_string()
                };
                run = run.param(&name, text);
            }
        }
        let output = py.detach(|| run.run()).map_err(error)?;
        Ok(PyProgramOutput { output })
    }
}

/// What a program's run produced: `out["name"]` is a property's final values (numpy), `out.result`
/// what `main` returned, `out.outputs` the declared outputs as a dict, `out.time_ms`.
#[pyclass(name = "ProgramOutput", module = "grail", frozen)]
struct PyProgramOutput {
    output: grail::ProgramOutput,
}

/// A field value from Python as grail reads it from text (`true`/`false` for booleans).
fn python_word(value: &Bound<'_, PyAny>) -> PyResult<String> {
    if value.is_instance_of::<PyBool>() {
        return Ok(if value.extract::<bool>()? { "true" } else { "false" }.to_string());
    }
    Ok(value.str()?.to_string())
}

/// Edge weights from Python: a uint32 array (integer weights) or a float32 one (real weights).
enum Weights {
    Integer(Vec<u32>),
    Real(Vec<f32>),
}

impl Weights {
    fn len(&self) -> usize {
        match self {
            Weights::Integer(w) => w.len(),
            Weights::Real(w) => w.len(),
        }
    }
}

fn weight_array(array: &Bound<'_, PyAny>) -> PyResult<Weights> {
    if let Ok(w) = array.extract::<PyReadonlyArray1<'_, u32>>() {
        return Ok(Weights::Integer(w.as_slice()?.to_vec()));
    }
    if let Ok(w) = array.extract::<PyReadonlyArray1<'_, f32>>() {
        return Ok(Weights::Real(w.as_slice()?.to_vec()));
    }
    Err(PyValueError::new_err(
        "weights must be a 1-D numpy array of uint32 (integer weights) or float32 (real weights)",
    ))
}

fn column_to_numpy<'py>(py: Python<'py>, column: &Column) -> Bound<'py, PyAny> {
    match column {
        Column::Bool(v) => PyArray1::from_slice(py, v).into_any(),
        Column::U32(v) => PyArray1::from_slice(py, v).into_any(),
        Column::U64(v) => PyArray1::from_slice(py, v).into_any(),
        Column::I32(v) => PyArray1::from_slice(py, v).into_any(),
        Column::I64(v) => PyArray1::from_slice(py, v).into_any(),
        Column::F32(v) => PyArray1::from_slice(py, v).into_any(),
        Column::F64(v) => PyArray1::from_slice(py, v).into_any(),
    }
}

fn value_to_python(py: Python<'_>, value: &Value) -> PyResult<Py<PyAny>> {
    match value {
        Value::Bool(b) => b.into_py_any(py),
        Value::I32(x) => x.into_py_any(py),
        Value::I64(x) => x.into_py_any(py),
        Value::U32(x) | Value::Node(x) | Value::Element(x) => x.into_py_any(py),
        Value::U64(x) | Value::Edge(x) => x.into_py_any(py),
        Value::F32(x) => x.into_py_any(py),
        Value::F64(x) => x.into_py_any(py),
        Value::Struct(fields) => {
            let items = fields.iter().map(|f| value_to_python(py, f)).collect::<PyResult<Vec<_>>>()?;
            PyTuple::new(py, items)?.into_py_any(py)
        }
    }
}

#[pymethods]
impl PyProgramOutput {
    fn __getitem__<'py>(&self, py: Python<'py>, name: &str) -> PyResult<Bound<'py, PyAny>> {
        let column = self.output.column(name).map_err(|e| pyo3::exceptions::PyKeyError::new_err(e.to_string()))?;
        Ok(column_to_numpy(py, column))
    }

    #[getter]
    fn outputs<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyDict>> {
        let dict = PyDict::new(py);
        for name in self.output.outputs() {
            dict.set_item(name, column_to_numpy(py, self.output.column(name).map_err(error)?))?;
        }
        Ok(dict)
    }

    #[getter]
    fn result(&self, py: Python<'_>) -> PyResult<Option<Py<PyAny>>> {
        self.output.result().map(|v| value_to_python(py, v)).transpose()
    }

    #[getter]
    fn time_ms(&self) -> f64 {
        self.output.time().as_secs_f64() * 1e3
    }
}

#[pymodule]
fn _grail(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_class::<PyGraph>()?;
    m.add_class::<PyProgram>()?;
    m.add_class::<PySession>()?;
    m.add_class::<PyProgramOutput>()?;
    m.add("GrailError", m.py().get_type::<GrailError>())?;
    m.add("UNREACHED", grail::UNREACHED)?;
    m.add("INFINITE_DISTANCE", grail::INFINITE_DISTANCE)?;
    m.add("__version__", env!("CARGO_PKG_VERSION"))?;
    Ok(())
}
