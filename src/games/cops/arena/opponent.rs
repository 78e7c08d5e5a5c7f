//! Opponent models for the strong planners: a small family of ways the other side might play,
//! weighted by how well each explains the moves the other side has made so far in the game.
//!
//! The strong planners used to predict the opponent as the lecture's A* player, which only the
//! built-in players are; against any other program that prediction is wrong from the first move.
//! Here every model predicts the opponent's k moves from the state it planned from (the opponent
//! plans every k ticks, as the engine asks it to), each observed tick multiplies a model's weight
//! by the chance it gave to what happened, and no weight falls below a floor, so a model that was
//! wrong for a while can come back when the opponent changes its ways. Pure: no I/O, no clock.

use rand::Rng;

use super::astar::{police_plan, thief_plan, PoliceTuning, Terrain, ThiefTuning, FAR};
use super::params::Params;
use super::players::{Plan, Role};
use super::rules::{Move, State};

/// One way the opponent might play.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Model {
    /// The lecture's A* player (the built-in `astar`).
    AStar,
    /// Thief: runs for a gate he reaches first, else steps away from the nearest policeman.
    Keeper,
    /// Thief: the shortest path to the nearest gate square, whatever the police do.
    Rusher,
    /// Police: every policeman takes a shortest path to the thief.
    Chaser,
    /// Uniformly random moves.
    Random,
    /// Never moves.
    Stay,
    /// Every piece repeats the move it made last.
    Repeat,
}

/// The models tried for a thief and for the police.
pub const THIEF_MODELS: [Model; 6] = [Model::AStar, Model::Keeper, Model::Rusher, Model::Random, Model::Stay, Model::Repeat];
pub const POLICE_MODELS: [Model; 5] = [Model::AStar, Model::Chaser, Model::Random, Model::Stay, Model::Repeat];

/// The chance a deterministic model leaves for any move (a player that mostly, not always, plays
/// like the model still scores well).
const NOISE: f64 = 0.1;
/// No model's weight goes below this.
pub const FLOOR: f64 = 0.02;

impl Model {
    pub fn name(self) -> &'static str {
        match self {
            Model::AStar => "astar",
            Model::Keeper => "keeper",
            Model::Rusher => "rusher",
            Model::Chaser => "chaser",
            Model::Random => "random",
            Model::Stay => "stay",
            Model::Repeat => "repeat",
        }
    }

    /// Whether the model's moves are drawn at random (its plans differ from one sample to the
    /// next, and it predicts no single move).
    pub fn is_random(self) -> bool {
        self == Model::Random
    }

    /// The k moves of each of `role`'s pieces from this position. `last` holds each piece's last
    /// move (for `Repeat`); `rng` is drawn from only by `Random`.
    #[allow(clippy::too_many_arguments)] // the position as the planners hold it, plus the model's inputs
    pub fn plan(self, role: Role, terrain: &Terrain, thief: usize, police: &[usize], last: &[Move], k: usize, rng: &mut impl Rng) -> Plan {
        let pieces = match role {
            Role::Thief => 1,
            Role::Police => police.len(),
        };
        match (self, role) {
            (Model::AStar, Role::Thief) => vec![thief_plan(terrain, thief, police, k, &ThiefTuning::default())],
            (Model::AStar, Role::Police) => police_plan(terrain, thief, police, k, &PoliceTuning::default()),
            (Model::Keeper, _) => vec![keeper_moves(terrain, thief, police, k)],
            (Model::Rusher, _) => {
                let gates: Vec<usize> = terrain.gates.iter().flatten().copied().collect();
                let from_gates = terrain.distances(&gates, |i| terrain.thief_can_enter(i));
                vec![descend(terrain, thief, &from_gates, k, |i| terrain.thief_can_enter(i))]
            }
            (Model::Chaser, _) => {
                let from_thief = terrain.distances(&[thief], |i| terrain.police_can_enter(i) || i == thief);
                police.iter().map(|&p| descend(terrain, p, &from_thief, k, |i| terrain.police_can_enter(i) || i == thief)).collect()
            }
            (Model::Random, _) => (0..pieces).map(|_| (0..k).map(|_| Move::ALL[rng.gen_range(0..5)]).collect()).collect(),
            (Model::Stay, _) => vec![vec![Move::Stay; k]; pieces],
            (Model::Repeat, _) => (0..pieces).map(|i| vec![last.get(i).copied().unwrap_or(Move::Stay); k]).collect(),
        }
    }
}

/// k moves down a distance table (towards its sources), staying once there or stuck.
fn descend(terrain: &Terrain, from: usize, dist: &[u16], k: usize, can_enter: impl Fn(usize) -> bool) -> Vec<Move> {
    let mut at = from;
    let mut moves = Vec::with_capacity(k);
    for _ in 0..k {
        let next = terrain.neighbours(at).filter(|&j| can_enter(j) && dist[j] < dist[at]).min_by_key(|&j| dist[j]);
        match next {
            Some(j) => {
                moves.push(Move::between(terrain.pos(at), terrain.pos(j)).expect("neighbours"));
                at = j;
            }
            None => moves.push(Move::Stay),
        }
    }
    moves
}

