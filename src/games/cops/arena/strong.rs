//! The stronger planners: candidate plans tried against sampled futures.
//!
//! Every k ticks the planner
//! 1. updates what it knows of where each gate and wall is heading (the states show positions
//!    only; a gate or wall seen moving reveals its heading, an unseen one is guessed at random);
//! 2. builds a handful of candidate plans (the A* plan, plans to every gate square or away from
//!    the police for the thief; guard, chase and intercept variants for the police);
//! 3. predicts the opponent's next k moves by running the opponent's A* from the same state
//!    (the lecture's "the other side's A*");
//! 4. plays each candidate against that prediction in several sampled futures of the gates and
//!    walls (the engine's own rules, the planner's own RNG), continues every future with A* on
//!    both sides for two more plans, scores the end by the payoff (or an estimate of it when the
//!    game is still on), and keeps the candidate with the best mean.
//!
//! It uses a fixed number of samples (so a game is reproducible), stopping early only if the
//! engine's deadline comes close or its own budget of 90 ms runs out (a loaded machine).

use std::time::{Duration, Instant};

use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;

use super::astar::{police_paths, police_plan, police_targets, thief_path_moves, thief_plan, thief_target, PoliceTuning, Terrain, ThiefTuning, FAR};
use super::params::Params;
use super::players::{Plan, Player};
use super::rules::{Board, Gate, Move, State, Wall};

/// Sampled futures per candidate.
const SAMPLES: usize = 6;
/// Plans (of k ticks) simulated after the candidate's own, with A* on both sides.
const CONTINUATION_PLANS: u32 = 2;
/// Stop sampling when less than this is left before the deadline.
const SAFETY: Duration = Duration::from_millis(60);
/// And after this long in any case: a plan normally takes 5-40 ms, but on a loaded machine the
/// samples are cut short rather than the plan risking the deadline (the goal is 100 ms).
const BUDGET: Duration = Duration::from_millis(90);

/// What the planner has seen of the gates' and walls' headings.
#[derive(Clone, Debug, Default)]
struct Headings {
    last: Option<State>,
    gates: Vec<Option<bool>>,
    walls: Vec<Option<Move>>,
}

impl Headings {
    fn observe(&mut self, states: &[State], params: &Params) {
        for state in states {
            if let Some(last) = &self.last {
                if state.t <= last.t {
                    continue;
                }
                let perimeter = params.perimeter();
                self.gates.resize(state.gates.len(), None);
                for (i, (now, before)) in state.gates.iter().zip(&last.gates).enumerate() {
                    if now.start == (before.start + 1) % perimeter {
                        self.gates[i] = Some(true);
                    } else if (now.start + 1) % perimeter == before.start {
                        self.gates[i] = Some(false);
                    }
                }
                self.walls.resize(state.walls.len(), None);
                for (i, (now, before)) in state.walls.iter().zip(&last.walls).enumerate() {
                    if now.at != before.at {
                        self.walls[i] = Move::between(before.at, now.at);
                    }
                }
            }
            self.last = Some(state.clone());
        }
    }

    /// A full board consistent with the state, unknown headings drawn at random.
    fn sample(&self, state: &State, params: &Params, rng: &mut ChaCha8Rng) -> Board {
        let gates = state
            .gates
            .iter()
            .enumerate()
            .map(|(i, g)| Gate { start: g.start, clockwise: self.gates.get(i).copied().flatten().unwrap_or_else(|| rng.gen_bool(0.5)) })
            .collect();
        let walls = state
            .walls
            .iter()
            .enumerate()
            .map(|(i, w)| Wall {
                at: w.at,
                horizontal: w.horizontal,
                heading: self.walls.get(i).copied().flatten().unwrap_or_else(|| Move::STEPS[rng.gen_range(0..4)]),
            })
            .collect();
        Board { params: *params, t: state.t, gates, walls, thief: state.thief, police: state.police.clone(), ending: None }
    }
}

