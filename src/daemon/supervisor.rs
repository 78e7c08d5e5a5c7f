//! Keeps a board's source running: opens it, reads it, and when it fails (a camera unplugged, a
//! stream dropped, a file not there yet) reports why and tries again after a pause that doubles
//! up to a limit. The other boards never notice: each board has its own thread.

use std::time::Duration;

use serde::Serialize;

use super::config::RetryConfig;
use super::sources::{BoardSource, SourceItem};
use super::stop::StopSignal;

/// Pauses between attempts: `initial`, doubling up to `max`; back to `initial` once the source
/// has delivered again.
#[derive(Clone, Debug)]
pub struct Backoff {
    config: RetryConfig,
    next: Duration,
}

impl Backoff {
    pub fn new(config: RetryConfig) -> Backoff {
        Backoff { config, next: config.initial }
    }

    pub fn next_pause(&mut self) -> Duration {
        let pause = self.next;
        self.next = (self.next * 2).min(self.config.max);
        pause
    }

    pub fn reset(&mut self) {
        self.next = self.config.initial;
    }
}

/// What a source is doing, as the API shows it.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum SourceState {
    /// Opening the device or file.
    Starting,
    /// Delivering frames.
    Running,
    /// Failed; the next attempt comes after a pause.
    Retrying,
    /// A camera or stream that delivered and then failed, ended or stalled: reconnected after a
    /// pause, for ever (one that never delivered is `Retrying`).
    Reconnecting,
    /// A finite source (a file) was read to its end.
    Ended,
    /// The daemon is shutting down, or the board could not start.
    Stopped,
}

/// Where the supervisor reports to: the board's runner.
pub trait SourceSink {
    /// Get ready before the source is opened (build what reads its frames); an error counts as
    /// a failure to open, reported and retried.
    fn prepare(&mut self) -> anyhow::Result<()> {
        Ok(())
    }
    /// The source changed state; `error` says why when it failed, `retry_in` when it is retried.
    fn state(&mut self, state: SourceState, error: Option<String>, retry_in: Option<Duration>);
    /// One frame or board state.
    fn item(&mut self, item: SourceItem);
    /// A problem that does not stop the source (a bad line, an unreadable frame).
    fn warning(&mut self, message: String);
}

/// Run `source` until it ends or `stop` is raised, reopening it after failures.
pub fn supervise(source: &mut dyn BoardSource, retry: RetryConfig, stop: &StopSignal, sink: &mut dyn SourceSink) {
    let mut backoff = Backoff::new(retry);
    let what = source.describe();
    let mut delivered = false;
    while !stop.is_stopped() {
        sink.state(SourceState::Starting, None, None);
        let failure = match sink.prepare().and_then(|()| source.open()) {
            Err(e) => format!("{e:#}"),
            Ok(()) => {
                tracing::info!(source = %what, "source open");
                sink.state(SourceState::Running, None, None);
                match read_until_failure(source, stop, sink, &mut backoff, &mut delivered) {
                    Ok(Finished::Ended) => {
                        tracing::info!(source = %what, "source ended");
                        sink.state(SourceState::Ended, None, None);
                        return;
                    }
                    Ok(Finished::Stopped) => break,
                    Err(e) => e,
                }
            }
        };
        if stop.is_stopped() {
            break;
        }
        let pause = backoff.next_pause().max(source.min_pause().unwrap_or_default());
        tracing::warn!(source = %what, "{failure}; trying again in {:.1} s", pause.as_secs_f64());
        let state = if source.live() && delivered { SourceState::Reconnecting } else { SourceState::Retrying };
        sink.state(state, Some(failure), Some(pause));
        if stop.sleep(pause) {
            break;
        }
    }
    sink.state(SourceState::Stopped, None, None);
}

enum Finished {
    Ended,
    Stopped,
}