/// The greedy distance-keeper: each step, towards a gate square he reaches before any policeman
/// can stand next to it, else to the neighbouring square farthest from the police (who are taken
/// to stand still).
fn keeper_moves(terrain: &Terrain, thief: usize, police: &[usize], k: usize) -> Vec<Move> {
    let from_police = terrain.distances(police, |i| terrain.police_can_enter(i));
    let guard = |g: usize| terrain.neighbours(g).map(|j| from_police[j]).min().unwrap_or(FAR).saturating_add(1);
    let gates: Vec<(usize, u16)> = terrain.gates.iter().flatten().map(|&g| (g, guard(g))).collect();
    let mut at = thief;
    let mut moves = Vec::with_capacity(k);
    for _ in 0..k {
        let from_thief = terrain.distances(&[at], |i| terrain.thief_can_enter(i));
        let safe_gate = gates.iter().filter(|&&(g, guard)| from_thief[g] < guard).min_by_key(|&&(g, _)| from_thief[g]);
        let next = match safe_gate {
            Some(&(gate, _)) => {
                let to_gate = terrain.distances(&[gate], |i| terrain.thief_can_enter(i));
                terrain.neighbours(at).filter(|&j| terrain.thief_can_enter(j) && to_gate[j] < to_gate[at]).min_by_key(|&j| to_gate[j]).unwrap_or(at)
            }
            // Staying first: he moves only to gain room.
            None => std::iter::once(at).chain(terrain.neighbours(at).filter(|&j| terrain.thief_can_enter(j))).fold(at, |best, j| {
                if room(&from_police, j) > room(&from_police, best) {
                    j
                } else {
                    best
                }
            }),
        };
        moves.push(Move::between(terrain.pos(at), terrain.pos(next)).expect("neighbours"));
        at = next;
    }
    moves
}

fn room(from_police: &[u16], i: usize) -> u32 {
    // Out of the police's reach counts as far, not as an overflow.
    from_police[i].min(1000) as u32
}

/// Where a piece ends up after a move in the state (walls and gates as they stand at that tick).
pub fn step(terrain: &Terrain, from: usize, m: Move, role: Role) -> usize {
    let Some(to) = m.apply(terrain.pos(from), terrain.n) else { return from };
    let to = terrain.index(to);
    let allowed = match role {
        Role::Thief => terrain.thief_can_enter(to),
        Role::Police => terrain.police_can_enter(to) || to == from,
    };
    if allowed {
        to
    } else {
        from
    }
}

/// The opponent's pieces in a state.
fn pieces(state: &State, role: Role) -> Vec<[u16; 2]> {
    match role {
        Role::Thief => vec![state.thief],
        Role::Police => state.police.clone(),
    }
}

/// What the planner believes of its opponent: a weight per model, from the moves seen so far.
#[derive(Clone, Debug)]
pub struct Belief {
    /// The opponent's role.
    role: Role,
    /// The board side.
    n: u16,
    models: Vec<Model>,
    weights: Vec<f64>,
    /// The newest state seen.
    last: Option<State>,
    /// Each model's prediction for the current planning period (None for a random model), and
    /// the tick that period began at.
    predictions: Option<(u32, Vec<Option<Plan>>)>,
    /// Each opponent piece's last move.
    last_moves: Vec<Move>,
}

impl Belief {
    /// Equal weights over the models of the opponent's role.
    pub fn new(opponent: Role, params: &Params) -> Belief {
        let models: Vec<Model> = match opponent {
            Role::Thief => THIEF_MODELS.to_vec(),
            Role::Police => POLICE_MODELS.to_vec(),
        };
        let weights = vec![1.0 / models.len() as f64; models.len()];
        Belief { role: opponent, n: params.n, models, weights, last: None, predictions: None, last_moves: Vec::new() }
    }

