//! Dots (Kropki) on the web: rooms held on the server, played from one screen, against the
//! computer, or over the network through WebSocket, with spectators.
//!
//! Routes (relative to where the router is nested, `/dots` in [`super::router`]):
//!
//! | route | what |
//! |---|---|
//! | `GET /` | the page |
//! | `POST /rooms` | a new room: `{"width", "height", "rules", "mode": "local"/"ai"/"network", "level", "ai_plays": "red"/"black", "seed"}` |
//! | `GET /rooms/{id}` | the room's state |
//! | `POST /rooms/{id}/action` | `{"op": "move", "x", "y"}`, `{"op": "undo"}`, `{"op": "ground"}`, `{"op": "resign"}`, with `"seat": "red"/"black"` in network rooms |
//! | `GET /rooms/{id}/sgf` | the game so far as SGF (`GM[40]`) |
//! | `GET /rooms/{id}/ws?seat=red/black/spectator` | WebSocket: the state on connect and after every change; actions as above, as text messages |
//!
//! The server holds every game: a player who drops and reconnects gets the whole position back
//! and loses no move. A finished game is written to the records folder (if one is configured)
//! as `dots-ID.sgf`. Errors are `{"error": "..."}` (400 bad input, 404 unknown room, 409 not
//! now: not your turn, game over).

use std::collections::{HashMap, VecDeque};
use std::path::PathBuf;
use std::sync::{Arc, Mutex};
use std::time::Instant;

use axum::body::Bytes;
use axum::extract::ws::{Message, WebSocket, WebSocketUpgrade};
use axum::extract::{Path, Query, State};
use axum::http::{header, HeaderValue, StatusCode};
use axum::response::{Html, IntoResponse, Response};
use axum::routing::{get, post};
use axum::Router;
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;
use serde::Deserialize;
use serde_json::{json, Value};
use tokio::sync::broadcast;

use super::{error, ok_json, parse_body, Games};
use crate::games::dots::board::{Board, Player, Point, Rules, DEFAULT_HEIGHT, DEFAULT_WIDTH};
use crate::games::dots::{mcts, sgf};

const PAGE_HTML: &str = include_str!("dots.html");
/// Rooms kept in memory; the oldest go first.
const MAX_ROOMS: usize = 64;

#[derive(Clone, Copy, Debug, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Mode {
    /// Two people at one screen.
    Local,
    /// One person against the computer.
    Ai,
    /// Two people on two screens; moves only from the seat whose turn it is.
    Network,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Seat {
    Red,
    Black,
    Spectator,
}

impl Seat {
    fn player(self) -> Option<Player> {
        match self {
            Seat::Red => Some(Player::Red),
            Seat::Black => Some(Player::Black),
            Seat::Spectator => None,
        }
    }
}

struct Room {
    id: String,
    mode: Mode,
    board: Board,
    ai_player: Option<Player>,
    level: mcts::Level,
    /// Reproducible computer moves: iteration budget from this seed (else the level's time).
    seed: Option<u64>,
    rng: ChaCha8Rng,
    /// Connected WebSocket clients per seat (red, black, spectators).
    connected: [usize; 3],
    saved: Option<PathBuf>,
    updates: broadcast::Sender<String>,
}

#[derive(Default)]
struct RoomTable {
    by_id: HashMap<String, Arc<Mutex<Room>>>,
    order: VecDeque<String>,
}

pub struct DotsState {
    rooms: Mutex<RoomTable>,
    records_dir: Option<PathBuf>,
}

impl DotsState {
    pub fn new(records_dir: Option<PathBuf>) -> DotsState {
        DotsState {
            rooms: Mutex::new(RoomTable::default()),
            records_dir,
        }
    }

    fn room(&self, id: &str) -> Result<Arc<Mutex<Room>>, Response> {
        let rooms = self.rooms.lock().expect("rooms lock");
        rooms.by_id.get(id).cloned().ok_or_else(|| {
            error(
                StatusCode::NOT_FOUND,
                format!("no room {id:?} (rooms are kept in memory while the server runs)"),
            )
        })
    }
}

