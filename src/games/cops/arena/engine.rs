//! The engine loop of the lecture, and the planning clock.
//!
//! For t = 0..T-1: the gates and walls move; if t % k == 0 both players are asked for a plan
//! (the thief's k moves, the police's k moves per policeman) given the last k states; the
//! players move by their plans; capture, then escape, is checked.
//!
//! The state a planner sees for tick u is the board when the players are about to move at u:
//! gates and walls already moved at u, players where tick u-1 left them. At tick t a planner gets
//! the states of ticks t-k+1..t (fewer at the start), oldest first; its plan covers ticks t..t+k-1.
//!
//! With [`Clock::Limited`] each player lives on its own thread for the whole game (it keeps its
//! history between plans); both are asked at once and the engine takes, after Δ, whatever plan
//! has arrived. A missing, late, failed or malformed plan means staying for those k ticks; a late
//! plan that arrives afterwards is thrown away. [`Clock::Paused`] calls the players in turn and
//! waits for them (replays, tests, a human planning at the page).

use std::collections::VecDeque;
use std::sync::mpsc;
use std::thread;
use std::time::{Duration, Instant};

use rand::SeedableRng;
use rand_chacha::ChaCha8Rng;
use serde::{Deserialize, Serialize};

use super::params::Params;
use super::players::{Plan, Player, Role};
use super::record::{GameRecord, PlanOutcome, Round};
use super::rules::{Board, Move, State};

/// A game in progress: the board, the engine's RNG (which moves gates and walls), and the
/// states the players will be shown.
#[derive(Clone, Debug)]
pub struct Arena {
    pub board: Board,
    rng: ChaCha8Rng,
    recent: VecDeque<State>,
}

impl Arena {
    /// A random conflict-free start from the RNG seed (the same seed gives the same game under
    /// the same plans).
    pub fn new(params: &Params, seed: u64) -> Arena {
        let mut rng = ChaCha8Rng::seed_from_u64(seed);
        let board = Board::random_start(params, &mut rng);
        Arena { board, rng, recent: VecDeque::new() }
    }

    pub fn params(&self) -> &Params {
        &self.board.params
    }

    /// First half of tick t: gates and walls move. Returns whether the players plan now.
    pub fn begin_tick(&mut self) -> bool {
        self.board.move_obstacles(&mut self.rng);
        let k = self.board.params.k as usize;
        if self.recent.len() == k {
            self.recent.pop_front();
        }
        self.recent.push_back(self.board.view());
        self.board.t.is_multiple_of(self.board.params.k)
    }

    /// The last k states, oldest first (what the planners get).
    pub fn recent_states(&self) -> Vec<State> {
        self.recent.iter().cloned().collect()
    }

    /// Second half of the tick: the players move, then the checks.
    pub fn end_tick(&mut self, thief: Move, police: &[Move]) {
        self.board.move_players(thief, police);
    }
}

/// How long the engine waits for plans.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Clock {
    /// Each player on its own thread; plans not in by Δ are dropped.
    Limited(Duration),
    /// The engine waits for every plan.
    Paused,
}

/// Whether a plan has the right shape: one move list per piece of the role, k moves each.
pub fn check_plan(plan: &Plan, role: Role, params: &Params) -> Result<(), String> {
    let pieces = match role {
        Role::Thief => 1,
        Role::Police => params.policemen as usize,
    };
    if plan.len() != pieces {
        return Err(format!("{} move lists for {pieces} pieces", plan.len()));
    }
    if let Some(moves) = plan.iter().find(|m| m.len() != params.k as usize) {
        return Err(format!("{} moves where k = {}", moves.len(), params.k));
    }
    Ok(())
}

/// Where a player's plans come from: the player itself (paused clock) or its thread.
enum Seat {
    Direct(Box<dyn Player>),
    Threaded(Worker),
}

struct Worker {
    requests: mpsc::Sender<(u32, Vec<State>, Instant)>,
    replies: mpsc::Receiver<(u32, Result<Plan, String>, Duration)>,
}

impl Worker {
    fn start(mut player: Box<dyn Player>) -> Worker {
        let (request_tx, request_rx) = mpsc::channel::<(u32, Vec<State>, Instant)>();
        let (reply_tx, reply_rx) = mpsc::channel();
        // Not joined: a player stuck in its planning must not hold the arena. The thread ends
        // (and drops the player, which stops an external program) when the arena hangs up.
        thread::Builder::new()
            .name("arena-player".into())
            .spawn(move || {
                while let Ok((t, states, deadline)) = request_rx.recv() {
                    let clock = Instant::now();
                    let plan = player.plan(&states, deadline);
                    if reply_tx.send((t, plan, clock.elapsed())).is_err() {
                        break;
                    }
                }
            })
            .expect("starting a player thread");
        Worker { requests: request_tx, replies: reply_rx }
    }
}

/// One player's answer at one planning tick, as the engine saw it.
struct Answer {
    outcome: PlanOutcome,
    moves: Option<Plan>,
}

