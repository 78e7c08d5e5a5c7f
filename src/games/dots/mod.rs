//! Dots (Kropki): rules, enclosures, records and computer players.
//!
//! Pure engine (no I/O, no clock; randomness from a seeded RNG passed in):
//! - [`board`]: the grid, both rule sets (the original program's and the competitive ones),
//!   captures, enclosing chains for drawing, scores, grounding and undo;
//! - [`sgf`]: records in SGF `GM[40]`, the format Dots programs exchange;
//! - [`replay`]: the machine interface for differential tests (one JSON game per line);
//! - [`mcts`]: the computer player, Monte Carlo tree search;
//! - [`protocol`]: the JSON line protocol Dots engines speak to drivers (oppai's), both ways.

pub mod board;
pub mod mcts;
pub mod protocol;
pub mod replay;
pub mod sgf;

pub use board::{Action, Board, Enclosure, End, IllegalMove, MoveOutcome, Player, Point, Rules};

#[cfg(test)]
mod tests;
