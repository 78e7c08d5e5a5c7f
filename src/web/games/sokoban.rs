//! Sokoban on the web: the page, the collections (Microban bundled, the user's levels folder),
//! games kept on the server (moves, undo/redo, walking, dragging boxes, LURD), the solver run in
//! the background with a time limit and a cancel button, and the level editor's operations.
//!
//! Routes (relative to where the router is nested, `/sokoban` in [`super::router`]):
//!
//! | route | what |
//! |---|---|
//! | `GET /` | the page |
//! | `GET /collections` | `{"collections": [{name, title, levels: [{number, title, width, height, boxes}]}], "problems", "folder"}` |
//! | `GET /collections/{name}/{number}` | one level (number from 1): `{title, author, xsb, editor_rows}` |
//! | `POST /games` | start a game: `{"collection", "level"}` (a number from 1 or a title) |
//! | `GET /games/{id}` | a game's state |
//! | `POST /games/{id}/move` | `{"direction": "up"}`, `{"walk": [row, column]}` or `{"drag": {"from": [r, c], "to": [r, c]}}` |
//! | `POST /games/{id}/lurd` | `{"lurd": "..."}`: replayed from the start (the game is unchanged if a move is illegal) |
//! | `POST /games/{id}/solve` | `{"time_limit": seconds}`: solve from the current position in the background |
//! | `POST /games/{id}/{action}` | `undo`, `redo`, `restart`, `cancel` (the solver), `step` / `step-back` (along the solution) |
//! | `POST /editor` | one editor operation on a 30x20 grid: `{"rows", "op", ...}` (see [`EditRequest`]) |
//! | `POST /editor/save` | `{"rows", "name", "overwrite"}`: checked, normalised and saved in the user's levels |
//!
//! Errors are `{"error": "..."}`: 400 for bad input (with `row`/`column` for bad editor rows),
//! 404 for an unknown collection, level or game, 409 when a name exists (`"exists": true`) or the
//! solver is already running.

use std::collections::{HashMap, VecDeque};
use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, RwLock};
use std::time::{Duration, Instant};

use anyhow::Context;
use axum::body::Bytes;
use axum::extract::{Path, State};
use axum::http::StatusCode;
use axum::response::Response;
use axum::routing::{get, post};
use axum::Router;
use serde::Deserialize;
use serde_json::{json, Value};

use super::{error, error_with, ok_json, page, parse_body, Games};
use crate::games::sokoban::editor::{symmetry, Editor, Piece, EDITOR_HEIGHT, EDITOR_WIDTH};
use crate::games::sokoban::files::read_folder;
use crate::games::sokoban::game::Game;
use crate::games::sokoban::level::{parse_collection, write_collection, xsb_symbol, Level};
use crate::games::sokoban::solver::{solve, verify, Outcome};

/// Directions as the page names them, in the order of [`crate::games::sokoban::DIRECTIONS`].
const DIRECTION_NAMES: [&str; 4] = ["up", "down", "left", "right"];

const PAGE_HTML: &str = include_str!("sokoban.html");
const MICROBAN: &str = include_str!("../../../samples/sokoban/microban_155.xsb");
/// The bundled collection's name.
pub const BUNDLED: &str = "microban";
/// The user's levels (the folder given to the server, or kept in memory without one).
pub const USER: &str = "mine";
const MAX_GAMES: usize = 64;
const DEFAULT_TIME_LIMIT: f64 = 10.0;
/// Longer searches hold much memory (about 10 MB a second of search); the command line has no
/// such limit.
const MAX_TIME_LIMIT: f64 = 120.0;
/// Searches running at once over all games: each takes a whole core while it runs.
const MAX_SOLVERS: usize = 1;

