//! The hall's HTTP API, with the daemon's conventions (JSON errors `{"error": ...}`, bearer
//! token for operator actions, `?after=N`, no caching of live data):
//!
//! - `GET /`: the overview page of every board;
//! - `GET /boards`, `GET /boards/{id}`: the boards as the hall knows them;
//! - `GET /boards/{id}/game.pdn`: a board's current game;
//! - `GET /boards/{id}/events?after=N`: its events, from the hall's copy;
//! - `GET /round.pdn`: every board's current game in one PDN file (what broadcast sites poll),
//!   with the round's tags (see [`super::round`]; a board's `game.pdn` is its daemon's, which
//!   has them too once the daemon took them, see [`super::tagging`]);
//! - `GET /round`: the round's event, site, date, round and pairings (`pairings_text` as the
//!   page's textarea shows them); `PUT /round` (token) with `{"event", "site", "date", "round",
//!   "pairings": "1. White - Black\n..."}` sets them, saved atomically in `round.json`, and
//!   gives each board's daemon its tags over MQTT;
//! - `GET /events/stream`: SSE of every event of every board (`id: board/seq`);
//! - `GET /events/ws`: the same events over WebSocket, one JSON text message each (read-only and
//!   open like the daemon's `/boards/{id}/events/ws`: only actions need the token);
//! - `POST /boards/{id}/actions` with `{"op": ...}`: passed on to the board's daemon over MQTT.

use std::convert::Infallible;
use std::sync::Arc;

use axum::body::Bytes;
use axum::extract::ws::{Message, WebSocket, WebSocketUpgrade};
use axum::extract::{Path, RawQuery, State};
use axum::http::{header, HeaderMap, HeaderValue, StatusCode};
use axum::response::sse::{Event as SseEvent, KeepAlive, Sse};
use axum::response::{Html, IntoResponse, Response};
use axum::routing::{get, post};
use axum::{Json, Router};
use futures::StreamExt;
use rumqttc::{AsyncClient, QoS};
use serde_json::{json, Value};
use tokio::sync::{broadcast, watch};

use super::round::{Round, RoundForm};
use super::store::Store;
use crate::daemon::api::constant_time_eq;
use crate::mqtt::topic;

const HALL_HTML: &str = include_str!("../web/hall.html");

pub struct HallState {
    pub store: Arc<Store>,
    pub client: AsyncClient,
    pub hall: String,
    pub round: std::sync::Mutex<Round>,
    /// Where the round is saved.
    pub state_dir: std::path::PathBuf,
    pub token: Option<String>,
    pub shutdown: watch::Receiver<bool>,
    /// Wakes the sending of the round's tags to the boards (see [`super::tagging`]).
    pub round_saved: tokio::sync::Notify,
}

type App = State<Arc<HallState>>;

pub fn router(state: Arc<HallState>) -> Router {
    Router::new()
        .route(
            "/",
            get(|| async { (no_cache(), Html(HALL_HTML)).into_response() }),
        )
        .route("/hall", get(hall_info))
        .route("/boards", get(boards))
        .route("/boards/{id}", get(board))
        .route("/boards/{id}/game.pdn", get(game_pdn))
        .route("/boards/{id}/events", get(events))
        .route("/boards/{id}/actions", post(action))
        .route("/round.pdn", get(round_pdn))
        .route("/round", get(round).put(set_round))
        .route("/events/stream", get(stream))
        .route("/events/ws", get(socket))
        .fallback(|| async {
            error(
                StatusCode::NOT_FOUND,
                "no such route; the API starts at /boards",
            )
        })
        .with_state(state)
}

fn error(status: StatusCode, message: impl Into<String>) -> Response {
    (status, no_cache(), Json(json!({ "error": message.into() }))).into_response()
}

fn no_cache() -> [(header::HeaderName, HeaderValue); 1] {
    [(header::CACHE_CONTROL, HeaderValue::from_static("no-cache"))]
}

fn pdn(text: String) -> Response {
    (
        [
            (
                header::CONTENT_TYPE,
                HeaderValue::from_static("text/plain; charset=utf-8"),
            ),
            no_cache()[0].clone(),
        ],
        text,
    )
        .into_response()
}

fn unknown(app: &HallState, id: &str) -> Response {
    error(
        StatusCode::NOT_FOUND,
        format!(
            "no board {id:?} in hall {} (boards: {})",
            app.hall,
            app.store.board_ids().join(", ")
        ),
    )
}

