//! The game as the tracker wrote it down: moves with the position after each, setups made by the
//! operator, the result; and its PDN text.

use serde::{Deserialize, Serialize};

use crate::draughts::pdn::{clock_comment_tenths, write_game, GameResult as PdnResult, WrittenMove};
use crate::draughts::position::Color;
use crate::draughts::rules::Variant;

/// One recorded move.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct TrackedMove {
    pub side: Color,
    /// PDN move text (full path only where ambiguous).
    pub text: String,
    /// Every square the piece stood on.
    pub path: String,
    /// The position after the move.
    pub fen_after: String,
    /// Time of the observation that completed it.
    pub t: Option<f64>,
    /// Never seen on the board: the camera missed its final state, and the tracker inferred it
    /// from a later board that only this move and the ones after it explain.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub inferred: bool,
    /// Other moves that give the same board after the plies of one reading: the board cannot
    /// tell which was played (two captures that end alike, answered by the same recapture).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub alternatives: Vec<String>,
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub enum RecordItem {
    Move(TrackedMove),
    /// The operator set the board as a new start in the middle of the game (PDN 3.0 setup
    /// command `/FEN "..."/`).
    Setup {
        fen: String,
    },
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub enum Outcome {
    Win(Color),
    Draw,
}

impl Outcome {
    /// As PDN scores it: the first mover's score first, so `1-0` is a Black win in English and
    /// pool (as the ACF archive defines it) and a White win in the variants where White starts.
    pub fn to_pdn(self, variant: Variant) -> PdnResult {
        match self {
            Outcome::Draw => PdnResult::Draw,
            Outcome::Win(side) if side == variant.rules().first_mover => PdnResult::FirstPlayerWin,
            Outcome::Win(_) => PdnResult::SecondPlayerWin,
        }
    }

    /// The PDN result text (`1-0`, `0-1`, `1/2-1/2`).
    pub fn pdn(self, variant: Variant) -> &'static str {
        self.to_pdn(variant).as_str()
    }
}

/// One game: where it started, what happened, how it ended.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct TrackedGame {
    pub variant: Variant,
    /// The start position when it is not the standard one (PDN `FEN` tag).
    pub setup_fen: Option<String>,
    /// The side to move at the start.
    pub first_to_move: Color,
    pub items: Vec<RecordItem>,
    pub result: Option<Outcome>,
    /// The round's tags (`Round`, `White`, ... from the hall), over the tags the writer is given.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub tags: Vec<(String, String)>,
}

impl TrackedGame {
    pub fn new(variant: Variant, setup_fen: Option<String>, first_to_move: Color) -> TrackedGame {
        TrackedGame { variant, setup_fen, first_to_move, items: Vec::new(), result: None, tags: Vec::new() }
    }

    /// The game with the round's tags.
    pub fn with_tags(mut self, tags: Vec<(String, String)>) -> TrackedGame {
        self.tags = tags;
        self
    }

    /// The game's tag `name`, if the round set it.
    pub fn tag(&self, name: &str) -> Option<&str> {
        self.tags.iter().find(|(n, _)| n == name).map(|(_, v)| v.as_str())
    }

    pub fn moves(&self) -> impl Iterator<Item = &TrackedMove> {
        self.items.iter().filter_map(|item| match item {
            RecordItem::Move(m) => Some(m),
            RecordItem::Setup { .. } => None,
        })
    }

    /// The move texts in order (setups left out).
    pub fn move_texts(&self) -> Vec<String> {
        self.moves().map(|m| m.text.clone()).collect()
    }

    pub fn is_empty(&self) -> bool {
        self.items.is_empty() && self.setup_fen.is_none() && self.result.is_none()
    }

    /// The time each side used, from the moves' times: a move took the time since the move
    /// before it (the first one: since `started`, the game's first observation). A move without
    /// a time leaves it and the next one uncounted. `None` when no move and no start is timed.
    pub fn time_used(&self, started: Option<f64>) -> Option<TimeUsed> {
        let mut used = TimeUsed { black: 0.0, white: 0.0 };
        let mut timed = started.is_some();
        let mut before = started;
        for m in self.moves() {
            if let (Some(from), Some(to)) = (before, m.t) {
                let spent = (to - from).max(0.0);
                match m.side {
                    Color::Black => used.black += spent,
                    Color::White => used.white += spent,
                }
            }
            timed |= m.t.is_some();
            before = m.t;
        }
        timed.then_some(used)
    }
}

