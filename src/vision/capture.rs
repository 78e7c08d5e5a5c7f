//! Capture on a thread of its own, so that decoding and the vision work share the machine's cores
//! and a slow recogniser never makes a live camera lag. One implementation, two policies:
//!
//! - [`Policy::Live`] (cameras, streams): only the newest frame waits; older ones are dropped.
//! - [`Policy::File`] (video files): every frame is handed on, in order; the thread waits while
//!   the queue is full. Frames already recorded before a restart are read past at once, and a
//!   recording may be paced at its own frame rate (played as if live).
//!
//! `boardwatch replay` and the daemon's vision sources both capture through it.

use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::mpsc::{self, Receiver, RecvTimeoutError, SyncSender, TrySendError};
use std::sync::Arc;
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use super::source::{Frame, FrameSource};

/// Decoded frames of a file waiting for the vision: enough to ride out a slow frame (a full board
/// search), few enough to bound memory (about 2 MB a frame at 960x720).
const FILE_QUEUE: usize = 8;

/// How frames are handed on when the vision is slower than the source.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Policy {
    /// Keep only the newest frame.
    Live,
    /// Never drop a frame. `skip_through`: frames with a number up to this one (when above 0)
    /// are read past; `realtime`: each frame is handed on at its time stamp after the first.
    File { realtime: bool, skip_through: u64 },
}

/// What the capture thread says.
pub enum Captured {
    /// The source opened: its description, or why it did not.
    Opened(std::result::Result<String, String>),
    Frame(Frame),
    /// A finite source ended.
    End,
    /// The source failed (the message names it).
    Failed(String),
}

/// What the capture thread counts, read while it runs: the work of decoding, and the frames a
/// live source dropped because the reader was still busy with an older one (a board whose
/// vision cannot keep up with its camera must say so, not fall behind in silence).
#[derive(Default, Debug)]
pub struct CaptureStats {
    /// Frames read from the source (handed on or dropped).
    pub decoded: AtomicU64,
    /// CPU time the capture thread spent reading and decoding them, in microseconds (decoder
    /// threads of FFmpeg's own are not counted).
    pub decode_us: AtomicU64,
    /// Frames of a live source dropped, a newer one replacing them.
    pub dropped: AtomicU64,
}

/// CPU time the calling thread has used: what decoding or the vision costs, without the time a
/// live stream's read waits for its next frame or the thread waits for a core.
pub fn thread_cpu_time() -> Duration {
    let mut ts = libc::timespec { tv_sec: 0, tv_nsec: 0 };
    // SAFETY: `ts` is a valid timespec for the call to fill.
    let ok = unsafe { libc::clock_gettime(libc::CLOCK_THREAD_CPUTIME_ID, &mut ts) } == 0;
    if ok {
        Duration::new(ts.tv_sec as u64, ts.tv_nsec as u32)
    } else {
        Duration::ZERO
    }
}

/// A running capture thread; dropping it stops the thread.
pub struct Capture {
    frames: Receiver<Captured>,
    stop: Arc<AtomicBool>,
    thread: Option<JoinHandle<()>>,
    stats: Arc<CaptureStats>,
}

impl Capture {
    /// Start a thread named `name` that opens a source with `open` (which may block: a camera, a
    /// stream) and hands on its frames by `policy`.
    pub fn start<F, E>(name: &str, policy: Policy, open: F) -> std::io::Result<Capture>
    where
        F: FnOnce() -> std::result::Result<Box<dyn FrameSource>, E> + Send + 'static,
        E: std::fmt::Display,
    {
        let (sender, frames) = mpsc::sync_channel(if policy == Policy::Live { 1 } else { FILE_QUEUE });
        let stop = Arc::new(AtomicBool::new(false));
        let flag = Arc::clone(&stop);
        let stats = Arc::new(CaptureStats::default());
        let counts = Arc::clone(&stats);
        let thread =
            std::thread::Builder::new().name(name.into()).spawn(move || capture(open, policy, sender, flag, &counts))?;
        Ok(Capture { frames, stop, thread: Some(thread), stats })
    }

    /// What the thread has counted so far.
    pub fn stats(&self) -> &CaptureStats {
        &self.stats
    }

    /// The next message, waiting up to `limit`.
    pub fn recv_timeout(&self, limit: Duration) -> std::result::Result<Captured, RecvTimeoutError> {
        self.frames.recv_timeout(limit)
    }

    /// Every message, blocking, until the thread ends.
    pub fn iter(&self) -> impl Iterator<Item = Captured> + '_ {
        self.frames.iter()
    }

    /// Stop the thread and wait for it; false if it panicked.
    pub fn join(mut self) -> bool {
        self.stop.store(true, Ordering::Relaxed);
        self.thread.take().is_none_or(|t| t.join().is_ok())
    }
}

impl Drop for Capture {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::Relaxed);
        // Let the thread go: a driver call may block for a while, and it ends by itself.
        drop(self.thread.take());
    }
}

