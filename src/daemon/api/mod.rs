//! The HTTP API (axum): boards and their state, the live PDN of each game, events as
//! Server-Sent Events and over WebSocket, camera pictures, operator actions behind a bearer token,
//! and the live page at `/`. The routes are listed in the README ("Running the daemon").
//!
//! Handlers only read copies the boards keep for them; operator actions, which write the log,
//! run on the blocking pool.

// Handlers return early with a ready response as the error: its size does not matter here.
#![allow(clippy::result_large_err)]

use std::collections::{HashMap, VecDeque};
use std::convert::Infallible;
use std::sync::Arc;
use std::time::Instant;

use axum::body::Bytes;
use axum::extract::ws::{Message, WebSocket, WebSocketUpgrade};
use axum::extract::{Path, RawQuery, State};
use axum::http::{header, HeaderMap, HeaderValue, Method, StatusCode, Uri};
use axum::response::sse::{Event as SseEvent, KeepAlive, Sse};
use axum::response::{Html, IntoResponse, Response};
use axum::routing::{get, post};
use axum::{Json, Router};
use futures::{Stream, StreamExt};
use serde_json::{json, Value};
use tokio::sync::{broadcast, watch};

use super::board::{ActionError, Board};
use crate::publish::hub::{BoardEvent, Hub, HubMessage, LiveBoard};

const INDEX_HTML: &str = include_str!("../../web/index.html");

pub struct AppState {
    pub boards: Vec<Arc<Board>>,
    pub hub: Hub,
    /// The operator token; `None`: operator actions are off.
    pub token: Option<String>,
    /// Events shown with a board's state.
    pub recent_events: usize,
    /// Becomes true on shutdown: event streams end so that the server can stop.
    pub shutdown: watch::Receiver<bool>,
    pub started: Instant,
}

/// The daemon's routes, and `extra` (routes mounted from outside the board code: the grid
/// games') beside them.
pub fn router(state: Arc<AppState>, extra: Router) -> Router {
    Router::new()
        .route("/", get(index))
        .route("/health", get(health))
        .route("/boards", get(list_boards))
        .route("/boards/{id}", get(board_state))
        .route("/boards/{id}/game.pdn", get(game_pdn))
        .route("/boards/{id}/games.pdn", get(games_pdn))
        .route("/boards/{id}/frame.jpg", get(frame))
        .route("/boards/{id}/events", get(board_events))
        .route("/boards/{id}/events/stream", get(board_event_stream))
        .route("/boards/{id}/events/ws", get(board_event_socket))
        .route("/boards/{id}/actions", post(action))
        .route("/events/stream", get(all_event_stream))
        .with_state(state)
        .merge(extra)
        .fallback(not_found)
}

type App = State<Arc<AppState>>;

fn error(status: StatusCode, message: impl Into<String>) -> Response {
    (status, no_cache(), Json(json!({ "error": message.into() }))).into_response()
}

fn no_cache() -> [(header::HeaderName, HeaderValue); 1] {
    [(header::CACHE_CONTROL, HeaderValue::from_static("no-cache"))]
}

fn find(app: &AppState, id: &str) -> Result<Arc<Board>, Response> {
    app.boards.iter().find(|b| b.id() == id).cloned().ok_or_else(|| {
        let ids: Vec<&str> = app.boards.iter().map(|b| b.id()).collect();
        error(StatusCode::NOT_FOUND, format!("no board {id:?} (boards: {})", ids.join(", ")))
    })
}

/// `after=N` from a query string.
/// The board named in the path and the `?after=N` of the query (0 when absent).
fn board_and_after(app: &AppState, id: &str, query: Option<&str>) -> Result<(Arc<Board>, u64), Response> {
    Ok((find(app, id)?, after_param(query)?.unwrap_or(0)))
}

fn after_param(query: Option<&str>) -> Result<Option<u64>, Response> {
    let Some(query) = query else { return Ok(None) };
    for pair in query.split('&') {
        if let Some(value) = pair.strip_prefix("after=") {
            return value.parse().map(Some).map_err(|_| {
                error(StatusCode::BAD_REQUEST, format!("after: {value:?} is not an event number"))
            });
        }
    }
    Ok(None)
}

async fn index() -> Response {
    (no_cache(), Html(INDEX_HTML)).into_response()
}

async fn not_found(method: Method, uri: Uri) -> Response {
    error(StatusCode::NOT_FOUND, format!("no route {method} {uri}; the API starts at /boards"))
}

