//! Sokoban: levels, rules and solver, pure (no clock of its own; only [`files`] reads files).
//!
//! * [`level`]: reading XSB collections (also run-length rows and the original program's
//!   `O`/`Q` box symbols) with errors naming line and column, and writing XSB.
//! * [`game`]: a level being played: moves and pushes, undo/redo, LURD, click-to-walk, drag-a-box.
//! * [`editor`]: the level editor's grid (30x20), its save checks, normalising, symmetries.
//! * [`files`]: collection files and level folders on disk (the only part that reads files).
//! * [`solver`]: the solver, with a deadline and a cancel flag; solutions are replayed before
//!   being reported. It runs first a FESS-style search (`fess`: box moves, a feature space of
//!   packing, connectivity and out-of-plan boxes visited in turn, moves suggested by advisors
//!   for free), then a push-level best-first search (dead squares, freeze deadlocks, a matching
//!   lower bound, macros) whose full pass can prove a level unsolvable. On long searches FESS is
//!   joined by `backward`, which pulls boxes from the solved position; a forward position it has
//!   reached solves the level. Their helpers: `corral`
//!   (PI-corral pruning, corral deadlocks), `deadlock` (corral deadlocks proved by a small
//!   search of the corral's boxes alone, for FESS), `frozen_goals` (boxes frozen on goals as
//!   walls to the others, for FESS), `goal_room` (the patterns of boxes in a goal room from
//!   which it can still be filled, found once per level) and `packing` (the order in which to
//!   fill the goals).

pub mod editor;
pub mod files;
pub mod game;
pub mod level;
mod backward;
mod corral;
mod deadlock;
mod fess;
mod frozen_goals;
mod goal_room;
mod packing;
pub mod solver;

/// Up, down, left, right: the order of the LURD letters `u d l r`.
pub const DIRECTIONS: [(i32, i32); 4] = [(0, -1), (0, 1), (-1, 0), (1, 0)];
/// LURD letter for a move in each direction (upper case when the move pushes a box).
pub const LURD_LETTERS: [char; 4] = ['u', 'd', 'l', 'r'];
