//! What the camera (or a test) says about the board: an 8x8 grid of square readings in board
//! coordinates, each a hard class, "unknown", or a probability per class; and the JSON line format
//! `boardwatch track` reads them in.
//!
//! Coordinates are those of a diagram with White at the bottom, as the camera sees the board
//! after rectification: row 0 is the edge where Black's men start, column 0 on the left. On
//! mirrored boards (Italian, Spanish) the playing squares are the other colour; the mapping to the
//! rules engine's squares goes through [`square_at`].

use serde::{Deserialize, Serialize};
use serde_json::{json, Value};

use crate::draughts::notation::square_at;
use crate::draughts::position::{Color, Piece, Position};
use crate::draughts::rules::Rules;

/// What may stand on a square, in the order used by probability vectors: `[".", "b", "w", "B",
/// "W"]`, the project's one order (the vision's `classify::CLASSES` and `BoardView::probs`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum SquareClass {
    Empty = 0,
    BlackMan = 1,
    WhiteMan = 2,
    BlackKing = 3,
    WhiteKing = 4,
}

/// The grid characters of the classes, in probability-vector order.
pub const CLASS_CHARS: [char; 5] = ['.', 'b', 'w', 'B', 'W'];

impl SquareClass {
    pub const ALL: [SquareClass; 5] = [
        SquareClass::Empty,
        SquareClass::BlackMan,
        SquareClass::WhiteMan,
        SquareClass::BlackKing,
        SquareClass::WhiteKing,
    ];

    pub fn index(self) -> usize {
        self as usize
    }

    pub fn to_char(self) -> char {
        CLASS_CHARS[self.index()]
    }

    pub fn from_char(c: char) -> Option<SquareClass> {
        CLASS_CHARS.iter().position(|&x| x == c).map(|i| SquareClass::ALL[i])
    }

    pub fn of_piece(piece: Option<Piece>) -> SquareClass {
        match piece {
            None => SquareClass::Empty,
            Some(Piece::Man(Color::Black)) => SquareClass::BlackMan,
            Some(Piece::King(Color::Black)) => SquareClass::BlackKing,
            Some(Piece::Man(Color::White)) => SquareClass::WhiteMan,
            Some(Piece::King(Color::White)) => SquareClass::WhiteKing,
        }
    }

    pub fn piece(self) -> Option<Piece> {
        match self {
            SquareClass::Empty => None,
            SquareClass::BlackMan => Some(Piece::Man(Color::Black)),
            SquareClass::BlackKing => Some(Piece::King(Color::Black)),
            SquareClass::WhiteMan => Some(Piece::Man(Color::White)),
            SquareClass::WhiteKing => Some(Piece::King(Color::White)),
        }
    }

    /// The class a king is seen as when kings look like men (stacked kings).
    pub fn as_man(self) -> SquareClass {
        match self {
            SquareClass::BlackKing => SquareClass::BlackMan,
            SquareClass::WhiteKing => SquareClass::WhiteMan,
            other => other,
        }
    }
}

/// One square's reading.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Reading {
    /// A hard class (`.`, `b`, `B`, `w`, `W` in a grid): trusted as near-certain.
    Class(SquareClass),
    /// Nothing is known (`?`: a hand, glare, a piece in the air).
    Unknown,
    /// A probability per class in [`CLASS_CHARS`] order. They may sum to less than 1: the rest is
    /// the chance that the square shows nothing the classifier knows (a hand, glare), which
    /// says nothing about what stands there.
    Probabilities([f32; 5]),
}

/// One board state as seen, with its time if known.
#[derive(Clone, Debug, PartialEq)]
pub struct Observation {
    /// `squares[row][col]` in board coordinates (see the module docs). Light squares are ignored.
    pub squares: [[Reading; 8]; 8],
    /// Seconds, from whatever clock the source uses.
    pub t: Option<f64>,
    /// A board seen but not yet still (a hand just left it, or the next one was already coming
    /// in): the tracker decides nothing from it, and only remembers it to put in order the
    /// plies that a later board may show at once (JSON `"glimpse": true`).
    pub glimpse: bool,
}

