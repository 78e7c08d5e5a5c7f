//! The stronger planners: candidate plans tried against sampled futures.
//!
//! Every k ticks the planner
//! 1. updates what it knows of where each gate and wall is heading (the states show positions
//!    only; a gate or wall seen moving reveals its heading, an unseen one is guessed at random);
//! 2. builds a handful of candidate plans (the A* plan, plans to every gate square or away from
//!    the police for the thief; guard, chase and intercept variants for the police);
//! 3. predicts the opponent with the [`opponent`](super::opponent) models that best explain the
//!    opponent's moves so far in the game (at most three, each with its weight; the lecture's
//!    "the other side's A*" is one of them, the only one a planner had before);
//! 4. plays each candidate against each of those models in several sampled futures of the gates
//!    and walls (the engine's own rules, the planner's own RNG), continues every future with A*
//!    for its own side and the model for the opponent for two more plans, scores the end by the
//!    payoff (or an estimate of it when the game is still on), and keeps the candidate with the
//!    best mean, the models' means weighted by their weights.
//!
//! It uses a fixed number of samples (so a game is reproducible), stopping early only if the
//! engine's deadline comes close or its own budget of 90 ms runs out (a loaded machine).

use std::time::{Duration, Instant};

use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;

use super::astar::{police_paths, police_plan, police_targets, thief_path_moves, thief_plan, thief_target, PoliceTuning, Terrain, ThiefTuning, FAR};
use super::opponent::{Belief, Model};
use super::params::Params;
use super::players::{Plan, Player, Role};
use super::rules::{Board, Gate, Move, State, Wall};

/// Sampled futures per candidate, shared among the opponent models by weight.
const SAMPLES: usize = 8;
/// Each model planned against gets at least this many of them.
const MIN_SAMPLES_PER_MODEL: usize = 2;
/// Opponent models planned against: the likeliest few, each at least this likely.
const MAX_MODELS: usize = 3;
const MIN_WEIGHT: f64 = 0.1;
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

/// The two sides of a simulated future: the planner's own first k moves (then its A*), and the
/// opponent played by a model (its first k moves given when the model is not random).
struct Sides<'a> {
    own: Role,
    own_first: &'a Plan,
    opponent: Model,
    opponent_first: Option<&'a Plan>,
    opponent_last: &'a [Move],
}

/// Plays a future: the first moves for ticks t..t+k-1 (the board already shows tick t's gates and
/// walls), then `CONTINUATION_PLANS` more plans; returns `value`.
fn simulate(mut board: Board, sides: &Sides, rng: &mut ChaCha8Rng) -> f64 {
    let k = board.params.k as usize;
    let opponent_role = match sides.own {
        Role::Thief => Role::Police,
        Role::Police => Role::Thief,
    };
    let mut own_now = sides.own_first.clone();
    let mut opponent_now = Plan::new();
    for step in 0..k * (1 + CONTINUATION_PLANS as usize) {
        if step > 0 {
            board.move_obstacles(rng);
        }
        if step % k == 0 {
            let terrain = Terrain::from_board(&board);
            let thief = terrain.index(board.thief);
            let police = terrain.indices(&board.police);
            if step > 0 {
                own_now = match sides.own {
                    Role::Thief => vec![thief_plan(&terrain, thief, &police, k, &ThiefTuning::default())],
                    Role::Police => police_plan(&terrain, thief, &police, k, &PoliceTuning::default()),
                };
            }
            opponent_now = match (step, sides.opponent_first) {
                (0, Some(first)) => first.clone(),
                _ => sides.opponent.plan(opponent_role, &terrain, thief, &police, sides.opponent_last, k, rng),
            };
        }
        let i = step % k;
        let (thief_plan_now, police_plan_now) = match sides.own {
            Role::Thief => (&own_now, &opponent_now),
            Role::Police => (&opponent_now, &own_now),
        };
        let police: Vec<Move> = police_plan_now.iter().map(|m| m[i]).collect();
        board.move_players(thief_plan_now[0][i], &police);
        if board.is_over() {
            break;
        }
    }
    value(&board)
}

/// The opponent models to plan against, with weights summing to 1: the likeliest, and the next
/// ones as long as they are likely enough.
fn mixture(belief: &Belief) -> Vec<(Model, f64)> {
    let mut models: Vec<(Model, f64)> = belief.weights().collect();
    // Stable: equal weights keep the family's order (A* first).
    models.sort_by(|a, b| b.1.total_cmp(&a.1));
    let mut chosen: Vec<(Model, f64)> = models.iter().copied().take(MAX_MODELS).enumerate().filter(|&(i, (_, w))| i == 0 || w >= MIN_WEIGHT).map(|(_, m)| m).collect();
    let total: f64 = chosen.iter().map(|(_, w)| w).sum();
    for (_, w) in &mut chosen {
        *w /= total;
    }
    chosen
}

