//! Cops and Robbers on the web: the page, maps (the classic one bundled, the user's from a
//! folder, new ones from the page's editor), games kept on the server, and records replayed.
//!
//! Routes (relative to where the router is nested, `/cops` in [`super::router`]):
//!
//! | route | what |
//! |---|---|
//! | `GET /` | the page |
//! | `GET /maps` | the maps: `{"maps": [{name, source, width, height, roads}], "problems": [...], "folder"}` |
//! | `GET /maps/{name}` | one map: `{name, source, width, height, text}` |
//! | `POST /maps` | save `{"name", "text"}` (only a valid map; errors name the line and column) |
//! | `POST /maps/check` | check `{"text"}` without saving |
//! | `GET /games`, `POST /games` | the games; start one: `{"map", "mode", "ai", "appearance", "seed"}` |
//! | `GET /games/{id}` | a game's state |
//! | `POST /games/{id}/move` | the human's move: `{"to": [row, column]}`, `{"direction": "up"}` or `{"stay": true}`; the computer answers in the same request |
//! | `GET /games/{id}/record` | the game as JSON lines |
//! | `POST /replay` | a record (JSON lines) checked and replayed: the position after every move |
//!
//! Errors are `{"error": "..."}` (with `line`/`column` for maps and records, `field` for a bad
//! parameter): 400 for bad input, 404 for an unknown map or game, 409 when the game is over or
//! the perfect player is still solving the map.

use std::collections::{BTreeMap, HashMap, VecDeque};
use std::path::{Path as FsPath, PathBuf};
use std::sync::{Arc, Mutex, RwLock, Weak};
use std::time::Instant;

use anyhow::Context;
use axum::body::Bytes;
use axum::extract::{Path, State};
use axum::http::{header, HeaderValue, StatusCode};
use axum::response::{Html, IntoResponse, Response};
use axum::routing::{get, post};
use axum::Router;
use rand::SeedableRng;
use rand_chacha::ChaCha8Rng;
use serde::Deserialize;
use serde_json::{json, Value};

use super::{error, error_with, ok_json, parse_body, Games};
use crate::games::cops::record::{replay, Ai, RecordLine};
use crate::games::cops::solver::{check_size, solve, Solution, DEFAULT_MAX_STATES};
use crate::games::cops::rules::MoveError;
use crate::games::cops::{Game, Map, MapError, Mode, Piece, Positions, Reason, Square, Team, MOVE_LIMIT};

const PAGE_HTML: &str = include_str!("cops.html");
const CLASSIC_MAP: &str = include_str!("../../../samples/cops/board1.txt");
/// The name of the bundled map (the original program's).
pub const CLASSIC: &str = "classic";
/// Games kept in memory; the oldest go first.
const MAX_GAMES: usize = 64;
/// Most states the perfect player solves for a game on the page (about 60 MiB; a 20x20 map has
/// about 25 million).
const MAX_STATES: u64 = DEFAULT_MAX_STATES / 3;

#[derive(Clone)]
struct MapEntry {
    map: Arc<Map>,
    /// "classic" (bundled), "folder" (read from `--maps` at start) or "saved" (from the editor).
    source: &'static str,
}

/// Maps, games and solutions of Cops and Robbers.
pub struct CopsState {
    maps: RwLock<BTreeMap<String, MapEntry>>,
    /// Files in the maps folder that are not valid maps, with their errors.
    problems: Vec<Value>,
    maps_dir: Option<PathBuf>,
    records_dir: Option<PathBuf>,
    games: Mutex<GameTable>,
    /// Solutions in use, by map text, so that games on one map share one.
    solutions: Mutex<HashMap<String, Weak<Solution>>>,
}

#[derive(Default)]
struct GameTable {
    by_id: HashMap<String, Arc<Mutex<Session>>>,
    /// Oldest first.
    order: VecDeque<String>,
}

/// The perfect player's solution of the game's map.
enum Solver {
    NotNeeded,
    Solving,
    /// `solution` is dropped when the game ends (it may be large).
    Ready { solution: Option<Arc<Solution>>, seconds: f64 },
    Failed(String),
}

