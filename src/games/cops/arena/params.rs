//! The arena's parameters, every one of the lecture's with its default, set by name
//! (`--param k=v` on the command line) and checked before a game starts.
//!
//! The lecture gives no default for the game length T; we take T = 100 ticks (five crossings of
//! the default 20 x 20 board), long enough for the police to matter and short enough for
//! tournaments of thousands of games.

use serde::{Deserialize, Serialize};
use thiserror::Error;

/// Largest board side: squares are numbered in a `u16`, and a larger board would not fit the
/// planners' time budget anyway.
pub const MAX_SIDE: u16 = 100;

#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct Params {
    /// Board side n (an n x n board).
    pub n: u16,
    /// Number of policemen.
    pub policemen: u8,
    /// Number of gates on the edge of the board.
    pub gates: u8,
    /// Width of a gate, in unit segments of the board's edge.
    pub gate_width: u16,
    /// Number of walls.
    pub walls: u8,
    /// Length L of a wall (a 1 x L rectangle).
    pub wall_length: u16,
    /// Probability that a gate moves one segment in a tick.
    pub p_gate_move: f64,
    /// Probability that a gate reverses its direction (clockwise / counter-clockwise) in a tick.
    pub p_gate_reverse: f64,
    /// Probability that a wall moves one square in a tick.
    pub p_wall_move: f64,
    /// Probability that a wall turns to another of the four directions in a tick.
    pub p_wall_turn: f64,
    /// Players plan k moves every k ticks.
    pub k: u32,
    /// Time limit Δ of one planning, in milliseconds.
    pub plan_ms: u64,
    /// Game length T: ticks t = 0, 1, ..., T - 1.
    #[serde(rename = "T")]
    pub t_max: u32,
}

impl Default for Params {
    fn default() -> Self {
        Params {
            n: 20,
            policemen: 5,
            gates: 2,
            gate_width: 2,
            walls: 4,
            wall_length: 4,
            p_gate_move: 0.5,
            p_gate_reverse: 0.01,
            p_wall_move: 0.75,
            p_wall_turn: 0.05,
            k: 5,
            plan_ms: 500,
            t_max: 100,
        }
    }
}