#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum ObservationError {
    #[error("the grid has {0} rows, expected 8")]
    Rows(usize),
    #[error("grid row {row} has {len} characters, expected 8")]
    RowLength { row: usize, len: usize },
    #[error("grid row {row}, column {col}: `{ch}` is not one of . b B w W ?")]
    BadChar { row: usize, col: usize, ch: char },
    #[error("probs: {0}")]
    Probs(String),
    #[error("{0}")]
    Json(String),
}

impl Observation {
    /// Every square unknown.
    pub fn unknown() -> Observation {
        Observation { squares: [[Reading::Unknown; 8]; 8], t: None, glimpse: false }
    }

    /// From 8 strings of 8 grid characters (`.`, `b`, `B`, `w`, `W`, `?`), row 0 first.
    pub fn from_grid<S: AsRef<str>>(rows: &[S]) -> Result<Observation, ObservationError> {
        if rows.len() != 8 {
            return Err(ObservationError::Rows(rows.len()));
        }
        let mut obs = Observation::unknown();
        for (row, text) in rows.iter().enumerate() {
            let chars: Vec<char> = text.as_ref().chars().collect();
            if chars.len() != 8 {
                return Err(ObservationError::RowLength { row, len: chars.len() });
            }
            for (col, &ch) in chars.iter().enumerate() {
                obs.squares[row][col] = match ch {
                    '?' => Reading::Unknown,
                    _ => {
                        Reading::Class(SquareClass::from_char(ch).ok_or(ObservationError::BadChar { row, col, ch })?)
                    }
                };
            }
        }
        Ok(obs)
    }

    /// The board as a perfect camera sees `pos`. `looks_like_man` are squares whose king is seen as
    /// a man (stacked kings, or a man on the last row not yet swapped for its king piece).
    pub fn of_position(pos: &Position, looks_like_man: u64, rules: &Rules) -> Observation {
        let mut obs = Observation { squares: [[Reading::Class(SquareClass::Empty); 8]; 8], t: None, glimpse: false };
        for row in 0..8u8 {
            for col in 0..8u8 {
                if let Some(sq) = square_at(row, col, rules) {
                    let mut class = SquareClass::of_piece(pos.piece_at(sq));
                    if looks_like_man & (1u64 << sq) != 0 {
                        class = class.as_man();
                    }
                    obs.squares[row as usize][col as usize] = Reading::Class(class);
                }
            }
        }
        obs
    }

    pub fn with_time(mut self, t: f64) -> Observation {
        self.t = Some(t);
        self
    }

    /// The grid characters (`?` for unknown, the most likely class for probabilities).
    pub fn to_grid(&self) -> [String; 8] {
        std::array::from_fn(|row| {
            self.squares[row]
                .iter()
                .map(|r| match r {
                    Reading::Class(c) => c.to_char(),
                    Reading::Unknown => '?',
                    Reading::Probabilities(p) => {
                        let best = (0..5).max_by(|&a, &b| p[a].total_cmp(&p[b])).unwrap_or(0);
                        CLASS_CHARS[best]
                    }
                })
                .collect()
        })
    }
}

