//! The lecture's suggested players: at every plan, pick a target square by a heuristic and run
//! A* to it, taking the first k steps.
//!
//! - **Thief:** weighs the gate squares (how soon he gets there against how soon the police get
//!   next to it) against the square farthest from the police; his A* avoids the police through a
//!   soft halo: squares near a policeman cost more, less so farther out.
//! - **Police:** a policeman guards the mouth of a gate the thief is close to, if he can be
//!   there in time; the others surround the thief, each aiming at a different square (the
//!   thief's and the squares two steps from him), and a policeman's A* pays extra for squares
//!   on a teammate's path so that their paths do not run together.
//!
//! The A* keeps its open set in a binary heap and the best known cost of every square in a dense
//! table indexed by square (the lecture suggests a hash map beside the heap; on a board of at
//! most 100 x 100 squares a table is the same idea without hashing).
//! Walls are taken where they stand now; the plan is redone every k ticks.

use std::cmp::Ordering;
use std::collections::BinaryHeap;
use std::time::Instant;

use super::params::Params;
use super::players::{Plan, Player};
use super::rules::{Board, Move, Pos, State};

/// Unreachable in a distance table.
pub const FAR: u16 = u16::MAX;

/// The board as the planners see it: walls, gate squares, indexed `row * n + column`.
#[derive(Clone, Debug)]
pub struct Terrain {
    pub n: u16,
    pub wall: Vec<bool>,
    pub gate: Vec<bool>,
    /// The gate squares, gate by gate.
    pub gates: Vec<Vec<usize>>,
}

impl Terrain {
    pub fn from_state(state: &State, n: u16) -> Terrain {
        let mut terrain = Terrain { n, wall: vec![false; n as usize * n as usize], gate: vec![false; n as usize * n as usize], gates: Vec::new() };
        for wall in &state.walls {
            for &p in &wall.squares {
                let i = terrain.index(p);
                terrain.wall[i] = true;
            }
        }
        for gate in &state.gates {
            let squares = terrain.indices(&gate.squares);
            for &i in &squares {
                terrain.gate[i] = true;
            }
            terrain.gates.push(squares);
        }
        terrain
    }

    pub fn from_board(board: &Board) -> Terrain {
        Terrain::from_state(&board.view(), board.params.n)
    }

    /// The cells of several squares (the policemen's, say), in order.
    pub fn indices(&self, squares: &[Pos]) -> Vec<usize> {
        squares.iter().map(|&p| self.index(p)).collect()
    }

    pub fn index(&self, p: Pos) -> usize {
        p[0] as usize * self.n as usize + p[1] as usize
    }

    pub fn pos(&self, i: usize) -> Pos {
        [(i / self.n as usize) as u16, (i % self.n as usize) as u16]
    }

    pub fn len(&self) -> usize {
        self.wall.len()
    }

    pub fn is_empty(&self) -> bool {
        self.wall.is_empty()
    }

    /// The 4-neighbours of square i on the board.
    pub fn neighbours(&self, i: usize) -> impl Iterator<Item = usize> {
        let n = self.n as usize;
        let (r, c) = (i / n, i % n);
        let up = (r > 0).then(|| i - n);
        let down = (r + 1 < n).then(|| i + n);
        let left = (c > 0).then(|| i - 1);
        let right = (c + 1 < n).then(|| i + 1);
        [up, down, left, right].into_iter().flatten()
    }

    /// Where a thief may step.
    pub fn thief_can_enter(&self, i: usize) -> bool {
        !self.wall[i]
    }

    /// Where a policeman may step.
    pub fn police_can_enter(&self, i: usize) -> bool {
        !self.wall[i] && !self.gate[i]
    }

