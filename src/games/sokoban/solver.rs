//! Push-level solver: weighted best-first (A*-like) search over box positions with the player
//! normalised to its reachable region.
//!
//! Pruning: dead squares (from which no box can reach a goal, found by pulling boxes back from
//! the goals), freeze deadlocks (a box stuck on both axes off a goal) and matching deadlocks (no
//! way to give every box its own goal it can still reach). Lower bound: the minimum-cost matching
//! of boxes to goals by pull distance (Hungarian method). States are keyed by a Zobrist hash; a
//! collision can only hide a state, never produce a wrong solution, because every solution is
//! replayed by [`Game`] before it is reported. Time comes from the caller: a deadline and a cancel flag.

use std::cmp::Reverse;
use std::collections::{BinaryHeap, HashSet};
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Instant;

use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;

use super::game::{shortest_walk, Game};
use super::level::Level;

/// How much more the bound counts than the pushes made (see the search's priority).
const WEIGHT: u32 = 3;

/// How a search ended.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Outcome {
    /// A verified solution as LURD, with its move and push counts.
    Solved { lurd: String, moves: usize, pushes: usize },
    /// The whole reachable state space was searched: no solution exists.
    Unsolvable,
    /// Deadline reached or cancelled first.
    OutOfTime,
}

struct Node {
    boxes: Box<[u16]>,
    player: u16,
    parent: u32,
    /// The push that led here: the box's cell before it, and the direction.
    push: (u16, u8),
    pushes: u32,
}

/// Per-level tables shared by the whole search.
struct Tables<'a> {
    level: &'a Level,
    /// For each cell, the fewest pushes to bring a box from it to the nearest goal (u16::MAX: dead).
    distance_to_goal: Vec<u16>,
    /// For each goal (in cell order), the fewest pushes from each cell to it, other boxes aside.
    distance_to_each_goal: Vec<Vec<u16>>,
    zobrist_box: Vec<u64>,
    zobrist_player: Vec<u64>,
}

/// Pushes needed to bring a box from each cell to `goal` (no other box in the way): a
/// breadth-first search pulling the box back from the goal, the player two cells ahead.
fn pull_distances(level: &Level, goal: usize) -> Vec<u16> {
    let mut distance = vec![u16::MAX; level.width * level.height];
    let mut queue = std::collections::VecDeque::from([goal]);
    distance[goal] = 0;
    while let Some(cell) = queue.pop_front() {
        for direction in 0..4 {
            let Some(to) = level.neighbour(cell, direction) else { continue };
            let Some(player) = level.neighbour(to, direction) else { continue };
            if !level.walls[to] && !level.walls[player] && distance[to] == u16::MAX {
                distance[to] = distance[cell] + 1;
                queue.push_back(to);
            }
        }
    }
    distance
}

/// The least total cost of giving every row its own column (Hungarian method, O(n^3)), or
/// `None` when no assignment avoids the forbidden (`u32::MAX`) entries. `cost` is n x n.
fn minimum_matching(cost: &[u32], n: usize) -> Option<u32> {
    const FORBIDDEN: i64 = 1 << 40;
    let at = |row: usize, column: usize| match cost[row * n + column] {
        u32::MAX => FORBIDDEN,
        c => c as i64,
    };
    // Potentials u (rows) and v (columns), 1-based with column 0 as the free slot.
    let (mut u, mut v) = (vec![0i64; n + 1], vec![0i64; n + 1]);
    let mut owner = vec![0usize; n + 1];
    let mut way = vec![0usize; n + 1];
    for row in 1..=n {
        owner[0] = row;
        let mut column0 = 0;
        let mut least = vec![i64::MAX; n + 1];
        let mut used = vec![false; n + 1];
        loop {
            used[column0] = true;
            let row0 = owner[column0];
            let (mut delta, mut next) = (i64::MAX, 0);
            for column in 1..=n {
                if !used[column] {
                    let reduced = at(row0 - 1, column - 1) - u[row0] - v[column];
                    if reduced < least[column] {
                        least[column] = reduced;
                        way[column] = column0;
                    }
                    if least[column] < delta {
                        delta = least[column];
                        next = column;
                    }
                }
            }
            for column in 0..=n {
                if used[column] {
                    u[owner[column]] += delta;
                    v[column] -= delta;
                } else {
                    least[column] -= delta;
                }
            }
            column0 = next;
            if owner[column0] == 0 {
                break;
            }
        }
        while column0 != 0 {
            let previous = way[column0];
            owner[column0] = owner[previous];
            column0 = previous;
        }
    }
    let total: i64 = (1..=n).map(|column| at(owner[column] - 1, column - 1)).sum();
    (total < FORBIDDEN).then_some(total as u32)
}

