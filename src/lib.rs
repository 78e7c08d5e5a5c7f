//! boardwatch: watch a real checkers board through an overhead camera and write down the game.
//!
//! The library holds every part; the binary (`main.rs`, `cli/`) parses commands and calls it.
//! The modules form layers, each using only those listed before it:
//!
//! - [`draughts`] (rules engine, notation, PDN), [`tracker`] (board states to validated moves)
//!   and [`games`] (grid games): pure, no I/O and no OpenCV, tested fast and reused;
//! - [`vision`] (frames, capture, board location, classification, overlays; OpenCV) and
//!   [`synth`] (rendered camera frames for tests);
//! - [`publish`]: the durable records (event log, PDN files) kept with the tracker by the
//!   `Recorder`, and the live hub;
//! - [`pipeline`]: one board's road from frame to record, shared by `replay` and the daemon;
//! - [`daemon`]: `boardwatch run`: sources, a thread per board, the HTTP API.

pub mod draughts;
pub mod tracker;
pub mod vision;
pub mod publish;
pub mod daemon;
pub mod pipeline;
pub mod synth;
pub mod games;
pub mod web;
pub mod mqtt;
pub mod hall;
pub mod touch;