fn current_round(app: &HallState) -> Round {
    app.round.lock().unwrap_or_else(|poisoned| poisoned.into_inner()).clone()
}

async fn hall_info(State(app): App) -> Response {
    let round = current_round(&app).round;
    let round = (!round.is_empty()).then_some(round);
    (
        no_cache(),
        Json(json!({"hall": app.hall, "round": round, "boards": app.store.board_ids()})),
    )
        .into_response()
}

async fn round(State(app): App) -> Response {
    let round = current_round(&app);
    let mut value = serde_json::to_value(&round).unwrap_or_default();
    value["pairings_text"] = Value::from(round.pairings_text());
    (no_cache(), Json(value)).into_response()
}

/// The arbiter sets the round's tags and pairings (once per round): checked whole, saved
/// atomically, then served with every game.
async fn set_round(State(app): App, headers: HeaderMap, body: Bytes) -> Response {
    if let Err(response) = authorize(&app, &headers) {
        return response;
    }
    let form: RoundForm = match serde_json::from_slice(&body) {
        Ok(form) => form,
        Err(e) => {
            return error(
                StatusCode::BAD_REQUEST,
                format!("the body is not JSON like {{\"round\": \"3\", \"pairings\": \"1. White - Black\"}}: {e}"),
            )
        }
    };
    let round = match Round::from_form(form) {
        Ok(round) => round,
        Err(e) => return error(StatusCode::BAD_REQUEST, e),
    };
    let (saving, dir) = (round.clone(), app.state_dir.clone());
    match tokio::task::spawn_blocking(move || saving.save(&dir)).await {
        Ok(Ok(_)) => {}
        Ok(Err(e)) => return error(StatusCode::INTERNAL_SERVER_ERROR, format!("not saved: {e}")),
        Err(e) => return error(StatusCode::INTERNAL_SERVER_ERROR, format!("not saved: {e}")),
    }
    *app.round.lock().unwrap_or_else(|poisoned| poisoned.into_inner()) = round;
    // Each board's daemon is given its tags (and again until it holds them).
    app.round_saved.notify_one();
    self::round(State(app)).await
}

async fn boards(State(app): App) -> Response {
    (no_cache(), Json(app.store.overview())).into_response()
}

async fn board(State(app): App, Path(id): Path<String>) -> Response {
    match app
        .store
        .overview()
        .into_iter()
        .find(|b| b["id"] == id.as_str())
    {
        Some(b) => (no_cache(), Json(b)).into_response(),
        None => unknown(&app, &id),
    }
}

async fn game_pdn(State(app): App, Path(id): Path<String>) -> Response {
    match app.store.game_pdn(&id) {
        Some(text) => pdn(text.to_string()),
        None => unknown(&app, &id),
    }
}

async fn round_pdn(State(app): App) -> Response {
    let round = current_round(&app);
    let mut text = String::new();
    for (id, game) in app.store.games() {
        text.push_str(round.tag_game(&id, &game).trim_end());
        text.push_str("\n\n");
    }
    pdn(text)
}

async fn events(State(app): App, Path(id): Path<String>, RawQuery(query): RawQuery) -> Response {
    let after = match query
        .as_deref()
        .and_then(|q| q.split('&').find_map(|p| p.strip_prefix("after=")))
    {
        None => 0,
        Some(v) => match v.parse::<u64>() {
            Ok(n) => n,
            Err(_) => {
                return error(
                    StatusCode::BAD_REQUEST,
                    format!("after: {v:?} is not an event number"),
                )
            }
        },
    };
    let store = app.store.clone();
    let read =
        tokio::task::spawn_blocking(move || store.events_after(&id, after).map(|r| (id, r))).await;
    match read {
        Ok(Some((_, Ok(events)))) => (no_cache(), Json(events)).into_response(),
        Ok(Some((_, Err(e)))) => error(StatusCode::INTERNAL_SERVER_ERROR, e.to_string()),
        Ok(None) => error(StatusCode::NOT_FOUND, "no such board"),
        Err(e) => error(StatusCode::INTERNAL_SERVER_ERROR, e.to_string()),
    }
}

