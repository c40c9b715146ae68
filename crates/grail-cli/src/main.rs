//! `grail`: generate, convert and inspect graphs, and run graph algorithms on them.
//!
//! Exit status: 0 on success, 1 on any error (bad input, bad parameters, I/O), 2 on a usage
//! error (from clap, or an unknown algorithm, variant or parameter), 3 when `--verify` rejects a
//! result, 70 when generated code faults (on the CPU, the signal handler exits with it) or host
//! code divides by zero or a type's minimum by -1, 124 when
//! `grail run --timeout` stopped a run, 128 + N when signal N (SIGINT, SIGTERM) interrupted grail.

mod cli;
mod commands;
mod plot;
mod progress;

use std::process::ExitCode;
use std::sync::OnceLock;

use clap::Parser;

/// What the standard library's `print!` family panics with when standard output fails.
const STDOUT_PANIC: &str = "failed printing to stdout: ";

/// Why standard output failed, when a `println!` panicked on it (see [`quiet_stdout_panics`]).
static STDOUT_FAILURE: OnceLock<String> = OnceLock::new();

/// Installs a panic hook that stays silent for the standard library's "failed printing to
/// stdout" panics (recording the reason for `main` to report as an ordinary error), and leaves
/// every other panic to the default hook.
fn quiet_stdout_panics() {
    let default = std::panic::take_hook();
    std::panic::set_hook(Box::new(move |info| {
        let message = info
            .payload()
            .downcast_ref::<String>()
            .map(String::as_str)
            .or_else(|| info.payload().downcast_ref::<&str>().copied());
        match message.and_then(|m| m.strip_prefix(STDOUT_PANIC)) {
            Some(reason) => {
                let _ = STDOUT_FAILURE.set(reason.to_string());
            }
            None => default(info),
        }
    }));
}

fn main() -> ExitCode {
    // Output piped into a reader that stops early (`grail run ... --json | head`) ends grail
    // quietly, as it ends other command-line tools, instead of panicking in `println!`.
    #[cfg(unix)]
    // SAFETY: restoring the default disposition of SIGPIPE before any thread starts.
    unsafe {
        libc::signal(libc::SIGPIPE, libc::SIG_DFL);
    }
    // Interrupted (Ctrl-C, a kill), grail removes the temporary file of any write in progress,
    // so nothing half-written is left beside the file it was replacing, then ends as the signal
    // would have ended it (128 + the signal's number).
    #[cfg(unix)]
    if let Ok(mut signals) =
        signal_hook::iterator::Signals::new([signal_hook::consts::SIGINT, signal_hook::consts::SIGTERM])
    {
        std::thread::spawn(move || {
            if let Some(signal) = signals.forever().next() {
                grail_graph::io::remove_temporaries();
                std::process::exit(128 + signal);
            }
        });
    }
    quiet_stdout_panics();
    let cli = cli::Cli::parse();
    let progress = progress::Bars::new(cli.quiet);
    if let Some(threads) = cli.threads
        && let Err(e) = rayon::ThreadPoolBuilder::new().num_threads(threads).build_global()
    {
        eprintln!("error: cannot start {threads} threads: {e}");
        return ExitCode::FAILURE;
    }
    let threads = cli.threads.unwrap_or(0);
    let result =
        std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| commands::dispatch(cli.command, threads, &progress)));
    let result = match result {
        Ok(result) => result,
        Err(payload) => match STDOUT_FAILURE.get() {
            // Standard output failed inside a `println!` (a full disk, `> /dev/full`): reported
            // as any other command reports a failed write.
            Some(reason) => {
                progress.clear();
                eprintln!("error: cannot write to standard output: {reason}");
                return ExitCode::FAILURE;
            }
            // Any other panic was reported by the default hook; it ends grail as it would have.
            None => std::panic::resume_unwind(payload),
        },
    };
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(error) => {
            progress.clear();
            let verification = error.chain().any(|e| {
                matches!(e.downcast_ref(), Some(grail_graph::GraphError::Verification(_)))
                    || e.downcast_ref::<grail_algos::AlgoError>().is_some_and(|e| e.is_verification_failure())
            });
            // A kernel's fault, or host code's arithmetic fault (the language's same error); a
            // runtime error may sit inside a suite run's (transparent, so not in the chain).
            let runtime_fault = |e: &grail_runtime::RuntimeError| {
                matches!(
                    e,
                    grail_runtime::RuntimeError::Gpu(grail_runtime::GpuError::KernelFault { .. })
                        | grail_runtime::RuntimeError::HostFault { .. }
                )
            };
            let fault = error.chain().any(|e| {
                matches!(e.downcast_ref(), Some(grail_runtime::GpuError::KernelFault { .. }))
                    || e.downcast_ref().is_some_and(runtime_fault)
                    || matches!(e.downcast_ref(), Some(grail_algos::AlgoError::Runtime(r)) if runtime_fault(r))
            });
            eprintln!("error: {error:#}");
            let unsolved = error.chain().any(|e| e.downcast_ref::<commands::NoAssignment>().is_some());
            ExitCode::from(if fault {
                grail_runtime::cpu::FAULT_EXIT_CODE as u8
            } else if unsolved {
                4
            } else if verification {
                3
            } else if commands::is_usage_error(&error) {
                2
            } else {
                1
            })
        }
    }
}