/// The thief's payoff at the end of a simulated future: the payoff if the game ended, else an
/// estimate: an escape through the nearest gate he reaches before the police, or survival
/// less a penalty for police close by.
fn value(board: &Board) -> f64 {
    let params = &board.params;
    if let Some(ending) = board.ending {
        return params.payoff(ending) as f64;
    }
    let terrain = Terrain::from_board(board);
    let thief = terrain.index(board.thief);
    let police = terrain.indices(&board.police);
    let (target, from_police) = thief_target(&terrain, thief, &police, &ThiefTuning::default());
    let t_max = params.t_max as f64;
    let now = board.t as f64;
    if terrain.gate[target] {
        let from_thief = terrain.distances(&[thief], |i| terrain.thief_can_enter(i));
        let arrival = (now + from_thief[target] as f64).min(t_max - 1.0);
        // Gates move: count on the escape only partly.
        return 0.7 * (2.0 * t_max - arrival - 1.0) + 0.3 * t_max;
    }
    let near = from_police[thief].min(6) as f64;
    t_max - (6.0 - near) * 0.1 * (t_max - now)
}

/// Plays a future: `first` moves for ticks t..t+k-1 (the board already shows tick t's gates and
/// walls), then A* on both sides for `CONTINUATION_PLANS` plans; returns `value`.
fn simulate(mut board: Board, thief_moves: &[Move], police_moves: &Plan, rng: &mut ChaCha8Rng) -> f64 {
    let k = board.params.k as usize;
    let thief_tuning = ThiefTuning::default();
    let police_tuning = PoliceTuning::default();
    let mut thief_plan_now = thief_moves.to_vec();
    let mut police_plan_now = police_moves.clone();
    for step in 0..k * (1 + CONTINUATION_PLANS as usize) {
        if step > 0 {
            board.move_obstacles(rng);
        }
        if step > 0 && step % k == 0 {
            let terrain = Terrain::from_board(&board);
            let thief = terrain.index(board.thief);
            let police = terrain.indices(&board.police);
            thief_plan_now = thief_plan(&terrain, thief, &police, k, &thief_tuning);
            police_plan_now = police_plan(&terrain, thief, &police, k, &police_tuning);
        }
        let i = step % k;
        let police: Vec<Move> = police_plan_now.iter().map(|m| m[i]).collect();
        board.move_players(thief_plan_now[i], &police);
        if board.is_over() {
            break;
        }
    }
    value(&board)
}

/// Mean value of each candidate over sampled futures (the same futures for every candidate).
fn evaluate<C>(
    candidates: &[C],
    headings: &Headings,
    state: &State,
    params: &Params,
    rng: &mut ChaCha8Rng,
    deadline: Instant,
    play: impl Fn(&C, Board, &mut ChaCha8Rng) -> f64,
) -> Vec<f64> {
    let started = Instant::now();
    let mut totals = vec![0.0; candidates.len()];
    let mut samples = 0;
    for _ in 0..SAMPLES {
        if samples > 0 && (deadline.saturating_duration_since(Instant::now()) < SAFETY || started.elapsed() > BUDGET) {
            break;
        }
        let board = headings.sample(state, params, rng);
        let future_seed: u64 = rng.gen();
        for (total, candidate) in totals.iter_mut().zip(candidates) {
            // Common random numbers: every candidate meets the same walls and gates.
            let mut future = ChaCha8Rng::seed_from_u64(future_seed);
            *total += play(candidate, board.clone(), &mut future);
        }
        samples += 1;
    }
    totals.iter().map(|t| t / samples.max(1) as f64).collect()
}

fn dedup<T: PartialEq>(items: Vec<T>) -> Vec<T> {
    let mut unique = Vec::with_capacity(items.len());
    for item in items {
        if !unique.contains(&item) {
            unique.push(item);
        }
    }
    unique
}

/// The strong thief.
pub struct StrongThief {
    params: Params,
    rng: ChaCha8Rng,
    headings: Headings,
}

impl StrongThief {
    pub fn new(params: &Params, seed: u64) -> StrongThief {
        StrongThief { params: *params, rng: ChaCha8Rng::seed_from_u64(seed ^ 0x7431_6566), headings: Headings::default() }
    }
}

impl Player for StrongThief {
    fn name(&self) -> String {
        "strong".into()
    }