struct Session {
    id: String,
    map_name: String,
    map: Arc<Map>,
    mode: Mode,
    ai: Ai,
    appearance: u8,
    seed: u64,
    rng: ChaCha8Rng,
    game: Game,
    record: Vec<RecordLine>,
    solver: Solver,
    /// Where the record goes when the game ends.
    record_file: Option<PathBuf>,
}

/// A name for a map file: letters, digits, `-` and `_`.
fn check_name(name: &str) -> Result<(), String> {
    if name.is_empty() || name.len() > 40 || !name.chars().all(|c| c.is_ascii_alphanumeric() || c == '-' || c == '_') {
        return Err(format!("{name:?}: a map name is 1 to 40 letters, digits, '-' or '_'"));
    }
    Ok(())
}

fn map_error_json(error: &MapError, file: Option<&str>) -> Value {
    let message = error.to_string();
    let message = match file {
        Some(file) => format!("{file}: {message}"),
        None => message,
    };
    json!({"error": message, "line": error.line(), "column": error.column()})
}

impl CopsState {
    pub fn new(maps_dir: Option<PathBuf>, records_dir: Option<PathBuf>) -> anyhow::Result<CopsState> {
        let mut maps = BTreeMap::new();
        let classic = Map::parse(CLASSIC_MAP).expect("the bundled classic map is valid");
        maps.insert(CLASSIC.to_string(), MapEntry { map: Arc::new(classic), source: "classic" });
        let mut problems = Vec::new();
        if let Some(dir) = &maps_dir {
            let mut files: Vec<PathBuf> = std::fs::read_dir(dir)
                .with_context(|| format!("--maps {}: cannot read the folder", dir.display()))?
                .filter_map(|e| e.ok().map(|e| e.path()))
                .filter(|p| p.extension().is_some_and(|e| e == "txt"))
                .collect();
            files.sort();
            for path in files {
                let file = path.file_name().unwrap_or_default().to_string_lossy().into_owned();
                let name = path.file_stem().unwrap_or_default().to_string_lossy().into_owned();
                let loaded = check_name(&name)
                    .map_err(|e| json!({"error": format!("{file}: {e}")}))
                    .and_then(|_| if name == CLASSIC { Err(json!({"error": format!("{file}: the name {CLASSIC:?} is the bundled map's")})) } else { Ok(()) })
                    .and_then(|_| std::fs::read_to_string(&path).map_err(|e| json!({"error": format!("{file}: {e}")})))
                    .and_then(|text| Map::parse(&text).map_err(|e| map_error_json(&e, Some(&file))));
                match loaded {
                    Ok(map) => {
                        maps.insert(name, MapEntry { map: Arc::new(map), source: "folder" });
                    }
                    Err(mut problem) => {
                        tracing::warn!("maps: {}", problem["error"].as_str().unwrap_or_default());
                        problem["file"] = json!(file);
                        problems.push(problem);
                    }
                }
            }
        }
        if let Some(dir) = &records_dir {
            std::fs::create_dir_all(dir).with_context(|| format!("--records {}: cannot create the folder", dir.display()))?;
        }
        Ok(CopsState {
            maps: RwLock::new(maps),
            problems,
            maps_dir,
            records_dir,
            games: Mutex::new(GameTable::default()),
            solutions: Mutex::new(HashMap::new()),
        })
    }

    fn map(&self, name: &str) -> Result<MapEntry, Response> {
        let maps = self.maps.read().expect("maps lock");
        maps.get(name).cloned().ok_or_else(|| {
            let names: Vec<&str> = maps.keys().map(String::as_str).collect();
            error_with(StatusCode::NOT_FOUND, json!({"error": format!("no map {name:?} (maps: {})", names.join(", ")), "field": "map"}))
        })
    }