async fn health(State(app): App) -> Response {
    let boards: Vec<Value> = app
        .boards
        .iter()
        .map(|b| {
            let source = b.source_json();
            let recording = b.recording_json();
            json!({
                "id": b.id(),
                "recording": recording["state"],
                "recording_error": recording["error"],
                "recording_since": recording["since"],
                "source": source["state"],
                "error": source["error"],
            })
        })
        .collect();
    // `degraded`: a board's records cannot be written right now (it retries by itself).
    let status = if boards.iter().any(|b| b["recording"] == "failing") { "degraded" } else { "ok" };
    (no_cache(), Json(json!({"status": status, "uptime_s": app.started.elapsed().as_secs(), "boards": boards})))
        .into_response()
}

/// The board as `/boards/{id}` shows it, with the last `recent` events.
pub(crate) fn summary(board: &Board, recent: usize) -> Value {
    let (last_events, game, has_picture) = board.shown(recent);
    // One lock at a time: never two of the board's locks held together.
    let source = board.source_json();
    let recording = board.recording_json();
    let config = &board.config;
    json!({
        "id": config.id,
        "name": config.name,
        "variant": config.variant.name(),
        "kings": config.kings,
        "tags": config.tags.iter().map(|(k, v)| (k.clone(), Value::from(v.as_str()))).collect::<serde_json::Map<_, _>>(),
        "recording": recording["state"],
        // Why and since when the records cannot be written, while they cannot.
        "records": recording,
        "error": board.failure(),
        "folder": board.folder(),
        "game": game,
        "source": source,
        "has_picture": has_picture,
        "last_seq": last_events.last().map_or(0, |e| e.event.seq),
        // A new epoch: the board's log was begun again and its events count from 1 again.
        "epoch": board.epoch(),
        "last_events": last_events.iter().map(|e| e.as_ref()).collect::<Vec<_>>(),
    })
}

async fn list_boards(State(app): App) -> Response {
    let boards: Vec<Value> = app.boards.iter().map(|b| summary(b, app.recent_events)).collect();
    (no_cache(), Json(boards)).into_response()
}

async fn board_state(State(app): App, Path(id): Path<String>) -> Response {
    match find(&app, &id) {
        Ok(board) => (no_cache(), Json(summary(&board, app.recent_events))).into_response(),
        Err(response) => response,
    }
}

fn pdn_response(text: Arc<str>) -> Response {
    (
        [
            (header::CONTENT_TYPE, HeaderValue::from_static("text/plain; charset=utf-8")),
            (header::CACHE_CONTROL, HeaderValue::from_static("no-cache")),
        ],
        text.to_string(),
    )
        .into_response()
}

async fn game_pdn(State(app): App, Path(id): Path<String>) -> Response {
    find(&app, &id).map_or_else(|r| r, |b| pdn_response(b.game_pdn()))
}

async fn games_pdn(State(app): App, Path(id): Path<String>) -> Response {
    let board = match find(&app, &id) {
        Ok(b) => b,
        Err(r) => return r,
    };
    // The finished games are read from the board's `games.pdn`, not kept in memory.
    match tokio::task::spawn_blocking(move || board.games_pdn()).await {
        Ok(Ok(text)) => pdn_response(Arc::from(text)),
        Ok(Err(e)) => error(StatusCode::INTERNAL_SERVER_ERROR, format!("games.pdn: {e}")),
        Err(e) => error(StatusCode::INTERNAL_SERVER_ERROR, e.to_string()),
    }
}

async fn frame(State(app): App, Path(id): Path<String>) -> Response {
    let board = match find(&app, &id) {
        Ok(b) => b,
        Err(r) => return r,
    };
    match board.picture() {
        Some(jpeg) => (
            [
                (header::CONTENT_TYPE, HeaderValue::from_static("image/jpeg")),
                (header::CACHE_CONTROL, HeaderValue::from_static("no-store")),
            ],
            Bytes::from(jpeg.to_vec()),
        )
            .into_response(),
        None => error(StatusCode::NOT_FOUND, format!("board {id:?} has no camera picture yet")),
    }
}

/// The board's published events after `?after=N` (all by default), as a JSON array.
async fn board_events(State(app): App, Path(id): Path<String>, RawQuery(query): RawQuery) -> Response {
    let (board, after) = match board_and_after(&app, &id, query.as_deref()) {
        Ok(found) => found,
        Err(r) => return r,
    };
    let events = board.events_after(after);
    (no_cache(), Json(events.iter().map(|e| e.as_ref()).collect::<Vec<_>>())).into_response()
}

