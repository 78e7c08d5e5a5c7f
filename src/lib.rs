//! boardwatch: watch a real checkers board through an overhead camera and write down the game.
//!
//! The library holds the pure parts (rules engine, notation and PDN, tracker) so that they can be
//! tested fast and reused; the binary in `main.rs` wires them to files, cameras and the network.

pub mod draughts;
pub mod tracker;
pub mod vision;
pub mod publish;
pub mod daemon;
pub mod pipeline;
pub mod synth;
pub mod games;
pub mod web;
