//! Progress bars on the terminal for the substrate's long operations.

use grail_graph::Progress;
use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};

/// Draws one bar at a time on stderr; draws nothing when stderr is not a terminal or `--quiet`.
pub struct Bars {
    bar: ProgressBar,
}

impl Bars {
    pub fn new(quiet: bool) -> Bars {
        let target = if quiet { ProgressDrawTarget::hidden() } else { ProgressDrawTarget::stderr() };
        let bar = ProgressBar::with_draw_target(None, target);
        Bars { bar }
    }

    /// Sets the text beside the bar (what is being done now).
    pub fn message(&self, text: String) {
        self.bar.set_message(text);
    }

    /// Prints a line to standard output with any bar out of the way.
    pub fn println(&self, line: &str) {
        self.bar.suspend(|| println!("{line}"));
    }

    /// Removes any bar from the screen (before printing a message).
    pub fn clear(&self) {
        self.bar.finish_and_clear();
    }
}

impl Progress for Bars {
    fn begin(&self, phase: &str, total: Option<u64>) {
        let style = match total {
            Some(_) => ProgressStyle::with_template("{spinner} {msg:<14} [{wide_bar}] {percent:>3}% {elapsed}")
                .expect("valid template")
                .progress_chars("=> "),
            None => ProgressStyle::with_template("{spinner} {msg:<14} {elapsed}").expect("valid template"),
        };
        // Style first: any call before it would draw a frame in the default style.
        self.bar.set_style(style);
        self.bar.set_message(phase.to_string());
        self.bar.set_length(total.unwrap_or(0));
        self.bar.reset();
        self.bar.enable_steady_tick(std::time::Duration::from_millis(120));
    }

    fn advance(&self, delta: u64) {
        self.bar.inc(delta);
    }

    fn finish(&self) {
        self.bar.disable_steady_tick();
        self.bar.finish_and_clear();
    }
}