impl Observation {
    /// The observation as a JSON line of [`parse_input_line`]'s format (`grid`, `probs` when a
    /// square has probabilities, `t`): what the event log holds. Reading it back gives the same
    /// readings when the probabilities came through [`probabilities`] (as parsed ones and the
    /// vision's do).
    pub fn to_input_json(&self) -> Value {
        let mut line = serde_json::Map::new();
        let grid: Vec<String> = self
            .squares
            .iter()
            .map(|row| {
                row.iter()
                    .map(|r| match r {
                        Reading::Class(c) => c.to_char(),
                        Reading::Unknown | Reading::Probabilities(_) => '?',
                    })
                    .collect()
            })
            .collect();
        line.insert("grid".into(), grid.into());
        let has_probs = self.squares.iter().flatten().any(|r| matches!(r, Reading::Probabilities(_)));
        if has_probs {
            let probs: Vec<Value> = self
                .squares
                .iter()
                .map(|row| {
                    row.iter()
                        .map(|r| match r {
                            Reading::Probabilities(p) => p.iter().map(|&x| Value::from(x)).collect(),
                            _ => Value::Null,
                        })
                        .collect()
                })
                .collect();
            line.insert("probs".into(), probs.into());
        }
        if let Some(t) = self.t {
            line.insert("t".into(), t.into());
        }
        if self.glimpse {
            line.insert("glimpse".into(), true.into());
        }
        Value::Object(line)
    }
}

/// An operator command, as a JSON line `{"op": "..."}`.
#[derive(Clone, Debug, PartialEq)]
pub enum Command {
    /// Set up the standard start position and accept it (`Init Ready`).
    Init,
    /// Set up the standard start and check that the board really shows it.
    InitAndValid,
    /// Accept the current board (or `fen`) as the start, with `to_move` to move.
    SetStart { to_move: Option<Color>, fen: Option<String> },
    /// Undo the last accepted state.
    Back,
    /// Forget the game; nothing is tracked until the next init.
    Clear,
    /// Draw by agreement.
    Draw,
    /// `player` (1 = Black, 2 = White) resigns.
    Resign { side: Color },
    /// The operator takes the likeliest reading of an unclear board as right.
    Confirm,
    /// The operator dismisses an unclear board; the tracker waits for the next one.
    Reject,
    /// The operator enters the result: `1-0`, `0-1` (the first mover's score first, as PDN has
    /// it) or `1/2-1/2`.
    Result { pdn: String },
    /// Switch the referee: `strict` is the original program's (errors at once, held until the
    /// last valid position), otherwise tolerant (errors once a board has stayed, resynchronises).
    Referee { strict: bool },
    /// The round's tags for this board (`Event`, `Site`, `Date`, `Round`, `White`, `Black`,
    /// `Board`, as the hall's arbiter set them), by name: they replace the last ones given, and
    /// stand over the configured tags in the current game (unless it is over) and every game
    /// after it. No tags: back to the configured ones.
    Tags { tags: Vec<(String, String)> },
}

impl Command {
    /// The command as a JSON line `{"op": ...}`, as [`parse_input_line`] reads it.
    pub fn to_json(&self) -> Value {
        let player = |side: &Color| Value::from(crate::tracker::events::player_number(*side));
        match self {
            Command::Init => json!({"op": "init"}),
            Command::InitAndValid => json!({"op": "init_and_valid"}),
            Command::SetStart { to_move, fen } => {
                let mut line = serde_json::Map::new();
                line.insert("op".into(), "set_start".into());
                if let Some(side) = to_move {
                    line.insert("to_move".into(), player(side));
                }
                if let Some(fen) = fen {
                    line.insert("fen".into(), fen.clone().into());
                }
                Value::Object(line)
            }
            Command::Back => json!({"op": "back"}),
            Command::Clear => json!({"op": "clear"}),
            Command::Draw => json!({"op": "draw"}),
            Command::Resign { side } => json!({"op": "resign", "player": player(side)}),
            Command::Confirm => json!({"op": "confirm"}),
            Command::Reject => json!({"op": "reject"}),
            Command::Result { pdn } => json!({"op": "result", "result": pdn}),
            Command::Referee { strict } => json!({"op": "referee", "strict": strict}),
            Command::Tags { tags } => {
                let tags: serde_json::Map<String, Value> =
                    tags.iter().map(|(name, value)| (name.clone(), Value::from(value.as_str()))).collect();
                json!({"op": "tags", "tags": tags})
            }
        }
    }
}