/// Where a stream of one board starts: `?after=N`, else the `Last-Event-ID` an EventSource sends
/// when it reconnects, else the beginning.
fn stream_start(headers: &HeaderMap, query: Option<&str>) -> Result<u64, Response> {
    if let Some(after) = after_param(query)? {
        return Ok(after);
    }
    Ok(headers
        .get("last-event-id")
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.trim().parse().ok())
        .unwrap_or(0))
}

/// One board's events after `after`: first from its history, then live; in order, each once.
/// A listener that falls behind the live channel catches up from the history.
fn one_board_events(board: Arc<Board>, after: u64, hub: &Hub) -> impl Stream<Item = Arc<BoardEvent>> + Send {
    // Subscribe before reading the history: an event published in between is then in both, and
    // the sequence numbers drop the copy.
    let receiver = hub.subscribe();
    let backlog: VecDeque<Arc<BoardEvent>> = board.events_after(after).into();
    futures::stream::unfold((board, after, backlog, receiver), |(board, mut last, mut queue, mut receiver)| async move {
        loop {
            if let Some(event) = queue.pop_front() {
                if event.event.seq > last {
                    last = event.event.seq;
                    return Some((event, (board, last, queue, receiver)));
                }
                continue;
            }
            match receiver.recv().await {
                Ok(message) => {
                    if let HubMessage::Event(e) = message.as_ref() {
                        if e.board == board.id() && e.event.seq > last {
                            queue.push_back(Arc::new((**e).clone()));
                        }
                    }
                }
                Err(broadcast::error::RecvError::Lagged(_)) => queue.extend(board.events_after(last)),
                Err(broadcast::error::RecvError::Closed) => return None,
            }
        }
    })
}

async fn until_shutdown(mut shutdown: watch::Receiver<bool>) {
    let _ = shutdown.wait_for(|stopping| *stopping).await;
}

/// SSE of one board: `id:` is the event's sequence number, `data:` the event as JSON.
async fn board_event_stream(
    State(app): App,
    Path(id): Path<String>,
    headers: HeaderMap,
    RawQuery(query): RawQuery,
) -> Response {
    let board = match find(&app, &id) {
        Ok(b) => b,
        Err(r) => return r,
    };
    let after = match stream_start(&headers, query.as_deref()) {
        Ok(a) => a,
        Err(r) => return r,
    };
    let stream = one_board_events(board, after, &app.hub)
        .map(|e| {
            let data = serde_json::to_string(e.as_ref()).unwrap_or_default();
            Ok::<_, Infallible>(SseEvent::default().id(e.event.seq.to_string()).data(data))
        })
        .take_until(until_shutdown(app.shutdown.clone()));
    Sse::new(stream).keep_alive(KeepAlive::default()).into_response()
}

/// SSE of every board from now on: events (`data:` with `board`), and source changes as
/// `event: status`. The live page uses it.
async fn all_event_stream(State(app): App) -> Response {
    let receiver = app.hub.subscribe();
    let boards = app.boards.clone();
    let last: HashMap<String, u64> = boards.iter().map(|b| (b.id().to_string(), b.last_seq())).collect();
    let stream = futures::stream::unfold(
        (boards, last, VecDeque::<Arc<HubMessage>>::new(), receiver),
        |(boards, mut last, mut queue, mut receiver)| async move {
            loop {
                if let Some(message) = queue.pop_front() {
                    if let HubMessage::Event(e) = message.as_ref() {
                        let seen = last.entry(e.board.clone()).or_default();
                        if e.event.seq <= *seen {
                            continue;
                        }
                        *seen = e.event.seq;
                    }
                    return Some((message, (boards, last, queue, receiver)));
                }
                match receiver.recv().await {
                    Ok(message) => queue.push_back(message),
                    Err(broadcast::error::RecvError::Lagged(_)) => {
                        for board in &boards {
                            let after = last.get(board.id()).copied().unwrap_or(0);
                            queue.extend(
                                board.events_after(after).into_iter().map(|e| Arc::new(HubMessage::Event(Box::new((*e).clone())))),
                            );
                        }
                    }
                    Err(broadcast::error::RecvError::Closed) => return None,
                }
            }
        },
    )
    .map(|message| {
        let event = match message.as_ref() {
            HubMessage::Event(e) => SseEvent::default().data(serde_json::to_string(e).unwrap_or_default()),
            HubMessage::Status { board, source } => {
                SseEvent::default().event("status").data(json!({"board": board, "source": source}).to_string())
            }
        };
        Ok::<_, Infallible>(event)
    })
    .take_until(until_shutdown(app.shutdown.clone()));
    Sse::new(stream).keep_alive(KeepAlive::default()).into_response()
}