/// SSE of every event stored from now on; a listener that falls too far behind is told
/// (`event: lagged`) and catches up with `/boards/{id}/events?after=N`.
async fn stream(State(app): App) -> Response {
    let receiver = app.store.subscribe();
    let mut shutdown = app.shutdown.clone();
    let events = futures::stream::unfold(receiver, |mut receiver| async move {
        let event = match receiver.recv().await {
            Ok(text) => {
                let id = serde_json::from_str::<Value>(&text)
                    .ok()
                    .map(|v| format!("{}/{}", v["board"].as_str().unwrap_or(""), v["seq"]))
                    .unwrap_or_default();
                SseEvent::default().id(id).data(text)
            }
            Err(broadcast::error::RecvError::Lagged(n)) => {
                SseEvent::default().event("lagged").data(n.to_string())
            }
            Err(broadcast::error::RecvError::Closed) => return None,
        };
        Some((Ok::<_, Infallible>(event), receiver))
    })
    .take_until(async move {
        let _ = shutdown.wait_for(|stopping| *stopping).await;
    });
    Sse::new(events)
        .keep_alive(KeepAlive::default())
        .into_response()
}

/// WebSocket of every event stored from now on, each as the JSON text the SSE stream sends. A
/// listener that falls too far behind gets `{"lagged": n}` (as SSE's `event: lagged`) and catches
/// up with `/boards/{id}/events?after=N`. The socket is one-way: what the client sends is ignored.
async fn socket(State(app): App, upgrade: WebSocketUpgrade) -> Response {
    let receiver = app.store.subscribe();
    let shutdown = app.shutdown.clone();
    upgrade.on_upgrade(move |socket| send_all_events(socket, receiver, shutdown))
}

async fn send_all_events(
    mut socket: WebSocket,
    mut receiver: broadcast::Receiver<Arc<str>>,
    mut shutdown: watch::Receiver<bool>,
) {
    loop {
        let text = tokio::select! {
            received = receiver.recv() => match received {
                Ok(text) => text.to_string(),
                Err(broadcast::error::RecvError::Lagged(n)) => json!({"lagged": n}).to_string(),
                Err(broadcast::error::RecvError::Closed) => break,
            },
            incoming = socket.recv() => match incoming {
                None | Some(Err(_)) | Some(Ok(Message::Close(_))) => return,
                Some(Ok(_)) => continue, // pings are answered by axum
            },
            _ = shutdown.wait_for(|stopping| *stopping) => break,
        };
        if socket.send(Message::Text(text.into())).await.is_err() {
            return;
        }
    }
    let _ = socket.send(Message::Close(None)).await;
}

/// An operator action for a board's daemon: checked against the hall's token here, passed on
/// with it, and taken by the daemon only if its own operator token is the same.
async fn action(
    State(app): App,
    Path(id): Path<String>,
    headers: HeaderMap,
    body: Bytes,
) -> Response {
    if let Err(response) = authorize(&app, &headers) {
        return response;
    }
    let Some(expected) = &app.token else {
        return error(StatusCode::FORBIDDEN, "no token");
    };
    if app.store.game_pdn(&id).is_none() {
        return unknown(&app, &id);
    }
    let action: Value = match serde_json::from_slice(&body) {
        Ok(v @ Value::Object(_)) => v,
        _ => {
            return error(
                StatusCode::BAD_REQUEST,
                "the body is not JSON like {\"op\": \"undo\"}",
            )
        }
    };
    let message = json!({"token": expected, "action": action}).to_string();
    match app
        .client
        .publish(
            topic(&app.hall, &id, "actions"),
            QoS::AtLeastOnce,
            false,
            message,
        )
        .await
    {
        Ok(()) => (
            StatusCode::ACCEPTED,
            no_cache(),
            Json(json!({"sent": true, "board": id})),
        )
            .into_response(),
        Err(e) => error(
            StatusCode::SERVICE_UNAVAILABLE,
            format!("not sent to the broker: {e}"),
        ),
    }
}

/// Operator actions and the round need the hall's token.
fn authorize(app: &HallState, headers: &HeaderMap) -> Result<(), Response> {
    let Some(expected) = &app.token else {
        return Err(error(
            StatusCode::FORBIDDEN,
            "operator actions are off: set http.token or http.token_file in hall.toml",
        ));
    };
    let given = headers
        .get(header::AUTHORIZATION)
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.strip_prefix("Bearer "));
    match given {
        Some(token) if constant_time_eq(token.trim().as_bytes(), expected.as_bytes()) => Ok(()),
        _ => Err(error(
            StatusCode::UNAUTHORIZED,
            "missing or wrong bearer token: send `Authorization: Bearer <token>`",
        )),
    }
}
