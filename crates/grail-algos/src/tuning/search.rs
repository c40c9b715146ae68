//! The search: which configurations the tuner measures, in which order, and which wins.
//!
//! The order puts the configurations most likely to matter first, so that a short budget
//! still measures them: `none` (the baseline, and for program files the reference output),
//! every searched key at its `all` value, then each key alone. After that a local search walks
//! from the best so far to the configurations that differ from it in one key, and when none is
//! left, to the rest of the space by increasing distance; given time it measures every distinct
//! program of the space. Configurations that are the same program as one already measured
//! ([`super::space::fingerprint`]) are not measured again.
//!
//! Each candidate is compiled and run once untimed, its result checked (against the verifier,
//! or the `none` output) and caches, memory and worker threads warmed up; then timed. A candidate
//! whose first timed run took more than [`Options::prune_factor`] times the best time so far is
//! not run again (it cannot win); the others run [`Options::repeat`] timed runs and keep the
//! best. The budget is checked before each
//! candidate and each repeated run: a run under way always finishes, and `none` is always
//! measured. The winner is the fastest candidate whose result was right.

use std::collections::{HashMap, HashSet};
use std::fmt;
use std::time::{Duration, Instant};

use grail_ir::OptConfig;

use super::space::{Fingerprint, Space};
use crate::error::{AlgoError, Result};

/// How to search.
#[derive(Debug, Clone)]
pub struct Options {
    /// Stop starting new measurements after this long.
    pub budget: Duration,
    /// Timed runs per candidate that is not pruned (the best counts), after one untimed run
    /// that checks the result.
    pub repeat: u32,
    /// A candidate whose first run is slower than this times the best so far is not repeated.
    pub prune_factor: f64,
}

impl Default for Options {
    fn default() -> Self {
        Options { budget: Duration::from_secs(60), repeat: 3, prune_factor: 2.0 }
    }
}

/// One timed run.
#[derive(Debug, Clone)]
pub struct Sample {
    /// End to end: what the tuner minimizes.
    pub time: Duration,
    /// The kernels' own time, where the target measures it.
    pub kernel: Option<Duration>,
    /// Why the result is wrong, if the run was checked and it is.
    pub wrong: Option<String>,
}

/// Compiles and runs candidates.
pub trait Measure {
    /// Why a candidate could not be compiled or run.
    type Error: fmt::Display;
    /// Compiles `config`; the runs that follow use it.
    fn compile(&mut self, config: &OptConfig) -> Result<(), Self::Error>;
    /// Runs the last compiled configuration; checks its result when `check`.
    fn run(&mut self, check: bool) -> Result<Sample, Self::Error>;
}

/// Why a search could not be done.
#[derive(Debug)]
pub enum SearchError<E> {
    /// The space could not be set up (a pass or the code generator failed: a bug in grail).
    Setup(AlgoError),
    /// The unoptimized configuration, which every other is compared with, could not be
    /// compiled or run.
    Baseline(E),
}

/// What happened to a candidate.
#[derive(Debug, Clone, PartialEq)]
pub enum Status {
    /// Ran `repeat` timed runs (or fewer when the budget ran out).
    Measured,
    /// Ran one timed run and was too slow to win.
    Pruned,
    /// Did not compile or run, or computed a wrong result.
    Failed(String),
    /// The same program as the candidate at this index.
    Same(usize),
}

/// A candidate and its measurements.
#[derive(Debug, Clone)]
pub struct Candidate {
    pub config: OptConfig,
    /// What the candidate stands for in the search's first stage: `none`, `all`, a key alone.
    pub label: Option<String>,
    pub status: Status,
    pub best: Option<Duration>,
    /// The kernels' own time of the run with the best end-to-end time.
    pub kernel: Option<Duration>,
    pub runs: u32,
}

impl Candidate {
    /// Whether it ran and was right.
    pub fn valid(&self) -> bool {
        matches!(self.status, Status::Measured | Status::Pruned) && self.best.is_some()
    }

    /// The status as the database and reports write it.
    pub fn status_text(&self) -> String {
        match &self.status {
            Status::Measured => "measured".into(),
            Status::Pruned => "pruned".into(),
            Status::Failed(_) => "failed".into(),
            Status::Same(i) => format!("same as #{}", i + 1),
        }
    }
}