/// What the tracker is given: a board state as read, or an operator command. One line of
/// `boardwatch track` input, and the `input` of every record in a board's event log: in JSON
/// (through serde) only there; between the parts of the program it stays typed.
#[derive(Clone, Debug, PartialEq)]
pub enum Input {
    /// Boxed: an observation is large next to a command.
    Observation(Box<Observation>),
    Command(Command),
}

impl Input {
    /// The JSON line of [`parse_input_line`]'s format.
    pub fn to_json(&self) -> Value {
        match self {
            Input::Observation(obs) => obs.to_input_json(),
            Input::Command(command) => command.to_json(),
        }
    }
}

impl Serialize for Input {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        self.to_json().serialize(serializer)
    }
}

impl<'de> Deserialize<'de> for Input {
    fn deserialize<D: serde::Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        parse_input_value(Value::deserialize(deserializer)?).map_err(serde::de::Error::custom)
    }
}

#[derive(Deserialize)]
struct ObservationJson {
    grid: Option<Vec<String>>,
    probs: Option<Vec<Vec<Option<ProbsJson>>>>,
    t: Option<f64>,
    #[serde(default)]
    glimpse: bool,
}

/// A square's probabilities: an array in [`CLASS_CHARS`] order (5 numbers, or 6 with the
/// "unknown" share last), or an object keyed by class character (`"."` or `"empty"`, `"b"`, `"w"`,
/// `"B"`, `"W"`, and `"?"` or `"unknown"`).
#[derive(Deserialize)]
#[serde(untagged)]
enum ProbsJson {
    Array(Vec<f64>),
    Object(std::collections::BTreeMap<String, f64>),
}

fn player_side(value: &Value) -> Option<Color> {
    match value {
        Value::Number(n) => match n.as_u64()? {
            1 => Some(Color::Black),
            2 => Some(Color::White),
            _ => None,
        },
        Value::String(s) => match s.to_ascii_lowercase().as_str() {
            "1" | "black" | "b" | "player1" | "red" => Some(Color::Black),
            "2" | "white" | "w" | "player2" | "yellow" => Some(Color::White),
            _ => None,
        },
        _ => None,
    }
}

fn parse_command(obj: &serde_json::Map<String, Value>) -> Result<Command, ObservationError> {
    let op =
        obj.get("op").and_then(Value::as_str).ok_or_else(|| ObservationError::Json("`op` must be a string".into()))?;
    let side_field = |name: &str| -> Result<Option<Color>, ObservationError> {
        match obj.get(name) {
            None | Some(Value::Null) => Ok(None),
            Some(v) => player_side(v).map(Some).ok_or_else(|| {
                ObservationError::Json(format!("`{name}`: expected 1, 2, \"black\" or \"white\", got {v}"))
            }),
        }
    };
    Ok(match op {
        "init" => Command::Init,
        "init_and_valid" => Command::InitAndValid,
        "set_start" => Command::SetStart {
            to_move: side_field("to_move")?,
            fen: obj.get("fen").and_then(Value::as_str).map(str::to_string),
        },
        "back" => Command::Back,
        "clear" => Command::Clear,
        "draw" => Command::Draw,
        "resign" => Command::Resign {
            side: side_field("player")?.ok_or_else(|| ObservationError::Json("`resign` needs `player`".into()))?,
        },
        "confirm" => Command::Confirm,
        "reject" => Command::Reject,
        "result" => Command::Result {
            pdn: obj
                .get("result")
                .and_then(Value::as_str)
                .ok_or_else(|| ObservationError::Json("`result` needs `result`: \"1-0\", \"0-1\" or \"1/2-1/2\"".into()))?
                .to_string(),
        },
        "referee" => Command::Referee {
            strict: obj
                .get("strict")
                .and_then(Value::as_bool)
                .ok_or_else(|| ObservationError::Json("`referee` needs `strict`: true or false".into()))?,
        },
        "tags" => Command::Tags { tags: parse_tags(obj.get("tags"))? },
        other => {
            return Err(ObservationError::Json(format!(
                "unknown op `{other}` (expected init, init_and_valid, set_start, back, clear, draw, resign, \
                 confirm, reject, result, referee, tags)"
            )))
        }
    })
}