    /// Every model with its weight (they sum to 1).
    pub fn weights(&self) -> impl Iterator<Item = (Model, f64)> + '_ {
        self.models.iter().copied().zip(self.weights.iter().copied())
    }

    /// The model of the largest weight.
    pub fn likeliest(&self) -> Model {
        self.weights().max_by(|a, b| a.1.total_cmp(&b.1)).map(|(m, _)| m).expect("models")
    }

    /// Each opponent piece's last move (staying before the first).
    pub fn last_moves(&self) -> &[Move] {
        &self.last_moves
    }

    /// Takes in the states shown at a planning tick (the last k, oldest first): every tick not yet
    /// seen updates the weights.
    pub fn observe(&mut self, states: &[State], params: &Params) {
        let k = params.k.max(1);
        for state in states {
            if let Some(last) = &self.last {
                if state.t <= last.t {
                    continue;
                }
                if state.t == last.t + 1 {
                    let last = last.clone();
                    self.score(&last, state, k);
                }
            }
            if state.t % k == 0 {
                self.predict(state, params);
            }
            self.last = Some(state.clone());
        }
    }

    /// Every model's k moves from a state at which the opponent plans.
    fn predict(&mut self, state: &State, params: &Params) {
        let terrain = Terrain::from_state(state, params.n);
        let thief = terrain.index(state.thief);
        let police = terrain.indices(&state.police);
        let k = params.k as usize;
        // Random models predict nothing; the RNG is never drawn from here.
        let mut unused = rand::rngs::mock::StepRng::new(0, 0);
        let plans = self
            .models
            .iter()
            .map(|&model| (!model.is_random()).then(|| model.plan(self.role, &terrain, thief, &police, &self.last_moves, k, &mut unused)))
            .collect();
        self.predictions = Some((state.t, plans));
    }

    /// One tick: the opponent went from `before` to `after`.
    fn score(&mut self, before: &State, after: &State, k: u32) {
        let from = pieces(before, self.role);
        let to = pieces(after, self.role);
        if from.len() != to.len() || from.is_empty() {
            return;
        }
        let terrain = Terrain::from_state(before, self.n);
        let observed: Vec<Move> = from.iter().zip(&to).map(|(&a, &b)| Move::between(a, b).unwrap_or(Move::Stay)).collect();
        // A move is seen through where it led: how many of the five moves lead there.
        let ways: Vec<f64> = from
            .iter()
            .zip(&to)
            .map(|(&a, &b)| Move::ALL.iter().filter(|&&m| terrain.pos(step(&terrain, terrain.index(a), m, self.role)) == b).count().max(1) as f64 / 5.0)
            .collect();
        let tick_in_period = (before.t % k) as usize;
        let period_ok = matches!(&self.predictions, Some((start, _)) if before.t - before.t % k == *start);
        for (w, (i, &model)) in self.weights.iter_mut().zip(self.models.iter().enumerate()) {
            let mut log_likelihood = 0.0;
            for (piece, (&a, &b)) in from.iter().zip(&to).enumerate() {
                let predicted = match model {
                    Model::Random => None,
                    Model::Repeat => Some(self.last_moves.get(piece).copied().unwrap_or(Move::Stay)),
                    _ if period_ok => self.predictions.as_ref().and_then(|(_, plans)| plans[i].as_ref()).and_then(|plan| plan.get(piece)).and_then(|m| m.get(tick_in_period)).copied(),
                    _ => None,
                };
                let p = match predicted {
                    // Random, or no prediction (ticks before the first plan seen): no evidence.
                    None if model.is_random() => ways[piece],
                    None => continue,
                    Some(m) => {
                        let hit = terrain.pos(step(&terrain, terrain.index(a), m, self.role)) == b;
                        NOISE * ways[piece] + if hit { 1.0 - NOISE } else { 0.0 }
                    }
                };
                log_likelihood += p.ln();
            }
            // The police's pieces are one team's plan: their misses go together, so a tick counts
            // once, not once per policeman.
            *w *= (log_likelihood / from.len() as f64).exp();
        }
        self.normalise();
        self.last_moves = observed;
    }

    /// Weights summing to 1, none under the floor.
    fn normalise(&mut self) {
        let total: f64 = self.weights.iter().sum();
        if !(total > 0.0 && total.is_finite()) {
            let equal = 1.0 / self.weights.len() as f64;
            self.weights.fill(equal);
            return;
        }
        for w in &mut self.weights {
            *w /= total;
        }
        // Raise the low ones to the floor, taking the difference from the others in proportion.
        let low: f64 = self.weights.iter().filter(|&&w| w < FLOOR).map(|&w| FLOOR - w).sum();
        if low > 0.0 {
            let high: f64 = self.weights.iter().filter(|&&w| w >= FLOOR).map(|&w| w - FLOOR).sum();
            for w in &mut self.weights {
                *w = if *w < FLOOR { FLOOR } else { FLOOR + (*w - FLOOR) * (1.0 - low / high.max(f64::MIN_POSITIVE)) };
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    // The weights following the moves of whole games are tested in tests/cops_arena.rs.

    #[test]
    fn no_weight_falls_under_the_floor_and_they_sum_to_one() {
        let params = Params::default();
        let mut belief = Belief::new(Role::Thief, &params);
        belief.weights = vec![1e-30, 0.5, 0.5 - 1e-30, 0.0, 0.0, 0.0];
        belief.normalise();
        let total: f64 = belief.weights.iter().sum();
        assert!((total - 1.0).abs() < 1e-9, "{:?}", belief.weights);
        assert!(belief.weights.iter().all(|&w| w >= FLOOR - 1e-12), "{:?}", belief.weights);
        assert!(belief.weights[1] > 0.4 && belief.weights[2] > 0.4, "the likely ones stay likely: {:?}", belief.weights);
    }

    #[test]
    fn a_blocked_move_is_seen_as_staying() {
        let params = Params { n: 10, ..Params::default() };
        let state = State { t: 0, thief: [0, 0], police: vec![], gates: vec![], walls: vec![] };
        let terrain = Terrain::from_state(&state, params.n);
        assert_eq!(step(&terrain, terrain.index([0, 0]), Move::Up, Role::Thief), terrain.index([0, 0]));
        assert_eq!(step(&terrain, terrain.index([0, 0]), Move::Down, Role::Thief), terrain.index([1, 0]));
    }
}
