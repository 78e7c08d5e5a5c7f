//! The grid games on the web: their pages (embedded in the binary) and HTTP routes.
//!
//! [`router`] returns one `axum::Router` with every game: `boardwatch play` serves it at `/`,
//! and the daemon can nest it (for example under `/games`) next to the boards: the pages use
//! only relative addresses. Game state lives here, on the server, so a game survives a page
//! reload. The engines stay in `crate::games` (pure); this layer only keeps games in memory,
//! reads and writes map and record files, and turns errors into JSON.
//!
//! Shared by every game page: `projector.js` and `projector.css` (projector mode: full screen,
//! high contrast, large cells, corner-pin of the grid kept per screen), served under `assets/`.

// Handlers return early with a ready response as the error: its size does not matter here.
#![allow(clippy::result_large_err)]

pub mod cops;
pub mod sokoban;
pub mod dots;
pub mod cops_arena;
pub mod touch;

use std::path::PathBuf;
use std::sync::Arc;

use axum::body::Bytes;
use axum::http::{header, HeaderValue, Method, StatusCode, Uri};
use axum::response::{Html, IntoResponse, Response};
use axum::routing::get;
use axum::{Json, Router};
use serde::de::DeserializeOwned;
use serde_json::{json, Value};

const INDEX_HTML: &str = include_str!("index.html");
const PROJECTOR_JS: &str = include_str!("projector.js");
const PROJECTOR_CSS: &str = include_str!("projector.css");

/// Where the games read and write files; nothing is needed.
#[derive(Clone, Debug, Default)]
pub struct GamesConfig {
    /// User maps for Cops and Robbers (`*.txt`); maps saved in the editor are written here.
    pub cops_maps: Option<PathBuf>,
    /// Every finished game's record is written here as JSON lines.
    pub records: Option<PathBuf>,
    /// The user's Sokoban levels (`*.xsb`, `*.sok`, `*.txt`); levels saved in the editor are
    /// written here as `NAME.xsb` (without it they last until the server stops).
    pub sokoban_levels: Option<PathBuf>,
    /// Where the camera mappings of projected games are kept (JSON, replaced atomically);
    /// without it they last until the server stops.
    pub touch_maps: Option<PathBuf>,
}

/// Every game's state.
pub struct Games {
    pub cops: cops::CopsState,
    pub sokoban: sokoban::SokobanState,
    pub dots: dots::DotsState,
    /// Camera taps on projected games.
    pub touch: Arc<touch::TouchHub>,
}

impl Games {
    /// Loads the bundled and the user's maps. A folder that cannot be read is an error; a map
    /// in it that cannot be read is listed with its problem and skipped.
    pub fn new(config: GamesConfig) -> anyhow::Result<Arc<Games>> {
        let dots = dots::DotsState::new(config.records.clone());
        Ok(Arc::new(Games {
            cops: cops::CopsState::new(config.cops_maps, config.records)?,
            sokoban: sokoban::SokobanState::new(config.sokoban_levels)?,
            dots,
            touch: touch::TouchHub::new(config.touch_maps)?,
        }))
    }
}

/// The routes of every game page and its API, relative to where they are mounted.
pub fn router(games: Arc<Games>) -> Router {
    Router::new()
        .route("/", get(|| page(INDEX_HTML)))
        .route("/assets/projector.js", get(|| asset(PROJECTOR_JS, "text/javascript; charset=utf-8")))
        .route("/assets/projector.css", get(|| asset(PROJECTOR_CSS, "text/css; charset=utf-8")))
        .nest("/cops", cops::router(games.clone()))
        .nest("/sokoban", sokoban::router(games.clone()))
        .nest("/dots", dots::router(games.clone()))
        .nest("/cops-arena", cops_arena::router())
        .nest("/touch", touch::router(games.touch.clone()))
        .fallback(not_found)
}

async fn page(html: &'static str) -> Response {
    (no_cache(), Html(html)).into_response()
}

async fn asset(text: &'static str, content_type: &'static str) -> Response {
    let headers = [(header::CONTENT_TYPE, HeaderValue::from_static(content_type)), no_cache()[0].clone()];
    (headers, text).into_response()
}

async fn not_found(method: Method, uri: Uri) -> Response {
    error(StatusCode::NOT_FOUND, format!("no route {method} {uri}"))
}

fn no_cache() -> [(header::HeaderName, HeaderValue); 1] {
    [(header::CACHE_CONTROL, HeaderValue::from_static("no-cache"))]
}

/// `{"error": message}` with the status.
pub(crate) fn error(status: StatusCode, message: impl Into<String>) -> Response {
    error_with(status, json!({ "error": message.into() }))
}

/// A JSON error body with more fields (line, column, field).
pub(crate) fn error_with(status: StatusCode, body: Value) -> Response {
    (status, no_cache(), Json(body)).into_response()
}

pub(crate) fn ok_json(status: StatusCode, body: Value) -> Response {
    (status, no_cache(), Json(body)).into_response()
}

/// A request body as `T`, or a 400 naming what is wrong with it.
pub(crate) fn parse_body<T: DeserializeOwned>(body: &Bytes) -> Result<T, Response> {
    if body.is_empty() {
        return Err(error(StatusCode::BAD_REQUEST, "the request needs a JSON body"));
    }
    serde_json::from_slice(body).map_err(|e| error(StatusCode::BAD_REQUEST, format!("the request body: {e}")))
}