fn read_until_failure(
    source: &mut dyn BoardSource,
    stop: &StopSignal,
    sink: &mut dyn SourceSink,
    backoff: &mut Backoff,
    delivered: &mut bool,
) -> Result<Finished, String> {
    loop {
        if stop.is_stopped() {
            return Ok(Finished::Stopped);
        }
        match source.next(stop) {
            Ok(Some(item)) => {
                backoff.reset();
                *delivered = true;
                for warning in &item.warnings {
                    sink.warning(warning.clone());
                }
                sink.item(item);
            }
            Ok(None) if stop.is_stopped() => return Ok(Finished::Stopped),
            Ok(None) => return Ok(Finished::Ended),
            Err(e) => return Err(format!("{e:#}")),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn backoff_doubles_to_the_limit_and_resets() {
        let mut b = Backoff::new(RetryConfig { initial: Duration::from_millis(100), max: Duration::from_millis(350) });
        let pauses: Vec<u128> = (0..4).map(|_| b.next_pause().as_millis()).collect();
        assert_eq!(pauses, [100, 200, 350, 350]);
        b.reset();
        assert_eq!(b.next_pause().as_millis(), 100);
    }

    /// Fails to open twice, then delivers two items and ends.
    struct Flaky {
        opens: u32,
        left: u32,
    }

    impl BoardSource for Flaky {
        fn describe(&self) -> String {
            "flaky".into()
        }
        fn open(&mut self) -> anyhow::Result<()> {
            self.opens += 1;
            if self.opens <= 2 {
                anyhow::bail!("no device (attempt {})", self.opens)
            }
            Ok(())
        }
        fn next(&mut self, _stop: &StopSignal) -> anyhow::Result<Option<SourceItem>> {
            if self.left == 0 {
                return Ok(None);
            }
            self.left -= 1;
            Ok(Some(SourceItem::default()))
        }
    }

    /// Writes down what it is told.
    #[derive(Default)]
    struct Calls(Vec<String>);

    impl SourceSink for Calls {
        fn state(&mut self, state: SourceState, error: Option<String>, retry_in: Option<Duration>) {
            let retry = retry_in.map(|d| format!(" in {}ms", d.as_millis())).unwrap_or_default();
            self.0.push(format!("{state:?}{}{retry}", error.map(|e| format!(": {e}")).unwrap_or_default()));
        }
        fn item(&mut self, _item: SourceItem) {
            self.0.push("item".into());
        }
        fn warning(&mut self, message: String) {
            self.0.push(format!("warning {message}"));
        }
    }

    /// A live source that fails to open once, then ends after one item each time: it is
    /// retried, then reconnected, never `Ended`.
    struct Camera {
        opens: u32,
        delivered: bool,
    }

    impl BoardSource for Camera {
        fn describe(&self) -> String {
            "camera".into()
        }
        fn open(&mut self) -> anyhow::Result<()> {
            self.opens += 1;
            self.delivered = false;
            if self.opens == 1 {
                anyhow::bail!("not there")
            }
            Ok(())
        }
        fn live(&self) -> bool {
            true
        }
        fn next(&mut self, stop: &StopSignal) -> anyhow::Result<Option<SourceItem>> {
            if !self.delivered {
                self.delivered = true;
                return Ok(Some(SourceItem::default()));
            }
            if self.opens >= 3 {
                stop.stop();
            }
            anyhow::bail!("the stream ended")
        }
    }

    #[test]
    fn a_live_source_is_reconnected_and_never_ends() {
        let mut source = Camera { opens: 0, delivered: false };
        let mut sink = Calls::default();
        let retry = RetryConfig { initial: Duration::from_millis(1), max: Duration::from_millis(4) };
        supervise(&mut source, retry, &StopSignal::new(), &mut sink);
        assert_eq!(
            sink.0,
            [
                "Starting",
                "Retrying: not there in 1ms",
                "Starting",
                "Running",
                "item",
                "Reconnecting: the stream ended in 1ms",
                "Starting",
                "Running",
                "item",
                "Stopped"
            ]
        );
    }

    #[test]
    fn failures_are_reported_and_retried_until_the_source_delivers() {
        let mut source = Flaky { opens: 0, left: 2 };
        let mut sink = Calls::default();
        let retry = RetryConfig { initial: Duration::from_millis(1), max: Duration::from_millis(2) };
        supervise(&mut source, retry, &StopSignal::new(), &mut sink);
        assert_eq!(
            sink.0,
            [
                "Starting",
                "Retrying: no device (attempt 1) in 1ms",
                "Starting",
                "Retrying: no device (attempt 2) in 2ms",
                "Starting",
                "Running",
                "item",
                "item",
                "Ended"
            ]
        );
    }
}