    /// Steps from every square to the nearest source, through squares `can_enter` allows.
    pub fn distances(&self, sources: &[usize], can_enter: impl Fn(usize) -> bool) -> Vec<u16> {
        let mut dist = vec![FAR; self.len()];
        let mut queue = std::collections::VecDeque::with_capacity(self.len());
        for &s in sources {
            if dist[s] != 0 {
                dist[s] = 0;
                queue.push_back(s);
            }
        }
        while let Some(i) = queue.pop_front() {
            let next = dist[i] + 1;
            for j in self.neighbours(i) {
                if dist[j] == FAR && can_enter(j) {
                    dist[j] = next;
                    queue.push_back(j);
                }
            }
        }
        dist
    }

    /// A* from `start` to `goal` through squares `can_enter` allows, each step costing 1 plus
    /// `extra(square)`. The path without the start; `None` if the goal cannot be reached.
    pub fn astar(&self, start: usize, goal: usize, can_enter: impl Fn(usize) -> bool, extra: impl Fn(usize) -> f32) -> Option<Vec<usize>> {
        let n = self.n as usize;
        let manhattan = |i: usize| ((i / n).abs_diff(goal / n) + (i % n).abs_diff(goal % n)) as f32;
        let mut best = vec![f32::INFINITY; self.len()];
        let mut came_from = vec![usize::MAX; self.len()];
        let mut open = BinaryHeap::new();
        best[start] = 0.0;
        open.push(Open { f: manhattan(start), g: 0.0, square: start });
        while let Some(Open { g, square, .. }) = open.pop() {
            if square == goal {
                if goal == start {
                    return Some(Vec::new());
                }
                let mut path = vec![goal];
                let mut at = goal;
                while came_from[at] != start {
                    at = came_from[at];
                    path.push(at);
                }
                path.reverse();
                return Some(path);
            }
            if g > best[square] {
                continue; // a stale heap entry: a cheaper way here was found later
            }
            for next in self.neighbours(square) {
                if !can_enter(next) {
                    continue;
                }
                let cost = g + 1.0 + extra(next);
                if cost < best[next] {
                    best[next] = cost;
                    came_from[next] = square;
                    open.push(Open { f: cost + manhattan(next), g: cost, square: next });
                }
            }
        }
        None
    }

    /// The k moves following `path` from `from` (staying once the path ends).
    pub fn moves_along(&self, from: usize, path: &[usize], k: usize) -> Vec<Move> {
        let mut moves = Vec::with_capacity(k);
        let mut at = self.pos(from);
        for &next in path.iter().take(k) {
            let to = self.pos(next);
            moves.push(Move::between(at, to).expect("a path goes square by square"));
            at = to;
        }
        moves.resize(k, Move::Stay);
        moves
    }
}

#[derive(PartialEq)]
struct Open {
    f: f32,
    g: f32,
    square: usize,
}

impl Eq for Open {}

impl Ord for Open {
    // The heap pops the smallest f first; among equals the deepest (largest g).
    fn cmp(&self, other: &Self) -> Ordering {
        other.f.total_cmp(&self.f).then(self.g.total_cmp(&other.g))
    }
}

impl PartialOrd for Open {
    fn partial_cmp(&self, other: &Self) -> Option<Ordering> {
        Some(self.cmp(other))
    }
}

/// The thief's knobs.
#[derive(Clone, Copy, Debug)]
pub struct ThiefTuning {
    /// Squares closer than this to a policeman cost extra.
    pub halo_radius: u16,
    /// The extra cost next to a policeman, falling linearly to 0 at the radius.
    pub halo_cost: f32,
    /// How many steps later than the police (next to the gate) the thief still goes for a gate.
    pub gate_daring: i32,
}

impl Default for ThiefTuning {
    fn default() -> Self {
        ThiefTuning { halo_radius: 3, halo_cost: 8.0, gate_daring: 0 }
    }
}

