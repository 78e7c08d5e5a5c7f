//! Grid games for play on a projected board: pure engines, one folder per game.
//!
//! Each game holds its rules, its records and its computer players, with no I/O, no OpenCV and
//! no clock of its own (randomness comes from a seeded RNG), so it can be tested and
//! benchmarked alone. The command line (`src/cli/`) and the pages served by `boardwatch play`
//! and the daemon wire them to files, terminals and the network.

pub mod cops;
pub mod dots;
pub mod sokoban;