/// Collections, the user's folder and the games.
pub struct SokobanState {
    bundled: Vec<Arc<Level>>,
    user: RwLock<Vec<Arc<Level>>>,
    /// Files in the levels folder that could not be read, with their errors.
    problems: Vec<String>,
    levels_dir: Option<PathBuf>,
    games: Mutex<GameTable>,
    /// Searches running now (at most [`MAX_SOLVERS`]).
    solvers: Arc<AtomicUsize>,
}

/// One running search counted in [`SokobanState::solvers`] until dropped.
struct SolverSlot(Arc<AtomicUsize>);

impl SolverSlot {
    fn take(count: &Arc<AtomicUsize>) -> Option<SolverSlot> {
        count.fetch_update(Ordering::SeqCst, Ordering::SeqCst, |n| (n < MAX_SOLVERS).then_some(n + 1)).ok().map(|_| SolverSlot(count.clone()))
    }
}

impl Drop for SolverSlot {
    fn drop(&mut self) {
        self.0.fetch_sub(1, Ordering::SeqCst);
    }
}

#[derive(Default)]
struct GameTable {
    by_id: HashMap<String, Arc<Mutex<Session>>>,
    /// Oldest first.
    order: VecDeque<String>,
}

/// The solver's state for one game.
enum Solver {
    Idle,
    Running {
        cancel: Arc<AtomicBool>,
        time_limit: f64,
    },
    /// A solution from the position where it was asked for; `next` is the next move to step.
    Found {
        lurd: Vec<char>,
        next: usize,
        moves: usize,
        pushes: usize,
        seconds: f64,
    },
    Unsolvable {
        seconds: f64,
    },
    OutOfTime {
        seconds: f64,
    },
    Cancelled,
}

struct Session {
    id: String,
    collection: String,
    number: usize,
    count: usize,
    game: Game,
    solver: Solver,
    /// Bumped by every change made by hand, so that a solver's late answer for an older
    /// position is dropped.
    generation: u64,
}

fn check_name(name: &str) -> Result<(), String> {
    if name.is_empty() || name.len() > 40 || !name.chars().all(|c| c.is_ascii_alphanumeric() || c == '-' || c == '_') {
        return Err(format!("{name:?}: a level name is 1 to 40 letters, digits, '-' or '_'"));
    }
    Ok(())
}

impl SokobanState {
    pub fn new(levels_dir: Option<PathBuf>) -> anyhow::Result<SokobanState> {
        let bundled = parse_collection(MICROBAN).expect("the bundled Microban collection reads").into_iter().map(Arc::new).collect();
        let (mut user, mut problems) = (Vec::new(), Vec::new());
        if let Some(dir) = &levels_dir {
            std::fs::create_dir_all(dir).with_context(|| format!("--sokoban-levels {}: cannot create the folder", dir.display()))?;
            let (levels, bad) = read_folder(dir).with_context(|| format!("--sokoban-levels {}", dir.display()))?;
            for problem in &bad {
                tracing::warn!("sokoban levels: {problem}");
            }
            user = levels.into_iter().map(Arc::new).collect();
            problems = bad;
        }
        Ok(SokobanState { bundled, user: RwLock::new(user), problems, levels_dir, games: Mutex::new(GameTable::default()), solvers: Arc::default() })
    }

    /// The levels of a collection, or a 404 naming the collections there are.
    fn collection(&self, name: &str) -> Result<Vec<Arc<Level>>, Response> {
        match name {
            BUNDLED => Ok(self.bundled.clone()),
            USER => Ok(self.user.read().expect("levels lock").clone()),
            other => Err(error_with(
                StatusCode::NOT_FOUND,
                json!({"error": format!("no collection {other:?} (collections: {BUNDLED}, {USER})"), "field": "collection"}),
            )),
        }
    }