pub fn router(games: Arc<Games>) -> Router {
    Router::new()
        .route("/", get(page))
        .route("/rooms", post(create_room))
        .route("/rooms/{id}", get(room_state))
        .route("/rooms/{id}/action", post(room_action))
        .route("/rooms/{id}/sgf", get(room_sgf))
        .route("/rooms/{id}/ws", get(room_socket))
        .with_state(games)
}

type App = State<Arc<Games>>;

async fn page() -> Response {
    (
        [(header::CACHE_CONTROL, HeaderValue::from_static("no-cache"))],
        Html(PAGE_HTML),
    )
        .into_response()
}

fn point_char(point: Point) -> char {
    match point {
        Point::Empty => '.',
        Point::Dot(Player::Red) => 'R',
        Point::Dot(Player::Black) => 'B',
        Point::CapturedDot(Player::Red) => 'r',
        Point::CapturedDot(Player::Black) => 'b',
        Point::Territory(Player::Red) => '+',
        Point::Territory(Player::Black) => '-',
        Point::House(Player::Red) => 'h',
        Point::House(Player::Black) => 'k',
    }
}

fn player_name(p: Player) -> &'static str {
    match p {
        Player::Red => "red",
        Player::Black => "black",
    }
}

/// The room as the page draws it. `rows`: one string per row, `.` empty, `R`/`B` dots, `r`/`b`
/// captured dots (by colour of the dot), `+`/`-` red's/black's territory, `h`/`k` red's/black's
/// empty houses.
fn state_json(room: &Room) -> Value {
    let b = &room.board;
    let rows: Vec<String> = (0..b.height())
        .map(|y| (0..b.width()).map(|x| point_char(b.point(x, y))).collect())
        .collect();
    let last = b.history().rev().find_map(|a| match a {
        crate::games::dots::Action::Dot { x, y, .. } => Some([x, y]),
        _ => None,
    });
    json!({
        "id": room.id,
        "mode": match room.mode { Mode::Local => "local", Mode::Ai => "ai", Mode::Network => "network" },
        "rules": match b.rules() { Rules::Classic => "classic", Rules::Standard => "standard" },
        "width": b.width(),
        "height": b.height(),
        "rows": rows,
        "to_move": player_name(b.to_move()),
        "captured": {"red": b.captured(Player::Red), "black": b.captured(Player::Black)},
        "moves": b.move_count(),
        "last": last,
        "end": b.end(),
        "leader": b.end().map(|_| b.leader().map(player_name)),
        "ai_plays": room.ai_player.map(player_name),
        "level": room.level.level,
        "enclosures": b.enclosures().iter().map(|e| json!({"player": player_name(e.player), "segments": e.segments})).collect::<Vec<_>>(),
        "connected": {"red": room.connected[0], "black": room.connected[1], "spectators": room.connected[2]},
        "saved": room.saved,
    })
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct CreateRequest {
    #[serde(default = "default_width")]
    width: usize,
    #[serde(default = "default_height")]
    height: usize,
    #[serde(default)]
    rules: Rules,
    mode: Mode,
    #[serde(default)]
    level: Option<u8>,
    #[serde(default)]
    ai_plays: Option<Seat>,
    #[serde(default)]
    seed: Option<u64>,
}

fn default_width() -> usize {
    DEFAULT_WIDTH
}
fn default_height() -> usize {
    DEFAULT_HEIGHT
}

async fn create_room(State(games): App, body: Bytes) -> Response {
    let request: CreateRequest = match parse_body(&body) {
        Ok(r) => r,
        Err(response) => return response,
    };
    let board = match Board::new(request.width, request.height, request.rules) {
        Ok(b) => b,
        Err(message) => {
            return super::error_with(
                StatusCode::BAD_REQUEST,
                json!({"error": message, "field": "width"}),
            )
        }
    };
    let level_number = request.level.unwrap_or(mcts::DEFAULT_LEVEL);
    let Some(level) = mcts::level(level_number) else {
        return super::error_with(
            StatusCode::BAD_REQUEST,
            json!({"error": format!("level {level_number}: expected 1 to 4"), "field": "level"}),
        );
    };
    let ai_player = match (request.mode, request.ai_plays) {
        (Mode::Ai, None) => Some(Player::Black),
        (Mode::Ai, Some(seat)) => match seat.player() {
            Some(p) => Some(p),
            None => {
                return super::error_with(
                    StatusCode::BAD_REQUEST,
                    json!({"error": "ai_plays: red or black", "field": "ai_plays"}),
                )
            }
        },
        _ => None,
    };
    let id = format!("{:08x}", rand::thread_rng().gen::<u32>());
    let (updates, _) = broadcast::channel(64);
    let room = Room {
        id: id.clone(),
        mode: request.mode,
        board,
        ai_player,
        level,
        seed: request.seed,
        rng: ChaCha8Rng::seed_from_u64(request.seed.unwrap_or_else(|| rand::thread_rng().gen())),
        connected: [0; 3],
        saved: None,
        updates,
    };
    let room = Arc::new(Mutex::new(room));
    {
        let mut rooms = games.dots.rooms.lock().expect("rooms lock");
        if rooms.order.len() >= MAX_ROOMS {
            if let Some(old) = rooms.order.pop_front() {
                rooms.by_id.remove(&old);
            }
        }
        rooms.by_id.insert(id.clone(), room.clone());
        rooms.order.push_back(id);
    }
    // The computer may open the game.
    let state = after_change(&games, room).await;
    ok_json(StatusCode::CREATED, state)
}

async fn room_state(State(games): App, Path(id): Path<String>) -> Response {
    match games.dots.room(&id) {
        Ok(room) => ok_json(StatusCode::OK, state_json(&room.lock().expect("room lock"))),
        Err(response) => response,
    }
}

async fn room_sgf(State(games): App, Path(id): Path<String>) -> Response {
    let room = match games.dots.room(&id) {
        Ok(room) => room,
        Err(response) => return response,
    };
    let text = sgf::write(&room.lock().expect("room lock").board, "red", "black");
    let disposition = format!("attachment; filename=\"dots-{id}.sgf\"");
    (
        [
            (
                header::CONTENT_TYPE,
                HeaderValue::from_static("application/x-go-sgf"),
            ),
            (
                header::CONTENT_DISPOSITION,
                HeaderValue::from_str(&disposition)
                    .unwrap_or(HeaderValue::from_static("attachment")),
            ),
        ],
        text,
    )
        .into_response()
}

#[derive(Deserialize)]
#[serde(tag = "op", rename_all = "lowercase", deny_unknown_fields)]
enum ActionRequest {
    Move {
        x: usize,
        y: usize,
        #[serde(default)]
        seat: Option<Seat>,
    },
    Undo {
        #[serde(default)]
        seat: Option<Seat>,
    },
    Ground {
        #[serde(default)]
        seat: Option<Seat>,
    },
    Resign {
        #[serde(default)]
        seat: Option<Seat>,
    },
}

/// Apply an action to the room. Errors are (status, message).
fn apply(room: &mut Room, action: ActionRequest) -> Result<(), (StatusCode, String)> {
    let conflict = |m: String| (StatusCode::CONFLICT, m);
    let seat = match &action {
        ActionRequest::Move { seat, .. }
        | ActionRequest::Undo { seat }
        | ActionRequest::Ground { seat }
        | ActionRequest::Resign { seat } => *seat,
    };
    // Who acts: in a network room the seat, elsewhere whoever's turn it is (the human's in an AI room).
    let actor = match room.mode {
        Mode::Network => match seat.and_then(Seat::player) {
            Some(p) => p,
            None => {
                return Err((
                    StatusCode::FORBIDDEN,
                    "spectators watch: take the red or the black seat to play".into(),
                ))
            }
        },
        Mode::Ai => room.ai_player.expect("AI room has an AI player").other(),
        Mode::Local => room.board.to_move(),
    };
    match action {
        ActionRequest::Move { x, y, .. } => {
            if room.board.to_move() != actor {
                return Err(conflict(format!(
                    "it is {}'s turn",
                    player_name(room.board.to_move())
                )));
            }
            room.board
                .play_as(x, y, actor)
                .map_err(|e| conflict(e.to_string()))?;
        }
        ActionRequest::Undo { .. } => {
            // Take back the last dot; against the computer, back to the human's turn; over the
            // network only one's own last dot.
            let last_by = |b: &Board| {
                b.history().last().map(|a| match a {
                    crate::games::dots::Action::Dot { player, .. }
                    | crate::games::dots::Action::Ground { player }
                    | crate::games::dots::Action::Resign { player } => player,
                })
            };
            match room.mode {
                Mode::Network if last_by(&room.board) != Some(actor) => {
                    return Err(conflict("only your own last move can be taken back".into()))
                }
                _ => {}
            }
            if room.board.undo().is_none() {
                return Err(conflict("nothing to take back".into()));
            }
            if room.mode == Mode::Ai {
                while room.board.to_move() != actor || last_by(&room.board) == room.ai_player {
                    if room.board.undo().is_none() {
                        break;
                    }
                }
            }
        }
        ActionRequest::Ground { .. } => {
            room.board
                .ground(actor)
                .map_err(|e| conflict(e.to_string()))?;
        }
        ActionRequest::Resign { .. } => room
            .board
            .resign(actor)
            .map_err(|e| conflict(e.to_string()))?,
    }
    Ok(())
}

async fn room_action(State(games): App, Path(id): Path<String>, body: Bytes) -> Response {
    let room = match games.dots.room(&id) {
        Ok(room) => room,
        Err(response) => return response,
    };
    let action: ActionRequest = match parse_body(&body) {
        Ok(a) => a,
        Err(response) => return response,
    };
    let applied = apply(&mut room.lock().expect("room lock"), action);
    if let Err((status, message)) = applied {
        return error(status, message);
    }
    ok_json(StatusCode::OK, after_change(&games, room).await)
}

/// After a change: let the computer move if it is its turn, save a finished game, tell every
/// connected client. Returns the new state.
async fn after_change(games: &Arc<Games>, room: Arc<Mutex<Room>>) -> Value {
    loop {
        let task = {
            let r = room.lock().expect("room lock");
            match r.ai_player {
                Some(ai) if r.board.end().is_none() && r.board.to_move() == ai => {
                    // Show the human's dot while the computer thinks.
                    let _ = r.updates.send(state_json(&r).to_string());
                    Some((r.board.clone(), r.seed, r.level, r.rng.clone()))
                }
                _ => None,
            }
        };
        let Some((board, seed, level, mut rng)) = task else {
            break;
        };
        let moves_before = board.move_count();
        let (choice, rng) = tokio::task::spawn_blocking(move || {
            let clock = Instant::now();
            let limit = level.search_time();
            let choice = match seed {
                Some(_) => mcts::choose_move(&board, level.iterations, &mut rng, &mut || false),
                None => {
                    mcts::choose_move(&board, u32::MAX, &mut rng, &mut || clock.elapsed() >= limit)
                }
            };
            (choice, rng)
        })
        .await
        .expect("the computer's search does not panic");
        let mut r = room.lock().expect("room lock");
        // Someone may have undone or the game changed meanwhile: then think again.
        if r.board.move_count() != moves_before {
            continue;
        }
        r.rng = rng;
        match choice {
            Some(c) => {
                let ai = r.ai_player.expect("ai");
                r.board
                    .play_as(c.x, c.y, ai)
                    .expect("the computer plays a legal point");
            }
            None => break,
        }
    }
    let mut r = room.lock().expect("room lock");
    if r.board.end().is_some() && r.saved.is_none() {
        if let Some(dir) = &games.dots.records_dir {
            let path = dir.join(format!("dots-{}.sgf", r.id));
            match std::fs::write(&path, sgf::write(&r.board, "red", "black")) {
                Ok(()) => r.saved = Some(path),
                Err(e) => tracing::warn!("saving {}: {e}", path.display()),
            }
        }
    }
    let state = state_json(&r);
    let _ = r.updates.send(state.to_string());
    state
}

#[derive(Deserialize)]
struct SocketQuery {
    #[serde(default)]
    seat: Option<Seat>,
}

async fn room_socket(
    State(games): App,
    Path(id): Path<String>,
    Query(query): Query<SocketQuery>,
    upgrade: WebSocketUpgrade,
) -> Response {
    let room = match games.dots.room(&id) {
        Ok(room) => room,
        Err(response) => return response,
    };
    let seat = query.seat.unwrap_or(Seat::Spectator);
    upgrade.on_upgrade(move |socket| serve_socket(games, room, seat, socket))
}

fn seat_index(seat: Seat) -> usize {
    match seat {
        Seat::Red => 0,
        Seat::Black => 1,
        Seat::Spectator => 2,
    }
}

async fn serve_socket(
    games: Arc<Games>,
    room: Arc<Mutex<Room>>,
    seat: Seat,
    mut socket: WebSocket,
) {
    let mut updates = {
        let mut r = room.lock().expect("room lock");
        r.connected[seat_index(seat)] += 1;
        r.updates.subscribe()
    };
    // Everyone sees who is connected; the newcomer gets the whole position.
    let state = {
        let r = room.lock().expect("room lock");
        let state = state_json(&r).to_string();
        let _ = r.updates.send(state.clone());
        state
    };
    let _ = socket.send(Message::Text(state.into())).await;
    loop {
        tokio::select! {
            update = updates.recv() => match update {
                Ok(text) => {
                    if socket.send(Message::Text(text.into())).await.is_err() {
                        break;
                    }
                }
                Err(broadcast::error::RecvError::Lagged(_)) => {
                    // Missed some: the latest full state replaces them.
                    let text = state_json(&room.lock().expect("room lock")).to_string();
                    if socket.send(Message::Text(text.into())).await.is_err() {
                        break;
                    }
                }
                Err(broadcast::error::RecvError::Closed) => break,
            },
            incoming = socket.recv() => match incoming {
                None | Some(Err(_)) | Some(Ok(Message::Close(_))) => break,
                Some(Ok(Message::Text(text))) => {
                    let reply = match serde_json::from_str::<Value>(&text) {
                        Ok(mut value) => {
                            // The socket's seat is the one it connected with.
                            if let Some(object) = value.as_object_mut() {
                                object.insert("seat".into(), json!(match seat { Seat::Red => "red", Seat::Black => "black", Seat::Spectator => "spectator" }));
                            }
                            match serde_json::from_value::<ActionRequest>(value) {
                                Ok(action) => {
                                    let applied = apply(&mut room.lock().expect("room lock"), action);
                                    match applied {
                                        Ok(()) => {
                                            after_change(&games, room.clone()).await;
                                            None
                                        }
                                        Err((_, message)) => Some(message),
                                    }
                                }
                                Err(e) => Some(format!("the message: {e}")),
                            }
                        }
                        Err(e) => Some(format!("the message is not JSON: {e}")),
                    };
                    if let Some(message) = reply {
                        if socket.send(Message::Text(json!({"error": message}).to_string().into())).await.is_err() {
                            break;
                        }
                    }
                }
                Some(Ok(_)) => {}
            },
        }
    }
    let mut r = room.lock().expect("room lock");
    r.connected[seat_index(seat)] -= 1;
    let _ = r.updates.send(state_json(&r).to_string());
}
