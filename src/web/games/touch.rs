//! Camera taps on a projected game: the meeting point of the page and the camera.
//!
//! A *screen* is one projected table (named `table` unless a page says otherwise with
//! `?screen=NAME`). The page in projector mode tells which game it shows and its grid; the
//! camera bound to the screen (a thread of `crate::daemon::screens`) reads what it sees
//! against the mapping kept for that game, and sends the fingertip and taps back here. Pages
//! follow a screen's events (SSE) and treat a tap like a click on the cell, so the moves go
//! through the same game rooms as the mouse's.
//!
//! Calibration: the page shows the pattern and posts `calibrate`; the camera looks for it in
//! the next frames and answers within a few seconds. Mappings are kept per screen and game,
//! in a JSON file replaced atomically when one is given.
//!
//! Routes (under the games' router):
//! - `GET  touch/{screen}`: the screen's state (camera, grid, calibrated games);
//! - `GET  touch/{screen}/events`: SSE of `pointer`, `tap` and `status` events;
//! - `POST touch/{screen}/grid`: `{"game": "sokoban", "cols": 10, "rows": 8}`;
//! - `POST touch/{screen}/calibrate`: the same body, while the page shows the pattern.

use std::collections::BTreeMap;
use std::convert::Infallible;
use std::path::PathBuf;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use axum::body::Bytes;
use axum::extract::{Path, State};
use axum::http::StatusCode;
use axum::response::sse::{Event as SseEvent, KeepAlive, Sse};
use axum::response::{IntoResponse, Response};
use axum::routing::{get, post};
use axum::Router;
use futures::StreamExt;
use serde::{Deserialize, Serialize};
use serde_json::{json, Value};
use tokio::sync::{broadcast, oneshot, watch};

use super::{error, ok_json, parse_body};
use crate::touch::dwell::{Pointer, Tap};
use crate::touch::grid_map::GridMap;
use crate::touch::pattern::CalibrationPattern;

/// How long the camera has to find the pattern once a page shows it.
pub const CALIBRATION_WINDOW: Duration = Duration::from_secs(4);

/// One event of a screen, as the page receives it.
#[derive(Clone, Debug, Serialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum TouchEvent {
    Pointer { screen: String, game: Option<String>, pointer: Pointer },
    Tap { screen: String, game: Option<String>, tap: Tap },
    Status {
        screen: String,
        camera: CameraStatus,
        calibrated: bool,
        game: Option<String>,
        /// The projected rectangle is no longer where the calibration put it.
        moved: bool,
    },
}

impl TouchEvent {
    fn screen(&self) -> &str {
        match self {
            TouchEvent::Pointer { screen, .. } | TouchEvent::Tap { screen, .. } | TouchEvent::Status { screen, .. } => screen,
        }
    }
}

/// Whether camera input works on a screen, and why not.
#[derive(Clone, Debug, Default, PartialEq, Serialize)]
pub struct CameraStatus {
    /// A camera is bound to the screen.
    pub bound: bool,
    /// Frames are coming.
    pub on: bool,
    /// What the camera is (its source) or what went wrong.
    pub message: String,
}

/// A calibration the camera is asked for.
pub struct CalibrationRequest {
    pub game: String,
    pub cols: usize,
    pub rows: usize,
    pub pattern: CalibrationPattern,
    pub deadline: Instant,
    pub reply: oneshot::Sender<Result<Value, String>>,
}

#[derive(Default)]
struct Screen {
    game: Option<String>,
    grid: Option<(usize, usize)>,
    /// Per game: the mapping of its pinned rectangle.
    maps: BTreeMap<String, GridMap>,
    camera: CameraStatus,
    calibration: Option<CalibrationRequest>,
    pointer: Pointer,
    moved: bool,
}

/// What a camera needs to know about its screen, each frame.
#[derive(Clone, Debug, PartialEq)]
pub struct ScreenView {
    pub game: Option<String>,
    /// The map for the game on the screen, cut into its grid.
    pub map: Option<GridMap>,
}

/// Every screen's state, shared by the pages' handlers and the cameras.
pub struct TouchHub {
    screens: Mutex<BTreeMap<String, Screen>>,
    events: broadcast::Sender<TouchEvent>,
    store: Option<PathBuf>,
    shutdown: watch::Sender<bool>,
}

/// The maps as kept on disk: screen, then game.
pub type StoredMaps = BTreeMap<String, BTreeMap<String, GridMap>>;

