//! Progress of the admin commands: a bar on a terminal, plain lines (at
//! most one every few seconds per step) otherwise, both on stderr so that
//! stdout carries only the results.

use std::io::IsTerminal as _;
use std::sync::Mutex;
use std::time::{Duration, Instant};

use indicatif::{ProgressBar, ProgressStyle};
use stowage_blobstore::admin::Progress;

/// Plain progress lines are at least this far apart.
const LINE_INTERVAL: Duration = Duration::from_secs(5);

/// Shows progress on stderr.
pub(crate) enum Reporter {
    /// A terminal: an indicatif bar per step.
    Bar(Mutex<Option<ProgressBar>>),
    /// Anything else: a line when a step starts, every few seconds, and
    /// when it ends.
    Lines(Mutex<Lines>),
}

/// The state of the current step in plain-line mode.
#[derive(Default)]
pub(crate) struct Lines {
    step: String,
    total: u64,
    done: u64,
    last: Option<Instant>,
}

impl Reporter {
    /// A bar when stderr is a terminal, lines otherwise.
    pub(crate) fn for_stderr() -> Reporter {
        if std::io::stderr().is_terminal() {
            Reporter::Bar(Mutex::new(None))
        } else {
            Reporter::Lines(Mutex::new(Lines::default()))
        }
    }
}

fn lock<T>(m: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    m.lock().unwrap_or_else(std::sync::PoisonError::into_inner)
}

impl Progress for Reporter {
    fn begin(&self, step: &str, total: u64) {
        match self {
            Reporter::Bar(bar) => {
                let b = if total == 0 {
                    ProgressBar::new_spinner()
                } else {
                    ProgressBar::new(total)
                };
                let template = if total == 0 {
                    "{spinner} {msg} ({elapsed})"
                } else {
                    "{msg} [{bar:40}] {pos}/{len} ({eta} left)"
                };
                if let Ok(style) = ProgressStyle::with_template(template) {
                    b.set_style(style.progress_chars("=> "));
                }
                b.set_message(step.to_owned());
                b.enable_steady_tick(Duration::from_millis(200));
                *lock(bar) = Some(b);
            }
            Reporter::Lines(lines) => {
                let mut l = lock(lines);
                *l = Lines {
                    step: step.to_owned(),
                    total,
                    done: 0,
                    last: Some(Instant::now()),
                };
                if total == 0 {
                    eprintln!("{step}...");
                } else {
                    eprintln!("{step}: 0/{total}");
                }
            }
        }
    }

    fn advance(&self, n: u64) {
        match self {
            Reporter::Bar(bar) => {
                if let Some(b) = lock(bar).as_ref() {
                    b.inc(n);
                }
            }
            Reporter::Lines(lines) => {
                let mut l = lock(lines);
                l.done += n;
                if l.last.is_none_or(|t| t.elapsed() >= LINE_INTERVAL) {
                    l.last = Some(Instant::now());
                    eprintln!("{}: {}/{}", l.step, l.done, l.total);
                }
            }
        }
    }

    fn end(&self) {
        match self {
            Reporter::Bar(bar) => {
                if let Some(b) = lock(bar).take() {
                    b.finish_and_clear();
                }
            }
            Reporter::Lines(lines) => {
                let l = lock(lines);
                if l.total == 0 {
                    eprintln!("{}: done", l.step);
                } else {
                    eprintln!("{}: {}/{} done", l.step, l.done, l.total);
                }
            }
        }
    }
}
