//! Players: the planning interface, and the players by name (`astar`, `strong`, `stay`,
//! `random`, or `ext:COMMAND` for a program speaking the JSON-lines protocol).
//!
//! A player gets every parameter at construction (no time limit there) and then, every k
//! ticks, the last k states; it answers a [`Plan`]: one list of k moves per piece it moves (one
//! for the thief, one per policeman for the police, who plan as one team so they can spread).

use std::fmt;
use std::str::FromStr;
use std::time::Instant;

use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;
use serde::{Deserialize, Serialize};

use super::astar::{AStarPolice, AStarThief};
use super::params::Params;
use super::rules::{Move, State};
use super::strong::{StrongPolice, StrongThief};

/// One list of k moves per piece the player moves.
pub type Plan = Vec<Vec<Move>>;

#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Role {
    Thief,
    Police,
}

impl Role {
    /// The number of pieces the role moves.
    pub fn pieces(self, params: &Params) -> usize {
        match self {
            Role::Thief => 1,
            Role::Police => params.policemen as usize,
        }
    }
}

pub trait Player: Send {
    /// The name in records and tables.
    fn name(&self) -> String;
    /// The plan for the next k ticks from the last k states (oldest first; fewer at the
    /// start). `deadline` is when the engine stops waiting; a player may use it to budget.
    fn plan(&mut self, states: &[State], deadline: Instant) -> Result<Plan, String>;
}

/// A player named on the command line.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum PlayerSpec {
    /// A* to a target chosen by the lecture's heuristics.
    AStar,
    /// Samples the walls' and gates' futures and searches over candidate plans.
    Strong,
    /// Never moves (a baseline).
    Stay,
    /// Uniformly random moves (a baseline).
    Random,
    /// An external program (run through `sh -c`) speaking the JSON-lines protocol.
    External(String),
}

impl FromStr for PlayerSpec {
    type Err = String;

    fn from_str(text: &str) -> Result<Self, String> {
        Ok(match text {
            "astar" | "a*" => PlayerSpec::AStar,
            "strong" => PlayerSpec::Strong,
            "stay" => PlayerSpec::Stay,
            "random" => PlayerSpec::Random,
            _ => match text.strip_prefix("ext:") {
                Some(command) if !command.trim().is_empty() => PlayerSpec::External(command.to_string()),
                _ => return Err(format!("{text:?}: a player is astar, strong, stay, random or ext:COMMAND")),
            },
        })
    }
}

impl fmt::Display for PlayerSpec {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            PlayerSpec::AStar => write!(f, "astar"),
            PlayerSpec::Strong => write!(f, "strong"),
            PlayerSpec::Stay => write!(f, "stay"),
            PlayerSpec::Random => write!(f, "random"),
            PlayerSpec::External(command) => write!(f, "ext:{command}"),
        }
    }
}

impl PlayerSpec {
    /// A new player for one game. `seed` seeds the player's own randomness (not the engine's).
    /// External programs are started here; a program that cannot be started is an error.
    pub fn create(&self, role: Role, params: &Params, seed: u64) -> std::io::Result<Box<dyn Player>> {
        Ok(match (self, role) {
            (PlayerSpec::AStar, Role::Thief) => Box::new(AStarThief::new(params)),
            (PlayerSpec::AStar, Role::Police) => Box::new(AStarPolice::new(params)),
            (PlayerSpec::Strong, Role::Thief) => Box::new(StrongThief::new(params, seed)),
            (PlayerSpec::Strong, Role::Police) => Box::new(StrongPolice::new(params, seed)),
            (PlayerSpec::Stay, _) => Box::new(Baseline { role, params: *params, rng: None }),
            (PlayerSpec::Random, _) => Box::new(Baseline { role, params: *params, rng: Some(ChaCha8Rng::seed_from_u64(seed)) }),
            (PlayerSpec::External(command), _) => Box::new(super::external::External::start(command, role, params, seed)?),
        })
    }
}

/// The baselines: stay put, or move at random.
struct Baseline {
    role: Role,
    params: Params,
    rng: Option<ChaCha8Rng>,
}

impl Player for Baseline {
    fn name(&self) -> String {
        if self.rng.is_some() { "random" } else { "stay" }.into()
    }

    fn plan(&mut self, _states: &[State], _deadline: Instant) -> Result<Plan, String> {
        let k = self.params.k as usize;
        let pieces = self.role.pieces(&self.params);
        Ok((0..pieces)
            .map(|_| {
                (0..k)
                    .map(|_| match &mut self.rng {
                        Some(rng) => Move::ALL[rng.gen_range(0..5)],
                        None => Move::Stay,
                    })
                    .collect()
            })
            .collect())
    }
}