/// The capture thread: open the source, then hand on frames until the end, a failure or stop.
fn capture<F, E>(open: F, policy: Policy, sender: SyncSender<Captured>, stop: Arc<AtomicBool>, stats: &CaptureStats)
where
    F: FnOnce() -> std::result::Result<Box<dyn FrameSource>, E>,
    E: std::fmt::Display,
{
    let mut source = match open() {
        Ok(source) => {
            let _ = sender.send(Captured::Opened(Ok(source.describe())));
            source
        }
        Err(e) => {
            let _ = sender.send(Captured::Opened(Err(e.to_string())));
            return;
        }
    };
    // When the first frame handed on was read, and its time stamp.
    let mut clock: Option<(Instant, f64)> = None;
    while !stop.load(Ordering::Relaxed) {
        let reading = thread_cpu_time();
        let next = source.next_frame();
        if matches!(next, Ok(Some(_))) {
            stats.decoded.fetch_add(1, Ordering::Relaxed);
            stats.decode_us.fetch_add(thread_cpu_time().saturating_sub(reading).as_micros() as u64, Ordering::Relaxed);
        }
        let frame = match next {
            Ok(Some(frame)) => frame,
            Ok(None) => {
                let _ = sender.send(Captured::End);
                return;
            }
            Err(e) => {
                let _ = sender.send(Captured::Failed(e.to_string()));
                return;
            }
        };
        if let Policy::File { realtime, skip_through } = policy {
            if skip_through > 0 && frame.index <= skip_through {
                continue;
            }
            if realtime {
                let (started, t0) = *clock.get_or_insert((Instant::now(), frame.t));
                let due = Duration::from_secs_f64((frame.t - t0).max(0.0));
                if let Some(wait) = due.checked_sub(started.elapsed()) {
                    std::thread::sleep(wait);
                }
            }
        }
        let mut message = Captured::Frame(frame);
        loop {
            match sender.try_send(message) {
                Ok(()) => break,
                // Live: the recogniser is behind; this frame is dropped, the next one is newer.
                Err(TrySendError::Full(_)) if policy == Policy::Live => {
                    stats.dropped.fetch_add(1, Ordering::Relaxed);
                    break;
                }
                Err(TrySendError::Full(m)) => {
                    if stop.load(Ordering::Relaxed) {
                        return;
                    }
                    message = m;
                    std::thread::sleep(Duration::from_millis(1));
                }
                Err(TrySendError::Disconnected(_)) => return,
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::vision::source::Result;
    use opencv::core::Mat;

    /// `n` empty frames, each taking `delay` to "decode".
    struct Counter {
        next: u64,
        n: u64,
        delay: Duration,
    }

    impl FrameSource for Counter {
        fn next_frame(&mut self) -> Result<Option<Frame>> {
            if self.next == self.n {
                return Ok(None);
            }
            std::thread::sleep(self.delay);
            let index = self.next;
            self.next += 1;
            Ok(Some(Frame { image: Mat::default(), t: index as f64 / 25.0, index, name: format!("counter#{index}") }))
        }
        fn describe(&self) -> String {
            "counter".into()
        }
    }

    fn indices(capture: &Capture, slow: Duration) -> Vec<u64> {
        let mut seen = Vec::new();
        for message in capture.iter() {
            match message {
                Captured::Frame(f) => {
                    seen.push(f.index);
                    std::thread::sleep(slow);
                }
                Captured::End => break,
                Captured::Opened(r) => assert_eq!(r.unwrap(), "counter"),
                Captured::Failed(e) => panic!("{e}"),
            }
        }
        seen
    }

    #[test]
    fn a_file_never_loses_a_frame_and_skips_what_was_recorded() {
        let open = || Ok::<_, String>(Box::new(Counter { next: 0, n: 40, delay: Duration::ZERO }) as Box<dyn FrameSource>);
        let capture = Capture::start("t", Policy::File { realtime: false, skip_through: 9 }, open).unwrap();
        assert_eq!(indices(&capture, Duration::from_millis(1)), (10..40).collect::<Vec<_>>());
        assert!(capture.join());
    }

    #[test]
    fn a_live_source_keeps_only_the_newest_frame_for_a_slow_reader() {
        let open = || Ok::<_, String>(Box::new(Counter { next: 0, n: 40, delay: Duration::from_millis(1) }) as Box<dyn FrameSource>);
        let capture = Capture::start("t", Policy::Live, open).unwrap();
        let seen = indices(&capture, Duration::from_millis(10));
        assert!(seen.len() < 30 && seen.windows(2).all(|w| w[0] < w[1]), "{seen:?}");
        let stats = capture.stats();
        assert_eq!(stats.decoded.load(Ordering::Relaxed), 40);
        assert_eq!(stats.dropped.load(Ordering::Relaxed) + seen.len() as u64, 40, "every frame not seen is counted as dropped");
    }

    #[test]
    fn a_source_that_does_not_open_says_why() {
        let open = || Err::<Box<dyn FrameSource>, _>("no such camera");
        let capture = Capture::start("t", Policy::Live, open).unwrap();
        match capture.recv_timeout(Duration::from_secs(5)) {
            Ok(Captured::Opened(Err(why))) => assert!(why.contains("no such camera"), "{why}"),
            _ => panic!("expected the failure to open"),
        }
    }
}