/// Seconds each side used in a game (see [`TrackedGame::time_used`]): the source's clock (a
/// camera's or a video's), as the board shows it; there is no game clock to read.
#[derive(Clone, Copy, Debug, PartialEq, Serialize)]
pub struct TimeUsed {
    pub black: f64,
    pub white: f64,
}

/// The PDN text of the games, through the project's PDN writer: the seven standard tags,
/// `GameType`, `SetUp`/`FEN` for a non-standard start, numbered movetext with the operator's
/// setups as `/FEN "..."/` commands, and the result.
pub fn write_pdn(games: &[TrackedGame]) -> String {
    write_pdn_with_tags(games, &[])
}

/// As [`write_pdn`], with tags for every game (`Event`, `Site`, `White`, ...: the daemon's game
/// tags from its configuration), under each game's own (the round's). `Result`, `GameType`,
/// `SetUp` and `FEN` come from the record.
pub fn write_pdn_with_tags(games: &[TrackedGame], tags: &[(String, String)]) -> String {
    games.iter().map(|game| write_game_pdn(game, tags)).collect()
}

fn write_game_pdn(game: &TrackedGame, extra_tags: &[(String, String)]) -> String {
    let rules = game.variant.rules();
    let from_record = ["Result", "GameType", "SetUp", "FEN"];
    let mut tags: Vec<(String, String)> =
        extra_tags.iter().filter(|(name, _)| !from_record.contains(&name.as_str())).cloned().collect();
    // The round's tags replace the configured ones of the same name, in place.
    for (name, value) in game.tags.iter().filter(|(name, _)| !from_record.contains(&name.as_str())) {
        match tags.iter_mut().find(|(n, _)| n == name) {
            Some(tag) => tag.1 = value.clone(),
            None => tags.push((name.clone(), value.clone())),
        }
    }
    tags.push(("GameType".to_string(), game.variant.game_type().to_string()));
    if let Some(fen) = &game.setup_fen {
        tags.push(("SetUp".to_string(), "1".to_string()));
        tags.push(("FEN".to_string(), fen.clone()));
    }
    let mut moves = Vec::new();
    let mut setup = None;
    for item in &game.items {
        match item {
            RecordItem::Setup { fen } => setup = Some(fen.clone()),
            RecordItem::Move(m) => {
                // The time of the move (video time in a replay) as a PDN clock comment.
                let mut notes = Vec::new();
                if m.inferred {
                    notes.push("inferred: not seen on the board".to_string());
                }
                if !m.alternatives.is_empty() {
                    notes.push(format!("or {}: the board cannot tell", m.alternatives.join(" or ")));
                }
                let notes = (!notes.is_empty()).then(|| notes.join("; "));
                let comment = match (m.t.map(clock_comment_tenths), notes) {
                    (Some(clock), Some(notes)) => Some(format!("{clock} {notes}")),
                    (clock, notes) => clock.or(notes),
                };
                moves.push(WrittenMove { text: m.text.clone(), comment, setup_before: setup.take() })
            }
        }
    }
    let result = game.result.map_or(PdnResult::Unknown, |r| r.to_pdn(game.variant));
    let text = write_game(&tags, &moves, &result, 1, game.first_to_move != rules.first_mover);
    match setup {
        // The board was set anew after the last move: the writer only puts setups before moves,
        // so this one goes in front of the result token.
        Some(fen) => {
            let ending = format!("{}\n\n", result.as_str());
            let body = text.strip_suffix(&ending).unwrap_or(&text).trim_end();
            format!("{body} /FEN \"{fen}\"/ {ending}")
        }
        None => text,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn mv(side: Color, text: &str) -> RecordItem {
        RecordItem::Move(TrackedMove { side, text: text.into(), path: text.into(), fen_after: String::new(), t: None, inferred: false, alternatives: Vec::new() })
    }

    const SEVEN_TAGS_WITHOUT_RESULT: &str =
        "[Event \"?\"]\n[Site \"?\"]\n[Date \"????.??.??\"]\n[Round \"?\"]\n[White \"?\"]\n[Black \"?\"]\n";

    #[test]
    fn pdn_has_numbered_moves_setups_and_the_result() {
        let mut game = TrackedGame::new(Variant::English, None, Color::Black);
        game.items = vec![
            mv(Color::Black, "11-15"),
            mv(Color::White, "23-19"),
            mv(Color::Black, "8-11"),
            RecordItem::Setup { fen: "W:W19,23:B11,15".into() },
            mv(Color::White, "19-16"),
        ];
        game.result = Some(Outcome::Win(Color::Black));
        let text = write_pdn(&[game]);
        let expected = format!(
            "{SEVEN_TAGS_WITHOUT_RESULT}[Result \"1-0\"]\n[GameType \"21\"]\n\n\
             1. 11-15 23-19 2. 8-11 /FEN \"W:W19,23:B11,15\"/ 2... 19-16 1-0\n\n"
        );
        assert_eq!(text, expected);
    }

    #[test]
    fn each_side_used_the_time_since_the_move_before() {
        let timed = |side, text, t: Option<f64>| match mv(side, text) {
            RecordItem::Move(m) => RecordItem::Move(TrackedMove { t, ..m }),
            setup => setup,
        };
        let mut game = TrackedGame::new(Variant::English, None, Color::Black);
        assert_eq!(game.time_used(None), None, "nothing timed");
        assert_eq!(game.time_used(Some(5.0)), Some(TimeUsed { black: 0.0, white: 0.0 }));
        game.items = vec![
            timed(Color::Black, "11-15", Some(12.0)),
            timed(Color::White, "23-19", Some(20.5)),
            timed(Color::Black, "8-11", Some(21.0)),
            timed(Color::White, "22-17", None),
            timed(Color::Black, "4-8", Some(40.0)),
            timed(Color::White, "17-13", Some(43.0)),
        ];
        // Black: 12-2 and 21-20.5 (4-8 follows an untimed move: not counted); White: 20.5-12, 43-40.
        assert_eq!(game.time_used(Some(2.0)), Some(TimeUsed { black: 10.5, white: 11.5 }));
        assert_eq!(game.time_used(None), Some(TimeUsed { black: 0.5, white: 11.5 }), "no start: the first move is not counted");
    }

    #[test]
    fn configured_tags_are_written_and_record_tags_win() {
        let mut game = TrackedGame::new(Variant::English, None, Color::Black);
        game.items = vec![mv(Color::Black, "11-15")];
        let tags = [("White", "Ann"), ("Event", "Club night"), ("GameType", "99")]
            .map(|(k, v)| (k.to_string(), v.to_string()));
        let text = write_pdn_with_tags(&[game], &tags);
        assert!(text.starts_with("[Event \"Club night\"]\n"), "{text}");
        assert!(text.contains("[White \"Ann\"]\n") && text.contains("[GameType \"21\"]\n"), "{text}");
        assert!(!text.contains("99"), "{text}");
    }

    #[test]
    fn white_first_variants_setup_tags_and_a_last_setup() {
        let mut game = TrackedGame::new(Variant::Russian, Some("B:Wc3:Bd6".into()), Color::Black);
        game.items =
            vec![mv(Color::Black, "d6-e5"), mv(Color::White, "c3-d4"), RecordItem::Setup { fen: "B:Wd4:Be5".into() }];
        let text = write_pdn(&[game]);
        assert!(text.contains("[SetUp \"1\"]\n[FEN \"B:Wc3:Bd6\"]"), "{text}");
        assert!(text.ends_with("\n1... d6-e5 2. c3-d4 /FEN \"B:Wd4:Be5\"/ *\n\n"), "{text}");
        assert_eq!(Outcome::Win(Color::White).pdn(Variant::Russian), "1-0");
        assert_eq!(Outcome::Win(Color::White).pdn(Variant::Pool), "0-1");
        assert_eq!(Outcome::Draw.pdn(Variant::Pool), "1/2-1/2");
    }
}