/// The thief's target: the best gate square, or the square farthest from the police.
pub fn thief_target(terrain: &Terrain, thief: usize, police: &[usize], tuning: &ThiefTuning) -> (usize, Vec<u16>) {
    let from_police = terrain.distances(police, |i| terrain.police_can_enter(i));
    let from_thief = terrain.distances(&[thief], |i| terrain.thief_can_enter(i));
    // A policeman cannot stand on a gate square: he stops the thief next to it.
    let police_next_to = |g: usize| terrain.neighbours(g).map(|j| from_police[j]).min().unwrap_or(FAR).saturating_add(1);
    let best_gate = terrain
        .gates
        .iter()
        .flatten()
        .filter(|&&g| from_thief[g] != FAR)
        .map(|&g| (g, police_next_to(g) as i32 - from_thief[g] as i32, from_thief[g]))
        .min_by_key(|&(_, margin, dist)| (margin < -tuning.gate_daring, dist));
    if let Some((gate, margin, _)) = best_gate {
        if margin >= -tuning.gate_daring {
            return (gate, from_police);
        }
    }
    // No gate within reach before the police: the square he reaches first with the most room.
    let far = (0..terrain.len())
        .filter(|&i| from_thief[i] != FAR && !terrain.gate[i])
        .max_by_key(|&i| {
            let room = from_police[i].min(60) as i32;
            let ahead = room - from_thief[i] as i32;
            (ahead > 0, 2 * room - from_thief[i] as i32)
        })
        .unwrap_or(thief);
    (far, from_police)
}

/// The A* thief's k moves.
pub fn thief_plan(terrain: &Terrain, thief: usize, police: &[usize], k: usize, tuning: &ThiefTuning) -> Vec<Move> {
    let (target, from_police) = thief_target(terrain, thief, police, tuning);
    thief_path_moves(terrain, thief, target, &from_police, k, tuning)
}

/// k moves of the thief's A* to `target` through the police's soft halo.
pub fn thief_path_moves(terrain: &Terrain, thief: usize, target: usize, from_police: &[u16], k: usize, tuning: &ThiefTuning) -> Vec<Move> {
    let radius = tuning.halo_radius as f32;
    let halo = |i: usize| {
        let d = from_police[i] as f32;
        if d <= radius {
            tuning.halo_cost * (radius + 1.0 - d) / (radius + 1.0)
        } else {
            0.0
        }
    };
    let path = terrain.astar(thief, target, |i| terrain.thief_can_enter(i), halo).unwrap_or_default();
    terrain.moves_along(thief, &path, k)
}

/// The police's knobs.
#[derive(Clone, Copy, Debug)]
pub struct PoliceTuning {
    /// A gate the thief is at most this many steps from gets a guard.
    pub guard_range: u16,
    /// Extra cost of a square on a teammate's path.
    pub overlap_cost: f32,
    /// How far from the thief the surrounding squares are.
    pub surround_distance: u16,
}

impl Default for PoliceTuning {
    fn default() -> Self {
        PoliceTuning { guard_range: 8, overlap_cost: 0.5, surround_distance: 2 }
    }
}

