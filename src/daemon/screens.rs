//! Cameras bound to projected game screens: each on a thread of its own, reading frames,
//! answering the pages' calibration requests, and sending fingertips and taps to the games'
//! [`TouchHub`]. A camera that fails is opened again after a growing pause, as a board's is;
//! meanwhile the pages say that camera input is off.
//!
//! `boardwatch play --camera SOURCE` binds one camera to the screen `table`; the daemon binds
//! those of its `[[screens]]`.

use std::sync::Arc;
use std::thread::JoinHandle;
use std::time::Instant;

use serde_json::json;

use super::config::RetryConfig;
use super::stop::StopSignal;
use super::supervisor::Backoff;
use crate::touch::dwell::DwellSettings;
use crate::vision::capture::{Capture, Captured, Policy};
use crate::vision::source::SourceSpec;
use crate::vision::table::{find_pattern, outline_holds, ForegroundSettings, PatternError, TableWatcher};
use crate::web::games::touch::TouchHub;

/// How often the projected rectangle is checked against the calibration, when no hand is seen.
const OUTLINE_CHECK_EVERY: f64 = 2.0;
/// Failed checks in a row that say the camera or the projector moved.
const OUTLINE_FAILURES: u32 = 3;

// The same limits as a board's live source.
use super::sources::vision::{OPEN_LIMIT, STALL_LIMIT};

/// A camera over a projected table.
#[derive(Clone, Debug, PartialEq)]
pub struct ScreenCamera {
    /// The screen the pages name (`table` unless they say otherwise).
    pub screen: String,
    pub source: SourceSpec,
    /// What the configuration or command line said, for messages.
    pub describe: String,
    pub dwell: DwellSettings,
}

/// Starts the camera's thread; it runs until `stop`.
pub fn start(camera: ScreenCamera, hub: Arc<TouchHub>, retry: RetryConfig, stop: StopSignal) -> std::io::Result<JoinHandle<()>> {
    std::thread::Builder::new().name(format!("screen-{}", camera.screen)).spawn(move || run(camera, hub, retry, stop))
}

fn run(camera: ScreenCamera, hub: Arc<TouchHub>, retry: RetryConfig, stop: StopSignal) {
    let name = camera.screen.clone();
    let mut backoff = Backoff::new(retry);
    let live = matches!(camera.source, SourceSpec::Camera(_) | SourceSpec::Stream(_));
    hub.set_camera(&name, false, format!("opening {}", camera.describe));
    while !stop.is_stopped() {
        let spec = camera.source.clone();
        // A recording stands in for a camera: played at its own pace.
        let policy = if live { Policy::Live } else { Policy::File { realtime: true, skip_through: 0 } };
        let capture = match Capture::start(&format!("capture-screen-{name}"), policy, move || crate::vision::source::open(&spec)) {
            Ok(c) => c,
            Err(e) => {
                hub.set_camera(&name, false, format!("cannot start a capture thread: {e}"));
                return;
            }
        };
        let opened = match capture.recv_timeout(OPEN_LIMIT) {
            Ok(Captured::Opened(result)) => result,
            Ok(_) => Err("the capture thread said nothing".to_string()),
            Err(_) => Err(format!("not open after {} s", OPEN_LIMIT.as_secs())),
        };
        let ended = match opened {
            Ok(described) => {
                tracing::info!(screen = %name, "camera input from {described}");
                hub.set_camera(&name, true, described);
                backoff.reset();
                follow(&camera, &capture, &hub, &stop)
            }
            Err(e) => Err(e),
        };
        drop(capture);
        match ended {
            Ok(()) if !live => {
                hub.set_camera(&name, false, format!("{} ended", camera.describe));
                return;
            }
            Ok(()) => {}
            Err(e) => {
                let pause = backoff.next_pause();
                tracing::warn!(screen = %name, "camera input off: {e}; trying again in {:.1} s", pause.as_secs_f64());
                hub.set_camera(&name, false, format!("{}: {e}; trying again in {:.0} s", camera.describe, pause.as_secs_f64().ceil()));
                if !stop.sleep(pause) {
                    return;
                }
            }
        }
    }
}