    /// A level by number (from 1) or title, with its number.
    fn level(&self, collection: &str, wanted: &str) -> Result<(usize, usize, Arc<Level>), Response> {
        let levels = self.collection(collection)?;
        let index = match wanted.parse::<usize>() {
            Ok(n) if (1..=levels.len()).contains(&n) => Some(n - 1),
            Ok(_) => None,
            Err(_) => levels.iter().position(|l| l.title == wanted),
        };
        let Some(index) = index else {
            let range = if levels.is_empty() { "it has no levels".to_string() } else { format!("levels 1 to {} or a title", levels.len()) };
            return Err(error_with(StatusCode::NOT_FOUND, json!({"error": format!("no level {wanted:?} in {collection} ({range})"), "field": "level"})));
        };
        Ok((index + 1, levels.len(), levels[index].clone()))
    }

    fn session(&self, id: &str) -> Result<Arc<Mutex<Session>>, Response> {
        let games = self.games.lock().expect("games lock");
        games.by_id.get(id).cloned().ok_or_else(|| error(StatusCode::NOT_FOUND, format!("no game {id:?} (games are kept in memory while the server runs)")))
    }
}

pub fn router(games: Arc<Games>) -> Router {
    Router::new()
        .route("/", get(|| page(PAGE_HTML)))
        .route("/collections", get(list_collections))
        .route("/collections/{name}/{number}", get(get_level))
        .route("/games", post(start_game))
        .route("/games/{id}", get(game_state))
        .route("/games/{id}/move", post(play_move))
        .route("/games/{id}/lurd", post(import_lurd))
        .route("/games/{id}/solve", post(start_solver))
        .route("/games/{id}/{action}", post(game_action))
        .route("/editor", post(edit))
        .route("/editor/save", post(save_level))
        .with_state(games)
}

type App = State<Arc<Games>>;

async fn list_collections(State(games): App) -> Response {
    let sokoban = &games.sokoban;
    let describe = |levels: &[Arc<Level>]| -> Vec<Value> {
        levels
            .iter()
            .enumerate()
            .map(|(i, l)| json!({"number": i + 1, "title": l.title, "width": l.width, "height": l.height, "boxes": l.boxes.iter().filter(|&&b| b).count()}))
            .collect()
    };
    let user = sokoban.user.read().expect("levels lock").clone();
    let user_title = if sokoban.levels_dir.is_some() { "My levels" } else { "My levels (kept until the server stops: no levels folder)" };
    ok_json(
        StatusCode::OK,
        json!({
            "collections": [
                {"name": BUNDLED, "title": "Microban (David W. Skinner)", "levels": describe(&sokoban.bundled)},
                {"name": USER, "title": user_title, "levels": describe(&user)},
            ],
            "problems": sokoban.problems,
            "folder": sokoban.levels_dir,
        }),
    )
}

