//! A match played tick by tick, for the page: computer players plan with the clock paused, and a
//! human may take either role (the match waits at each planning tick until he sends his plan).
//! The same engine loop as [`super::engine::play_game`], cut into steps; its record replays.

use serde::Serialize;

use super::engine::{check_plan, Arena};
use super::params::Params;
use super::players::{Plan, Player, PlayerSpec, Role};
use super::record::{GameRecord, PlanOutcome, Round};
use super::rules::{Board, Move};
use super::tournament::player_seed;

/// Who plays a role: a computer player, or a person at the page.
pub enum Seat {
    Computer(Box<dyn Player>),
    Human,
}

pub struct LiveMatch {
    arena: Arena,
    seed: u64,
    names: [String; 2],
    seats: [Seat; 2],
    start: Board,
    /// The plans being played (one per role), and the round they came from.
    plans: [Plan; 2],
    rounds: Vec<Round>,
    /// Mid-tick: the gates and walls have moved, the players not yet.
    mid_tick: bool,
    /// Roles whose human has not planned this round yet.
    waiting: Vec<Role>,
}

/// Where a live match stands.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Status {
    /// The next step plays a tick.
    Ready,
    /// A human must plan first.
    Waiting(Vec<Role>),
    Over,
}

const ROLES: [Role; 2] = [Role::Thief, Role::Police];

impl LiveMatch {
    /// `None` for a human in that role. Built-in players only (external programs are for the
    /// command line).
    pub fn new(params: &Params, seed: u64, thief: Option<&PlayerSpec>, police: Option<&PlayerSpec>) -> std::io::Result<LiveMatch> {
        let seat = |spec: Option<&PlayerSpec>, role: Role| -> std::io::Result<(String, Seat)> {
            Ok(match spec {
                Some(spec) => (spec.to_string(), Seat::Computer(spec.create(role, params, player_seed(seed, role))?)),
                None => ("human".to_string(), Seat::Human),
            })
        };
        let (thief_name, thief_seat) = seat(thief, Role::Thief)?;
        let (police_name, police_seat) = seat(police, Role::Police)?;
        let arena = Arena::new(params, seed);
        let k = params.k as usize;
        Ok(LiveMatch {
            start: arena.board.clone(),
            arena,
            seed,
            names: [thief_name, police_name],
            seats: [thief_seat, police_seat],
            plans: [vec![vec![Move::Stay; k]], vec![vec![Move::Stay; k]; params.policemen as usize]],
            rounds: Vec::new(),
            mid_tick: false,
            waiting: Vec::new(),
        })
    }

    pub fn board(&self) -> &Board {
        &self.arena.board
    }

    pub fn status(&self) -> Status {
        if self.arena.board.is_over() {
            Status::Over
        } else if !self.waiting.is_empty() {
            Status::Waiting(self.waiting.clone())
        } else {
            Status::Ready
        }
    }

    /// The plans in force: the thief's and the police's.
    pub fn plans(&self) -> &[Plan; 2] {
        &self.plans
    }

    /// Plays one tick, or stops where a human must plan first.
    pub fn step(&mut self) -> Status {
        if self.arena.board.is_over() || !self.waiting.is_empty() {
            return self.status();
        }
        if !self.mid_tick {
            self.mid_tick = true;
            if self.arena.begin_tick() {
                self.ask_for_plans();
                if !self.waiting.is_empty() {
                    return self.status();
                }
            }
        }
        let i = self.arena.board.t as usize % self.arena.params().k as usize;
        let police: Vec<Move> = self.plans[1].iter().map(|m| m[i]).collect();
        self.arena.end_tick(self.plans[0][0][i], &police);
        self.mid_tick = false;
        self.status()
    }

    fn ask_for_plans(&mut self) {
        let t = self.arena.board.t;
        let states = self.arena.recent_states();
        let params = *self.arena.params();
        let mut round = Round { t, thief: None, police: None, thief_outcome: PlanOutcome::Late, police_outcome: PlanOutcome::Late };
        for (index, role) in ROLES.into_iter().enumerate() {
            let stay = vec![vec![Move::Stay; params.k as usize]; role.pieces(&params)];
            match &mut self.seats[index] {
                Seat::Computer(player) => {
                    // The clock is paused: the engine waits for the plan.
                    let clock = std::time::Instant::now();
                    let result =
                        player.plan(&states, clock + std::time::Duration::from_secs(3600)).and_then(|plan| check_plan(&plan, role, &params).map(|()| plan));
                    let (plan, outcome) = match result {
                        Ok(plan) => (Some(plan), PlanOutcome::OnTime { micros: clock.elapsed().as_micros() as u64 }),
                        Err(why) => (None, PlanOutcome::Failed { why }),
                    };
                    self.plans[index] = plan.clone().unwrap_or(stay);
                    set_round(&mut round, role, plan, outcome);
                }
                Seat::Human => {
                    self.plans[index] = stay;
                    self.waiting.push(role);
                }
            }
        }
        self.rounds.push(round);
    }