    fn session(&self, id: &str) -> Result<Arc<Mutex<Session>>, Response> {
        let games = self.games.lock().expect("games lock");
        games.by_id.get(id).cloned().ok_or_else(|| error(StatusCode::NOT_FOUND, format!("no game {id:?} (games are kept in memory while the server runs)")))
    }
}

pub fn router(games: Arc<Games>) -> Router {
    Router::new()
        .route("/", get(page))
        .route("/maps", get(list_maps).post(save_map))
        .route("/maps/check", post(check_map))
        .route("/maps/{name}", get(get_map))
        .route("/games", get(list_games).post(start_game))
        .route("/games/{id}", get(game_state))
        .route("/games/{id}/move", post(play_move))
        .route("/games/{id}/record", get(game_record))
        .route("/replay", post(replay_record))
        .with_state(games)
}

type App = State<Arc<Games>>;

async fn page() -> Response {
    ([(header::CACHE_CONTROL, HeaderValue::from_static("no-cache"))], Html(PAGE_HTML)).into_response()
}

/// `[row, column]` of a square.
fn at(map: &Map, square: Square) -> [usize; 2] {
    let (row, column) = map.row_column(square);
    [row, column]
}

/// The map's roads (`0`) and buildings (`1`), row by row, without the pieces.
fn terrain(map: &Map) -> Vec<String> {
    (0..map.height).map(|r| (0..map.width).map(|c| if map.is_road(map.square(r, c)) { '0' } else { '1' }).collect()).collect()
}

fn positions_json(map: &Map, positions: &Positions) -> Value {
    json!({"police1": at(map, positions.police1), "police2": at(map, positions.police2), "thief": at(map, positions.thief)})
}

async fn list_maps(State(games): App) -> Response {
    let cops = &games.cops;
    let maps: Vec<Value> = cops
        .maps
        .read()
        .expect("maps lock")
        .iter()
        .map(|(name, e)| json!({"name": name, "source": e.source, "width": e.map.width, "height": e.map.height, "roads": e.map.road_count()}))
        .collect();
    ok_json(StatusCode::OK, json!({"maps": maps, "problems": cops.problems, "folder": cops.maps_dir}))
}

