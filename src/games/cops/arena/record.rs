//! A game's record (one JSON object): the parameters, the RNG seed, the start, every plan the
//! engine received (or why it got none), and the ending. The engine's RNG moves the gates and
//! walls, so the seed and the plans replay the game exactly: [`replay`] rebuilds every tick.

use serde::{Deserialize, Serialize};
use thiserror::Error;

use super::engine::{check_plan, Arena};
use super::params::{Ending, ParamError, Params};
use super::players::{Plan, Role};
use super::rules::{Board, Move};

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct GameRecord {
    pub params: Params,
    pub seed: u64,
    /// The players' names (built-in names, or the external program's command).
    pub thief: String,
    pub police: String,
    /// The board before tick 0 (also rebuilt from the seed on replay, as a check).
    pub start: Board,
    /// One round per planning tick (t = 0, k, 2k, ...).
    pub rounds: Vec<Round>,
    pub ending: Ending,
    /// The thief's payoff (the police get its negative).
    pub payoff: i64,
}

impl GameRecord {
    /// What decides the game besides the seed: every round's plans (not how long they took).
    pub fn plans(&self) -> Vec<(u32, Option<Plan>, Option<Plan>)> {
        self.rounds.iter().map(|r| (r.t, r.thief.clone(), r.police.clone())).collect()
    }
}

/// The plans taken at tick `t`; `None` when the player gave none in time (it stayed k ticks).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Round {
    pub t: u32,
    pub thief: Option<Plan>,
    pub police: Option<Plan>,
    pub thief_outcome: PlanOutcome,
    pub police_outcome: PlanOutcome,
}

impl Round {
    pub fn outcome(&self, role: Role) -> &PlanOutcome {
        match role {
            Role::Thief => &self.thief_outcome,
            Role::Police => &self.police_outcome,
        }
    }
}

/// What became of one request for a plan.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum PlanOutcome {
    /// In time, after this many microseconds of planning.
    OnTime { micros: u64 },
    /// Not in by Δ.
    Late,
    /// The player failed, crashed, or answered something that is not a plan.
    Failed { why: String },
}

#[derive(Debug, Error)]
pub enum ReplayError {
    #[error("the record's parameters: {0}")]
    Params(#[from] ParamError),
    #[error("the start does not follow from seed {0} (another engine version, or an edited record)")]
    Start(u64),
    #[error("round {index}: planned at tick {found}, but the engine plans at tick {expected}")]
    RoundTick { index: usize, found: u32, expected: u32 },
    #[error("round at tick {t}: the {role:?} plan: {why}")]
    BadPlan { t: u32, role: Role, why: String },
    #[error("the record has {found} rounds, the game needs {expected}")]
    RoundCount { found: usize, expected: usize },
    #[error("the replay ends {replayed:?}, the record says {recorded:?}")]
    Ending { replayed: Ending, recorded: Ending },
}

/// Replays a record: the board before tick 0 and after every tick.
pub fn replay(record: &GameRecord) -> Result<Vec<Board>, ReplayError> {
    let params = &record.params;
    params.check()?;
    let mut arena = Arena::new(params, record.seed);
    if arena.board != record.start {
        return Err(ReplayError::Start(record.seed));
    }
    let k = params.k as usize;
    let mut frames = vec![arena.board.clone()];
    let mut rounds = record.rounds.iter().enumerate();
    let mut plans: (Plan, Plan) = (Vec::new(), Vec::new());
    let mut used = 0;
    while !arena.board.is_over() {
        if arena.begin_tick() {
            let t = arena.board.t;
            let (index, round) = rounds.next().ok_or(ReplayError::RoundCount { found: record.rounds.len(), expected: used + 1 })?;
            if round.t != t {
                return Err(ReplayError::RoundTick { index, found: round.t, expected: t });
            }
            let take = |plan: &Option<Plan>, role: Role, pieces: usize| -> Result<Plan, ReplayError> {
                match plan {
                    Some(plan) => check_plan(plan, role, params).map(|()| plan.clone()).map_err(|why| ReplayError::BadPlan { t, role, why }),
                    None => Ok(vec![vec![Move::Stay; k]; pieces]),
                }
            };
            plans = (take(&round.thief, Role::Thief, 1)?, take(&round.police, Role::Police, params.policemen as usize)?);
            used += 1;
        }
        let i = arena.board.t as usize % k;
        let police: Vec<Move> = plans.1.iter().map(|moves| moves[i]).collect();
        arena.end_tick(plans.0[0][i], &police);
        frames.push(arena.board.clone());
    }
    if used != record.rounds.len() {
        return Err(ReplayError::RoundCount { found: record.rounds.len(), expected: used });
    }
    let replayed = arena.board.ending.expect("the loop ends with an ending");
    if replayed != record.ending {
        return Err(ReplayError::Ending { replayed, recorded: record.ending });
    }
    Ok(frames)
}
