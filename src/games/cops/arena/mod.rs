//! Cops and Robbers, advanced: the moving-walls arena of the lecture. One thief and several
//! policemen on an n x n board with gates sliding along its edge and walls drifting across it;
//! both sides plan k moves every k ticks under a time limit.
//!
//! - [`params`]: every parameter with its default, set by name; the payoffs;
//! - [`rules`]: the board, gates, walls, one tick, capture and escape (the rule decisions are
//!   listed there);
//! - [`engine`]: the engine loop and the planning clock (a thread per player, a time limit);
//! - [`record`]: game records (parameters, seed, every plan) and their exact replay;
//! - [`players`]: the planning interface and the players by name;
//! - [`astar`]: the lecture's A* players; [`strong`]: planners over sampled futures, against a
//!   mixture of [`opponent`] models weighted by the moves seen;
//! - [`external`]: programs speaking JSON lines (the only I/O here);
//! - [`tournament`]: many seeded games, statistics with confidence intervals;
//! - [`live`]: a match played tick by tick for the page, a human in either role.
//!
//! The command line is `src/cli/cops/arena.rs` (`boardwatch cops arena`), the page
//! `src/web/games/cops_arena.rs` (`/cops-arena`).

pub mod astar;
pub mod engine;
pub mod external;
pub mod live;
pub mod opponent;
pub mod params;
pub mod players;
pub mod record;
pub mod rules;
pub mod strong;
pub mod tournament;

pub use engine::{play_game, Arena, Clock};
pub use params::{Ending, ParamError, Params};
pub use players::{Plan, Player, PlayerSpec, Role};
pub use record::{replay, GameRecord};
pub use rules::{Board, Move, Pos, State};