/// Tags a game may be given by the round; `Result`, `GameType`, `SetUp` and `FEN` are the
/// record's own.
pub const MAX_ROUND_TAGS: usize = 16;
const MAX_TAG_VALUE: usize = 200;
const RECORD_TAGS: [&str; 4] = ["Result", "GameType", "SetUp", "FEN"];

/// `tags`: an object of PDN tag names to one-line texts, `{"Round": "3", "White": "Ann Smith"}`.
/// Returned sorted by name, so that the same tags always compare (and log) the same.
fn parse_tags(value: Option<&Value>) -> Result<Vec<(String, String)>, ObservationError> {
    let bad = |why: String| ObservationError::Json(format!("`tags`: {why}"));
    let Some(Value::Object(map)) = value else {
        return Err(bad("expected an object of tag names to texts, e.g. {\"Round\": \"3\", \"White\": \"Ann Smith\"}".into()));
    };
    if map.len() > MAX_ROUND_TAGS {
        return Err(bad(format!("{} tags, at most {MAX_ROUND_TAGS}", map.len())));
    }
    let mut tags = Vec::with_capacity(map.len());
    for (name, value) in map {
        let name_ok = name.chars().next().is_some_and(|c| c.is_ascii_alphabetic())
            && name.len() <= 40
            && name.chars().all(|c| c.is_ascii_alphanumeric() || c == '_');
        if !name_ok {
            return Err(bad(format!("{name:?} is not a PDN tag name (a letter, then letters, digits or _)")));
        }
        if RECORD_TAGS.contains(&name.as_str()) {
            return Err(bad(format!("{name} comes from the record itself and cannot be set")));
        }
        let Some(text) = value.as_str() else {
            return Err(bad(format!("{name}: expected a text, got {value}")));
        };
        if text.chars().any(char::is_control) || text.chars().count() > MAX_TAG_VALUE {
            return Err(bad(format!("{name}: one line of at most {MAX_TAG_VALUE} characters")));
        }
        tags.push((name.clone(), text.to_string()));
    }
    tags.sort();
    Ok(tags)
}

fn parse_probs(p: &ProbsJson, row: usize, col: usize) -> Result<[f32; 5], ObservationError> {
    let bad = |why: String| ObservationError::Probs(format!("square [{row}][{col}]: {why}"));
    // Five classes, then the share of "none of them".
    let mut out = [0f64; 6];
    match p {
        ProbsJson::Array(values) => {
            if values.len() != 5 && values.len() != 6 {
                return Err(bad(format!(
                    "{} numbers, expected 5 in the order . b w B W (and `?` sixth)",
                    values.len()
                )));
            }
            out[..values.len()].copy_from_slice(values);
        }
        ProbsJson::Object(map) => {
            for (key, &value) in map {
                let index = match key.as_str() {
                    "empty" => 0,
                    "?" | "unknown" => 5,
                    k => CLASS_CHARS
                        .iter()
                        .position(|c| k.len() == 1 && k.starts_with(*c))
                        .ok_or_else(|| bad(format!("unknown class `{key}` (expected . b w B W ?)")))?,
                };
                out[index] = value;
            }
        }
    }
    if out.iter().any(|v| !v.is_finite() || *v < 0.0) {
        return Err(bad("probabilities must be finite and not negative".into()));
    }
    // Nothing on any class is a square that shows none of them (a hand over it): the rest of
    // the shares is "none of these", as always, so it says nothing about what stands there.
    Ok(probabilities(out))
}