async fn get_map(State(games): App, Path(name): Path<String>) -> Response {
    match games.cops.map(&name) {
        Ok(e) => ok_json(StatusCode::OK, json!({"name": name, "source": e.source, "width": e.map.width, "height": e.map.height, "text": e.map.to_text()})),
        Err(response) => response,
    }
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct MapRequest {
    #[serde(default)]
    name: Option<String>,
    text: String,
}

/// The map in a request, or a 400 naming the line and column.
fn read_map(body: &Bytes) -> Result<(Option<String>, Map), Response> {
    let request: MapRequest = parse_body(body)?;
    let map = Map::parse(&request.text).map_err(|e| error_with(StatusCode::BAD_REQUEST, map_error_json(&e, None)))?;
    Ok((request.name, map))
}

async fn check_map(body: Bytes) -> Response {
    match read_map(&body) {
        Ok((_, map)) => ok_json(StatusCode::OK, json!({"ok": true, "width": map.width, "height": map.height, "roads": map.road_count()})),
        Err(response) => response,
    }
}

async fn save_map(State(games): App, body: Bytes) -> Response {
    let cops = &games.cops;
    let (name, map) = match read_map(&body) {
        Ok(read) => read,
        Err(response) => return response,
    };
    let Some(name) = name else {
        return error_with(StatusCode::BAD_REQUEST, json!({"error": "name: a map needs a name to be saved", "field": "name"}));
    };
    if let Err(message) = check_name(&name) {
        return error_with(StatusCode::BAD_REQUEST, json!({"error": format!("name: {message}"), "field": "name"}));
    }
    if name == CLASSIC {
        return error_with(StatusCode::CONFLICT, json!({"error": "name: the classic map cannot be replaced; choose another name", "field": "name"}));
    }
    let mut file = None;
    if let Some(dir) = &cops.maps_dir {
        let path = dir.join(format!("{name}.txt"));
        let text = map.to_text();
        let target = path.clone();
        let written = tokio::task::spawn_blocking(move || write_file(&target, &text)).await;
        if let Err(e) = written.map_err(anyhow::Error::from).and_then(|r| r) {
            return error(StatusCode::INTERNAL_SERVER_ERROR, format!("saving {}: {e:#}", path.display()));
        }
        file = Some(path);
    }
    let (width, height) = (map.width, map.height);
    let replaced = cops.maps.write().expect("maps lock").insert(name.clone(), MapEntry { map: Arc::new(map), source: "saved" }).is_some();
    let status = if replaced { StatusCode::OK } else { StatusCode::CREATED };
    ok_json(status, json!({"name": name, "width": width, "height": height, "file": file, "replaced": replaced}))
}

/// Writes a file whole: a temporary file beside it, then renamed over it.
fn write_file(path: &FsPath, text: &str) -> anyhow::Result<()> {
    let temporary = path.with_extension("tmp");
    std::fs::write(&temporary, text)?;
    std::fs::rename(&temporary, path)?;
    Ok(())
}

fn default_appearance() -> u8 {
    1
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct StartRequest {
    #[serde(default = "default_map")]
    map: String,
    mode: Mode,
    #[serde(default = "default_ai")]
    ai: Ai,
    #[serde(default = "default_appearance")]
    appearance: u8,
    #[serde(default)]
    seed: Option<u64>,
}

fn default_map() -> String {
    CLASSIC.to_string()
}

fn default_ai() -> Ai {
    Ai::Classic
}

async fn start_game(State(games): App, body: Bytes) -> Response {
    let request: StartRequest = match parse_body(&body) {
        Ok(r) => r,
        Err(response) => return response,
    };
    if !(1..=2).contains(&request.appearance) {
        return error_with(StatusCode::BAD_REQUEST, json!({"error": format!("appearance: {} is not a set of pieces (1: police caps, 2: detective hats)", request.appearance), "field": "appearance"}));
    }
    let entry = match games.cops.map(&request.map) {
        Ok(e) => e,
        Err(response) => return response,
    };
    let map = entry.map;
    let solver = match request.ai {
        Ai::Classic => Solver::NotNeeded,
        Ai::Perfect => match check_size(&map, MAX_STATES) {
            Ok(_) => Solver::Solving,
            Err(e) => {
                return error_with(StatusCode::BAD_REQUEST, json!({"error": format!("ai: the perfect player cannot play this map: {e}; choose classic"), "field": "ai"}));
            }
        },
    };
    let seed = request.seed.unwrap_or_else(rand::random);
    let id = format!("{:016x}", rand::random::<u64>());
    let record_file = games.cops.records_dir.as_ref().map(|d| d.join(format!("cops-{id}.jsonl")));
    // The players' names in the record.
    let (police, thief) = match request.mode {
        Mode::Police => ("human", request.ai.name()),
        Mode::Thief => (request.ai.name(), "human"),
    };
    let mut session = Session {
        id: id.clone(),
        map_name: request.map,
        map: map.clone(),
        mode: request.mode,
        ai: request.ai,
        appearance: request.appearance,
        seed,
        rng: ChaCha8Rng::seed_from_u64(seed),
        game: Game::new(&map, request.mode),
        record: vec![RecordLine::start(&map, request.mode, police, thief, seed)],
        solver,
        record_file,
    };
    session.advance();
    let solving = matches!(session.solver, Solver::Solving);
    let state = session.state_json();
    let session = Arc::new(Mutex::new(session));
    {
        let mut table = games.cops.games.lock().expect("games lock");
        while table.order.len() >= MAX_GAMES {
            if let Some(oldest) = table.order.pop_front() {
                table.by_id.remove(&oldest);
            }
        }
        table.order.push_back(id.clone());
        table.by_id.insert(id, session.clone());
    }
    if solving {
        tokio::spawn(solve_for(games.clone(), session, map));
    }
    ok_json(StatusCode::CREATED, state)
}

/// Solves the game's map in a blocking task (or takes the solution another game of the same map
/// holds), then lets the game go on.
async fn solve_for(games: Arc<Games>, session: Arc<Mutex<Session>>, map: Arc<Map>) {
    let key = map.to_text();
    let cached = games.cops.solutions.lock().expect("solutions lock").get(&key).and_then(Weak::upgrade);
    let solved = match cached {
        Some(solution) => Ok((solution, 0.0)),
        None => {
            let clock = Instant::now();
            let task = tokio::task::spawn_blocking(move || solve(&map, MAX_STATES));
            match task.await {
                Ok(Ok(solution)) => {
                    let solution = Arc::new(solution);
                    let mut cache = games.cops.solutions.lock().expect("solutions lock");
                    cache.retain(|_, s| s.strong_count() > 0);
                    cache.insert(key, Arc::downgrade(&solution));
                    Ok((solution, clock.elapsed().as_secs_f64()))
                }
                Ok(Err(e)) => Err(e.to_string()),
                Err(e) => Err(format!("the solver stopped: {e}")),
            }
        }
    };
    let mut session = session.lock().expect("session lock");
    match solved {
        Ok((solution, seconds)) => {
            tracing::info!("game {}: map {} solved in {seconds:.3} s", session.id, session.map_name);
            session.solver = Solver::Ready { solution: Some(solution), seconds };
            session.advance();
        }
        Err(message) => {
            tracing::warn!("game {}: {message}", session.id);
            session.solver = Solver::Failed(message);
        }
    }
}

fn piece_name(piece: Piece) -> &'static str {
    match piece {
        Piece::Police1 => "policeman 1",
        Piece::Police2 => "policeman 2",
        Piece::Thief => "the thief",
    }
}

/// A move asked for by the page.
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct MoveRequest {
    #[serde(default)]
    to: Option<[usize; 2]>,
    #[serde(default)]
    direction: Option<String>,
    #[serde(default)]
    stay: bool,
}

impl Session {
    fn human(&self) -> Team {
        if self.mode == Mode::Police { Team::Police } else { Team::Thief }
    }

    /// Plays whatever does not wait for the human: the computer's pieces, and the human's pieces
    /// that have no step and must stay. Stops while the perfect player's solution is not ready.
    fn advance(&mut self) {
        while self.game.outcome.is_none() {
            let piece = self.game.to_move;
            let step = if piece.team() == self.human() {
                if !self.game.legal_steps(&self.map).is_empty() {
                    break;
                }
                None
            } else {
                let solution = match &self.solver {
                    Solver::NotNeeded => None,
                    Solver::Ready { solution: Some(solution), .. } => Some(solution.clone()),
                    _ => break,
                };
                self.ai.choose(&self.map, solution.as_deref(), &self.game.positions, piece, &mut self.rng)
            };
            self.play(step).expect("computer players and forced stays are legal");
        }
    }

    fn play(&mut self, step: Option<Square>) -> Result<(), MoveError> {
        let piece = self.game.to_move;
        let from = self.game.positions.of(piece);
        self.game.play(&self.map, step)?;
        self.record.push(RecordLine::moved(&self.map, &self.game, piece, from));
        if let Some(outcome) = self.game.outcome {
            self.record.push(RecordLine::end(&outcome));
            if let Solver::Ready { solution, .. } = &mut self.solver {
                *solution = None;
            }
            if let Some(path) = &self.record_file {
                if let Err(e) = write_file(path, &self.record_text()) {
                    tracing::warn!("game {}: writing its record {}: {e:#}", self.id, path.display());
                }
            }
        }
        Ok(())
    }

    fn record_text(&self) -> String {
        self.record.iter().map(|l| serde_json::to_string(l).expect("records serialise") + "\n").collect()
    }

    /// The human's move, then the computer's answer.
    fn human_move(&mut self, request: MoveRequest) -> Result<(), (StatusCode, Value)> {
        let bad = |field: &str, message: String| (StatusCode::BAD_REQUEST, json!({"error": format!("{field}: {message}"), "field": field}));
        if self.game.outcome.is_some() {
            return Err((StatusCode::CONFLICT, json!({"error": format!("the game is over: {}", outcome_message(&self.map, &self.game))})));
        }
        let piece = self.game.to_move;
        if piece.team() != self.human() {
            let why = match &self.solver {
                Solver::Solving => "the perfect player is still solving the map; try again in a moment".to_string(),
                Solver::Failed(e) => format!("the computer cannot move: {e}"),
                _ => "it is the computer's turn".to_string(),
            };
            return Err((StatusCode::CONFLICT, json!({ "error": why })));
        }
        let here = self.game.positions.of(piece);
        let (row, column) = self.map.row_column(here);
        let (height, width) = (self.map.height, self.map.width);
        let given = request.to.is_some() as u8 + request.direction.is_some() as u8 + request.stay as u8;
        if given != 1 {
            return Err(bad("move", "give exactly one of \"to\": [row, column], \"direction\": \"up\"|\"down\"|\"left\"|\"right\", \"stay\": true".into()));
        }
        let step = if let Some([r, c]) = request.to {
            if r >= height || c >= width {
                return Err(bad("to", format!("[{r}, {c}] is outside the map ({height} rows, {width} columns, counted from 0)")));
            }
            Some(self.map.square(r, c))
        } else if let Some(direction) = &request.direction {
            let target = match direction.as_str() {
                "up" if row > 0 => (row - 1, column),
                "down" if row + 1 < height => (row + 1, column),
                "left" if column > 0 => (row, column - 1),
                "right" if column + 1 < width => (row, column + 1),
                "up" | "down" | "left" | "right" => return Err(bad("direction", format!("{direction} from [{row}, {column}] leaves the map"))),
                other => return Err(bad("direction", format!("{other:?} is not one of up, down, left, right"))),
            };
            Some(self.map.square(target.0, target.1))
        } else {
            None
        };
        if let Err(e) = self.play(step) {
            let message = match (e, step) {
                (MoveError::MayNotStay { .. }, _) => format!("{} has a square to move to, so it may not stay", piece_name(piece)),
                (_, Some(to)) => format!(
                    "{} cannot move from [{row}, {column}] to {:?}: a move goes one square up, down, left or right onto a road no policeman stands on",
                    piece_name(piece),
                    at(&self.map, to)
                ),
                (e, None) => e.to_string(),
            };
            return Err((StatusCode::BAD_REQUEST, json!({ "error": message, "field": "move" })));
        }
        self.advance();
        Ok(())
    }

    fn state_json(&self) -> Value {
        let map = &self.map;
        let game = &self.game;
        let solver = match &self.solver {
            Solver::NotNeeded => json!({"state": "not_needed"}),
            Solver::Solving => json!({"state": "solving"}),
            Solver::Failed(e) => json!({"state": "failed", "error": e}),
            Solver::Ready { solution, seconds } => {
                // Perfect play from here, under what is left of the move limit.
                let outlook = solution.as_ref().filter(|_| game.outcome.is_none()).map(|s| {
                    let left = MOVE_LIMIT - game.moves;
                    match s.moves_to_capture(&game.positions, game.to_move).filter(|&m| m <= left) {
                        Some(m) => json!({"winner": "police", "moves": m}),
                        None => json!({"winner": "thief", "moves": Value::Null}),
                    }
                });
                json!({"state": "ready", "seconds": seconds, "outlook": outlook})
            }
        };
        let history: Vec<&RecordLine> = self.record.iter().filter(|l| matches!(l, RecordLine::Move { .. })).collect();
        let outcome = game.outcome.map(|o| json!({"winner": o.winner, "reason": o.reason, "moves": o.moves, "message": outcome_message(map, game)}));
        json!({
            "id": self.id,
            "map": {"name": self.map_name, "width": map.width, "height": map.height, "rows": terrain(map)},
            "mode": self.mode,
            "ai": self.ai,
            "appearance": self.appearance,
            "seed": self.seed,
            "human": self.human(),
            "positions": positions_json(map, &game.positions),
            "to_move": game.to_move,
            "your_turn": game.outcome.is_none() && game.to_move.team() == self.human(),
            "moves": game.moves,
            "move_limit": MOVE_LIMIT,
            "legal": game.legal_steps(map).into_iter().map(|s| at(map, s)).collect::<Vec<_>>(),
            "outcome": outcome,
            "solver": solver,
            "history": history,
        })
    }
}

/// Who won and why, in words.
fn outcome_message(map: &Map, game: &Game) -> String {
    let Some(outcome) = game.outcome else { return String::new() };
    match outcome.reason {
        Reason::Capture => {
            let who = if game.positions.police1 == game.positions.thief { "Policeman 1" } else { "Policeman 2" };
            let [r, c] = at(map, game.positions.thief);
            let moves = if outcome.moves == 1 { "1 move".to_string() } else { format!("{} moves", outcome.moves) };
            format!("The police win: {who} caught the thief at row {}, column {} after {moves}.", r + 1, c + 1)
        }
        Reason::MoveLimit => format!("The thief wins: {MOVE_LIMIT} moves without being caught."),
    }
}

async fn list_games(State(games): App) -> Response {
    let sessions: Vec<Arc<Mutex<Session>>> = {
        let table = games.cops.games.lock().expect("games lock");
        table.order.iter().rev().filter_map(|id| table.by_id.get(id).cloned()).collect()
    };
    let list: Vec<Value> = sessions
        .iter()
        .map(|s| {
            let s = s.lock().expect("session lock");
            json!({"id": s.id, "map": s.map_name, "mode": s.mode, "ai": s.ai, "moves": s.game.moves, "outcome": s.game.outcome})
        })
        .collect();
    ok_json(StatusCode::OK, json!({ "games": list }))
}

async fn game_state(State(games): App, Path(id): Path<String>) -> Response {
    match games.cops.session(&id) {
        Ok(session) => ok_json(StatusCode::OK, session.lock().expect("session lock").state_json()),
        Err(response) => response,
    }
}

async fn play_move(State(games): App, Path(id): Path<String>, body: Bytes) -> Response {
    let session = match games.cops.session(&id) {
        Ok(s) => s,
        Err(response) => return response,
    };
    let request: MoveRequest = match parse_body(&body) {
        Ok(r) => r,
        Err(response) => return response,
    };
    let mut session = session.lock().expect("session lock");
    match session.human_move(request) {
        Ok(()) => ok_json(StatusCode::OK, session.state_json()),
        Err((status, body)) => error_with(status, body),
    }
}

async fn game_record(State(games): App, Path(id): Path<String>) -> Response {
    match games.cops.session(&id) {
        Ok(session) => {
            let text = session.lock().expect("session lock").record_text();
            let headers = [
                (header::CONTENT_TYPE, HeaderValue::from_static("application/x-ndjson")),
                (header::CACHE_CONTROL, HeaderValue::from_static("no-cache")),
            ];
            (headers, text).into_response()
        }
        Err(response) => response,
    }
}

async fn replay_record(body: Bytes) -> Response {
    let Ok(text) = std::str::from_utf8(&body) else {
        return error(StatusCode::BAD_REQUEST, "the record is not UTF-8 text");
    };
    match replay(text) {
        Ok(replayed) => {
            let map = &replayed.map;
            let frames: Vec<Value> = replayed
                .frames
                .iter()
                .map(|g| json!({"positions": positions_json(map, &g.positions), "to_move": g.to_move, "moves": g.moves, "outcome": g.outcome.map(|_| outcome_message(map, g))}))
                .collect();
            ok_json(
                StatusCode::OK,
                json!({
                    "map": {"width": map.width, "height": map.height, "rows": terrain(map)},
                    "mode": replayed.mode, "police": replayed.police, "thief": replayed.thief, "seed": replayed.seed,
                    "frames": frames, "moves": replayed.moves,
                }),
            )
        }
        Err(e) => error_with(StatusCode::BAD_REQUEST, json!({"error": e.to_string(), "line": e.line()})),
    }
}