/// WebSocket of one board: each event as a JSON text message, from `?after=N` (or the start).
async fn board_event_socket(
    State(app): App,
    Path(id): Path<String>,
    RawQuery(query): RawQuery,
    upgrade: WebSocketUpgrade,
) -> Response {
    let (board, after) = match board_and_after(&app, &id, query.as_deref()) {
        Ok(found) => found,
        Err(r) => return r,
    };
    let events = one_board_events(board, after, &app.hub);
    let shutdown = app.shutdown.clone();
    upgrade.on_upgrade(move |socket| send_events(socket, events, shutdown))
}

async fn send_events(mut socket: WebSocket, events: impl Stream<Item = Arc<BoardEvent>> + Send, shutdown: watch::Receiver<bool>) {
    let mut events = std::pin::pin!(events.take_until(until_shutdown(shutdown)));
    loop {
        tokio::select! {
            next = events.next() => match next {
                Some(e) => {
                    let text = serde_json::to_string(e.as_ref()).unwrap_or_default();
                    if socket.send(Message::Text(text.into())).await.is_err() {
                        return;
                    }
                }
                None => {
                    let _ = socket.send(Message::Close(None)).await;
                    return;
                }
            },
            incoming = socket.recv() => match incoming {
                None | Some(Err(_)) | Some(Ok(Message::Close(_))) => return,
                Some(Ok(_)) => {} // the stream is one-way; pings are answered by axum
            },
        }
    }
}

/// Check the bearer token; operator actions are refused without a configured token.
fn authorize(app: &AppState, headers: &HeaderMap) -> Result<(), Response> {
    let unauthorized = |message: &str| {
        let mut response = error(StatusCode::UNAUTHORIZED, message);
        response.headers_mut().insert(header::WWW_AUTHENTICATE, HeaderValue::from_static("Bearer realm=\"boardwatch\""));
        response
    };
    let Some(expected) = &app.token else {
        return Err(error(
            StatusCode::FORBIDDEN,
            "operator actions are off: set http.token or http.token_file in the configuration",
        ));
    };
    let Some(value) = headers.get(header::AUTHORIZATION) else {
        return Err(unauthorized("missing bearer token: send `Authorization: Bearer <token>`"));
    };
    let given = value.to_str().ok().and_then(|v| v.strip_prefix("Bearer ")).map(str::trim);
    match given {
        None => Err(unauthorized("the Authorization header must be `Bearer <token>`")),
        Some(token) if constant_time_eq(token.as_bytes(), expected.as_bytes()) => Ok(()),
        Some(_) => Err(unauthorized("wrong token")),
    }
}

// Kept under this name for the hall's API.
pub(crate) use crate::publish::hub::constant_time_eq;

/// The daemon's board as the hub's sinks see it.
impl LiveBoard for Board {
    fn id(&self) -> &str {
        Board::id(self)
    }
    fn epoch(&self) -> u64 {
        Board::epoch(self)
    }
    fn last_seq(&self) -> u64 {
        Board::last_seq(self)
    }
    fn events_after(&self, after: u64) -> Vec<Arc<BoardEvent>> {
        Board::events_after(self, after)
    }
    fn state(&self, recent: usize) -> Value {
        summary(self, recent)
    }
    fn game_pdn(&self) -> Arc<str> {
        Board::game_pdn(self)
    }
    fn operate(&self, action: &Value) -> Result<(), String> {
        Board::operate(self, action).map(|_| ()).map_err(|e| e.to_string())
    }
}