/// Reads a mappings file (`--touch-maps`, the daemon's `touch-maps.json`); errors name the file
/// and line.
pub fn read_maps(path: &std::path::Path) -> anyhow::Result<StoredMaps> {
    let text = std::fs::read_to_string(path).map_err(|e| anyhow::anyhow!("{}: {e}", path.display()))?;
    serde_json::from_str(&text).map_err(|e| anyhow::anyhow!("{}: line {}: {e}", path.display(), e.line()))
}

impl TouchHub {
    /// A hub keeping its maps in `store` (read now when it exists).
    pub fn new(store: Option<PathBuf>) -> anyhow::Result<Arc<TouchHub>> {
        let mut screens: BTreeMap<String, Screen> = BTreeMap::new();
        if let Some(path) = store.as_ref().filter(|p| p.exists()) {
            for (name, maps) in read_maps(path)? {
                screens.entry(name).or_default().maps = maps;
            }
        }
        let (events, _) = broadcast::channel(256);
        let (shutdown, _) = watch::channel(false);
        Ok(Arc::new(TouchHub { screens: Mutex::new(screens), events, store, shutdown }))
    }

    /// Ends the event streams (the server is stopping).
    pub fn stop(&self) {
        let _ = self.shutdown.send(true);
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, BTreeMap<String, Screen>> {
        self.screens.lock().unwrap_or_else(|e| e.into_inner())
    }

    fn status_event(name: &str, screen: &Screen) -> TouchEvent {
        let calibrated = screen.game.as_ref().is_some_and(|g| screen.maps.contains_key(g));
        TouchEvent::Status { screen: name.to_string(), camera: screen.camera.clone(), calibrated, game: screen.game.clone(), moved: screen.moved }
    }

    /// A camera reports whether it works.
    pub fn set_camera(&self, name: &str, on: bool, message: impl Into<String>) {
        let mut screens = self.lock();
        let screen = screens.entry(name.to_string()).or_default();
        let status = CameraStatus { bound: true, on, message: message.into() };
        if screen.camera != status {
            screen.camera = status;
            let _ = self.events.send(Self::status_event(name, screen));
        }
    }

    /// The camera's check of the projected rectangle against the calibration.
    pub fn set_moved(&self, name: &str, moved: bool) {
        let mut screens = self.lock();
        let screen = screens.entry(name.to_string()).or_default();
        if screen.moved != moved {
            screen.moved = moved;
            if moved {
                tracing::warn!(screen = name, "the projected grid is no longer where the camera's calibration puts it");
            }
            let _ = self.events.send(Self::status_event(name, screen));
        }
    }

    /// The page shows `game` with a grid of `cols` by `rows`.
    pub fn set_grid(&self, name: &str, game: &str, cols: usize, rows: usize) {
        let mut screens = self.lock();
        let screen = screens.entry(name.to_string()).or_default();
        screen.game = Some(game.to_string());
        screen.grid = Some((cols, rows));
        let _ = self.events.send(Self::status_event(name, screen));
    }

    /// What the camera of screen `name` works with now.
    pub fn view(&self, name: &str) -> ScreenView {
        let screens = self.lock();
        let Some(screen) = screens.get(name) else { return ScreenView { game: None, map: None } };
        let map = match (&screen.game, screen.grid) {
            (Some(game), Some((cols, rows))) => screen.maps.get(game).map(|m| m.with_grid(cols, rows)),
            _ => None,
        };
        ScreenView { game: screen.game.clone(), map }
    }

    /// The calibration asked of screen `name`'s camera, if any (taken: answer it with `reply`).
    pub fn take_calibration(&self, name: &str) -> Option<CalibrationRequest> {
        self.lock().get_mut(name).and_then(|s| s.calibration.take())
    }

    /// Puts back a calibration not yet answered (the pattern was not seen in this frame).
    pub fn put_back_calibration(&self, name: &str, request: CalibrationRequest) {
        if let Some(screen) = self.lock().get_mut(name) {
            screen.calibration.get_or_insert(request);
        }
    }

    /// Keeps a map found by the camera for `game` on screen `name`, on disk too.
    pub fn keep_map(&self, name: &str, game: &str, map: GridMap) -> anyhow::Result<()> {
        let stored = {
            let mut screens = self.lock();
            let screen = screens.entry(name.to_string()).or_default();
            screen.maps.insert(game.to_string(), map);
            screen.moved = false;
            let _ = self.events.send(Self::status_event(name, screen));
            screens.iter().map(|(n, s)| (n.clone(), s.maps.clone())).collect::<StoredMaps>()
        };
        if let Some(path) = &self.store {
            let text = serde_json::to_string_pretty(&stored)? + "\n";
            crate::publish::atomic::write_atomically(path, text.as_bytes()).map_err(|e| anyhow::anyhow!("{}: {e}", path.display()))?;
        }
        Ok(())
    }

    /// The camera's reading of a frame: where the fingertip is, and the tap it ended.
    pub fn publish(&self, name: &str, pointer: Pointer, tap: Option<Tap>) {
        let game = {
            let mut screens = self.lock();
            let screen = screens.entry(name.to_string()).or_default();
            let changed = screen.pointer != pointer;
            screen.pointer = pointer;
            if !changed && tap.is_none() {
                return;
            }
            screen.game.clone()
        };
        let _ = self.events.send(TouchEvent::Pointer { screen: name.to_string(), game: game.clone(), pointer });
        if let Some(tap) = tap {
            tracing::info!(screen = name, "tap on cell {:?}", tap.cell);
            let _ = self.events.send(TouchEvent::Tap { screen: name.to_string(), game, tap });
        }
    }

    /// Every event of every screen from now on.
    pub fn subscribe(&self) -> broadcast::Receiver<TouchEvent> {
        self.events.subscribe()
    }

    fn state_json(&self, name: &str) -> Value {
        let screens = self.lock();
        match screens.get(name) {
            Some(s) => json!({
                "screen": name,
                "game": s.game,
                "grid": s.grid,
                "camera": s.camera,
                "calibrated": s.maps.keys().collect::<Vec<_>>(),
                "pointer": s.pointer,
                "moved": s.moved,
            }),
            None => json!({ "screen": name, "game": null, "grid": null, "camera": CameraStatus::default(), "calibrated": [], "pointer": Pointer::default() }),
        }
    }
}

pub fn router(hub: Arc<TouchHub>) -> Router {
    Router::new()
        .route("/{screen}", get(screen_state))
        .route("/{screen}/events", get(screen_events))
        .route("/{screen}/grid", post(screen_grid))
        .route("/{screen}/calibrate", post(screen_calibrate))
        .with_state(hub)
}

type App = State<Arc<TouchHub>>;

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct GridRequest {
    game: String,
    cols: usize,
    rows: usize,
}

fn parse_grid(body: &Bytes) -> Result<GridRequest, Response> {
    let request: GridRequest = parse_body(body)?;
    if request.game.is_empty() || request.game.len() > 64 || !request.game.chars().all(|c| c.is_ascii_alphanumeric() || c == '-') {
        return Err(error(StatusCode::BAD_REQUEST, format!("game {:?}: letters, digits and '-' only", request.game)));
    }
    if !(1..=200).contains(&request.cols) || !(1..=200).contains(&request.rows) {
        return Err(error(StatusCode::BAD_REQUEST, format!("a grid of {} by {} cells: 1 to 200 each way", request.cols, request.rows)));
    }
    Ok(request)
}

fn check_screen(name: &str) -> Result<(), Response> {
    if !crate::touch::is_screen_name(name) {
        return Err(error(StatusCode::BAD_REQUEST, format!("screen {name:?}: letters, digits, '-' and '_' only")));
    }
    Ok(())
}

async fn screen_state(State(hub): App, Path(name): Path<String>) -> Response {
    if let Err(r) = check_screen(&name) {
        return r;
    }
    ok_json(StatusCode::OK, hub.state_json(&name))
}

async fn screen_grid(State(hub): App, Path(name): Path<String>, body: Bytes) -> Response {
    if let Err(r) = check_screen(&name) {
        return r;
    }
    let request = match parse_grid(&body) {
        Ok(r) => r,
        Err(r) => return r,
    };
    hub.set_grid(&name, &request.game, request.cols, request.rows);
    ok_json(StatusCode::OK, hub.state_json(&name))
}

async fn screen_calibrate(State(hub): App, Path(name): Path<String>, body: Bytes) -> Response {
    if let Err(r) = check_screen(&name) {
        return r;
    }
    let request = match parse_grid(&body) {
        Ok(r) => r,
        Err(r) => return r,
    };
    let (reply, answer) = oneshot::channel();
    {
        let mut screens = hub.lock();
        let screen = screens.entry(name.clone()).or_default();
        if !screen.camera.bound {
            return error(StatusCode::CONFLICT, format!("no camera is bound to screen {name}: start with `boardwatch play --camera SOURCE` or a [[screens]] entry in the daemon's configuration"));
        }
        if !screen.camera.on {
            return error(StatusCode::SERVICE_UNAVAILABLE, format!("the camera of screen {name} is off: {}", screen.camera.message));
        }
        screen.game = Some(request.game.clone());
        screen.grid = Some((request.cols, request.rows));
        screen.calibration = Some(CalibrationRequest {
            game: request.game.clone(),
            cols: request.cols,
            rows: request.rows,
            pattern: CalibrationPattern::for_grid(request.cols, request.rows),
            deadline: Instant::now() + CALIBRATION_WINDOW,
            reply,
        });
    }
    match tokio::time::timeout(CALIBRATION_WINDOW + Duration::from_secs(2), answer).await {
        Ok(Ok(Ok(body))) => ok_json(StatusCode::OK, body),
        Ok(Ok(Err(message))) => error(StatusCode::UNPROCESSABLE_ENTITY, message),
        _ => {
            hub.take_calibration(&name);
            error(StatusCode::GATEWAY_TIMEOUT, format!("the camera of screen {name} gave no frame to calibrate with"))
        }
    }
}

async fn screen_events(State(hub): App, Path(name): Path<String>) -> Response {
    if let Err(r) = check_screen(&name) {
        return r;
    }
    // The screen's state first, so that a page knows at once whether the camera is on.
    let first = {
        let mut screens = hub.lock();
        let screen = screens.entry(name.clone()).or_default();
        TouchHub::status_event(&name, screen)
    };
    let receiver = hub.subscribe();
    let mut shutdown = hub.shutdown.subscribe();
    let wanted = name.clone();
    let first = futures::stream::once(async move { first });
    let rest = futures::stream::unfold(receiver, move |mut receiver| {
        let wanted = wanted.clone();
        async move {
            loop {
                match receiver.recv().await {
                    Ok(event) if event.screen() == wanted => return Some((event, receiver)),
                    Ok(_) | Err(broadcast::error::RecvError::Lagged(_)) => continue,
                    Err(broadcast::error::RecvError::Closed) => return None,
                }
            }
        }
    });
    let stream = first
        .chain(rest)
        .map(|event| {
            let kind = match &event {
                TouchEvent::Pointer { .. } => "pointer",
                TouchEvent::Tap { .. } => "tap",
                TouchEvent::Status { .. } => "status",
            };
            Ok::<_, Infallible>(SseEvent::default().event(kind).data(serde_json::to_string(&event).unwrap_or_default()))
        })
        .take_until(async move {
            let _ = shutdown.wait_for(|stopping| *stopping).await;
        });
    Sse::new(stream).keep_alive(KeepAlive::default()).into_response()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn map() -> GridMap {
        GridMap { cols: 4, rows: 3, camera_to_rect: [[0.01, 0.0, 0.0], [0.0, 0.01, 0.0], [0.0, 0.0, 1.0]], image_size: [640, 480] }
    }

    #[test]
    fn maps_are_kept_per_game_and_survive_a_restart() {
        let dir = tempfile::Builder::new().prefix("boardwatch-touch-hub-").tempdir().unwrap();
        let store = dir.path().join("touch-maps.json");
        let hub = TouchHub::new(Some(store.clone())).unwrap();
        hub.set_grid("table", "sokoban", 10, 8);
        assert_eq!(hub.view("table").map, None, "not calibrated yet");
        hub.keep_map("table", "sokoban", map()).unwrap();
        let view = hub.view("table");
        let m = view.map.expect("calibrated");
        assert_eq!((m.cols, m.rows), (10, 8), "cut into the page's grid");
        hub.set_grid("table", "cops", 20, 20);
        assert_eq!(hub.view("table").map, None, "another game's rectangle is not this one");

        let again = TouchHub::new(Some(store.clone())).unwrap();
        again.set_grid("table", "sokoban", 7, 7);
        assert_eq!(again.view("table").map.map(|m| (m.cols, m.camera_to_rect)), Some((7, map().camera_to_rect)));
        std::fs::write(&store, "{ not json").unwrap();
        let err = TouchHub::new(Some(store.clone())).err().unwrap().to_string();
        assert!(err.contains("touch-maps.json") && err.contains("line 1"), "{err}");
    }

    #[test]
    fn taps_and_pointer_changes_reach_subscribers_of_the_screen() {
        let hub = TouchHub::new(None).unwrap();
        let mut events = hub.subscribe();
        hub.set_camera("table", true, "camera:0");
        let pointer = Pointer { at: Some([1.5, 1.5]), cell: Some([1, 1]), progress: 0.5, resting: false };
        hub.publish("table", pointer, None);
        hub.publish("table", pointer, None); // unchanged: not sent again
        hub.publish("table", Pointer::default(), Some(Tap { cell: [1, 1], dwell_start: 0.0, dwell_end: 0.7 }));
        let kinds: Vec<String> = std::iter::from_fn(|| events.try_recv().ok())
            .map(|e| serde_json::to_value(&e).unwrap()["kind"].as_str().unwrap().to_string())
            .collect();
        assert_eq!(kinds, ["status", "pointer", "pointer", "tap"]);
    }
}