/// Reads frames until the source ends (`Ok`), fails (`Err`) or the stop.
fn follow(camera: &ScreenCamera, capture: &Capture, hub: &TouchHub, stop: &StopSignal) -> Result<(), String> {
    let name = &camera.screen;
    let clock = Instant::now();
    let mut watcher: Option<TableWatcher> = None;
    let mut last_pattern_error: Option<String> = None;
    // The outline check is armed once it has held after a calibration: a game whose picture is
    // dark along its edges cannot be checked this way.
    let mut outline = OutlineCheck::default();
    while !stop.is_stopped() {
        let frame = match capture.recv_timeout(STALL_LIMIT) {
            Ok(Captured::Frame(frame)) => frame,
            Ok(Captured::End) => return Ok(()),
            Ok(Captured::Failed(e)) => return Err(e),
            Ok(Captured::Opened(_)) => continue,
            Err(_) => return Err(format!("no frame for {} s", STALL_LIMIT.as_secs())),
        };
        let time = clock.elapsed().as_secs_f64();
        if let Some(request) = hub.take_calibration(name) {
            match find_pattern(&frame.image, &request.pattern, request.cols, request.rows) {
                Ok(fit) => {
                    let seen_at = fit.map.outline();
                    let body = json!({ "game": request.game, "rms_px": fit.rms_px, "corners": fit.corners, "outline": seen_at });
                    let kept = hub.keep_map(name, &request.game, fit.map);
                    let _ = request.reply.send(kept.map(|()| body).map_err(|e| format!("the mapping was found but not kept: {e}")));
                    watcher = None;
                    last_pattern_error = None;
                    outline = OutlineCheck::default();
                }
                Err(e) if Instant::now() >= request.deadline => {
                    let message = last_pattern_error.take().unwrap_or_else(|| e.to_string());
                    let _ = request.reply.send(Err(message));
                }
                Err(e) => {
                    // Keep the most telling complaint: "too small" says more than "not seen".
                    if last_pattern_error.is_none() || !matches!(e, PatternError::NotSeen) {
                        last_pattern_error = Some(e.to_string());
                    }
                    hub.put_back_calibration(name, request);
                }
            }
            continue;
        }
        let view = hub.view(name);
        let Some(map) = view.map else {
            watcher = None;
            continue;
        };
        let current = watcher.get_or_insert_with(|| TableWatcher::new(map.clone(), ForegroundSettings::default(), camera.dwell));
        if current.map().camera_to_rect != map.camera_to_rect {
            *current = TableWatcher::new(map.clone(), ForegroundSettings::default(), camera.dwell);
        }
        current.set_grid(map.cols, map.rows);
        match current.frame(time, &frame.image) {
            Ok(read) => {
                let idle = read.pointer.at.is_none();
                hub.publish(name, read.pointer, read.tap);
                if idle && time - outline.last >= OUTLINE_CHECK_EVERY {
                    outline.last = time;
                    if let Ok(Some(holds)) = outline_holds(&frame.image, &map) {
                        if let Some(moved) = outline.record(holds) {
                            hub.set_moved(name, moved);
                        }
                    }
                }
            }
            Err(e) => tracing::warn!(screen = %name, "frame {}: {e}", frame.index),
        }
    }
    Ok(())
}

/// The checks of the projected rectangle since the last calibration.
#[derive(Default)]
struct OutlineCheck {
    last: f64,
    armed: bool,
    failures: u32,
}

impl OutlineCheck {
    /// Takes one check; returns whether the screen counts as moved when that changes.
    fn record(&mut self, holds: bool) -> Option<bool> {
        if holds {
            self.armed = true;
            let was = self.failures >= OUTLINE_FAILURES;
            self.failures = 0;
            return was.then_some(false);
        }
        if !self.armed {
            return None;
        }
        self.failures += 1;
        (self.failures == OUTLINE_FAILURES).then_some(true)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_moved_screen_is_said_after_three_failed_checks_once_the_check_has_held() {
        let mut check = OutlineCheck::default();
        assert_eq!(check.record(false), None, "not armed: a dark-edged game cannot be checked");
        assert_eq!(check.record(true), None);
        assert_eq!(check.record(false), None);
        assert_eq!(check.record(false), None);
        assert_eq!(check.record(false), Some(true));
        assert_eq!(check.record(false), None, "said once");
        assert_eq!(check.record(true), Some(false), "back in place");
    }
}