/// A square's probabilities in [`CLASS_CHARS`] order from five class shares and the share of
/// "none of these" (finite, not negative): scaled to a total of 1 when they add up to more; less
/// is left as it is (the rest unknown). A total above 1 by no more than `f32` rounding is left as
/// it is too, so that reading a written observation back changes nothing: a restarted daemon
/// hands its tracker exactly what the live run did.
pub fn probabilities(shares: [f64; 6]) -> [f32; 5] {
    /// Five `f32` roundings add less than this to a total of 1.
    const ROUNDING: f64 = 1e-6;
    let total = shares.iter().sum::<f64>();
    let scale = if total > 1.0 + ROUNDING { total } else { 1.0 };
    std::array::from_fn(|i| (shares[i] / scale) as f32)
}

/// Parse one JSON line: an observation `{"grid": [...], "probs": ..., "t": ...}` or an operator
/// command `{"op": "init" | "init_and_valid" | "set_start" | "back" | "clear" | "draw" | "resign"}`.
pub fn parse_input_line(text: &str) -> Result<Input, ObservationError> {
    parse_input_value(serde_json::from_str(text).map_err(|e| ObservationError::Json(e.to_string()))?)
}

/// [`parse_input_line`] for a line already read as JSON.
pub fn parse_input_value(value: Value) -> Result<Input, ObservationError> {
    let Value::Object(obj) = &value else {
        return Err(ObservationError::Json("expected a JSON object".into()));
    };
    if obj.contains_key("op") {
        return parse_command(obj).map(Input::Command);
    }
    let json: ObservationJson = serde_json::from_value(value).map_err(|e| ObservationError::Json(e.to_string()))?;
    let mut obs = match (&json.grid, &json.probs) {
        (Some(grid), _) => Observation::from_grid(grid)?,
        (None, Some(_)) => Observation::unknown(),
        (None, None) => return Err(ObservationError::Json("an observation needs `grid` or `probs`".into())),
    };
    if let Some(probs) = &json.probs {
        if probs.len() != 8 {
            return Err(ObservationError::Probs(format!("{} rows, expected 8", probs.len())));
        }
        for (row, cells) in probs.iter().enumerate() {
            if cells.len() != 8 {
                return Err(ObservationError::Probs(format!("row {row} has {} squares, expected 8", cells.len())));
            }
            for (col, cell) in cells.iter().enumerate() {
                // `null` keeps the grid's reading for that square.
                if let Some(p) = cell {
                    obs.squares[row][col] = Reading::Probabilities(parse_probs(p, row, col)?);
                }
            }
        }
    }
    obs.t = json.t;
    obs.glimpse = json.glimpse;
    Ok(Input::Observation(Box::new(obs)))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::draughts::rules::Variant;

    const START: [&str; 8] =
        [".b.b.b.b", "b.b.b.b.", ".b.b.b.b", "........", "........", "w.w.w.w.", ".w.w.w.w", "w.w.w.w."];

    #[test]
    fn grid_round_trips_and_matches_the_start_position() {
        let obs = Observation::from_grid(&START).unwrap();
        assert_eq!(obs.to_grid().map(|s| s.to_string()), START.map(str::to_string));
        let rules = Variant::Pool.rules();
        let seen = Observation::of_position(&Position::start(&rules), 0, &rules);
        assert_eq!(seen.to_grid(), obs.to_grid());
    }

    #[test]
    fn tags_commands_read_back_sorted_and_bad_tags_are_refused_with_why() {
        let line = r#"{"op": "tags", "tags": {"White": "Ann Smith", "Round": "3", "Board": "3"}}"#;
        let Input::Command(command) = parse_input_line(line).unwrap() else { panic!() };
        let tags = [("Board", "3"), ("Round", "3"), ("White", "Ann Smith")].map(|(n, v)| (n.to_string(), v.to_string())).to_vec();
        assert_eq!(command, Command::Tags { tags });
        let Input::Command(back) = parse_input_value(command.to_json()).unwrap() else { panic!() };
        assert_eq!(back, command);
        let error = |line: &str| parse_input_line(line).unwrap_err().to_string();
        assert!(error(r#"{"op": "tags"}"#).contains("expected an object"));
        assert!(error(r#"{"op": "tags", "tags": {"Result": "1-0"}}"#).contains("Result comes from the record"));
        assert!(error(r#"{"op": "tags", "tags": {"Round 3": "x"}}"#).contains("not a PDN tag name"));
        assert!(error(r#"{"op": "tags", "tags": {"White": 3}}"#).contains("expected a text"));
        let tab = error(r#"{"op": "tags", "tags": {"White": "a\tb"}}"#);
        assert!(tab.contains("one line"), "{tab}");
    }

    #[test]
    fn mirrored_boards_put_pieces_on_the_other_colour() {
        let rules = Variant::Italian.rules();
        let seen = Observation::of_position(&Position::start(&rules), 0, &rules);
        assert_eq!(seen.to_grid()[0], "b.b.b.b.");
        assert_eq!(seen.to_grid()[7], ".w.w.w.w");
    }

    #[test]
    fn observations_round_trip_through_their_json_line() {
        let mut obs = Observation::from_grid(&START).unwrap().with_time(2.25);
        obs.squares[3][2] = Reading::Unknown;
        obs.squares[4][1] = Reading::Probabilities([0.1, 0.7, 0.1, 0.05, 0.0]);
        let line = obs.to_input_json().to_string();
        let Input::Observation(back) = parse_input_line(&line).unwrap() else { panic!("{line}") };
        assert_eq!(*back, obs);
        // A square no class explains at all (a hand over it) reads back too.
        obs.squares[5][0] = Reading::Probabilities([0.0; 5]);
        let line = obs.to_input_json().to_string();
        let Input::Observation(back) = parse_input_line(&line).unwrap() else { panic!("{line}") };
        assert_eq!(*back, obs);
        // A glimpse stays one.
        obs.glimpse = true;
        let line = obs.to_input_json().to_string();
        assert!(line.contains("\"glimpse\":true"), "{line}");
        let Input::Observation(back) = parse_input_line(&line).unwrap() else { panic!("{line}") };
        assert_eq!(*back, obs);
        let plain = Observation::from_grid(&START).unwrap();
        assert!(!plain.to_input_json().to_string().contains("probs"));
    }

    #[test]
    fn probabilities_read_back_unchanged_even_when_rounding_pushes_them_over_one() {
        // Thirds round up in f32: their sum is a hair above 1, and must not be scaled again.
        let p = probabilities([1.0, 1.0, 1.0, 0.0, 0.0, 0.0]);
        assert!(p.iter().map(|&x| f64::from(x)).sum::<f64>() > 1.0, "{p:?}");
        let mut obs = Observation::from_grid(&START).unwrap();
        obs.squares[0][1] = Reading::Probabilities(p);
        let input = Input::Observation(Box::new(obs));
        let line = serde_json::to_string(&input).unwrap();
        assert_eq!(serde_json::from_str::<Input>(&line).unwrap(), input);
    }

    #[test]
    fn commands_round_trip_through_their_json_line() {
        for line in [
            r#"{"fen":"W:W18:B14","op":"set_start","to_move":2}"#,
            r#"{"op":"resign","player":1}"#,
            r#"{"op":"result","result":"0-1"}"#,
            r#"{"op":"init"}"#,
        ] {
            let input: Input = serde_json::from_str(line).unwrap();
            assert!(matches!(input, Input::Command(_)));
            assert_eq!(serde_json::to_string(&input).unwrap(), line);
        }
        let err = serde_json::from_str::<Input>(r#"{"op":"dance"}"#).unwrap_err().to_string();
        assert!(err.contains("unknown op `dance`"), "{err}");
    }

    #[test]
    fn bad_grids_are_rejected_with_their_place() {
        assert_eq!(Observation::from_grid(&START[..7]), Err(ObservationError::Rows(7)));
        let mut rows = START.map(str::to_string);
        rows[2] = ".b.x.b.b".into();
        assert_eq!(Observation::from_grid(&rows), Err(ObservationError::BadChar { row: 2, col: 3, ch: 'x' }));
        rows[2] = ".b.b.b".into();
        assert_eq!(Observation::from_grid(&rows), Err(ObservationError::RowLength { row: 2, len: 6 }));
    }

    #[test]
    fn parses_lines_with_probs_time_and_commands() {
        let grid = serde_json::to_string(&START).unwrap();
        let line = format!(
            r#"{{"grid": {grid}, "t": 1.5, "probs": [[null, [0.8, 0.2, 0, 0, 0], null, null, null, null, null, {{"empty": 1, "b": 3}}], [], [], [], [], [], [], []]}}"#
        );
        assert!(matches!(parse_input_line(&line), Err(ObservationError::Probs(_))), "short rows are refused");
        let row = r#"[null, [0.8, 0.2, 0, 0, 0], [0.3, 0.3, 0, 0, 0, 0.4], null, null, {"w": 0.5, "?": 0.5}, null, {"empty": 1, "b": 3}]"#;
        let nulls = "[null, null, null, null, null, null, null, null]";
        let line = format!(
            r#"{{"grid": {grid}, "t": 1.5, "probs": [{row}, {nulls}, {nulls}, {nulls}, {nulls}, {nulls}, {nulls}, {nulls}]}}"#
        );
        let Input::Observation(obs) = parse_input_line(&line).unwrap() else { panic!("not an observation") };
        assert_eq!(obs.t, Some(1.5));
        assert_eq!(obs.squares[0][1], Reading::Probabilities([0.8, 0.2, 0.0, 0.0, 0.0]));
        assert_eq!(obs.squares[0][7], Reading::Probabilities([0.25, 0.75, 0.0, 0.0, 0.0]));
        assert_eq!(obs.squares[0][2], Reading::Probabilities([0.3, 0.3, 0.0, 0.0, 0.0]), "40% unknown");
        assert_eq!(obs.squares[0][5], Reading::Probabilities([0.0, 0.0, 0.5, 0.0, 0.0]));
        assert_eq!(obs.squares[0][3], Reading::Class(SquareClass::BlackMan));

        assert_eq!(parse_input_line(r#"{"op": "back"}"#), Ok(Input::Command(Command::Back)));
        assert_eq!(
            parse_input_line(r#"{"op": "set_start", "to_move": 2}"#),
            Ok(Input::Command(Command::SetStart { to_move: Some(Color::White), fen: None }))
        );
        assert_eq!(
            parse_input_line(r#"{"op": "resign", "player": "black"}"#),
            Ok(Input::Command(Command::Resign { side: Color::Black }))
        );
        assert_eq!(
            parse_input_line(r#"{"op": "result", "result": "0-1"}"#),
            Ok(Input::Command(Command::Result { pdn: "0-1".into() }))
        );
        assert_eq!(parse_input_line(r#"{"op": "confirm"}"#), Ok(Input::Command(Command::Confirm)));
        assert_eq!(
            parse_input_line(r#"{"op": "referee", "strict": true}"#),
            Ok(Input::Command(Command::Referee { strict: true }))
        );
        assert!(parse_input_line(r#"{"op": "referee", "strict": "yes"}"#).is_err());
        assert!(parse_input_line(r#"{"op": "result"}"#).is_err());
        assert!(parse_input_line(r#"{"op": "dance"}"#).is_err());
        assert!(parse_input_line(r#"{"grid": 3}"#).is_err());
        assert!(parse_input_line("not json").is_err());
        assert!(parse_input_line(r#"{"t": 3}"#).is_err());
    }
}