impl Seat {
    fn ask(&mut self, t: u32, states: Vec<State>, deadline: Instant) {
        match self {
            Seat::Direct(_) => {}
            Seat::Threaded(worker) => {
                // A send fails only if the thread died (a panicking player): its plans are missing.
                let _ = worker.requests.send((t, states, deadline));
            }
        }
    }

    fn collect(&mut self, t: u32, states: Vec<State>, deadline: Instant, role: Role, params: &Params) -> Answer {
        let (result, elapsed) = match self {
            Seat::Direct(player) => {
                let clock = Instant::now();
                let plan = player.plan(&states, deadline);
                (plan, clock.elapsed())
            }
            Seat::Threaded(worker) => loop {
                let wait = deadline.saturating_duration_since(Instant::now());
                match worker.replies.recv_timeout(wait) {
                    Ok((reply_t, plan, elapsed)) if reply_t == t => break (plan, elapsed),
                    Ok(_) => continue, // a late answer to an earlier request
                    Err(mpsc::RecvTimeoutError::Timeout) => return Answer { outcome: PlanOutcome::Late, moves: None },
                    Err(mpsc::RecvTimeoutError::Disconnected) => {
                        return Answer { outcome: PlanOutcome::Failed { why: "the player's thread stopped".into() }, moves: None }
                    }
                }
            },
        };
        let micros = elapsed.as_micros() as u64;
        match result.and_then(|plan| check_plan(&plan, role, params).map(|()| plan)) {
            Ok(plan) => Answer { outcome: PlanOutcome::OnTime { micros }, moves: Some(plan) },
            Err(why) => Answer { outcome: PlanOutcome::Failed { why }, moves: None },
        }
    }
}

/// Per-game counts of what went wrong with the plans, for the tournament.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct PlanCounts {
    pub plans: u32,
    pub late: u32,
    pub failed: u32,
    /// Longest planning time of an on-time plan, in microseconds.
    pub worst_micros: u64,
    /// Sum of the on-time plans' planning times, in microseconds (for the mean).
    pub total_micros: u64,
}

/// Plays one game from `seed` between two players; returns its record.
pub fn play_game(params: &Params, seed: u64, thief: Box<dyn Player>, police: Box<dyn Player>, clock: Clock) -> GameRecord {
    let names = (thief.name(), police.name());
    let seat = |player: Box<dyn Player>| match clock {
        Clock::Limited(_) => Seat::Threaded(Worker::start(player)),
        Clock::Paused => Seat::Direct(player),
    };
    let mut seats = [seat(thief), seat(police)];
    let mut arena = Arena::new(params, seed);
    let start = arena.board.clone();
    let k = params.k as usize;
    let stay = |pieces: usize| vec![vec![Move::Stay; k]; pieces];
    let mut plans = [stay(1), stay(params.policemen as usize)];
    let mut rounds = Vec::new();
    while !arena.board.is_over() {
        if arena.begin_tick() {
            let t = arena.board.t;
            let states = arena.recent_states();
            let deadline = Instant::now()
                + match clock {
                    Clock::Limited(limit) => limit,
                    Clock::Paused => Duration::from_secs(3600),
                };
            for seat in &mut seats {
                seat.ask(t, states.clone(), deadline);
            }
            let roles = [Role::Thief, Role::Police];
            let answers: Vec<Answer> = seats.iter_mut().zip(roles).map(|(seat, role)| seat.collect(t, states.clone(), deadline, role, params)).collect();
            let mut round = Round { t, thief: None, police: None, thief_outcome: PlanOutcome::Late, police_outcome: PlanOutcome::Late };
            for ((answer, role), plan) in answers.into_iter().zip(roles).zip(plans.iter_mut()) {
                *plan = answer.moves.clone().unwrap_or_else(|| stay(plan.len()));
                match role {
                    Role::Thief => (round.thief, round.thief_outcome) = (answer.moves, answer.outcome),
                    Role::Police => (round.police, round.police_outcome) = (answer.moves, answer.outcome),
                }
            }
            rounds.push(round);
        }
        let i = arena.board.t as usize % k;
        let police_moves: Vec<Move> = plans[1].iter().map(|moves| moves[i]).collect();
        arena.end_tick(plans[0][0][i], &police_moves);
    }
    let ending = arena.board.ending.expect("the loop ends with an ending");
    GameRecord { params: *params, seed, thief: names.0, police: names.1, start, rounds, ending, payoff: params.payoff(ending) }
}

/// Summary of a finished game's plans for one role.
pub fn plan_counts(record: &GameRecord, role: Role) -> PlanCounts {
    let mut counts = PlanCounts::default();
    for round in &record.rounds {
        counts.plans += 1;
        match round.outcome(role) {
            PlanOutcome::OnTime { micros } => {
                counts.worst_micros = counts.worst_micros.max(*micros);
                counts.total_micros += micros;
            }
            PlanOutcome::Late => counts.late += 1,
            PlanOutcome::Failed { .. } => counts.failed += 1,
        }
    }
    counts
}
