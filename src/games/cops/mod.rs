//! Cops and Robbers, classic: two policemen chase one thief over a map of roads and buildings.
//!
//! Pure engine (no I/O, no clock; randomness from a seeded RNG passed in):
//! - [`map`]: the map file (rows of digits 0-4) with errors naming line and column;
//! - [`rules`]: moves, the turn order of both modes, capture and the 150-move limit;
//! - [`classic`]: the original program's computer players (breadth-first search);
//! - [`solver`]: the perfect player, an exact retrograde analysis of the whole map;
//! - [`record`]: games as JSON lines, and a match runner that plays two players against each other.

pub mod arena;
pub mod classic;
pub mod map;
pub mod record;
pub mod rules;
pub mod solver;

pub use map::{Map, MapError, Square};
pub use rules::{Game, Mode, Outcome, Piece, Positions, Reason, Team, MOVE_LIMIT};