/// Which model each sample plays against: every model its share of `SAMPLES` by weight (at least
/// `MIN_SAMPLES_PER_MODEL`), taken in turns so that a sampling cut short by the clock still
/// meets every model.
fn schedule(mixture: &[(Model, f64)]) -> Vec<usize> {
    let mut left: Vec<usize> = mixture.iter().map(|&(_, w)| ((SAMPLES as f64 * w).round() as usize).max(MIN_SAMPLES_PER_MODEL)).collect();
    let mut order = Vec::new();
    while left.iter().any(|&n| n > 0) {
        for (m, n) in left.iter_mut().enumerate() {
            if *n > 0 {
                *n -= 1;
                order.push(m);
            }
        }
    }
    order
}

/// Mean value of each candidate over sampled futures (the same futures for every candidate),
/// the opponent models' means weighted by their weights.
#[allow(clippy::too_many_arguments)]
fn evaluate<C>(
    candidates: &[C],
    mixture: &[(Model, f64)],
    headings: &Headings,
    state: &State,
    params: &Params,
    rng: &mut ChaCha8Rng,
    deadline: Instant,
    play: impl Fn(&C, usize, Board, &mut ChaCha8Rng) -> f64,
) -> Vec<f64> {
    let started = Instant::now();
    let mut totals = vec![vec![0.0; candidates.len()]; mixture.len()];
    let mut samples = vec![0usize; mixture.len()];
    for (done, model) in schedule(mixture).into_iter().enumerate() {
        if done > 0 && (deadline.saturating_duration_since(Instant::now()) < SAFETY || started.elapsed() > BUDGET) {
            break;
        }
        let board = headings.sample(state, params, rng);
        let future_seed: u64 = rng.gen();
        for (total, candidate) in totals[model].iter_mut().zip(candidates) {
            // Common random numbers: every candidate meets the same walls and gates.
            let mut future = ChaCha8Rng::seed_from_u64(future_seed);
            *total += play(candidate, model, board.clone(), &mut future);
        }
        samples[model] += 1;
    }
    let weight_seen: f64 = mixture.iter().zip(&samples).filter(|(_, &n)| n > 0).map(|((_, w), _)| w).sum();
    (0..candidates.len())
        .map(|c| mixture.iter().enumerate().filter(|&(m, _)| samples[m] > 0).map(|(m, (_, w))| w * totals[m][c] / samples[m] as f64).sum::<f64>() / weight_seen)
        .collect()
}

/// Each model's first k moves for the opponent (`None` for a random model, drawn per future).
fn opponent_firsts(mixture: &[(Model, f64)], opponent: Role, terrain: &Terrain, thief: usize, police: &[usize], last: &[Move], k: usize) -> Vec<Option<Plan>> {
    let mut unused = rand::rngs::mock::StepRng::new(0, 0);
    mixture.iter().map(|&(model, _)| (!model.is_random()).then(|| model.plan(opponent, terrain, thief, police, last, k, &mut unused))).collect()
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
    police: Belief,
}

impl StrongThief {
    pub fn new(params: &Params, seed: u64) -> StrongThief {
        StrongThief { params: *params, rng: ChaCha8Rng::seed_from_u64(seed ^ 0x7431_6566), headings: Headings::default(), police: Belief::new(Role::Police, params) }
    }

    /// What it believes of the police so far.
    pub fn belief(&self) -> &Belief {
        &self.police
    }
}

impl Player for StrongThief {
    fn name(&self) -> String {
        "strong".into()
    }

