//! A game as a camera recording: still frames of each position, and between them a hand that
//! moves the piece the way people do. After a capture the capturing piece first stands on its
//! landing square with the captured pieces still on the board; they are then taken off one by
//! one. A man reaching the far row first stands there uncrowned, then is swapped for a king.
//!
//! Frame labels follow the shared reference recording: `start`, `hand-N` (a hand over the board
//! during move N, 0-based), `partial-N` (move N made, captured pieces still on the board),
//! `uncrowned-N`, `ply-N` (the position after move N, still) and `end`.

use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;
use serde::{Deserialize, Serialize};

use super::hand::{Hand, SKIN_TONES};
use super::scene::Scene;
use crate::draughts::fen::{parse_fen, to_fen, FenError};
use crate::draughts::movegen::Move;
use crate::draughts::notation::{resolve_move, seen_at, square_number, MoveError, WrittenMove};
use crate::draughts::pdn::GameRecord;
use crate::draughts::{Color, Piece, Position, Rules, Variant};

#[derive(Debug, thiserror::Error)]
pub enum RecordingError {
    #[error("the game's FEN tag: {0}")]
    BadFen(#[from] FenError),
    #[error("ply {ply} `{text}`: {source}")]
    BadMove { ply: usize, text: String, source: MoveError },
    #[error("the game has no moves")]
    NoMoves,
    #[error("{name} = {value} is outside the allowed range {min}..={max}")]
    BadOption { name: &'static str, value: f64, min: f64, max: f64 },
}

/// One move as the truth file describes it (the shared reference recording's fields).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct PlyRecord {
    /// The move as the game wrote it.
    pub pdn: String,
    /// Squares visited, numbered 1-32 as seen (Black's men start on 1-12, at the top).
    pub steps: Vec<u8>,
    /// Captured squares in the order they were jumped.
    pub captures: Vec<u8>,
    pub fen_after: String,
    /// The visited squares as (row, col) of the grid.
    pub steps_rc: Vec<[u8; 2]>,
}

/// A game resolved against the rules: positions, moves and their records.
#[derive(Clone, Debug)]
pub struct GameMoves {
    pub rules: Rules,
    pub start: Position,
    pub moves: Vec<Move>,
    pub plies: Vec<PlyRecord>,
}

impl GameMoves {
    /// Resolves the mainline of a PDN game (from its FEN tag if it has one), keeping at most
    /// `max_plies` moves.
    pub fn from_record(record: &GameRecord, variant: Variant, max_plies: Option<usize>) -> Result<GameMoves, RecordingError> {
        let rules = variant.rules();
        let start = match record.tag("FEN") {
            Some(fen) => parse_fen(fen, &rules)?,
            None => Position::start(&rules),
        };
        let mut position = start;
        let mut moves = Vec::new();
        let mut plies = Vec::new();
        for (ply, recorded) in record.moves.iter().take(max_plies.unwrap_or(usize::MAX)).enumerate() {
            let token = &recorded.token;
            let written = WrittenMove::from(token);
            let m = resolve_move(&written, &token.text, &position, &rules)
                .map_err(|source| RecordingError::BadMove { ply, text: token.text.clone(), source })?;
            position = position.play(&m);
            plies.push(PlyRecord {
                pdn: token.text.clone(),
                steps: m.path().iter().map(|&s| square_number(s, &rules)).collect(),
                captures: m.captured_in_order().iter().map(|&s| square_number(s, &rules)).collect(),
                fen_after: to_fen(&position, &rules),
                steps_rc: m.path().iter().map(|&s| {
                    let (row, col) = seen_at(s, &rules);
                    [row, col]
                }).collect(),
            });
            moves.push(m);
        }
        if moves.is_empty() {
            return Err(RecordingError::NoMoves);
        }
        Ok(GameMoves { rules, start, moves, plies })
    }

    pub fn final_position(&self) -> Position {
        self.moves.iter().fold(self.start, |p, m| p.play(m))
    }
}

/// Timing and camera shake of a recording.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct RecordingOptions {
    pub fps: f64,
    /// How long each position stands still between moves.
    pub still_seconds: f64,
    /// Camera shake between frames, in degrees of yaw and tilt (tripod on a table).
    pub shake_deg: f64,
    /// Seeds the hands' paths, the pauses and the shake.
    pub seed: u64,
}

impl Default for RecordingOptions {
    fn default() -> Self {
        RecordingOptions { fps: 10.0, still_seconds: 1.0, shake_deg: 0.08, seed: 0 }
    }
}

