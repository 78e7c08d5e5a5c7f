//! The moving-walls arena on the web: watch a match between computer players, play the thief or
//! the police yourself (the clock is paused while you plan), or step through a record.
//!
//! Routes (relative to where the router is nested, `/cops-arena` in [`super::router`]):
//!
//! | route | what |
//! |---|---|
//! | `GET /` | the page |
//! | `POST /matches` | start one: `{"thief", "police", "seed", "params": {"k": 5, ...}}`, players `astar`, `strong`, `stay`, `random` or `human` |
//! | `GET /matches/{id}` | its state: board, plans in force, status (`ready`, `{"waiting": [roles]}`, `over`) |
//! | `POST /matches/{id}/step` | play `{"ticks": N}` ticks (default 1), stopping where a human must plan or the game ends |
//! | `POST /matches/{id}/plan` | a human's plan: `{"role", "moves": [[m, ...], ...]}` (k moves per piece, m in U D L R S) |
//! | `GET /matches/{id}/record` | the finished game's record (replays exactly) |
//! | `POST /replay` | a record checked and replayed: the board after every tick |
//!
//! Errors are `{"error": "..."}` (`field` names a bad parameter): 400 for bad input, 404 for an
//! unknown match, 409 for a plan out of turn or a record of an unfinished game.

use std::collections::{HashMap, VecDeque};
use std::sync::{Arc, Mutex};

use axum::body::Bytes;
use axum::extract::{Path, State};
use axum::http::{header, HeaderValue, StatusCode};
use axum::response::{Html, IntoResponse, Response};
use axum::routing::{get, post};
use axum::Router;
use serde::Deserialize;
use serde_json::{json, Value};

use super::{error, error_with, ok_json, parse_body};
use crate::games::cops::arena::live::{LiveMatch, Status};
use crate::games::cops::arena::{replay, Board, GameRecord, Params, Plan, PlayerSpec, Role};

const PAGE_HTML: &str = include_str!("cops_arena.html");
/// Matches kept in memory; the oldest go first.
const MAX_MATCHES: usize = 32;
/// Most ticks one step request plays.
const MAX_TICKS_PER_STEP: u32 = 1000;

#[derive(Default)]
pub struct ArenaState {
    matches: Mutex<(HashMap<String, LiveMatch>, VecDeque<String>)>,
}

pub fn router() -> Router {
    Router::new()
        .route("/", get(page))
        .route("/matches", post(start_match))
        .route("/matches/{id}", get(match_state))
        .route("/matches/{id}/step", post(step_match))
        .route("/matches/{id}/plan", post(human_plan))
        .route("/matches/{id}/record", get(match_record))
        .route("/replay", post(replay_record))
        .with_state(Arc::new(ArenaState::default()))
}

type App = State<Arc<ArenaState>>;

async fn page() -> Response {
    ([(header::CACHE_CONTROL, HeaderValue::from_static("no-cache"))], Html(PAGE_HTML)).into_response()
}

/// The board as the page draws it.
fn frame(board: &Board) -> Value {
    let params = &board.params;
    json!({
        "t": board.t,
        "thief": board.thief,
        "police": board.police,
        "gates": board.gates.iter().map(|g| g.squares(params)).collect::<Vec<_>>(),
        "walls": board.walls.iter().map(|w| w.squares(params)).collect::<Vec<_>>(),
        "ending": board.ending,
        "payoff": board.ending.map(|e| params.payoff(e)),
    })
}