/// Reports progress.
pub trait Observer {
    /// Measuring candidate `index` (from 0) of about `planned` distinct programs starts.
    fn start(&mut self, index: usize, planned: usize, candidate: &Candidate);
    /// A candidate is done (measured, pruned, failed, or found to be a program measured before).
    fn done(&mut self, index: usize, candidate: &Candidate, best: Option<Duration>);
}

/// An observer that says nothing.
pub struct Silent;

impl Observer for Silent {
    fn start(&mut self, _: usize, _: usize, _: &Candidate) {}
    fn done(&mut self, _: usize, _: &Candidate, _: Option<Duration>) {}
}

/// What the search found.
#[derive(Debug, Clone)]
pub struct Outcome {
    pub candidates: Vec<Candidate>,
    /// The index of the fastest valid candidate.
    pub winner: Option<usize>,
    /// Configurations in the space, and distinct programs among them.
    pub configurations: usize,
    pub distinct: usize,
    /// Distinct programs left unmeasured when the budget ran out.
    pub unmeasured: usize,
    pub elapsed: Duration,
}

impl Outcome {
    /// The `none` candidate (always the first).
    pub fn none(&self) -> &Candidate {
        &self.candidates[0]
    }

    pub fn winner(&self) -> Option<&Candidate> {
        self.winner.map(|i| &self.candidates[i])
    }
}

/// Searches `space`, measuring with `measure`. `fingerprint` says which configurations are the
/// same program. An error compiling or running `none` ends the search (nothing can be
/// measured); any other candidate's error is recorded as its failure.
pub fn search<M: Measure>(
    space: &Space,
    fingerprint: &dyn Fn(&OptConfig) -> Result<Fingerprint>,
    measure: &mut M,
    observer: &mut dyn Observer,
    options: &Options,
) -> Result<Outcome, SearchError<M::Error>> {
    let start = Instant::now();
    let configurations = space.configurations();
    let mut prints: HashMap<OptConfig, Fingerprint> = HashMap::new();
    for config in &configurations {
        prints.insert(*config, fingerprint(config).map_err(SearchError::Setup)?);
    }
    let distinct = prints.values().collect::<HashSet<_>>().len();
    let mut search = Search {
        prints,
        measured: HashMap::new(),
        tried: HashSet::new(),
        candidates: Vec::new(),
        best: None,
        distinct,
        start,
        options,
    };

    let mut first_stage: Vec<(Option<String>, OptConfig)> =
        vec![(Some("none".into()), OptConfig::NONE), (Some("all".into()), space.all())];
    for (key, config) in space.singles() {
        first_stage.push((Some(format!("{key} alone")), config));
    }
    for (label, config) in first_stage {
        if search.out_of_budget() {
            break;
        }
        search.consider(config, label, true, measure, observer)?;
    }
    // The local search, then the rest of the space nearest first.
    loop {
        if search.out_of_budget() || search.measured.len() == distinct {
            break;
        }
        let incumbent = search.best.map_or(OptConfig::NONE, |i| search.candidates[i].config);
        let next = space.neighbours(&incumbent).into_iter().find(|c| search.fresh(c)).or_else(|| {
            configurations.iter().filter(|c| search.fresh(c)).min_by_key(|c| space.distance(c, &incumbent)).copied()
        });
        let Some(config) = next else { break };
        search.consider(config, None, false, measure, observer)?;
    }
    let unmeasured = distinct - search.measured.len();
    Ok(Outcome {
        winner: search.best,
        candidates: search.candidates,
        configurations: configurations.len(),
        distinct,
        unmeasured,
        elapsed: start.elapsed(),
    })
}

struct Search<'a> {
    prints: HashMap<OptConfig, Fingerprint>,
    /// The candidate that measured each program.
    measured: HashMap<Fingerprint, usize>,
    /// Configurations considered.
    tried: HashSet<OptConfig>,
    candidates: Vec<Candidate>,
    best: Option<usize>,
    distinct: usize,
    start: Instant,
    options: &'a Options,
}