impl RecordingOptions {
    pub fn validate(&self) -> Result<(), RecordingError> {
        let check = |name: &'static str, value: f64, min: f64, max: f64| {
            if value.is_finite() && (min..=max).contains(&value) {
                Ok(())
            } else {
                Err(RecordingError::BadOption { name, value, min, max })
            }
        };
        check("fps", self.fps, 1.0, 120.0)?;
        check("still_seconds", self.still_seconds, 0.1, 30.0)?;
        check("shake_deg", self.shake_deg, 0.0, 2.0)
    }
}

/// One frame to render.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct PlannedFrame {
    pub label: String,
    pub grid: [String; 8],
    pub hand: Option<Hand>,
}

/// The board as editable cells.
type Board = [[char; 8]; 8];

fn board_of(position: &Position) -> Board {
    position.to_grid().map(|row| {
        let mut cells = ['.'; 8];
        for (cell, c) in cells.iter_mut().zip(row.chars()) {
            *cell = c;
        }
        cells
    })
}

fn grid_of(board: &Board) -> [String; 8] {
    board.map(|row| row.iter().collect())
}

/// Board point (x, y) of a square's centre.
fn center_of(square: u8) -> [f64; 2] {
    [(square % 8) as f64 + 0.5, (square / 8) as f64 + 0.5]
}

fn cell(board: &mut Board, square: u8) -> &mut char {
    &mut board[(square / 8) as usize][(square % 8) as usize]
}

fn ease(t: f64) -> f64 {
    t * t * (3.0 - 2.0 * t)
}

/// Builds the frame list of a recording.
struct Planner<'a> {
    frames: Vec<PlannedFrame>,
    rng: ChaCha8Rng,
    options: &'a RecordingOptions,
    /// Height of a man, to pinch it at its middle.
    man_height: f64,
    /// Each player's hand (skin tone, size, handedness), and how far from the middle of their
    /// edge they sit, in squares.
    hands: [(Hand, f64); 2],
    /// Kings are two men stacked: crowning puts a second man on top.
    stacked_kings: bool,
}