/// Each policeman's target square: gate guards first, then the thief and the squares around him.
pub fn police_targets(terrain: &Terrain, thief: usize, police: &[usize], tuning: &PoliceTuning) -> Vec<usize> {
    let from_thief = terrain.distances(&[thief], |i| terrain.thief_can_enter(i));
    let from_each: Vec<Vec<u16>> = police.iter().map(|&p| terrain.distances(&[p], |i| terrain.police_can_enter(i))).collect();
    let mut target: Vec<Option<usize>> = vec![None; police.len()];
    // Guards: the gates nearest the thief first.
    let mut gates: Vec<(u16, usize)> = terrain
        .gates
        .iter()
        .filter_map(|squares| {
            let threat = squares.iter().map(|&g| from_thief[g]).min()?;
            let mouth = squares.iter().flat_map(|&g| terrain.neighbours(g)).filter(|&j| terrain.police_can_enter(j)).min_by_key(|&j| from_thief[j])?;
            Some((threat, mouth))
        })
        .collect();
    gates.sort();
    for (threat, mouth) in gates {
        if threat > tuning.guard_range || target.iter().filter(|t| t.is_none()).count() <= 1 {
            continue;
        }
        let guard = (0..police.len()).filter(|&i| target[i].is_none()).min_by_key(|&i| from_each[i][mouth]);
        if let Some(i) = guard {
            if from_each[i][mouth] <= threat + 1 {
                target[i] = Some(mouth);
            }
        }
    }
    // The rest surround the thief: his square and one square on each side, different for each.
    let mut spots = vec![thief];
    let n = terrain.n as usize;
    for (dr, dc) in [(-1i32, 0i32), (1, 0), (0, -1), (0, 1)] {
        let (mut r, mut c) = ((thief / n) as i32, (thief % n) as i32);
        for _ in 0..tuning.surround_distance {
            let (nr, nc) = (r + dr, c + dc);
            if nr < 0 || nc < 0 || nr >= n as i32 || nc >= n as i32 || !terrain.police_can_enter(nr as usize * n + nc as usize) {
                break;
            }
            (r, c) = (nr, nc);
        }
        let spot = r as usize * n + c as usize;
        if !spots.contains(&spot) && terrain.police_can_enter(spot) {
            spots.push(spot);
        }
    }
    // The nearest free policeman goes for the thief himself; the others take the spots around
    // him, nearest pair first.
    let chaser = (0..police.len()).filter(|&i| target[i].is_none()).min_by_key(|&i| from_each[i][thief]);
    if let Some(i) = chaser {
        target[i] = Some(thief);
    }
    let mut free_spots = spots[1..].to_vec();
    loop {
        let best = (0..police.len())
            .filter(|&i| target[i].is_none())
            .flat_map(|i| free_spots.iter().enumerate().map(move |(s, &spot)| (i, s, spot)))
            .min_by_key(|&(i, _, spot)| from_each[i][spot]);
        let Some((i, s, spot)) = best else { break };
        target[i] = Some(spot);
        free_spots.remove(s);
    }
    target.into_iter().map(|t| t.unwrap_or(thief)).collect()
}

/// The A* police's plan: k moves for each policeman.
pub fn police_plan(terrain: &Terrain, thief: usize, police: &[usize], k: usize, tuning: &PoliceTuning) -> Plan {
    let targets = police_targets(terrain, thief, police, tuning);
    police_paths(terrain, thief, police, &targets, k, tuning.overlap_cost)
}

/// k moves of each policeman's A* to his target, paths spread apart by `overlap_cost`.
pub fn police_paths(terrain: &Terrain, thief: usize, police: &[usize], targets: &[usize], k: usize, overlap_cost: f32) -> Plan {
    let mut used = vec![0u8; terrain.len()];
    police
        .iter()
        .zip(targets)
        .map(|(&from, &to)| {
            let path = terrain
                .astar(from, to, |i| terrain.police_can_enter(i), |i| overlap_cost * used[i] as f32)
                .or_else(|| terrain.astar(from, thief, |i| terrain.police_can_enter(i), |_| 0.0))
                .unwrap_or_default();
            for &i in &path {
                used[i] = used[i].saturating_add(1);
            }
            terrain.moves_along(from, &path, k)
        })
        .collect()
}

/// The lecture's A* thief.
pub struct AStarThief {
    params: Params,
    tuning: ThiefTuning,
}

impl AStarThief {
    pub fn new(params: &Params) -> AStarThief {
        AStarThief { params: *params, tuning: ThiefTuning::default() }
    }
}

impl Player for AStarThief {
    fn name(&self) -> String {
        "astar".into()
    }

    fn plan(&mut self, states: &[State], _deadline: Instant) -> Result<Plan, String> {
        let state = states.last().ok_or("no state to plan from")?;
        let terrain = Terrain::from_state(state, self.params.n);
        let police = terrain.indices(&state.police);
        Ok(vec![thief_plan(&terrain, terrain.index(state.thief), &police, self.params.k as usize, &self.tuning)])
    }
}

/// The lecture's A* police.
pub struct AStarPolice {
    params: Params,
    tuning: PoliceTuning,
}

impl AStarPolice {
    pub fn new(params: &Params) -> AStarPolice {
        AStarPolice { params: *params, tuning: PoliceTuning::default() }
    }
}

impl Player for AStarPolice {
    fn name(&self) -> String {
        "astar".into()
    }