    fn plan(&mut self, states: &[State], deadline: Instant) -> Result<Plan, String> {
        let state = states.last().ok_or("no state to plan from")?.clone();
        self.headings.observe(states, &self.params);
        self.police.observe(states, &self.params);
        let k = self.params.k as usize;
        let terrain = Terrain::from_state(&state, self.params.n);
        let thief = terrain.index(state.thief);
        let police = terrain.indices(&state.police);
        let tuning = ThiefTuning::default();
        let from_police = terrain.distances(&police, |i| terrain.police_can_enter(i));
        let mut unused = rand::rngs::mock::StepRng::new(0, 0);
        let mut candidates = vec![
            thief_plan(&terrain, thief, &police, k, &tuning),
            vec![Move::Stay; k],
            Model::Keeper.plan(Role::Thief, &terrain, thief, &police, &[], k, &mut unused).remove(0),
        ];
        let bold = ThiefTuning { halo_cost: 2.0, halo_radius: 1, ..tuning };
        for &g in terrain.gates.iter().flatten() {
            candidates.push(thief_path_moves(&terrain, thief, g, &from_police, k, &tuning));
            candidates.push(thief_path_moves(&terrain, thief, g, &from_police, k, &bold));
        }
        for m in Move::STEPS {
            candidates.push(vec![m; k]);
        }
        let candidates: Vec<Plan> = dedup(candidates).into_iter().map(|moves| vec![moves]).collect();
        let mixture = mixture(&self.police);
        let last = self.police.last_moves().to_vec();
        let firsts = opponent_firsts(&mixture, Role::Police, &terrain, thief, &police, &last, k);
        let values = evaluate(&candidates, &mixture, &self.headings, &state, &self.params, &mut self.rng, deadline, |plan, m, board, rng| {
            let sides = Sides { own: Role::Thief, own_first: plan, opponent: mixture[m].0, opponent_first: firsts[m].as_ref(), opponent_last: &last };
            simulate(board, &sides, rng)
        });
        let best = (0..candidates.len()).max_by(|&a, &b| values[a].total_cmp(&values[b]).then(b.cmp(&a))).expect("there is a candidate");
        Ok(candidates[best].clone())
    }
}

/// The strong police.
pub struct StrongPolice {
    params: Params,
    rng: ChaCha8Rng,
    headings: Headings,
    thief: Belief,
}

impl StrongPolice {
    pub fn new(params: &Params, seed: u64) -> StrongPolice {
        StrongPolice { params: *params, rng: ChaCha8Rng::seed_from_u64(seed ^ 0x706f_6c69), headings: Headings::default(), thief: Belief::new(Role::Thief, params) }
    }

    /// What it believes of the thief so far.
    pub fn belief(&self) -> &Belief {
        &self.thief
    }
}

/// Targets that cut the thief off: the squares of his predicted path that a policeman reaches no
/// later than he does.
fn intercept_targets(terrain: &Terrain, thief: usize, police: &[usize], path_moves: &[Move], fallback: &[usize]) -> Vec<usize> {
    let mut path = Vec::new();
    let mut at = thief;
    for &m in path_moves {
        at = m.apply(terrain.pos(at), terrain.n).map(|p| terrain.index(p)).filter(|&i| terrain.thief_can_enter(i)).unwrap_or(at);
        path.push(at);
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
        self.thief.observe(states, &self.params);
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
        let mut unused = rand::rngs::mock::StepRng::new(0, 0);
        candidates.push(Model::Chaser.plan(Role::Police, &terrain, thief, &police, &[], k, &mut unused));
        let fallback = police_targets(&terrain, thief, &police, &base);
        let mixture = mixture(&self.thief);
        // Cut off the path of every deterministic model planned against (A*'s is the lecture's).
        let mut paths = vec![thief_plan(&terrain, thief, &police, 4 * k, &ThiefTuning::default())];
        for &(model, _) in &mixture {
            if !model.is_random() && model != Model::Stay {
                paths.push(model.plan(Role::Thief, &terrain, thief, &police, self.thief.last_moves(), 4 * k, &mut unused).remove(0));
            }
        }
        for path in dedup(paths) {
            let intercept = intercept_targets(&terrain, thief, &police, &path, &fallback);
            candidates.push(police_paths(&terrain, thief, &police, &intercept, k, base.overlap_cost));
        }
        let candidates = dedup(candidates);
        let last = self.thief.last_moves().to_vec();
        let firsts = opponent_firsts(&mixture, Role::Thief, &terrain, thief, &police, &last, k);
        let values = evaluate(&candidates, &mixture, &self.headings, &state, &self.params, &mut self.rng, deadline, |plan, m, board, rng| {
            let sides = Sides { own: Role::Police, own_first: plan, opponent: mixture[m].0, opponent_first: firsts[m].as_ref(), opponent_last: &last };
            simulate(board, &sides, rng)
        });
        let best = (0..candidates.len()).min_by(|&a, &b| values[a].total_cmp(&values[b]).then(a.cmp(&b))).expect("there is a candidate");
        Ok(candidates[best].clone())
    }
}
