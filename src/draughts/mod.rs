//! 8x8 draughts: rule sets of the major variants, positions, move generation, perft, notation,
//! FEN and PDN records.
//!
//! Geometry shared by every module: squares are indexed `row * 8 + col` on the 8x8 board as a
//! diagram draws it, row 0 being the edge where Black's men stand at the start (the top of the
//! diagram, White at the bottom) and column 0 on the left. Playing squares are the dark ones,
//! where `row + col` is odd; the Italian and Spanish boards are the mirror image and are handled
//! in notation only (see [`rules::Rules::mirrored`]).

pub mod bitboard;
pub mod fast_english;
pub mod fen;
pub mod game;
pub mod movegen;
pub mod notation;
pub mod pdn;
pub mod perft;
pub mod position;
pub mod rules;

pub use movegen::{Move, MoveList};
pub use position::{Color, Piece, Position};
pub use rules::{Rules, Variant};