    fn plan(&mut self, states: &[State], deadline: Instant) -> Result<Plan, String> {
        let state = states.last().ok_or("no state to plan from")?.clone();
        self.headings.observe(states, &self.params);
        let k = self.params.k as usize;
        let terrain = Terrain::from_state(&state, self.params.n);
        let thief = terrain.index(state.thief);
        let police = terrain.indices(&state.police);
        let tuning = ThiefTuning::default();
        let from_police = terrain.distances(&police, |i| terrain.police_can_enter(i));
        let mut candidates = vec![thief_plan(&terrain, thief, &police, k, &tuning), vec![Move::Stay; k]];
        let bold = ThiefTuning { halo_cost: 2.0, halo_radius: 1, ..tuning };
        for &g in terrain.gates.iter().flatten() {
            candidates.push(thief_path_moves(&terrain, thief, g, &from_police, k, &tuning));
            candidates.push(thief_path_moves(&terrain, thief, g, &from_police, k, &bold));
        }
        for m in Move::STEPS {
            candidates.push(vec![m; k]);
        }
        let candidates = dedup(candidates);
        let predicted_police = police_plan(&terrain, thief, &police, k, &PoliceTuning::default());
        let values = evaluate(&candidates, &self.headings, &state, &self.params, &mut self.rng, deadline, |moves, board, rng| {
            simulate(board, moves, &predicted_police, rng)
        });
        let best = (0..candidates.len()).max_by(|&a, &b| values[a].total_cmp(&values[b]).then(b.cmp(&a))).expect("there is a candidate");
        Ok(vec![candidates[best].clone()])
    }
}

/// The strong police.
pub struct StrongPolice {
    params: Params,
    rng: ChaCha8Rng,
    headings: Headings,
}

impl StrongPolice {
    pub fn new(params: &Params, seed: u64) -> StrongPolice {
        StrongPolice { params: *params, rng: ChaCha8Rng::seed_from_u64(seed ^ 0x706f_6c69), headings: Headings::default() }
    }
}

/// Targets that cut the thief off: the squares of his predicted path (his A*, followed on for a
/// few plans) that a policeman reaches no later than he does.
fn intercept_targets(terrain: &Terrain, thief: usize, police: &[usize], k: usize, fallback: &[usize]) -> Vec<usize> {
    let tuning = ThiefTuning::default();
    let mut path = Vec::new();
    let mut at = thief;
    let (target, from_police) = thief_target(terrain, thief, police, &tuning);
    for moves in [thief_path_moves(terrain, thief, target, &from_police, 4 * k, &tuning)] {
        for m in moves {
            at = m.apply(terrain.pos(at), terrain.n).map(|p| terrain.index(p)).unwrap_or(at);
            path.push(at);
        }
    }
    let from_each: Vec<Vec<u16>> = police.iter().map(|&p| terrain.distances(&[p], |i| terrain.police_can_enter(i))).collect();
    let mut targets = fallback.to_vec();
    let mut taken = vec![false; police.len()];
    for (step, &square) in path.iter().enumerate() {
        if !terrain.police_can_enter(square) {
            continue;
        }
        let catcher = (0..police.len())
            .filter(|&i| !taken[i] && from_each[i][square] != FAR && from_each[i][square] as usize <= step + 1)
            .min_by_key(|&i| from_each[i][square]);
        if let Some(i) = catcher {
            taken[i] = true;
            targets[i] = square;
        }
    }
    targets
}

impl Player for StrongPolice {
    fn name(&self) -> String {
        "strong".into()
    }

    fn plan(&mut self, states: &[State], deadline: Instant) -> Result<Plan, String> {
        let state = states.last().ok_or("no state to plan from")?.clone();
        self.headings.observe(states, &self.params);
        let k = self.params.k as usize;
        let terrain = Terrain::from_state(&state, self.params.n);
        let thief = terrain.index(state.thief);
        let police = terrain.indices(&state.police);
        let base = PoliceTuning::default();
        let variants = [
            base,
            PoliceTuning { guard_range: 0, ..base },
            PoliceTuning { guard_range: 16, ..base },
            PoliceTuning { surround_distance: 1, ..base },
            PoliceTuning { surround_distance: 4, ..base },
        ];
        let mut candidates: Vec<Plan> = variants.iter().map(|tuning| police_plan(&terrain, thief, &police, k, tuning)).collect();
        let fallback = police_targets(&terrain, thief, &police, &base);
        let intercept = intercept_targets(&terrain, thief, &police, k, &fallback);
        candidates.push(police_paths(&terrain, thief, &police, &intercept, k, base.overlap_cost));
        let candidates = dedup(candidates);
        let predicted_thief = thief_plan(&terrain, thief, &police, k, &ThiefTuning::default());
        let values = evaluate(&candidates, &self.headings, &state, &self.params, &mut self.rng, deadline, |plan, board, rng| {
            simulate(board, &predicted_thief, plan, rng)
        });
        let best = (0..candidates.len()).min_by(|&a, &b| values[a].total_cmp(&values[b]).then(a.cmp(&b))).expect("there is a candidate");
        Ok(candidates[best].clone())
    }
}