    /// A human's plan for the current round.
    pub fn submit(&mut self, role: Role, plan: Plan) -> Result<(), String> {
        if !self.waiting.contains(&role) {
            return Err(format!("the {} does not plan now", role_name(role)));
        }
        check_plan(&plan, role, self.arena.params())?;
        let index = ROLES.iter().position(|&r| r == role).expect("a role");
        self.plans[index] = plan.clone();
        let round = self.rounds.last_mut().expect("a round is open while a human plans");
        set_round(round, role, Some(plan), PlanOutcome::OnTime { micros: 0 });
        self.waiting.retain(|&r| r != role);
        Ok(())
    }

    /// The record so far (it replays once the game is over).
    pub fn record(&self) -> Option<GameRecord> {
        let ending = self.arena.board.ending?;
        let params = *self.arena.params();
        Some(GameRecord {
            params,
            seed: self.seed,
            thief: self.names[0].clone(),
            police: self.names[1].clone(),
            start: self.start.clone(),
            rounds: self.rounds.clone(),
            ending,
            payoff: params.payoff(ending),
        })
    }

    pub fn names(&self) -> &[String; 2] {
        &self.names
    }
}

fn set_round(round: &mut Round, role: Role, plan: Option<Plan>, outcome: PlanOutcome) {
    match role {
        Role::Thief => (round.thief, round.thief_outcome) = (plan, outcome),
        Role::Police => (round.police, round.police_outcome) = (plan, outcome),
    }
}

fn role_name(role: Role) -> &'static str {
    match role {
        Role::Thief => "thief",
        Role::Police => "police",
    }
}

#[cfg(test)]
mod tests {
    use super::super::record::replay;
    use super::super::tournament::play_seeded;
    use super::super::Clock;
    use super::*;

    #[test]
    fn a_live_match_of_computers_is_the_tournaments_game() {
        let params = Params::default();
        let mut live = LiveMatch::new(&params, 8, Some(&PlayerSpec::AStar), Some(&PlayerSpec::AStar)).unwrap();
        while live.step() != Status::Over {}
        let record = live.record().unwrap();
        let batch = play_seeded(&params, 8, &PlayerSpec::AStar, &PlayerSpec::AStar, Clock::Paused).unwrap();
        assert_eq!((record.plans(), record.ending), (batch.plans(), batch.ending));
        replay(&record).unwrap();
    }

    #[test]
    fn a_human_is_waited_for_and_his_plan_is_checked() {
        let params = Params::default();
        let mut live = LiveMatch::new(&params, 3, None, Some(&PlayerSpec::AStar)).unwrap();
        assert_eq!(live.step(), Status::Waiting(vec![Role::Thief]));
        let before = live.board().clone();
        assert_eq!(live.step(), Status::Waiting(vec![Role::Thief]), "nothing moves while he plans");
        assert_eq!(live.board(), &before);
        assert!(live.submit(Role::Police, vec![]).is_err());
        assert!(live.submit(Role::Thief, vec![vec![Move::Up; 2]]).unwrap_err().contains("k = 5"));
        live.submit(Role::Thief, vec![vec![Move::Stay; 5]]).unwrap();
        // Ticks 0-4 play the plan; the sixth step opens tick 5's round and waits for him.
        for _ in 0..6 {
            if live.step() == Status::Over {
                break;
            }
        }
        assert!(matches!(live.status(), Status::Waiting(_) | Status::Over));
        if live.status() == Status::Waiting(vec![Role::Thief]) {
            assert_eq!(live.board().thief, before.thief, "he stayed, as planned");
        }
        while live.status() != Status::Over {
            if let Status::Waiting(_) = live.step() {
                live.submit(Role::Thief, vec![vec![Move::Stay; 5]]).unwrap();
            }
        }
        replay(&live.record().unwrap()).unwrap();
    }
}