#[derive(Debug, Error, PartialEq)]
pub enum ParamError {
    #[error("unknown parameter {0:?} (known: {names})", names = Params::NAMES.join(", "))]
    Unknown(String),
    #[error("{0:?}: a parameter is written name=value")]
    NoValue(String),
    #[error("parameter {name}: {value:?} is not a {kind}")]
    NotANumber { name: &'static str, value: String, kind: &'static str },
    #[error("parameter {name} = {value}: {why}")]
    OutOfRange { name: &'static str, value: String, why: String },
}

impl Params {
    /// The names `set` accepts, as in the records.
    pub const NAMES: [&'static str; 13] =
        ["n", "policemen", "gates", "gate_width", "walls", "wall_length", "p_gate_move", "p_gate_reverse", "p_wall_move", "p_wall_turn", "k", "plan_ms", "T"];

    /// Sets one parameter from `name=value` text, then checks the whole set.
    pub fn set_text(&mut self, assignment: &str) -> Result<(), ParamError> {
        let (name, value) = assignment.split_once('=').ok_or_else(|| ParamError::NoValue(assignment.to_string()))?;
        self.set(name.trim(), value.trim())?;
        self.check()
    }

    fn set(&mut self, name: &str, value: &str) -> Result<(), ParamError> {
        fn int<T: std::str::FromStr>(name: &'static str, value: &str) -> Result<T, ParamError> {
            value.parse().map_err(|_| ParamError::NotANumber { name, value: value.to_string(), kind: "whole number" })
        }
        fn prob(name: &'static str, value: &str) -> Result<f64, ParamError> {
            let p: f64 = value.parse().map_err(|_| ParamError::NotANumber { name, value: value.to_string(), kind: "number" })?;
            if !(0.0..=1.0).contains(&p) {
                return Err(ParamError::OutOfRange { name, value: value.to_string(), why: "a probability is between 0 and 1".into() });
            }
            Ok(p)
        }
        match name {
            "n" => self.n = int("n", value)?,
            "policemen" | "police" => self.policemen = int("policemen", value)?,
            "gates" => self.gates = int("gates", value)?,
            "gate_width" => self.gate_width = int("gate_width", value)?,
            "walls" => self.walls = int("walls", value)?,
            "wall_length" => self.wall_length = int("wall_length", value)?,
            "p_gate_move" => self.p_gate_move = prob("p_gate_move", value)?,
            "p_gate_reverse" => self.p_gate_reverse = prob("p_gate_reverse", value)?,
            "p_wall_move" => self.p_wall_move = prob("p_wall_move", value)?,
            "p_wall_turn" => self.p_wall_turn = prob("p_wall_turn", value)?,
            "k" => self.k = int("k", value)?,
            "plan_ms" | "delta" => self.plan_ms = int("plan_ms", value)?,
            "T" | "t_max" => self.t_max = int("T", value)?,
            other => return Err(ParamError::Unknown(other.to_string())),
        }
        Ok(())
    }

    /// Whether a game can be played with these parameters (a record read from a file is checked
    /// too, so that no impossible set reaches the engine).
    pub fn check(&self) -> Result<(), ParamError> {
        let bad = |name: &'static str, value: String, why: &str| Err(ParamError::OutOfRange { name, value, why: why.to_string() });
        if self.n < 3 || self.n > MAX_SIDE {
            return bad("n", self.n.to_string(), &format!("the board side is from 3 to {MAX_SIDE}"));
        }
        if self.gate_width == 0 || self.gate_width as u32 > self.perimeter() {
            return bad("gate_width", self.gate_width.to_string(), &format!("a gate is 1 to 4n = {} edge segments wide", self.perimeter()));
        }
        if self.wall_length == 0 || self.wall_length > self.n {
            return bad("wall_length", self.wall_length.to_string(), "a wall is 1 to n squares long");
        }
        if self.k == 0 || self.k > 1000 {
            return bad("k", self.k.to_string(), "players plan 1 to 1000 moves at a time");
        }
        if self.t_max == 0 || self.t_max > 100_000 {
            return bad("T", self.t_max.to_string(), "a game lasts 1 to 100000 ticks");
        }
        if self.plan_ms > 60_000 {
            return bad("plan_ms", self.plan_ms.to_string(), "the planning limit is at most 60000 ms");
        }
        for (name, p) in
            [("p_gate_move", self.p_gate_move), ("p_gate_reverse", self.p_gate_reverse), ("p_wall_move", self.p_wall_move), ("p_wall_turn", self.p_wall_turn)]
        {
            if !(0.0..=1.0).contains(&p) {
                return bad(name, p.to_string(), "a probability is between 0 and 1");
            }
        }
        // The start must be conflict-free: every player on a square of his own that is neither a
        // wall's nor (for a policeman) a gate's. Ask for at most half the inner squares.
        let inner = (self.n as u32 - 2) * (self.n as u32 - 2);
        let needed = self.walls as u32 * self.wall_length as u32 + self.policemen as u32 + 1;
        if needed * 2 > inner.max(1) {
            return bad(
                "walls",
                self.walls.to_string(),
                &format!(
                    "{} walls of length {} and {} players need {needed} squares, more than half of the {inner} inner squares",
                    self.walls,
                    self.wall_length,
                    self.policemen as u32 + 1
                ),
            );
        }
        Ok(())
    }

    /// Number of unit segments of the board's edge (where the gates run): 4n.
    pub fn perimeter(&self) -> u32 {
        4 * self.n as u32
    }

    /// The payoff of a game that ended in `ending` (the thief's; the police get its negative).
    pub fn payoff(&self, ending: Ending) -> i64 {
        let t_max = self.t_max as i64;
        match ending {
            Ending::Caught { t } => t as i64,
            Ending::Survived => t_max,
            Ending::Escaped { t } => 2 * t_max - t as i64 - 1,
        }
    }
}

/// How a game ended.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum Ending {
    /// A policeman stood on the thief's square at tick t.
    Caught { t: u32 },
    /// The thief stood on a gate square at tick t.
    Escaped { t: u32 },
    /// T ticks without either.
    Survived,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_defaults_are_the_lectures() {
        let p = Params::default();
        assert_eq!((p.n, p.policemen, p.gates, p.gate_width, p.walls, p.wall_length), (20, 5, 2, 2, 4, 4));
        assert_eq!((p.p_gate_move, p.p_gate_reverse, p.p_wall_move, p.p_wall_turn), (0.5, 0.01, 0.75, 0.05));
        assert_eq!((p.k, p.plan_ms), (5, 500));
        assert!(p.check().is_ok());
    }

    #[test]
    fn payoffs_follow_the_lecture() {
        let p = Params { t_max: 100, ..Params::default() };
        assert_eq!(p.payoff(Ending::Caught { t: 17 }), 17);
        assert_eq!(p.payoff(Ending::Survived), 100);
        assert_eq!(p.payoff(Ending::Escaped { t: 17 }), 2 * 100 - 17 - 1);
        // Escaping in the last tick is worth the same as surviving.
        assert_eq!(p.payoff(Ending::Escaped { t: 99 }), p.payoff(Ending::Survived));
    }

    #[test]
    fn set_text_names_the_parameter_in_errors() {
        let mut p = Params::default();
        p.set_text("k=7").unwrap();
        p.set_text("T=250").unwrap();
        p.set_text("p_wall_move = 0.5").unwrap();
        assert_eq!((p.k, p.t_max, p.p_wall_move), (7, 250, 0.5));
        assert!(matches!(p.set_text("speed=3"), Err(ParamError::Unknown(name)) if name == "speed"));
        assert!(matches!(p.set_text("k"), Err(ParamError::NoValue(_))));
        assert!(matches!(p.set_text("k=five"), Err(ParamError::NotANumber { name: "k", .. })));
        assert!(matches!(p.set_text("p_gate_move=1.5"), Err(ParamError::OutOfRange { name: "p_gate_move", .. })));
        let err = p.set_text("walls=100").unwrap_err();
        assert!(err.to_string().contains("walls"), "{err}");
        assert!(matches!(Params::default().set_text("n=2"), Err(ParamError::OutOfRange { name: "n", .. })));
    }
}