impl Search<'_> {
    fn out_of_budget(&self) -> bool {
        !self.candidates.is_empty() && self.start.elapsed() >= self.options.budget
    }

    /// Whether a configuration is a program not measured yet.
    fn fresh(&self, config: &OptConfig) -> bool {
        !self.tried.contains(config) && self.prints.get(config).is_some_and(|p| !self.measured.contains_key(p))
    }

    fn best_time(&self) -> Option<Duration> {
        self.best.and_then(|i| self.candidates[i].best)
    }

    /// Measures `config` unless it is a program measured before; `report_same` records such a
    /// configuration as a candidate anyway (the first stage's, which reports name).
    fn consider<M: Measure>(
        &mut self,
        config: OptConfig,
        label: Option<String>,
        report_same: bool,
        measure: &mut M,
        observer: &mut dyn Observer,
    ) -> Result<(), SearchError<M::Error>> {
        if !self.tried.insert(config) {
            return Ok(());
        }
        let print = match self.prints.get(&config) {
            Some(print) => *print,
            None => return Ok(()),
        };
        let index = self.candidates.len();
        let mut candidate = Candidate { config, label, status: Status::Measured, best: None, kernel: None, runs: 0 };
        if let Some(&same) = self.measured.get(&print) {
            if report_same {
                candidate.status = Status::Same(same);
                candidate.best = self.candidates[same].best;
                candidate.kernel = self.candidates[same].kernel;
                observer.done(index, &candidate, self.best_time());
                self.candidates.push(candidate);
            }
            return Ok(());
        }
        observer.start(self.measured.len(), self.distinct, &candidate);
        self.measured.insert(print, index);
        let first = index == 0;
        match self.measure_one(&mut candidate, measure) {
            Ok(()) => {}
            Err(e) if first => return Err(SearchError::Baseline(e)),
            Err(e) => candidate.status = Status::Failed(e.to_string()),
        }
        if candidate.valid() && self.best_time().is_none_or(|best| candidate.best < Some(best)) {
            self.best = Some(index);
        }
        self.candidates.push(candidate);
        observer.done(index, &self.candidates[index], self.best_time());
        Ok(())
    }

    fn measure_one<M: Measure>(&self, candidate: &mut Candidate, measure: &mut M) -> Result<(), M::Error> {
        measure.compile(&candidate.config)?;
        // The first run checks the result and warms up (memory touched for the first time,
        // worker threads starting, code loading); it is not timed.
        let check = measure.run(true)?;
        if let Some(wrong) = check.wrong {
            candidate.status = Status::Failed(format!("wrong result: {wrong}"));
            return Ok(());
        }
        let sample = measure.run(false)?;
        candidate.runs = 1;
        candidate.best = Some(sample.time);
        candidate.kernel = sample.kernel;
        if let Some(best) = self.best_time()
            && sample.time.as_secs_f64() > best.as_secs_f64() * self.options.prune_factor
        {
            candidate.status = Status::Pruned;
            return Ok(());
        }
        while candidate.runs < self.options.repeat.max(1) && self.start.elapsed() < self.options.budget {
            let sample = measure.run(false)?;
            candidate.runs += 1;
            if candidate.best.is_none_or(|b| sample.time < b) {
                candidate.best = Some(sample.time);
                candidate.kernel = sample.kernel;
            }
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::algorithm::Target;
    use crate::suite::compile_source;
    use crate::tuning::space::fingerprint;
    use grail_ir::Module;

    /// A fake target: each configuration takes a fixed time; some fail or compute wrong results.
    struct Fake {
        current: OptConfig,
        time: fn(&OptConfig) -> Option<Duration>,
        compiles: Vec<OptConfig>,
        runs: usize,
        sleep: Duration,
    }

    impl Measure for Fake {
        type Error = String;

        fn compile(&mut self, config: &OptConfig) -> Result<(), String> {
            self.current = *config;
            self.compiles.push(*config);
            if config.block == 128 && config.outline == grail_ir::opt::Outline::All {
                return Err("cannot build this one".into());
            }
            Ok(())
        }

        fn run(&mut self, check: bool) -> Result<Sample, String> {
            self.runs += 1;
            std::thread::sleep(self.sleep);
            match (self.time)(&self.current) {
                Some(time) => Ok(Sample { time, kernel: None, wrong: None }),
                None => Ok(Sample {
                    time: Duration::from_millis(1),
                    kernel: None,
                    wrong: check.then(|| "level 3 of node 7".to_string()),
                }),
            }
        }
    }

    fn bfs() -> Module {
        compile_source("bfs", crate::program_source("bfs").unwrap()).unwrap()
    }

    fn fake(time: fn(&OptConfig) -> Option<Duration>) -> Fake {
        Fake { current: OptConfig::NONE, time, compiles: Vec::new(), runs: 0, sleep: Duration::ZERO }
    }

    #[test]
    fn finds_the_fastest_right_program_and_prunes_slow_ones() {
        let module = bfs();
        let space = Space::of(&module, Target::Gpu).unwrap();
        let prints = |c: &OptConfig| fingerprint(&module, c, Target::Gpu);
        // Outlining wins; blocks of 512 are slow; blocks of 128 compute a wrong result, or do not
        // compile when outlined.
        let mut measure = fake(|c| {
            if c.block == 128 {
                return None;
            }
            let mut ms = 10.0;
            if c.outline == grail_ir::opt::Outline::All {
                ms -= 4.0;
            }
            if c.block == 512 {
                ms += 30.0;
            }
            Some(Duration::from_secs_f64(ms / 1e3))
        });
        let options = Options { budget: Duration::from_secs(60), repeat: 3, prune_factor: 2.0 };
        let outcome = search(&space, &prints, &mut measure, &mut Silent, &options).unwrap();
        let winner = outcome.winner().unwrap();
        assert_eq!(winner.config.outline, grail_ir::opt::Outline::All, "{outcome:#?}");
        assert_eq!(winner.config.block, 256);
        assert_eq!(outcome.none().label.as_deref(), Some("none"));
        assert_eq!(outcome.none().runs, 3);
        let slow = outcome.candidates.iter().filter(|c| c.config.block == 512).collect::<Vec<_>>();
        assert!(!slow.is_empty() && slow.iter().all(|c| c.status == Status::Pruned && c.runs == 1), "{slow:#?}");
        assert!(
            outcome.candidates.iter().any(|c| matches!(&c.status, Status::Failed(e) if e.contains("wrong result")))
        );
        assert!(
            outcome.candidates.iter().any(|c| matches!(&c.status, Status::Failed(e) if e.contains("cannot build")))
        );
        // With a long budget every distinct program is measured once.
        assert_eq!(outcome.unmeasured, 0);
        let measured: HashSet<_> = measure.compiles.iter().collect();
        assert_eq!(measured.len(), measure.compiles.len());
        assert_eq!(measure.compiles.len(), outcome.distinct);
    }

    #[test]
    fn the_budget_stops_the_search_but_none_is_always_measured() {
        let module = bfs();
        let space = Space::of(&module, Target::Gpu).unwrap();
        let prints = |c: &OptConfig| fingerprint(&module, c, Target::Gpu);
        let mut measure = fake(|_| Some(Duration::from_millis(5)));
        measure.sleep = Duration::from_millis(20);
        let options = Options { budget: Duration::from_millis(1), repeat: 3, prune_factor: 2.0 };
        let outcome = search(&space, &prints, &mut measure, &mut Silent, &options).unwrap();
        assert_eq!(outcome.candidates.len(), 1);
        assert_eq!(outcome.none().runs, 1);
        assert_eq!(outcome.winner, Some(0));
        assert_eq!(outcome.unmeasured, outcome.distinct - 1);
    }

    #[test]
    fn an_error_on_none_ends_the_search() {
        struct Broken;
        impl Measure for Broken {
            type Error = String;
            fn compile(&mut self, _: &OptConfig) -> Result<(), String> {
                Err("no compiler".into())
            }
            fn run(&mut self, _: bool) -> Result<Sample, String> {
                unreachable!()
            }
        }
        let module = bfs();
        let space = Space::of(&module, Target::Cpu).unwrap();
        let prints = |c: &OptConfig| fingerprint(&module, c, Target::Cpu);
        let error = search(&space, &prints, &mut Broken, &mut Silent, &Options::default()).unwrap_err();
        assert!(matches!(error, SearchError::Baseline(e) if e == "no compiler"));
    }

    #[test]
    fn programs_the_target_does_not_tell_apart_are_measured_once() {
        let module = bfs();
        let space = Space::of(&module, Target::Cpu).unwrap();
        let prints = |c: &OptConfig| fingerprint(&module, c, Target::Cpu);
        let mut measure = fake(|_| Some(Duration::from_millis(1)));
        let outcome = search(&space, &prints, &mut measure, &mut Silent, &Options::default()).unwrap();
        assert_eq!(measure.compiles.len(), outcome.distinct);
        assert!(outcome.distinct < outcome.configurations || outcome.configurations == 1, "{outcome:#?}");
    }
}