/// `POST /boards/{id}/actions` with `{"op": ...}`: the events it caused, or why not.
async fn action(State(app): App, Path(id): Path<String>, headers: HeaderMap, body: Bytes) -> Response {
    if let Err(response) = authorize(&app, &headers) {
        return response;
    }
    let board = match find(&app, &id) {
        Ok(b) => b,
        Err(r) => return r,
    };
    let action: Value = match serde_json::from_slice(&body) {
        Ok(v) => v,
        Err(e) => return error(StatusCode::BAD_REQUEST, format!("the body is not JSON like {{\"op\": \"undo\"}}: {e}")),
    };
    let worker = Arc::clone(&board);
    // The log is synced before the answer: a blocking write, off the async workers.
    match tokio::task::spawn_blocking(move || worker.operate(&action)).await {
        Ok(Ok(events)) => {
            let events: Vec<&BoardEvent> = events.iter().map(|e| e.as_ref()).collect();
            (no_cache(), Json(json!({ "events": events }))).into_response()
        }
        Ok(Err(ActionError::Invalid(m))) => error(StatusCode::BAD_REQUEST, m),
        Ok(Err(ActionError::Refused(m))) => error(StatusCode::CONFLICT, m),
        Ok(Err(ActionError::NotRecording(m))) => {
            error(StatusCode::SERVICE_UNAVAILABLE, format!("board {id:?} is not recording: {m}"))
        }
        // A full disk, for instance: nothing was recorded, and the action can be tried again.
        Ok(Err(ActionError::Log(m))) => error(StatusCode::SERVICE_UNAVAILABLE, format!("not recorded: {m}")),
        Err(e) => error(StatusCode::INTERNAL_SERVER_ERROR, format!("the action failed: {e}")),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tokens_compare_whole() {
        assert!(constant_time_eq(b"secret", b"secret"));
        assert!(!constant_time_eq(b"secret", b"secreT"));
        assert!(!constant_time_eq(b"secret", b"secret2"));
        assert!(!constant_time_eq(b"", b"x"));
    }

    /// A listener far behind the live channel still gets every event, in order, once.
    #[tokio::test]
    async fn a_lagging_listener_catches_up_from_the_history() {
        use crate::daemon::config::{BoardConfig, SourceConfig};
        let tmp = tempfile::Builder::new().prefix("bw-http-lag-").tempdir().unwrap();
        let dir = tmp.path();
        let config = BoardConfig {
            id: "t".into(),
            name: "t".into(),
            variant: crate::draughts::Variant::Pool,
            kings: crate::tracker::KingStyle::Visible,
            start_fen: None,
            strict: false,
            error_after: crate::tracker::DEFAULT_ERROR_AFTER,
            source: SourceConfig::Observations { path: "x".into(), pace: std::time::Duration::ZERO, follow: false },
            calibration: None,
            palette: None,
            squares: Default::default(),
            tags: Vec::new(),
        };
        let hub = Hub::new(2);
        let board = Board::open(config, &dir, hub.clone());
        let stream = one_board_events(Arc::clone(&board), 0, &hub);
        for _ in 0..40 {
            board.operate(&json!({"op": "init"})).unwrap();
        }
        let seqs: Vec<u64> = stream.take(41).map(|e| e.event.seq).collect().await;
        assert_eq!(seqs, (1..=41).collect::<Vec<_>>());
    }

    /// Routes mounted from outside the board code (the grid games') are served beside the
    /// boards', and unknown paths still get the API's own answer.
    #[tokio::test(flavor = "multi_thread", worker_threads = 1)]
    async fn extra_routes_are_mounted_beside_the_boards() {
        let (_shutdown_sender, shutdown) = watch::channel(false);
        let app = Arc::new(AppState {
            boards: Vec::new(),
            hub: Hub::new(2),
            token: None,
            recent_events: 5,
            shutdown,
            started: Instant::now(),
        });
        let games = Router::new().route("/games/demo", get(|| async { "a grid game" }));
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let address = listener.local_addr().unwrap();
        tokio::spawn(async move { axum::serve(listener, router(app, games)).await });
        let get_text = move |path: &'static str| {
            use std::io::{Read, Write};
            let mut stream = std::net::TcpStream::connect(address).unwrap();
            write!(stream, "GET {path} HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n").unwrap();
            let mut answer = String::new();
            stream.read_to_string(&mut answer).unwrap();
            answer
        };
        let game = tokio::task::spawn_blocking(move || get_text("/games/demo")).await.unwrap();
        assert!(game.starts_with("HTTP/1.1 200") && game.ends_with("a grid game"), "{game}");
        let missing = tokio::task::spawn_blocking(move || get_text("/games/none")).await.unwrap();
        assert!(missing.starts_with("HTTP/1.1 404") && missing.contains("no route GET /games/none"), "{missing}");
    }

    #[test]
    fn after_is_read_from_the_query() {
        assert_eq!(after_param(Some("x=1&after=7")).ok().flatten(), Some(7));
        assert_eq!(after_param(None).ok().flatten(), None);
        assert!(after_param(Some("after=seven")).is_err());
    }
}