impl Planner<'_> {
    fn still(&mut self, board: &Board, label: &str, seconds: f64) {
        // People do not pause for exactly the same time between moves.
        let seconds = seconds * self.rng.gen_range(0.8..1.25);
        let count = (seconds * self.options.fps).round().max(1.0) as usize;
        for _ in 0..count {
            self.frames.push(PlannedFrame { label: label.to_string(), grid: grid_of(board), hand: None });
        }
    }

    fn hand_frame(&mut self, board: &Board, ply: usize, hand: Hand) {
        self.frames.push(PlannedFrame { label: format!("hand-{ply}"), grid: grid_of(board), hand: Some(hand) });
    }

    /// The player's hand over board point `at`, fingertips at `height`, arm towards the player.
    fn hand_at(&mut self, player: Color, at: [f64; 2], height: f64, held: Option<char>) -> Hand {
        let (mut hand, seat) = self.hands[player as usize].clone();
        // The arm points back to where the player sits, a little off the middle of their edge.
        let body = match player {
            Color::Black => [4.0 + seat, -7.0],
            Color::White => [4.0 + seat, 15.0],
        };
        let back = [body[0] - at[0], body[1] - at[1]];
        hand.approach_deg = back[0].atan2(back[1]).to_degrees() + self.rng.gen_range(-4.0..4.0);
        hand.target = at;
        hand.height = height;
        hand.held = held;
        hand
    }

    /// Hand frames moving from `from` to `to` (board points and heights), `steps` of them,
    /// the last at `to`.
    #[allow(clippy::too_many_arguments)]
    fn travel(&mut self, board: &Board, ply: usize, player: Color, from: ([f64; 2], f64), to: ([f64; 2], f64), steps: usize, held: Option<char>) {
        for k in 1..=steps {
            let t = ease(k as f64 / steps as f64);
            let at = [from.0[0] + (to.0[0] - from.0[0]) * t, from.0[1] + (to.0[1] - from.0[1]) * t];
            // Hands arc up a little between two points.
            let lift = (t * std::f64::consts::PI).sin() * 0.25;
            let height = from.1 + (to.1 - from.1) * t + lift;
            let hand = self.hand_at(player, at, height, held);
            self.hand_frame(board, ply, hand);
        }
    }

    /// Where a hand comes in from and goes back to: over the player's edge of the board,
    /// raised, still in view (a frame labelled `hand-N` shows a hand).
    fn away(&self, player: Color, near: [f64; 2]) -> ([f64; 2], f64) {
        let y = match player {
            Color::Black => -1.2,
            Color::White => 9.2,
        };
        ([near[0] * 0.7 + 1.2, y], 1.6)
    }

    fn pinch(&self) -> f64 {
        self.man_height * 0.55
    }

    fn play(&mut self, board: &mut Board, ply: usize, m: &Move, mover: Color) {
        let path = m.path().to_vec();
        let from = path[0];
        let piece = *cell(board, from);
        let carry = self.pinch() + 0.35;
        let pinch = self.pinch();

        // Reach for the piece, lift it, carry it along its path, put it down, withdraw.
        let start = (center_of(from), pinch);
        let away = self.away(mover, center_of(from));
        self.travel(board, ply, mover, away, start, 3, None);
        *cell(board, from) = '.';
        let mut here = (center_of(from), carry);
        for &step in &path[1..] {
            let next = (center_of(step), carry);
            self.travel(board, ply, mover, here, next, 2, Some(piece));
            here = next;
        }
        let to = *path.last().unwrap_or(&from);
        *cell(board, to) = piece;
        let hand = self.hand_at(mover, center_of(to), pinch, None);
        self.hand_frame(board, ply, hand);
        let back = self.away(mover, center_of(to));
        self.travel(board, ply, mover, (center_of(to), pinch), back, 2, None);

        let captured = m.captured_in_order();
        if !captured.is_empty() {
            self.still(board, &format!("partial-{ply}"), self.options.still_seconds * 0.8);
            // Take the captured pieces off one by one, then withdraw with them.
            let mut here = self.away(mover, center_of(captured[0]));
            let mut holding = None;
            for &square in &captured {
                let target = (center_of(square), pinch);
                self.travel(board, ply, mover, here, target, 2, holding);
                holding = Some(*cell(board, square));
                *cell(board, square) = '.';
                here = (center_of(square), carry);
            }
            let back = self.away(mover, here.0);
            self.travel(board, ply, mover, here, back, 2, holding);
        }

        if m.crowns {
            self.still(board, &format!("uncrowned-{ply}"), self.options.still_seconds * 0.8);
            let king = Piece::King(mover).grid_char();
            let man = Piece::Man(mover).grid_char();
            // The hand brings a second man to stack on this one, or a king piece, and then
            // leaves with the man it replaced.
            let (brought, taken) = if self.stacked_kings { (man, None) } else { (king, Some(man)) };
            let target = (center_of(to), pinch + self.man_height);
            let here = self.away(mover, center_of(to));
            self.travel(board, ply, mover, here, target, 2, Some(brought));
            *cell(board, to) = king;
            let hand = self.hand_at(mover, center_of(to), pinch + self.man_height, None);
            self.hand_frame(board, ply, hand);
            let back = self.away(mover, center_of(to));
            self.travel(board, ply, mover, (center_of(to), carry + self.man_height), back, 2, taken);
        }
        self.still(board, &format!("ply-{ply}"), self.options.still_seconds);
    }
}

/// The frames of a recording of `game` in `scene`: about `still_seconds` of each position, hands
/// making the moves in between.
pub fn plan_recording(game: &GameMoves, scene: &Scene, options: &RecordingOptions) -> Result<Vec<PlannedFrame>, RecordingError> {
    options.validate()?;
    let mut rng = ChaCha8Rng::seed_from_u64(options.seed ^ 0x000F_11A4_ED00_0003);
    let player_hand = |rng: &mut ChaCha8Rng| {
        let hand = Hand {
            left_handed: rng.gen_bool(0.1),
            skin: SKIN_TONES[rng.gen_range(0..SKIN_TONES.len())],
            size: rng.gen_range(1.0..1.2),
            ..Hand::reaching([0.0, 0.0], 0.0)
        };
        (hand, rng.gen_range(-1.5..1.5))
    };
    let hands = [player_hand(&mut rng), player_hand(&mut rng)];
    let mut planner = Planner {
        frames: Vec::new(),
        rng,
        options,
        man_height: scene.pieces.height,
        hands,
        stacked_kings: scene.pieces.stacked_kings,
    };
    let mut board = board_of(&game.start);
    let mut position = game.start;
    planner.still(&board, "start", options.still_seconds * 2.0);
    for (ply, m) in game.moves.iter().enumerate() {
        planner.play(&mut board, ply, m, position.to_move);
        position = position.play(m);
        debug_assert_eq!(grid_of(&board), position.to_grid());
    }
    planner.still(&board, "end", options.still_seconds);
    Ok(planner.frames)
}