impl<'a> Tables<'a> {
    fn new(level: &'a Level) -> Tables<'a> {
        let size = level.width * level.height;
        let distance_to_each_goal: Vec<Vec<u16>> = (0..size).filter(|&c| level.goals[c]).map(|goal| pull_distances(level, goal)).collect();
        let distance = (0..size).map(|cell| distance_to_each_goal.iter().map(|d| d[cell]).min().unwrap_or(u16::MAX)).collect();
        let mut rng = ChaCha8Rng::seed_from_u64(0x5050_b0a4);
        Tables {
            level,
            distance_to_goal: distance,
            distance_to_each_goal,
            zobrist_box: (0..size).map(|_| rng.gen()).collect(),
            zobrist_player: (0..size).map(|_| rng.gen()).collect(),
        }
    }

    /// Pushes still needed at least: the cheapest assignment of boxes to distinct goals (each
    /// box's pushes to its goal, other boxes aside). `None` when no assignment exists: then some
    /// boxes compete for too few goals they can reach, and the position is dead.
    fn lower_bound(&self, boxes: &[u16]) -> Option<u32> {
        let n = boxes.len();
        let mut cost = Vec::with_capacity(n * n);
        for &b in boxes {
            cost.extend(self.distance_to_each_goal.iter().map(|d| match d[b as usize] {
                u16::MAX => u32::MAX,
                pushes => pushes as u32,
            }));
        }
        minimum_matching(&cost, n)
    }

    fn hash(&self, boxes: &[u16], player: u16) -> u64 {
        boxes.iter().fold(self.zobrist_player[player as usize], |h, &b| h ^ self.zobrist_box[b as usize])
    }

    /// A box on `cell` that can never move again on either axis, off a goal, makes the state dead.
    fn frozen(&self, cell: usize, occupied: &[bool], seen: &mut Vec<usize>) -> bool {
        let level = self.level;
        seen.push(cell);
        let mut blocked_axes = 0;
        for (a, b) in [(0, 1), (2, 3)] {
            let sides = [level.neighbour(cell, a), level.neighbour(cell, b)];
            let wall = |side: Option<usize>| side.is_none_or(|c| level.walls[c]);
            let dead = sides.iter().all(|&s| s.is_none_or(|c| self.distance_to_goal[c] == u16::MAX));
            let boxed = |side: Option<usize>, seen: &mut Vec<usize>| {
                side.is_some_and(|c| occupied[c] && (seen.contains(&c) || self.frozen(c, occupied, seen)))
            };
            if wall(sides[0]) || wall(sides[1]) || dead || boxed(sides[0], seen) || boxed(sides[1], seen) {
                blocked_axes += 1;
            }
        }
        blocked_axes == 2
    }

    fn is_freeze_deadlock(&self, cell: usize, occupied: &[bool]) -> bool {
        let mut seen = Vec::new();
        if !self.frozen(cell, occupied, &mut seen) {
            return false;
        }
        // Frozen is only fatal when some box in the frozen group is off its goal.
        seen.iter().any(|&c| occupied[c] && !self.level.goals[c])
    }
}

/// The player's region, found again for every position without allocating: a cell is in the
/// region when its mark equals the current stamp.
struct Region {
    mark: Vec<u32>,
    stamp: u32,
    stack: Vec<u16>,
}

impl Region {
    fn new(size: usize) -> Region {
        Region { mark: vec![0; size], stamp: 0, stack: Vec::new() }
    }

    /// Floods from `start` through cells that are neither walls nor `occupied`; returns the
    /// region's smallest cell (the normalised player position).
    fn flood(&mut self, neighbours: &[[u16; 4]], walls: &[bool], occupied: &[bool], start: usize) -> u16 {
        self.stamp += 1;
        let stamp = self.stamp;
        self.mark[start] = stamp;
        self.stack.clear();
        self.stack.push(start as u16);
        let mut least = start as u16;
        while let Some(cell) = self.stack.pop() {
            least = least.min(cell);
            for &next in &neighbours[cell as usize] {
                let n = next as usize;
                if next != NONE && self.mark[n] != stamp && !walls[n] && !occupied[n] {
                    self.mark[n] = stamp;
                    self.stack.push(next);
                }
            }
        }
        least
    }