    fn plan(&mut self, states: &[State], _deadline: Instant) -> Result<Plan, String> {
        let state = states.last().ok_or("no state to plan from")?;
        let terrain = Terrain::from_state(state, self.params.n);
        let police = terrain.indices(&state.police);
        Ok(police_plan(&terrain, terrain.index(state.thief), &police, self.params.k as usize, &self.tuning))
    }
}

#[cfg(test)]
mod tests {
    use super::super::rules::{GateView, WallView};
    use super::*;

    fn state(thief: Pos, police: Vec<Pos>, gates: Vec<Vec<Pos>>, walls: Vec<Vec<Pos>>) -> State {
        State {
            t: 0,
            thief,
            police,
            gates: gates.into_iter().map(|squares| GateView { start: 0, squares }).collect(),
            walls: walls.into_iter().map(|squares| WallView { at: squares[0], horizontal: true, squares }).collect(),
        }
    }

    #[test]
    fn astar_finds_a_shortest_path_around_a_wall() {
        let s = state([5, 0], vec![], vec![], vec![vec![[4, 2], [5, 2], [6, 2]]]);
        let terrain = Terrain::from_state(&s, 10);
        let path = terrain.astar(terrain.index([5, 0]), terrain.index([5, 4]), |i| terrain.thief_can_enter(i), |_| 0.0).unwrap();
        assert_eq!(path.len(), 8, "around a 3-square wall: 4 + 2 + 2 steps");
        assert!(path.iter().all(|&i| !terrain.wall[i]));
        assert_eq!(*path.last().unwrap(), terrain.index([5, 4]));
        let bfs = terrain.distances(&[terrain.index([5, 0])], |i| terrain.thief_can_enter(i));
        assert_eq!(bfs[terrain.index([5, 4])], 8);
    }

    #[test]
    fn the_thief_runs_for_a_free_gate_and_around_the_police() {
        let s = state([5, 5], vec![[5, 8]], vec![vec![[0, 4], [0, 5]]], vec![]);
        let terrain = Terrain::from_state(&s, 10);
        let moves = thief_plan(&terrain, terrain.index([5, 5]), &[terrain.index([5, 8])], 5, &ThiefTuning::default());
        assert_eq!(moves, vec![Move::Up; 5]);
    }

    #[test]
    fn the_thief_flees_when_the_police_hold_the_gate() {
        // The policeman stands at the gate's mouth: the thief goes away from him instead.
        let s = state([4, 5], vec![[1, 5]], vec![vec![[0, 5], [0, 6]]], vec![]);
        let terrain = Terrain::from_state(&s, 10);
        let (target, _) = thief_target(&terrain, terrain.index([4, 5]), &[terrain.index([1, 5])], &ThiefTuning::default());
        assert!(!terrain.gate[target]);
        assert!(terrain.pos(target)[0] >= 6, "he heads away from the policeman: {:?}", terrain.pos(target));
    }

    #[test]
    fn policemen_spread_over_different_targets_and_guard_a_threatened_gate() {
        let s = state([3, 5], vec![[9, 0], [9, 9], [0, 0], [5, 9], [9, 5]], vec![vec![[0, 8], [0, 9]]], vec![]);
        let terrain = Terrain::from_state(&s, 10);
        let police = terrain.indices(&s.police);
        let targets = police_targets(&terrain, terrain.index([3, 5]), &police, &PoliceTuning::default());
        let mut distinct = targets.clone();
        distinct.sort();
        distinct.dedup();
        assert_eq!(distinct.len(), 5, "five different targets: {targets:?}");
        assert!(targets.iter().any(|&t| terrain.neighbours(t).any(|j| terrain.gate[j])), "someone guards the gate: {targets:?}");
        assert!(targets.contains(&terrain.index([3, 5])), "someone goes for the thief");
        let plan = police_plan(&terrain, terrain.index([3, 5]), &police, 5, &PoliceTuning::default());
        assert_eq!(plan.len(), 5);
        assert!(plan.iter().all(|m| m.len() == 5));
    }
}