/// The scene of frame `index`: the camera shaken a little, as on a real tripod.
pub fn frame_scene(scene: &Scene, options: &RecordingOptions, index: usize) -> Scene {
    let mut rng = ChaCha8Rng::seed_from_u64(options.seed ^ (index as u64).wrapping_mul(0x9E37_79B9_7F4A_7C15));
    let mut shaken = scene.clone();
    let shake = options.shake_deg;
    if shake > 0.0 {
        shaken.camera.yaw_deg += rng.gen_range(-shake..=shake);
        let tilt = shaken.camera.tilt_deg + rng.gen_range(-shake..=shake) * 0.5;
        shaken.camera.tilt_deg = tilt.clamp(0.0, 30.0);
        for offset in &mut shaken.camera.target_offset {
            *offset = (*offset + rng.gen_range(-shake..=shake) * 0.02).clamp(-4.0, 4.0);
        }
    }
    shaken
}

/// The noise seed of frame `index`.
pub fn frame_seed(options: &RecordingOptions, index: usize) -> u64 {
    super::texture::mix64(options.seed ^ (index as u64 + 1).wrapping_mul(0xD1B5_4A32_D192_ED03))
}

/// The truth file of a recording, in the shared reference recording's format.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct RecordingTruth {
    pub source: String,
    pub game_index: usize,
    pub tags: std::collections::BTreeMap<String, String>,
    pub variant: Variant,
    pub palette: String,
    pub scene: String,
    pub tilt: f64,
    pub yaw: f64,
    pub fps: f64,
    pub frames: usize,
    pub plies: Vec<PlyRecord>,
    pub start_grid: [String; 8],
    pub final_grid: [String; 8],
    pub frame_labels: Vec<String>,
    /// The frames' image files, in order.
    pub frame_files: Vec<String>,
    /// The scene the frames were rendered in (before the camera shake).
    pub scene_params: Scene,
    pub options: RecordingOptions,
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::draughts::pdn::{read_games, ReadMode};
    use crate::synth::scene::Palette;

    fn game(text: &str) -> GameMoves {
        let records = read_games(text, ReadMode::Lenient).unwrap();
        GameMoves::from_record(&records[0], Variant::English, None).unwrap()
    }

    #[test]
    fn captures_are_shown_in_stages() {
        // 3. 15x22 is a capture; the labels go hand, partial, hand, ply.
        let g = game("[GameType \"21\"]\n1. 10-15 23-19 2. 7-10 22-18 3. 15x22 *");
        assert_eq!(g.plies[4].pdn, "15x22");
        assert_eq!(g.plies[4].captures, vec![18]);
        let scene = Scene::overhead(Palette::FourColour, 320, 240);
        let frames = plan_recording(&g, &scene, &RecordingOptions::default()).unwrap();
        let mut runs: Vec<&str> = Vec::new();
        for f in &frames {
            if runs.last() != Some(&f.label.as_str()) {
                runs.push(&f.label);
            }
        }
        assert_eq!(runs[0], "start");
        let capture_runs: Vec<&str> = runs.iter().copied().skip_while(|l| *l != "hand-4").collect();
        assert_eq!(capture_runs, ["hand-4", "partial-4", "hand-4", "ply-4", "end"]);
        // While partial, the captured man is still on square 18 (row 4, col 3).
        let partial = frames.iter().find(|f| f.label == "partial-4").unwrap();
        assert_eq!(partial.grid[4].as_bytes()[3], b'w');
        assert_eq!(frames.last().unwrap().grid, g.final_position().to_grid());
        assert!(frames.iter().all(|f| f.hand.is_some() == f.label.starts_with("hand-")));
    }

    #[test]
    fn crowning_shows_the_uncrowned_man_first() {
        let g = game("[FEN \"B:W30:B23\"]\n1. 23-27 30-26 2. 27-32 *");
        let frames = plan_recording(&g, &Scene::overhead(Palette::FourColour, 320, 240), &RecordingOptions::default()).unwrap();
        let uncrowned = frames.iter().find(|f| f.label == "uncrowned-2").unwrap();
        assert_eq!(uncrowned.grid[7].as_bytes()[6], b'b');
        let after = frames.iter().find(|f| f.label == "ply-2").unwrap();
        assert_eq!(after.grid[7].as_bytes()[6], b'B');
    }

    #[test]
    fn bad_moves_are_reported_with_their_ply() {
        let records = read_games("1. 10-15 10-14 *", ReadMode::Lenient).unwrap();
        let err = GameMoves::from_record(&records[0], Variant::English, None).unwrap_err();
        assert!(err.to_string().contains("ply 1"), "{err}");
    }
}