fn view(id: &str, live: &LiveMatch) -> Value {
    let board = live.board();
    let [thief_plan, police_plan] = live.plans();
    json!({
        "id": id,
        "thief": live.names()[0],
        "police": live.names()[1],
        "params": board.params,
        "status": live.status(),
        "board": frame(board),
        // Where in the plans the next move is (the plans cover ticks t0 .. t0 + k - 1).
        "plan_step": board.t % board.params.k,
        "plans": {"thief": thief_plan, "police": police_plan},
    })
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct StartRequest {
    #[serde(default = "computer")]
    thief: String,
    #[serde(default = "computer")]
    police: String,
    seed: Option<u64>,
    #[serde(default)]
    params: HashMap<String, Value>,
}

fn computer() -> String {
    "astar".into()
}

fn seat(name: &str, field: &str) -> Result<Option<PlayerSpec>, Response> {
    if name == "human" {
        return Ok(None);
    }
    match name.parse::<PlayerSpec>() {
        Ok(PlayerSpec::External(_)) | Err(_) => {
            Err(error_with(StatusCode::BAD_REQUEST, json!({"error": format!("{field}: {name:?} is not astar, strong, stay, random or human"), "field": field})))
        }
        Ok(spec) => Ok(Some(spec)),
    }
}

async fn start_match(State(state): App, body: Bytes) -> Response {
    let request: StartRequest = match parse_body(&body) {
        Ok(r) => r,
        Err(response) => return response,
    };
    let mut params = Params::default();
    for (name, value) in &request.params {
        let text = match value {
            Value::String(s) => s.clone(),
            other => other.to_string(),
        };
        if let Err(e) = params.set_text(&format!("{name}={text}")) {
            return error_with(StatusCode::BAD_REQUEST, json!({"error": e.to_string(), "field": name}));
        }
    }
    let (thief, police) = match (seat(&request.thief, "thief"), seat(&request.police, "police")) {
        (Ok(t), Ok(p)) => (t, p),
        (Err(r), _) | (_, Err(r)) => return r,
    };
    let seed = request.seed.unwrap_or_else(rand::random);
    let live = match LiveMatch::new(&params, seed, thief.as_ref(), police.as_ref()) {
        Ok(live) => live,
        Err(e) => return error(StatusCode::INTERNAL_SERVER_ERROR, format!("starting the players: {e}")),
    };
    let id = format!("{:016x}", rand::random::<u64>());
    let body = view(&id, &live);
    let mut matches = state.matches.lock().expect("not poisoned");
    let (table, order) = &mut *matches;
    if order.len() >= MAX_MATCHES {
        if let Some(oldest) = order.pop_front() {
            table.remove(&oldest);
        }
    }
    table.insert(id.clone(), live);
    order.push_back(id);
    ok_json(StatusCode::CREATED, body)
}

/// Runs `action` on the match `id` under the lock.
fn with_match(state: &ArenaState, id: &str, action: impl FnOnce(&mut LiveMatch) -> Result<Value, Response>) -> Response {
    let mut matches = state.matches.lock().expect("not poisoned");
    match matches.0.get_mut(id) {
        Some(live) => match action(live) {
            Ok(body) => ok_json(StatusCode::OK, body),
            Err(response) => response,
        },
        None => error(StatusCode::NOT_FOUND, format!("no match {id}")),
    }
}

async fn match_state(State(state): App, Path(id): Path<String>) -> Response {
    with_match(&state, &id, |live| Ok(view(&id, live)))
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct StepRequest {
    #[serde(default = "one")]
    ticks: u32,
}

fn one() -> u32 {
    1
}

async fn step_match(State(state): App, Path(id): Path<String>, body: Bytes) -> Response {
    let request: StepRequest = if body.is_empty() {
        StepRequest { ticks: 1 }
    } else {
        match parse_body(&body) {
            Ok(r) => r,
            Err(response) => return response,
        }
    };
    if request.ticks == 0 || request.ticks > MAX_TICKS_PER_STEP {
        return error_with(StatusCode::BAD_REQUEST, json!({"error": format!("ticks: from 1 to {MAX_TICKS_PER_STEP}"), "field": "ticks"}));
    }
    // The built-in planners take milliseconds per plan: a whole game is well under a second.
    with_match(&state, &id, |live| {
        for _ in 0..request.ticks {
            if live.step() != Status::Ready {
                break;
            }
        }
        Ok(view(&id, live))
    })
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct PlanRequest {
    role: Role,
    moves: Plan,
}

async fn human_plan(State(state): App, Path(id): Path<String>, body: Bytes) -> Response {
    let request: PlanRequest = match parse_body(&body) {
        Ok(r) => r,
        Err(response) => return response,
    };
    with_match(&state, &id, |live| {
        live.submit(request.role, request.moves).map_err(|e| error(StatusCode::CONFLICT, e))?;
        Ok(view(&id, live))
    })
}

async fn match_record(State(state): App, Path(id): Path<String>) -> Response {
    with_match(&state, &id, |live| {
        let record = live.record().ok_or_else(|| error(StatusCode::CONFLICT, "the game is not over yet"))?;
        Ok(serde_json::to_value(record).expect("a record serialises"))
    })
}

async fn replay_record(body: Bytes) -> Response {
    let record: GameRecord = match parse_body(&body) {
        Ok(r) => r,
        Err(response) => return response,
    };
    match replay(&record) {
        Ok(frames) => {
            // The plans in force at every tick, for drawing.
            let k = record.params.k as usize;
            let plans: Vec<Value> = record.rounds.iter().map(|r| json!({"t": r.t, "thief": r.thief, "police": r.police})).collect();
            ok_json(
                StatusCode::OK,
                json!({"params": record.params, "thief": record.thief, "police": record.police, "k": k, "frames": frames.iter().map(frame).collect::<Vec<_>>(), "rounds": plans}),
            )
        }
        Err(e) => error(StatusCode::BAD_REQUEST, format!("the record does not replay: {e}")),
    }
}