async fn get_level(State(games): App, Path((name, number)): Path<(String, String)>) -> Response {
    match games.sokoban.level(&name, &number) {
        Ok((number, count, level)) => {
            let editor_rows = Editor::load_centred(&level).map(|e| e.to_rows()).map_err(|e| e.to_string());
            ok_json(
                StatusCode::OK,
                json!({
                    "collection": name, "number": number, "count": count, "title": level.title, "author": level.author,
                    "xsb": level.to_xsb(), "editor_rows": editor_rows.as_ref().ok(), "editor_error": editor_rows.err(),
                }),
            )
        }
        Err(response) => response,
    }
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct StartRequest {
    collection: String,
    /// A number from 1 or a title.
    level: Value,
}

async fn start_game(State(games): App, body: Bytes) -> Response {
    let request: StartRequest = match parse_body(&body) {
        Ok(r) => r,
        Err(response) => return response,
    };
    let wanted = match &request.level {
        Value::Number(n) => n.to_string(),
        Value::String(s) => s.clone(),
        other => return error_with(StatusCode::BAD_REQUEST, json!({"error": format!("level: {other} is neither a number nor a title"), "field": "level"})),
    };
    let (number, count, level) = match games.sokoban.level(&request.collection, &wanted) {
        Ok(found) => found,
        Err(response) => return response,
    };
    let id = format!("{:016x}", rand::random::<u64>());
    let session =
        Session { id: id.clone(), collection: request.collection, number, count, game: Game::new((*level).clone()), solver: Solver::Idle, generation: 0 };
    let state = session.state_json();
    let mut table = games.sokoban.games.lock().expect("games lock");
    while table.order.len() >= MAX_GAMES {
        if let Some(oldest) = table.order.pop_front() {
            table.by_id.remove(&oldest);
        }
    }
    table.order.push_back(id.clone());
    table.by_id.insert(id, Arc::new(Mutex::new(session)));
    ok_json(StatusCode::CREATED, state)
}

/// `[row, column]` of a cell.
fn at(level: &Level, cell: usize) -> [usize; 2] {
    [cell / level.width, cell % level.width]
}

/// Text for people: rows and columns counted from 1.
fn place([row, column]: [usize; 2]) -> String {
    format!("row {}, column {}", row + 1, column + 1)
}

impl Session {
    /// A change made by hand: the solver's answer (running or found) no longer applies.
    fn touched(&mut self) {
        self.generation += 1;
        self.solver = match std::mem::replace(&mut self.solver, Solver::Idle) {
            Solver::Running { cancel, .. } => {
                cancel.store(true, Ordering::Relaxed);
                Solver::Cancelled
            }
            _ => Solver::Idle,
        };
    }

    /// A cell of the level from `[row, column]`, or a 400 naming the field.
    fn cell(&self, field: &str, [row, column]: [usize; 2]) -> Result<usize, (StatusCode, Value)> {
        let level = &self.game.position;
        if row >= level.height || column >= level.width {
            return Err(bad(field, format!("[{row}, {column}] is outside the level ({} rows, {} columns, counted from 0)", level.height, level.width)));
        }
        Ok(row * level.width + column)
    }

    fn human_move(&mut self, request: MoveRequest) -> Result<(), (StatusCode, Value)> {
        let given = request.direction.is_some() as u8 + request.walk.is_some() as u8 + request.drag.is_some() as u8;
        if given != 1 {
            return Err(bad(
                "move",
                "give exactly one of \"direction\": \"up\"|\"down\"|\"left\"|\"right\", \"walk\": [row, column], \"drag\": {\"from\": [r, c], \"to\": [r, c]}"
                    .into(),
            ));
        }
        let mut game = self.game.clone();
        if let Some(direction) = &request.direction {
            let Some(index) = DIRECTION_NAMES.iter().position(|d| d == direction) else {
                return Err(bad("direction", format!("{direction:?} is not one of up, down, left, right")));
            };
            if !game.step(index) {
                return Err(bad("direction", format!("the player cannot go {direction}: a wall, or a box that cannot move")));
            }
        } else if let Some(target) = request.walk {
            let cell = self.cell("walk", target)?;
            if cell == game.position.player {
                return Ok(());
            }
            if !game.walk_to(cell) {
                return Err(bad("walk", format!("the player cannot walk to {} without pushing a box", place(target))));
            }
        } else if let Some(drag) = request.drag {
            let (from, to) = (self.cell("drag", drag.from)?, self.cell("drag", drag.to)?);
            if !game.position.boxes[from] {
                return Err(bad("drag", format!("there is no box at {}", place(drag.from))));
            }
            if !game.drag_box(from, to) {
                return Err(bad("drag", format!("the box at {} cannot be pushed to {}", place(drag.from), place(drag.to))));
            }
        }
        self.game = game;
        self.touched();
        Ok(())
    }

    fn state_json(&self) -> Value {
        let game = &self.game;
        let level = &game.position;
        // Floor the player can reach (boxes aside) is `-`, floor outside the walls a space.
        let inside = level.reachable(level.player, |c| level.walls[c]);
        let rows: Vec<String> = (0..level.height)
            .map(|y| {
                (0..level.width)
                    .map(|x| {
                        let cell = y * level.width + x;
                        let floor = if inside[cell] { '-' } else { ' ' };
                        xsb_symbol(level.walls[cell], cell == level.player, level.boxes[cell], level.goals[cell], floor)
                    })
                    .collect()
            })
            .collect();
        let solver = match &self.solver {
            Solver::Idle => json!({"state": "idle"}),
            Solver::Running { time_limit, .. } => json!({"state": "solving", "time_limit": time_limit}),
            Solver::Found { lurd, next, moves, pushes, seconds } => {
                json!({"state": "found", "moves": moves, "pushes": pushes, "seconds": seconds, "next": next, "length": lurd.len(), "lurd": lurd.iter().collect::<String>()})
            }
            Solver::Unsolvable { seconds } => json!({"state": "unsolvable", "seconds": seconds}),
            Solver::OutOfTime { seconds } => json!({"state": "out_of_time", "seconds": seconds}),
            Solver::Cancelled => json!({"state": "cancelled"}),
        };
        let solved = game.is_solved();
        let message = solved.then(|| format!("Solved in {} moves, {} pushes.", game.moves(), game.pushes()));
        json!({
            "id": self.id,
            "collection": self.collection,
            "number": self.number,
            "count": self.count,
            "title": level.title,
            "width": level.width,
            "height": level.height,
            "rows": rows,
            "player": at(level, level.player),
            "moves": game.moves(),
            "pushes": game.pushes(),
            "lurd": game.lurd(),
            "can_undo": game.moves() > 0,
            "can_redo": game.can_redo(),
            "solved": solved,
            "message": message,
            "solver": solver,
        })
    }
}

fn bad(field: &str, message: String) -> (StatusCode, Value) {
    (StatusCode::BAD_REQUEST, json!({"error": format!("{field}: {message}"), "field": field}))
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct Drag {
    from: [usize; 2],
    to: [usize; 2],
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct MoveRequest {
    #[serde(default)]
    direction: Option<String>,
    #[serde(default)]
    walk: Option<[usize; 2]>,
    #[serde(default)]
    drag: Option<Drag>,
}

async fn game_state(State(games): App, Path(id): Path<String>) -> Response {
    match games.sokoban.session(&id) {
        Ok(session) => ok_json(StatusCode::OK, session.lock().expect("session lock").state_json()),
        Err(response) => response,
    }
}

/// Runs `change` on a game's session and answers with its state (or the change's error).
fn with_session(games: &Games, id: &str, change: impl FnOnce(&mut Session) -> Result<(), (StatusCode, Value)>) -> Response {
    let session = match games.sokoban.session(id) {
        Ok(s) => s,
        Err(response) => return response,
    };
    let mut session = session.lock().expect("session lock");
    match change(&mut session) {
        Ok(()) => ok_json(StatusCode::OK, session.state_json()),
        Err((status, body)) => error_with(status, body),
    }
}

async fn play_move(State(games): App, Path(id): Path<String>, body: Bytes) -> Response {
    match parse_body::<MoveRequest>(&body) {
        Ok(request) => with_session(&games, &id, |s| s.human_move(request)),
        Err(response) => response,
    }
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct LurdRequest {
    lurd: String,
}

async fn import_lurd(State(games): App, Path(id): Path<String>, body: Bytes) -> Response {
    let request: LurdRequest = match parse_body(&body) {
        Ok(r) => r,
        Err(response) => return response,
    };
    with_session(&games, &id, |session| {
        let mut game = Game::new(session.game.start().clone());
        game.play_lurd(&request.lurd).map_err(|e| bad("lurd", e))?;
        session.game = game;
        session.touched();
        Ok(())
    })
}

async fn game_action(State(games): App, Path((id, action)): Path<(String, String)>) -> Response {
    with_session(&games, &id, |session| {
        let refused = |message: &str| Err((StatusCode::CONFLICT, json!({ "error": message })));
        match action.as_str() {
            "undo" => {
                if !session.game.undo() {
                    return refused("nothing to undo: this is the start of the level");
                }
                session.touched();
            }
            "redo" => {
                if !session.game.redo() {
                    return refused("nothing to redo");
                }
                session.touched();
            }
            "restart" => {
                session.game.restart();
                session.touched();
            }
            "cancel" => match &session.solver {
                Solver::Running { .. } => session.touched(),
                _ => return refused("the solver is not running"),
            },
            "step" | "step-back" => {
                let Solver::Found { lurd, next, .. } = &mut session.solver else {
                    return refused("no solution to step along: press Solve first");
                };
                if action == "step" {
                    let Some(&letter) = lurd.get(*next) else { return refused("the solution is played to its end") };
                    session
                        .game
                        .play_lurd(&letter.to_string())
                        .map_err(|e| (StatusCode::INTERNAL_SERVER_ERROR, json!({"error": format!("the solution does not fit: {e}")})))?;
                    *next += 1;
                } else {
                    if *next == 0 {
                        return refused("this is where the solution starts");
                    }
                    session.game.undo();
                    *next -= 1;
                }
            }
            other => {
                return Err((
                    StatusCode::NOT_FOUND,
                    json!({"error": format!("no action {other:?} (undo, redo, restart, cancel, step, step-back; solve, move and lurd take a JSON body)")}),
                ));
            }
        }
        Ok(())
    })
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct SolveRequest {
    #[serde(default)]
    time_limit: Option<f64>,
}

async fn start_solver(State(games): App, Path(id): Path<String>, body: Bytes) -> Response {
    let request: SolveRequest = if body.is_empty() {
        SolveRequest { time_limit: None }
    } else {
        match parse_body(&body) {
            Ok(r) => r,
            Err(response) => return response,
        }
    };
    let time_limit = request.time_limit.unwrap_or(DEFAULT_TIME_LIMIT);
    if !(time_limit > 0.0 && time_limit <= MAX_TIME_LIMIT) {
        return error_with(
            StatusCode::BAD_REQUEST,
            json!({"error": format!("time_limit: {time_limit} is not between 0 and {MAX_TIME_LIMIT} seconds"), "field": "time_limit"}),
        );
    }
    let session = match games.sokoban.session(&id) {
        Ok(s) => s,
        Err(response) => return response,
    };
    let mut locked = session.lock().expect("session lock");
    if matches!(locked.solver, Solver::Running { .. }) {
        return error(StatusCode::CONFLICT, "the solver is already running: wait, or cancel it");
    }
    let Some(slot) = SolverSlot::take(&games.sokoban.solvers) else {
        return error(StatusCode::CONFLICT, "the solver is busy with another game: try again when it has finished");
    };
    let cancel = Arc::new(AtomicBool::new(false));
    locked.solver = Solver::Running { cancel: cancel.clone(), time_limit };
    let (level, generation) = (locked.game.position.clone(), locked.generation);
    let state = locked.state_json();
    drop(locked);
    tokio::spawn(run_solver(session, level, generation, cancel, time_limit, slot));
    ok_json(StatusCode::ACCEPTED, state)
}

/// Solves from the game's position in a blocking task; the answer is kept unless the game was
/// changed meanwhile.
async fn run_solver(session: Arc<Mutex<Session>>, level: Level, generation: u64, cancel: Arc<AtomicBool>, time_limit: f64, slot: SolverSlot) {
    let clock = Instant::now();
    let deadline = clock + Duration::from_secs_f64(time_limit);
    let searched = level.clone();
    let outcome = tokio::task::spawn_blocking(move || {
        let outcome = solve(&searched, Some(deadline), &cancel);
        drop(slot);
        outcome
    })
    .await;
    let seconds = clock.elapsed().as_secs_f64();
    let mut session = session.lock().expect("session lock");
    if session.generation != generation {
        return;
    }
    session.solver = match outcome {
        // The solver replays its solutions; checked once more before anyone steps along one.
        Ok(Outcome::Solved { lurd, moves, pushes }) if verify(&level, &lurd) => Solver::Found { lurd: lurd.chars().collect(), next: 0, moves, pushes, seconds },
        Ok(Outcome::Solved { .. }) => {
            tracing::error!("game {}: the solver's solution does not solve the level", session.id);
            Solver::OutOfTime { seconds }
        }
        Ok(Outcome::Unsolvable) => Solver::Unsolvable { seconds },
        Ok(Outcome::OutOfTime) if seconds < time_limit => Solver::Cancelled,
        Ok(Outcome::OutOfTime) => Solver::OutOfTime { seconds },
        Err(e) => {
            tracing::error!("game {}: the solver stopped: {e}", session.id);
            Solver::Cancelled
        }
    };
}

/// One editor operation on the grid the page shows.
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
pub struct EditRequest {
    /// The grid as rows of `#`, `@`, `+`, `$`, `*`, `.`, space (20 rows of 30 at most).
    rows: Vec<String>,
    /// `place` (x, y, piece), `remove` (x, y), `clear`, `fill`, `shift` (dx, dy), `normalise`,
    /// `symmetry` (index 0 to 7: bit 0 mirrors left-right, bit 1 top-bottom, bit 2 transposes).
    op: String,
    #[serde(default)]
    x: Option<usize>,
    #[serde(default)]
    y: Option<usize>,
    /// `floor`, `wall`, `goal`, `box` or `player`.
    #[serde(default)]
    piece: Option<String>,
    #[serde(default)]
    dx: Option<i32>,
    #[serde(default)]
    dy: Option<i32>,
    #[serde(default)]
    index: Option<usize>,
}

/// The editor grid from request rows, or a 400 naming the row and column.
fn read_rows(rows: &[String]) -> Result<Editor, Response> {
    Editor::from_rows(rows).map_err(|e| error_with(StatusCode::BAD_REQUEST, json!({"error": format!("rows: {e}"), "row": e.row, "column": e.column})))
}

fn apply_edit(request: &EditRequest) -> Result<Editor, Response> {
    let mut editor = read_rows(&request.rows)?;
    let need = |field: &str, value: Option<i64>| {
        value.ok_or_else(|| error_with(StatusCode::BAD_REQUEST, json!({"error": format!("{field}: {} needs it", request.op), "field": field})))
    };
    let square = || -> Result<(usize, usize), Response> {
        let (x, y) = (need("x", request.x.map(|v| v as i64))? as usize, need("y", request.y.map(|v| v as i64))? as usize);
        if x >= EDITOR_WIDTH || y >= EDITOR_HEIGHT {
            return Err(error_with(
                StatusCode::BAD_REQUEST,
                json!({"error": format!("x, y: ({x}, {y}) is outside the {EDITOR_WIDTH}x{EDITOR_HEIGHT} grid (counted from 0)"), "field": "x"}),
            ));
        }
        Ok((x, y))
    };
    let refused = |message: String| error(StatusCode::BAD_REQUEST, message);
    match request.op.as_str() {
        "place" => {
            let (x, y) = square()?;
            let piece = match request.piece.as_deref() {
                Some("floor") => Piece::Floor,
                Some("wall") => Piece::Wall,
                Some("goal") => Piece::Goal,
                Some("box") => Piece::Box,
                Some("player") => Piece::Player,
                other => {
                    return Err(error_with(
                        StatusCode::BAD_REQUEST,
                        json!({"error": format!("piece: {other:?} is not one of floor, wall, goal, box, player"), "field": "piece"}),
                    ))
                }
            };
            editor.place(x, y, piece);
        }
        "remove" => {
            let (x, y) = square()?;
            editor.remove(x, y);
        }
        "clear" => editor.clear(),
        "fill" => editor.fill_with_walls(),
        "shift" => editor.shift(need("dx", request.dx.map(i64::from))? as i32, need("dy", request.dy.map(i64::from))? as i32),
        "normalise" | "symmetry" => {
            let level = editor.normalise("edited").map_err(|e| refused(format!("{}: {e}", request.op)))?;
            let level = if request.op == "symmetry" {
                let index = need("index", request.index.map(|v| v as i64))? as usize;
                if index >= 8 {
                    return Err(error_with(StatusCode::BAD_REQUEST, json!({"error": format!("index: {index} is not 0 to 7"), "field": "index"})));
                }
                symmetry(&level, index)
            } else {
                level
            };
            editor = Editor::load_centred(&level).map_err(|e| refused(format!("{}: {e}", request.op)))?;
        }
        other => {
            return Err(error_with(
                StatusCode::BAD_REQUEST,
                json!({"error": format!("op: {other:?} is not one of place, remove, clear, fill, shift, normalise, symmetry"), "field": "op"}),
            ));
        }
    }
    Ok(editor)
}

async fn edit(body: Bytes) -> Response {
    let request: EditRequest = match parse_body(&body) {
        Ok(r) => r,
        Err(response) => return response,
    };
    match apply_edit(&request) {
        Ok(editor) => ok_json(StatusCode::OK, json!({ "rows": editor.to_rows() })),
        Err(response) => response,
    }
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct SaveRequest {
    rows: Vec<String>,
    name: String,
    #[serde(default)]
    overwrite: bool,
}

async fn save_level(State(games): App, body: Bytes) -> Response {
    let sokoban = &games.sokoban;
    let request: SaveRequest = match parse_body(&body) {
        Ok(r) => r,
        Err(response) => return response,
    };
    if let Err(message) = check_name(&request.name) {
        return error_with(StatusCode::BAD_REQUEST, json!({"error": format!("name: {message}"), "field": "name"}));
    }
    let editor = match read_rows(&request.rows) {
        Ok(e) => e,
        Err(response) => return response,
    };
    let level = match editor.save(&request.name) {
        Ok(level) => level,
        Err(e) => return error(StatusCode::BAD_REQUEST, format!("cannot save: {e}")),
    };
    let file = sokoban.levels_dir.as_ref().map(|dir| dir.join(format!("{}.xsb", request.name)));
    let existing = sokoban.user.read().expect("levels lock").iter().position(|l| l.title == request.name);
    if (existing.is_some() || file.as_ref().is_some_and(|f| f.exists())) && !request.overwrite {
        return error_with(
            StatusCode::CONFLICT,
            json!({"error": format!("a level named {:?} exists: save again to overwrite it", request.name), "exists": true, "field": "name"}),
        );
    }
    if let Some(path) = &file {
        let (target, text) = (path.clone(), write_collection(std::slice::from_ref(&level)));
        let written = tokio::task::spawn_blocking(move || {
            let temporary = target.with_extension("tmp");
            std::fs::write(&temporary, text)?;
            std::fs::rename(&temporary, &target)
        })
        .await;
        if let Err(e) = written.map_err(anyhow::Error::from).and_then(|r| r.map_err(anyhow::Error::from)) {
            return error(StatusCode::INTERNAL_SERVER_ERROR, format!("saving {}: {e:#}", path.display()));
        }
    }
    let mut user = sokoban.user.write().expect("levels lock");
    let number = match existing {
        Some(index) => {
            user[index] = Arc::new(level);
            index + 1
        }
        None => {
            user.push(Arc::new(level));
            user.len()
        }
    };
    let status = if existing.is_some() { StatusCode::OK } else { StatusCode::CREATED };
    ok_json(
        status,
        json!({"collection": USER, "number": number, "name": request.name, "file": file, "replaced": existing.is_some(), "xsb": user[number - 1].to_xsb()}),
    )
}