    fn contains(&self, cell: usize) -> bool {
        self.mark[cell] == self.stamp
    }
}

/// No neighbour (the grid's edge) in a neighbour table.
const NONE: u16 = u16::MAX;

/// Searches for a solution of `level` until `deadline` or until `cancel` is set.
pub fn solve(level: &Level, deadline: Option<Instant>, cancel: &AtomicBool) -> Outcome {
    let tables = Tables::new(level);
    let size = level.width * level.height;
    let neighbours: Vec<[u16; 4]> = (0..size).map(|c| std::array::from_fn(|d| level.neighbour(c, d).map_or(NONE, |n| n as u16))).collect();
    let start_boxes: Box<[u16]> = (0..size).filter(|&c| level.boxes[c]).map(|c| c as u16).collect();
    if start_boxes.iter().any(|&b| tables.distance_to_goal[b as usize] == u16::MAX) {
        return Outcome::Unsolvable;
    }
    let Some(start_bound) = tables.lower_bound(&start_boxes) else { return Outcome::Unsolvable };
    // Two regions: the parent's (which pushes are possible) and each child's (its key).
    let (mut parent_region, mut child_region) = (Region::new(size), Region::new(size));
    let mut occupied = vec![false; size];
    start_boxes.iter().for_each(|&b| occupied[b as usize] = true);
    let player = parent_region.flood(&neighbours, &level.walls, &occupied, level.player);
    let mut nodes = vec![Node { boxes: start_boxes.clone(), player, parent: u32::MAX, push: (0, 0), pushes: 0 }];
    let mut seen: HashSet<u64> = HashSet::new();
    seen.insert(tables.hash(&start_boxes, player));
    let mut open = BinaryHeap::new();
    // Weighted bound: greedier than A*, which trades push-optimality for many more solved
    // levels. Among equals, the position nearer the goals first (deeper, not wider).
    let priority = |pushes: u32, bound: u32| (pushes + WEIGHT * bound, bound);
    open.push(Reverse((priority(0, start_bound), 0u32)));
    let mut expanded = 0u64;
    while let Some(Reverse((_, index))) = open.pop() {
        expanded += 1;
        if expanded % 256 == 0 && (cancel.load(Ordering::Relaxed) || deadline.is_some_and(|d| Instant::now() >= d)) {
            return Outcome::OutOfTime;
        }
        let (boxes, pushes) = (nodes[index as usize].boxes.clone(), nodes[index as usize].pushes);
        if boxes.iter().all(|&b| level.goals[b as usize]) {
            return replay(level, &nodes, index).map_or(Outcome::OutOfTime, |s| s);
        }
        occupied.iter_mut().for_each(|o| *o = false);
        boxes.iter().for_each(|&b| occupied[b as usize] = true);
        parent_region.flood(&neighbours, &level.walls, &occupied, nodes[index as usize].player as usize);
        for (slot, &boxed) in boxes.iter().enumerate() {
            for direction in 0..4 {
                let (behind, to) = (neighbours[boxed as usize][direction ^ 1], neighbours[boxed as usize][direction]);
                if behind == NONE || to == NONE {
                    continue;
                }
                let to = to as usize;
                if !parent_region.contains(behind as usize) || level.walls[to] || occupied[to] || tables.distance_to_goal[to] == u16::MAX {
                    continue;
                }
                // The child's occupancy, undone after this candidate push.
                occupied[boxed as usize] = false;
                occupied[to] = true;
                let dead = tables.is_freeze_deadlock(to, &occupied);
                let player = if dead { 0 } else { child_region.flood(&neighbours, &level.walls, &occupied, boxed as usize) };
                occupied[to] = false;
                occupied[boxed as usize] = true;
                if dead {
                    continue;
                }
                let mut next: Box<[u16]> = boxes.clone();
                next[slot] = to as u16;
                next.sort_unstable();
                if !seen.insert(tables.hash(&next, player)) {
                    continue;
                }
                let Some(bound) = tables.lower_bound(&next) else { continue };
                nodes.push(Node { boxes: next, player, parent: index, push: (boxed, direction as u8), pushes: pushes + 1 });
                open.push(Reverse((priority(pushes + 1, bound), nodes.len() as u32 - 1)));
            }
        }
    }
    Outcome::Unsolvable
}

/// Turns the chain of pushes ending at `index` into LURD and replays it on the level.
fn replay(level: &Level, nodes: &[Node], mut index: u32) -> Option<Outcome> {
    let mut pushes = Vec::new();
    while nodes[index as usize].parent != u32::MAX {
        pushes.push(nodes[index as usize].push);
        index = nodes[index as usize].parent;
    }
    let mut game = Game::new(level.clone());
    for &(boxed, direction) in pushes.iter().rev() {
        let behind = level.neighbour(boxed as usize, direction as usize ^ 1)?;
        let walk = shortest_walk(&game.position, game.position.player, behind)?;
        for step in walk.into_iter().chain([direction as usize]) {
            if !game.step(step) {
                return None;
            }
        }
    }
    game.is_solved().then(|| Outcome::Solved { lurd: game.lurd(), moves: game.moves(), pushes: game.pushes() })
}

/// Checks a reported solution: plays `lurd` on `level` and says whether it solves it.
pub fn verify(level: &Level, lurd: &str) -> bool {
    let mut game = Game::new(level.clone());
    game.play_lurd(lurd).is_ok() && game.is_solved()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::games::sokoban::level::parse_collection;

    #[test]
    fn solves_first_microban_levels_with_verified_solutions() {
        let levels = parse_collection(include_str!("../../../samples/sokoban/microban_155.xsb")).unwrap();
        assert_eq!(levels.len(), 155);
        let cancel = AtomicBool::new(false);
        for level in &levels[..6] {
            match solve(level, None, &cancel) {
                Outcome::Solved { lurd, pushes, .. } => {
                    assert!(verify(level, &lurd), "level {}", level.title);
                    assert!(pushes > 0);
                }
                other => panic!("level {}: {other:?}", level.title),
            }
        }
    }

    #[test]
    fn matching_finds_the_cheapest_assignment_or_none() {
        // Greedy (row 0 takes its cheapest column) would pay 1 + 10; the best is 2 + 3.
        assert_eq!(minimum_matching(&[1, 2, 3, 10], 2), Some(5));
        let x = u32::MAX;
        assert_eq!(minimum_matching(&[4, x, x, 7, 1, 2, x, 0, 9], 3), Some(4 + 2 + 0));
        // Two boxes that can only reach the same goal: no assignment.
        assert_eq!(minimum_matching(&[1, x, 2, x], 2), None);
        assert_eq!(minimum_matching(&[], 0), Some(0));
        // Brute force over every permutation of a 4x4 agrees.
        let cost: Vec<u32> = (0..16u32).map(|i| (i * 7 + 3) % 11).collect();
        let mut best = u32::MAX;
        for a in 0..4 { for b in 0..4 { for c in 0..4 { for d in 0..4 {
            let p = [a, b, c, d];
            if (0..4).all(|i| (0..4).all(|j| i == j || p[i] != p[j])) {
                best = best.min((0..4).map(|r| cost[r * 4 + p[r]]).sum());
            }
        }}}}
        assert_eq!(minimum_matching(&cost, 4), Some(best));
    }

    #[test]
    fn proves_unsolvable_and_honours_cancel() {
        let corner = parse_collection("######\n#$  .#\n#  @ #\n######\n").unwrap().remove(0);
        assert_eq!(solve(&corner, None, &AtomicBool::new(false)), Outcome::Unsolvable);
        // Each box two pushes from the goal of its own corridor.
        let shared = parse_collection("#######\n#@ $ .#\n## ####\n#  $ .#\n#######\n").unwrap().remove(0);
        let tables = Tables::new(&shared);
        let boxes: Vec<u16> = (0..shared.boxes.len()).filter(|&c| shared.boxes[c]).map(|c| c as u16).collect();
        assert_eq!(tables.lower_bound(&boxes), Some(4));
        let two = parse_collection("######\n#    #\n# $$ #\n# .. #\n#@   #\n######\n").unwrap().remove(0);
        assert!(matches!(solve(&two, None, &AtomicBool::new(false)), Outcome::Solved { .. }));
        let level = parse_collection(include_str!("../../../samples/sokoban/microban_155.xsb")).unwrap().remove(0);
        assert!(!verify(&level, "uuuu"));
        let cancelled = AtomicBool::new(true);
        // A cancelled search stops at its first check, after at most 256 expansions.
        let big = parse_collection("##########\n#@       #\n# $ $ $  #\n#        #\n# . . .  #\n#        #\n##########\n").unwrap().remove(0);
        assert_ne!(solve(&big, None, &cancelled), Outcome::Unsolvable);
    }
}
