//! The solver. [`solve`] gives the push-level search below a short first share of the time,
//! then runs the FESS-style search of `fess.rs` (which solves far more of the hard levels).
//!
//! Push-level search: weighted best-first (A*-like) search over box positions with the player
//! normalised to its reachable region.
//!
//! Pruning: dead squares (from which no box can reach a goal, found by pulling boxes back from
//! the goals), freeze deadlocks (a box stuck on both axes off a goal), matching deadlocks (no
//! way to give every box its own goal it can still reach), PI-corral pruning and corral
//! deadlocks (`corral.rs`). Lower bound: the minimum-cost matching of boxes to goals by pull
//! distance (Hungarian method). Guidance: the goals' packing order (`packing.rs`) with a
//! penalty for boxes on goals out of turn, and goal macros (a box pushed straight to the next
//! goal along its fewest-push path).
//!
//! Two passes. The first trusts guesses that usually hold: a position with a goal macro gets no
//! other child, no box is pushed onto a goal out of turn, and a box pushed into a one-wide
//! tunnel is pushed through it. When that pass runs out of positions it proves nothing, and the
//! second pass, without those cuts, searches everything (so "unsolvable" is a proof).
//!
//! States are keyed by a Zobrist hash; a collision can only hide a state, never produce a wrong
//! solution, because every solution is replayed by [`Game`] before it is reported. Time comes
//! from the caller: a deadline and a cancel flag.

use std::cmp::Reverse;
use std::collections::hash_map::Entry;
use std::collections::{BinaryHeap, HashMap};
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;

use super::corral::{Board, Corrals, Verdict};
use super::game::{shortest_walk, Game};
use super::goal_room::GoalRooms;
use super::packing::packing_order;
use super::level::Level;

/// How much more the bound counts than the pushes made (see the search's priority).
const WEIGHT: u32 = 3;
/// How many pushes' worth a box on a goal out of packing order counts in the priority.
const OUT_OF_TURN_PENALTY: u32 = 2;

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
    /// For a goal macro, its pushes' index in the search's macro list (else `u32::MAX`).
    path: u32,
}

/// Per-level tables shared by the whole search.
pub(super) struct Tables<'a> {
    level: &'a Level,
    /// For each cell, the fewest pushes to bring a box from it to the nearest goal (u16::MAX: dead).
    pub(super) distance_to_goal: Vec<u16>,
    /// For each goal (in cell order), the fewest pushes from each cell to it, other boxes aside.
    pub(super) distance_to_each_goal: Vec<Vec<u16>>,
    /// For each cell, its index among the goals (in `distance_to_each_goal`), if it is one.
    pub(super) goal_index: Vec<Option<usize>>,
    zobrist_box: Vec<u64>,
    zobrist_player: Vec<u64>,
    /// Each cell's neighbour in each direction ([`NONE`] off the grid), for the freeze check.
    neighbours: Vec<[u16; 4]>,
    /// For each cell, the goals a box on it can still reach.
    reachable_goals: Reach,
}

/// For each cell, the targets (goals, or the backward search's start squares) a box on it can
/// still reach, as bits by target index; none kept with more than 128 targets.
pub(super) struct Reach(Option<Vec<u128>>);

impl Reach {
    /// From each target's distances (`u16::MAX`: unreachable) over the `size` cells.
    pub(super) fn new(distances: &[Vec<u16>], size: usize) -> Reach {
        Reach((distances.len() <= 128).then(|| {
            (0..size).map(|cell| distances.iter().enumerate().filter(|(_, d)| d[cell] != u16::MAX).fold(0, |bits, (t, _)| bits | 1u128 << t)).collect()
        }))
    }

    /// Whether every box can be given its own target it can still reach: a matching by
    /// augmenting paths over bits of targets (far cheaper than the cheapest assignment). None
    /// with more than 128 targets (the caller then asks the cheapest assignment).
    pub(super) fn can_match(&self, boxes: &[u16]) -> Option<bool> {
        let reach = self.0.as_ref()?;
        let mut owner = [0u8; 128];
        let mut taken = 0u128;
        for b in 0..boxes.len() {
            let free = reach[boxes[b] as usize] & !taken;
            let target = if free != 0 {
                free.trailing_zeros() as usize // a free target: no path to search
            } else {
                let mut visited = 0;
                match augment(reach, boxes, b, &mut owner, &mut taken, &mut visited) {
                    Some(target) => target,
                    None => return Some(false),
                }
            };
            owner[target] = b as u8;
            taken |= 1 << target;
        }
        Some(true)
    }
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
pub(super) fn minimum_matching(cost: &[u32], n: usize) -> Option<u32> {
    const FORBIDDEN: i64 = 1 << 40;
    let at = |row: usize, column: usize| match cost[row * n + column] {
        u32::MAX => FORBIDDEN,
        c => c as i64,
    };
    // Potentials u (rows) and v (columns), 1-based with column 0 as the free slot.
    let (mut u, mut v) = (vec![0i64; n + 1], vec![0i64; n + 1]);
    let mut owner = vec![0usize; n + 1];
    let mut way = vec![0usize; n + 1];
    let (mut least, mut used) = (vec![i64::MAX; n + 1], vec![false; n + 1]);
    for row in 1..=n {
        owner[0] = row;
        let mut column0 = 0;
        least.fill(i64::MAX);
        used.fill(false);
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
    pub(super) fn new(level: &'a Level) -> Tables<'a> {
        let size = level.width * level.height;
        let distance_to_each_goal: Vec<Vec<u16>> = (0..size).filter(|&c| level.goals[c]).map(|goal| pull_distances(level, goal)).collect();
        let distance = (0..size).map(|cell| distance_to_each_goal.iter().map(|d| d[cell]).min().unwrap_or(u16::MAX)).collect();
        let mut rng = ChaCha8Rng::seed_from_u64(0x5050_b0a4);
        let reachable_goals = Reach::new(&distance_to_each_goal, size);
        Tables {
            reachable_goals,
            level,
            distance_to_goal: distance,
            distance_to_each_goal,
            goal_index: (0..size).map(|cell| level.goals[cell].then(|| (0..cell).filter(|&c| level.goals[c]).count())).collect(),
            zobrist_box: (0..size).map(|_| rng.gen()).collect(),
            zobrist_player: (0..size).map(|_| rng.gen()).collect(),
            neighbours: neighbour_table(level),
        }
    }

    /// Pushes still needed at least: the cheapest assignment of boxes to distinct goals (each
    /// box's pushes to its goal, other boxes aside). `None` when no assignment exists: then some
    /// boxes compete for too few goals they can reach, and the position is dead.
    pub(super) fn lower_bound(&self, boxes: &[u16]) -> Option<u32> {
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

    /// Whether every box can be given its own goal it can still reach: the same as
    /// [`Tables::lower_bound`] being `Some`, but only a matching, by augmenting paths over bits of
    /// goals (far cheaper than the cheapest assignment).
    pub(super) fn can_match(&self, boxes: &[u16]) -> bool {
        self.reachable_goals.can_match(boxes).unwrap_or_else(|| self.lower_bound(boxes).is_some())
    }

    pub(super) fn hash(&self, boxes: &[u16], player: u16) -> u64 {
        self.player_key(player) ^ self.boxes_key(boxes)
    }

    /// The boxes' share of [`Tables::hash`]: one key per box, combined by xor, so that a move's
    /// key is its parent's with the box's two cells (and the player) swapped.
    pub(super) fn boxes_key(&self, boxes: &[u16]) -> u64 {
        boxes.iter().fold(0, |h, &b| h ^ self.zobrist_box[b as usize])
    }

    pub(super) fn box_key(&self, cell: usize) -> u64 {
        self.zobrist_box[cell]
    }

    /// The player's share of [`Tables::hash`].
    pub(super) fn player_key(&self, player: u16) -> u64 {
        self.zobrist_player[player as usize]
    }

    /// A box on `cell` that can never move again on either axis, off a goal, makes the state dead.
    fn frozen(&self, cell: usize, occupied: &[bool], seen: &mut Vec<usize>) -> bool {
        let level = self.level;
        seen.push(cell);
        let mut blocked_axes = 0;
        for (a, b) in [(0, 1), (2, 3)] {
            let side = |direction: usize| Some(self.neighbours[cell][direction]).filter(|&n| n != NONE).map(usize::from);
            let sides = [side(a), side(b)];
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

    pub(super) fn is_freeze_deadlock(&self, cell: usize, occupied: &[bool]) -> bool {
        self.is_freeze_deadlock_with(cell, occupied, &mut Vec::new())
    }

    /// [`Tables::is_freeze_deadlock`] with the caller's scratch list (no allocation per push).
    pub(super) fn is_freeze_deadlock_with(&self, cell: usize, occupied: &[bool], seen: &mut Vec<usize>) -> bool {
        // Frozen is only fatal when some box in the frozen group is off its goal.
        self.is_frozen(cell, occupied, seen) && seen.iter().any(|&c| occupied[c] && !self.level.goals[c])
    }

    /// Whether the box on `cell` can never move again: on both axes a wall, dead squares on
    /// both sides, or such a box on a side. `seen` is left holding the boxes of its frozen group
    /// when it is frozen.
    pub(super) fn is_frozen(&self, cell: usize, occupied: &[bool], seen: &mut Vec<usize>) -> bool {
        // The common case first: an axis with free floor on both sides (not both dead) leaves
        // the box free to move, whatever the other axis (no recursive check needed).
        let open = |side: u16| side != NONE && !self.level.walls[side as usize] && !occupied[side as usize];
        let live = |side: u16| self.distance_to_goal[side as usize] != u16::MAX;
        let around = self.neighbours[cell];
        if [(0, 1), (2, 3)].iter().any(|&(a, b)| open(around[a]) && open(around[b]) && (live(around[a]) || live(around[b]))) {
            return false;
        }
        seen.clear();
        self.frozen(cell, occupied, seen)
    }
}

/// An augmenting path from box `b` (Kuhn's algorithm): some target `b` reaches is free, or held by
/// a box that can move on to another; the boxes along the path are moved on (the free target at
/// its end is taken), and the target left for `b` returned (its owner is the caller's to set).
/// `visited`: targets tried already.
fn augment(reach: &[u128], boxes: &[u16], b: usize, owner: &mut [u8; 128], taken: &mut u128, visited: &mut u128) -> Option<usize> {
    let mut candidates = reach[boxes[b] as usize] & !*visited;
    while candidates != 0 {
        let goal = candidates.trailing_zeros() as usize;
        candidates &= candidates - 1;
        if *visited & 1 << goal != 0 {
            continue; // tried deeper in this path
        }
        *visited |= 1 << goal;
        if *taken & 1 << goal == 0 {
            *taken |= 1 << goal;
            return Some(goal);
        }
        let held_by = owner[goal] as usize;
        if let Some(next) = augment(reach, boxes, held_by, owner, taken, visited) {
            owner[next] = held_by as u8;
            return Some(goal);
        }
    }
    None
}

/// Marks with `stamp` every cell reachable from `start` through cells that are neither walls nor
/// `occupied`, `start` included, and returns the smallest of them (`stack` is left empty).
pub(super) fn flood_from(mark: &mut [u32], stack: &mut Vec<u16>, stamp: u32, start: usize, neighbours: &[[u16; 4]], walls: &[bool], occupied: &[bool]) -> u16 {
    mark[start] = stamp;
    stack.push(start as u16);
    let mut least = start as u16;
    while let Some(cell) = stack.pop() {
        least = least.min(cell);
        for &next in &neighbours[cell as usize] {
            let n = next as usize;
            if next != NONE && mark[n] != stamp && !walls[n] && !occupied[n] {
                mark[n] = stamp;
                stack.push(next);
            }
        }
    }
    least
}

/// The player's region, found again for every position without allocating: a cell is in the
/// region when its mark equals the current stamp.
pub(super) struct Region {
    mark: Vec<u32>,
    stamp: u32,
    stack: Vec<u16>,
}

impl Region {
    pub(super) fn new(size: usize) -> Region {
        Region { mark: vec![0; size], stamp: 0, stack: Vec::new() }
    }

    /// Floods from `start` through cells that are neither walls nor `occupied`; returns the
    /// region's smallest cell (the normalised player position).
    pub(super) fn flood(&mut self, neighbours: &[[u16; 4]], walls: &[bool], occupied: &[bool], start: usize) -> u16 {
        self.stamp += 1;
        self.stack.clear();
        flood_from(&mut self.mark, &mut self.stack, self.stamp, start, neighbours, walls, occupied)
    }

    pub(super) fn contains(&self, cell: usize) -> bool {
        self.mark[cell] == self.stamp
    }
}

/// No neighbour (the grid's edge) in a neighbour table.
pub(super) const NONE: u16 = u16::MAX;

/// The goals' packing order, as each goal cell's turn.
pub(super) struct Order {
    order: Vec<u16>,
    pub(super) turn: Vec<u16>,
    goals: usize,
}

impl Order {
    pub(super) fn new(order: Option<Vec<u16>>, size: usize) -> Order {
        let mut turn = vec![NONE; size];
        let goals = order.as_ref().map_or(0, Vec::len);
        for (index, &goal) in order.iter().flatten().enumerate() {
            turn[goal as usize] = index as u16;
        }
        Order { order: order.unwrap_or_default(), turn, goals }
    }

    /// The goals of the order that hold a box, as bits by turn; None without an order (or with
    /// more goals than the bits hold), when no box is ever out of turn.
    pub(super) fn filled(&self, boxes: &[u16]) -> Option<u128> {
        if self.goals == 0 || self.goals > 128 {
            return None;
        }
        Some(boxes.iter().fold(0, |bits, &b| bits | self.bit(b)))
    }

    /// The bit of a box on `cell` in [`Order::filled`] (0 off the order's goals).
    pub(super) fn bit(&self, cell: u16) -> u128 {
        match self.turn[cell as usize] {
            NONE => 0,
            t => 1u128 << t,
        }
    }

    /// The first goal in the order without a box.
    pub(super) fn next_goal(&self, boxes: &[u16]) -> Option<u16> {
        let first_empty = (!self.filled(boxes)?).trailing_zeros() as usize;
        (first_empty < self.goals).then(|| self.order[first_empty])
    }

    /// Boxes standing on goals whose turn has not come: a goal earlier in the order is empty.
    pub(super) fn out_of_turn(&self, boxes: &[u16]) -> u32 {
        Self::out_of_turn_of(self.filled(boxes))
    }

    /// [`Order::out_of_turn`] from the goals [`Order::filled`].
    pub(super) fn out_of_turn_of(filled: Option<u128>) -> u32 {
        filled.map_or(0, |filled| filled.checked_shr((!filled).trailing_zeros()).unwrap_or(0).count_ones())
    }
}

/// Each cell's neighbour in each direction ([`NONE`] off the grid).
fn neighbour_table(level: &Level) -> Vec<[u16; 4]> {
    (0..level.width * level.height).map(|c| std::array::from_fn(|d| level.neighbour(c, d).map_or(NONE, |n| n as u16))).collect()
}

/// The board as the search sees it: each cell's neighbours ([`NONE`] off the grid), walls
/// (floor outside the walls counts as wall, so that it never looks like a corral) and dead cells.
pub(super) fn board_tables(level: &Level) -> (Vec<[u16; 4]>, Vec<bool>, Vec<bool>) {
    let size = level.width * level.height;
    let neighbours = neighbour_table(level);
    let inside = level.reachable(level.player, |cell| level.walls[cell]);
    let walls = (0..size).map(|cell| level.walls[cell] || !inside[cell]).collect();
    let dead = pull_reachable(&neighbours, &level.walls, (0..size).filter(|&c| level.goals[c])).into_iter().map(|live| !live).collect();
    (neighbours, walls, dead)
}

/// Pushes needed to bring a box from the nearest of `starts` to each cell (u16::MAX: never),
/// around the `blocked` cells, no other box in the way: a box can be pushed when the cells
/// before and behind it are free. The backward search's distances from the start squares, and
/// the packing order's cells a box can reach.
pub(super) fn push_distances(neighbours: &[[u16; 4]], blocked: &[bool], starts: &[usize]) -> Vec<u16> {
    let mut distance = vec![u16::MAX; blocked.len()];
    let mut queue: std::collections::VecDeque<usize> = starts.iter().copied().filter(|&s| !blocked[s]).collect();
    queue.iter().for_each(|&s| distance[s] = 0);
    let free = |cell: u16| cell != NONE && !blocked[cell as usize];
    while let Some(cell) = queue.pop_front() {
        for direction in 0..4 {
            let (to, behind) = (neighbours[cell][direction], neighbours[cell][direction ^ 1]);
            if free(to) && free(behind) && distance[to as usize] == u16::MAX {
                distance[to as usize] = distance[cell] + 1;
                queue.push_back(to as usize);
            }
        }
    }
    distance
}

/// The cells from which a box can be pushed to one of the `targets`, other boxes aside: a
/// search pulling boxes back from all of them at once (a box reaches a cell from its neighbour
/// with the player one cell further on, both free).
pub(super) fn pull_reachable(neighbours: &[[u16; 4]], walls: &[bool], targets: impl IntoIterator<Item = usize>) -> Vec<bool> {
    let mut reached = vec![false; walls.len()];
    let mut stack: Vec<usize> = targets.into_iter().collect();
    stack.iter().for_each(|&t| reached[t] = true);
    while let Some(cell) = stack.pop() {
        for direction in 0..4 {
            let from = neighbours[cell][direction];
            if from == NONE || walls[from as usize] || reached[from as usize] {
                continue;
            }
            let player = neighbours[from as usize][direction];
            if player != NONE && !walls[player as usize] {
                reached[from as usize] = true;
                stack.push(from as usize);
            }
        }
    }
    reached
}

/// Which of the search's optional techniques are on (all of them in [`solve`]; tests switch
/// them off to check that they never lose a solution).
#[derive(Clone, Copy, Debug)]
pub(super) struct Techniques {
    /// Search only the pushes into a PI-corral when there is one (see `corral.rs`).
    pub pi_corrals: bool,
    /// Goal macros: push a box straight to the next goal of the packing order.
    pub goal_macros: bool,
    /// Plain A* (weight 1, no packing penalty, positions reopened when reached in fewer
    /// pushes): the first solution found has the fewest pushes. PI-corral pruning keeps that
    /// true (it only reorders pushes); the macros would not, so they must be off.
    pub fewest_pushes: bool,
    /// Goal-room deadlocks: a goal room whose boxes and player make a pattern from which it
    /// can no longer be filled (see `goal_room.rs`).
    pub goal_rooms: bool,
}

/// The memory [`solve`]'s searches may take in all (bytes) when the caller does not say: enough
/// for most levels of a minute, and little enough for a small machine. The command line
/// offers more where the machine has it (`--memory-limit`).
pub const DEFAULT_MEMORY: usize = 2 << 30;

/// Searches for a solution of `level` until `deadline` or until `cancel` is set, its searches
/// taking at most about [`DEFAULT_MEMORY`].
pub fn solve(level: &Level, deadline: Option<Instant>, cancel: &AtomicBool) -> Outcome {
    solve_in_memory(level, deadline, cancel, DEFAULT_MEMORY)
}

/// [`solve`] with the FESS searches taking at most about `memory` bytes in all (a search that
/// fills its share gives up), and the best-first search, which runs after them, as much.
///
/// With a deadline: first the best-first search below for a short share of the time
/// ([`first_share`]: it solves the easier levels fast, and a few that FESS misses), then the
/// FESS search (`fess.rs`) for the rest; should FESS run out of positions (which proves
/// nothing), the best-first search again, whose full pass can prove a level unsolvable.
/// Without a deadline: FESS, then the best-first search.
pub fn solve_in_memory(level: &Level, deadline: Option<Instant>, cancel: &AtomicBool, memory: usize) -> Outcome {
    let techniques = Techniques { pi_corrals: true, goal_macros: true, fewest_pushes: false, goal_rooms: true };
    let out_of_time = || cancel.load(Ordering::Relaxed) || deadline.is_some_and(|d| Instant::now() >= d);
    // Found once for all the searches (up to a third of a second on the original 90).
    let rooms = GoalRooms::of_level(level);
    if let Some(deadline) = deadline {
        let started = Instant::now();
        let first = started + first_share(deadline.saturating_duration_since(started));
        match solve_with_rooms(level, Some(first), cancel, techniques, Some(&rooms), memory) {
            Outcome::OutOfTime => {}
            outcome => return outcome,
        }
    }
    match super::fess::search(level, deadline, cancel, &rooms, memory) {
        Some(Outcome::OutOfTime) if out_of_time() => Outcome::OutOfTime,
        Some(Outcome::OutOfTime) | None => solve_with_rooms(level, deadline, cancel, techniques, Some(&rooms), memory),
        Some(outcome) => outcome,
    }
}

/// The share of [`solve`]'s time given to the best-first search before FESS.
pub const FIRST_SHARE: f64 = 0.15;

/// The most time the best-first search gets before FESS, whatever the limit: the levels it
/// solves and FESS does not are solved within a second or two, while beyond that it only
/// delays FESS (at 60 s, 9 s of every hard level went to it).
pub const FIRST_CAP: Duration = Duration::from_secs(2);

/// The time [`solve`] gives the best-first search before FESS, out of `limit`:
/// [`FIRST_SHARE`] of it, at most [`FIRST_CAP`].
pub fn first_share(limit: Duration) -> Duration {
    limit.mul_f64(FIRST_SHARE).min(FIRST_CAP)
}

/// Searches for a solution with the fewest pushes (A* with the matching bound, which never
/// overestimates) until `deadline` or `cancel`. Much slower than [`solve`]: for small levels, or
/// to improve a solution when there is time. It gives up (out of time) once its positions take
/// about `memory` bytes.
pub fn solve_fewest_pushes(level: &Level, deadline: Option<Instant>, cancel: &AtomicBool, memory: usize) -> Outcome {
    solve_with(level, deadline, cancel, Techniques { pi_corrals: true, goal_macros: false, fewest_pushes: true, goal_rooms: true }, memory)
}

/// Records a position reached after `pushes`; true when it is new, or, with `reopen`, reached
/// in fewer pushes than before.
fn first_visit(seen: &mut HashMap<u64, u32>, key: u64, pushes: u32, reopen: bool) -> bool {
    match seen.entry(key) {
        Entry::Vacant(entry) => {
            entry.insert(pushes);
            true
        }
        Entry::Occupied(mut entry) if reopen && pushes < *entry.get() => {
            entry.insert(pushes);
            true
        }
        Entry::Occupied(_) => false,
    }
}

/// The best-first search, giving up (out of time) once its positions take about `memory` bytes.
pub(super) fn solve_with(level: &Level, deadline: Option<Instant>, cancel: &AtomicBool, techniques: Techniques, memory: usize) -> Outcome {
    let rooms = techniques.goal_rooms.then(|| GoalRooms::of_level(level));
    solve_with_rooms(level, deadline, cancel, techniques, rooms.as_ref(), memory)
}

/// [`solve_with`], the goal rooms found already (when `techniques` uses them).
fn solve_with_rooms(level: &Level, deadline: Option<Instant>, cancel: &AtomicBool, techniques: Techniques, rooms: Option<&GoalRooms>, memory: usize) -> Outcome {
    let rooms = rooms.filter(|_| techniques.goal_rooms);
    // First trust the goal macros: when one exists, search it alone. That is a guess (the
    // packing order may be wrong), so when it runs out of positions, search again in full.
    if techniques.goal_macros {
        if let Some(outcome) = search(level, deadline, cancel, techniques, rooms, true, memory) {
            return outcome;
        }
    }
    search(level, deadline, cancel, techniques, rooms, false, memory).unwrap_or(Outcome::OutOfTime)
}

/// The search; with `macros_only`, a position with a goal macro gets no other child, and then
/// running out of positions proves nothing (None).
#[allow(clippy::too_many_arguments)]
fn search(level: &Level, deadline: Option<Instant>, cancel: &AtomicBool, techniques: Techniques, rooms: Option<&GoalRooms>, macros_only: bool, memory: usize) -> Option<Outcome> {
    let tables = Tables::new(level);
    let size = level.width * level.height;
    let (neighbours, walls, dead) = board_tables(level);
    let start_boxes: Box<[u16]> = (0..size).filter(|&c| level.boxes[c]).map(|c| c as u16).collect();
    if start_boxes.iter().any(|&b| tables.distance_to_goal[b as usize] == u16::MAX) {
        return Some(Outcome::Unsolvable);
    }
    let Some(start_bound) = tables.lower_bound(&start_boxes) else { return Some(Outcome::Unsolvable) };
    // Two regions: the parent's (which pushes are possible) and each child's (its key).
    let (mut parent_region, mut child_region) = (Region::new(size), Region::new(size));
    let mut occupied = vec![false; size];
    start_boxes.iter().for_each(|&b| occupied[b as usize] = true);
    let player = parent_region.flood(&neighbours, &walls, &occupied, level.player);
    let board = Board { neighbours: &neighbours, walls: &walls, goals: &level.goals, dead: &dead };
    let mut corrals = Corrals::new(size);
    let packing = packing_order(&neighbours, &walls, &level.goals, &level.boxes, level.player);
    let order = Order::new(packing, size);
    let mut candidates: Vec<(usize, usize)> = Vec::new();
    let mut paths: Vec<Vec<(u16, u8)>> = Vec::new();
    let mut nodes = vec![Node { boxes: start_boxes.clone(), player, parent: u32::MAX, push: (0, 0), pushes: 0, path: u32::MAX }];
    let mut seen: HashMap<u64, u32> = HashMap::new();
    seen.insert(tables.hash(&start_boxes, player), 0);
    let reopen = techniques.fewest_pushes;
    let (weight, penalty) = if techniques.fewest_pushes { (1, 0) } else { (WEIGHT, OUT_OF_TURN_PENALTY) };
    let mut open = BinaryHeap::new();
    // Weighted bound: greedier than A*, which trades push-optimality for many more solved
    // levels. Among equals, the position nearer the goals first (deeper, not wider).
    let priority = |pushes: u32, bound: u32, boxes: &[u16]| (pushes + weight * (bound + penalty * order.out_of_turn(boxes)), bound);
    open.push(Reverse((priority(0, start_bound, &start_boxes), 0u32)));
    let mut expanded = 0u64;
    while let Some(Reverse((_, index))) = open.pop() {
        expanded += 1;
        if expanded.is_multiple_of(256) && (cancel.load(Ordering::Relaxed) || deadline.is_some_and(|d| Instant::now() >= d)) {
            return Some(Outcome::OutOfTime);
        }
        // Its positions (each with its boxes on the heap), the seen table (key, pushes and a
        // control byte a slot) and the queue, about.
        let used = || {
            nodes.capacity() * std::mem::size_of::<Node>() + nodes.len() * (2 * start_boxes.len() + 16) + seen.capacity() * 17 + open.capacity() * 16
        };
        if expanded.is_multiple_of(1024) && used() > memory {
            return Some(Outcome::OutOfTime);
        }
        let (boxes, pushes) = (nodes[index as usize].boxes.clone(), nodes[index as usize].pushes);
        if boxes.iter().all(|&b| level.goals[b as usize]) {
            return Some(replay(level, &nodes, &paths, index).unwrap_or(Outcome::OutOfTime));
        }
        // A look-up on the boxes and the player alone: before the flood.
        if rooms.is_some_and(|rooms| rooms.dead(&boxes, nodes[index as usize].player as usize)) {
            continue;
        }
        occupied.iter_mut().for_each(|o| *o = false);
        boxes.iter().for_each(|&b| occupied[b as usize] = true);
        parent_region.flood(&neighbours, &walls, &occupied, nodes[index as usize].player as usize);
        candidates.clear();
        let verdict = if techniques.pi_corrals { corrals.analyse(&board, &occupied, &parent_region) } else { Verdict::Free };
        match verdict {
            Verdict::Dead => continue,
            Verdict::Only(pushes) => candidates.extend(pushes.iter().map(|&(cell, direction)| (boxes.iter().position(|&b| b == cell).unwrap(), direction as usize))),
            Verdict::Free => candidates.extend((0..boxes.len()).flat_map(|slot| (0..4).map(move |direction| (slot, direction)))),
        }
        // Goal macro: a box that can be pushed to the next goal of the packing order goes
        // straight there as one child (the box pushed last is tried first, then the nearest).
        let node = &nodes[index as usize];
        let mut tried: Vec<u16> = Vec::new();
        let mut macro_made = false;
        let next_goal = order.next_goal(&boxes);
        if let Some(next_goal) = next_goal.filter(|_| techniques.goal_macros) {
            let g = tables.goal_index[next_goal as usize].unwrap();
            if node.parent != u32::MAX {
                tried.push(neighbours[node.push.0 as usize][node.push.1 as usize]);
            }
            let mut others: Vec<u16> = boxes.iter().copied().filter(|b| !tried.contains(b)).collect();
            others.sort_by_key(|&b| tables.distance_to_each_goal[g][b as usize]);
            tried.extend(others);
            for &moved in &tried {
                if level.goals[moved as usize] || tables.distance_to_each_goal[g][moved as usize] == u16::MAX {
                    continue;
                }
                let Some(path) = push_path(&neighbours, &walls, &dead, &mut occupied, &parent_region, moved as usize, next_goal as usize, &mut child_region) else { continue };
                let slot = boxes.iter().position(|&b| b == moved).unwrap();
                let mut next: Box<[u16]> = boxes.clone();
                next[slot] = next_goal;
                next.sort_unstable();
                occupied[moved as usize] = false;
                occupied[next_goal as usize] = true;
                let frozen = tables.is_freeze_deadlock(next_goal as usize, &occupied);
                let last = *path.last().unwrap();
                let player = child_region.flood(&neighbours, &walls, &occupied, last.0 as usize);
                occupied[next_goal as usize] = false;
                occupied[moved as usize] = true;
                if !frozen && first_visit(&mut seen, tables.hash(&next, player), pushes + path.len() as u32, reopen) {
                    if let Some(bound) = tables.lower_bound(&next) {
                        let count = pushes + path.len() as u32;
                        open.push(Reverse((priority(count, bound, &next), nodes.len() as u32)));
                        nodes.push(Node { boxes: next, player, parent: index, push: last, pushes: count, path: paths.len() as u32 });
                        paths.push(path);
                        macro_made = true;
                    }
                }
                break;
            }
        }
        if macro_made && macros_only {
            continue;
        }
        for &(slot, direction) in &candidates {
            let boxed = boxes[slot];
            let (behind, to) = (neighbours[boxed as usize][direction ^ 1], neighbours[boxed as usize][direction]);
            if behind == NONE || to == NONE {
                continue;
            }
            let (mut from, mut to) = (boxed as usize, to as usize);
            if !parent_region.contains(behind as usize) || walls[to] || occupied[to] || dead[to] {
                continue;
            }
            let mut steps = vec![(boxed, direction as u8)];
            if macros_only {
                (from, to) = follow_tunnel(&board, &occupied, (from, to), direction, &mut steps);
                // Goals are filled in packing order: a box only lands on the next goal (by
                // the goal macro), never on one whose turn has not come.
                if order.turn[to] != NONE && Some(to as u16) != next_goal {
                    continue;
                }
            }
            // The child's occupancy, undone after this candidate push.
            occupied[boxed as usize] = false;
            occupied[to] = true;
            let frozen = tables.is_freeze_deadlock(to, &occupied);
            let player = if frozen { 0 } else { child_region.flood(&neighbours, &walls, &occupied, from) };
            occupied[to] = false;
            occupied[boxed as usize] = true;
            if frozen {
                continue;
            }
            let mut next: Box<[u16]> = boxes.clone();
            next[slot] = to as u16;
            next.sort_unstable();
            if !first_visit(&mut seen, tables.hash(&next, player), pushes + steps.len() as u32, reopen) {
                continue;
            }
            let Some(bound) = tables.lower_bound(&next) else { continue };
            let count = pushes + steps.len() as u32;
            open.push(Reverse((priority(count, bound, &next), nodes.len() as u32)));
            let path = if steps.len() == 1 { u32::MAX } else { paths.len() as u32 };
            nodes.push(Node { boxes: next, player, parent: index, push: *steps.last().unwrap(), pushes: count, path });
            if steps.len() > 1 {
                paths.push(steps);
            }
        }
    }
    (!macros_only).then_some(Outcome::Unsolvable)
}

/// Tunnel macro: a box just pushed from `from` to `to` into a one-wide corridor, with the
/// player in the corridor behind it, is pushed on (appending to `steps`) until it leaves the
/// corridor, reaches a goal or is blocked. Returns the last push's (from, to).
fn follow_tunnel(board: &Board, occupied: &[bool], (mut from, mut to): (usize, usize), direction: usize, steps: &mut Vec<(u16, u8)>) -> (usize, usize) {
    let across = if direction < 2 { [2, 3] } else { [0, 1] };
    let wall = |cell: u16| cell == NONE || board.walls[cell as usize];
    let narrow = |cell: usize| across.iter().all(|&side| wall(board.neighbours[cell][side]));
    while !board.goals[to] && narrow(to) && narrow(from) {
        let further = board.neighbours[to][direction];
        if wall(further) || occupied[further as usize] || board.dead[further as usize] {
            break;
        }
        steps.push((to as u16, direction as u8));
        (from, to) = (to, further as usize);
    }
    (from, to)
}

/// The pushes (box cell before each, direction) that bring the box on `from` to `target`, the
/// other boxes (`occupied`) staying put and the player starting in `region`; breadth-first over
/// (box cell, side of the box the player is on), so the fewest pushes.
#[allow(clippy::too_many_arguments)]
pub(super) fn push_path(neighbours: &[[u16; 4]], walls: &[bool], dead: &[bool], occupied: &mut [bool], region: &Region, from: usize, target: usize, scratch: &mut Region) -> Option<Vec<(u16, u8)>> {
    push_path_to(neighbours, walls, dead, occupied, region, from, (target, None), scratch)
}

/// [`push_path`], ending with the player next to the box on `side` when given (a side of the
/// box the player can reach after the last push).
#[allow(clippy::too_many_arguments)]
pub(super) fn push_path_to(neighbours: &[[u16; 4]], walls: &[bool], dead: &[bool], occupied: &mut [bool], region: &Region, from: usize, (target, target_side): (usize, Option<usize>), scratch: &mut Region) -> Option<Vec<(u16, u8)>> {
    let size = walls.len();
    // For each (cell, side): the state it came from and the push's direction (u8::MAX: start).
    let mut came: Vec<[(u16, u8, u8); 4]> = vec![[(NONE, 0, 0); 4]; size];
    let mut queue = std::collections::VecDeque::new();
    for side in 0..4 {
        let at = neighbours[from][side];
        if at != NONE && region.contains(at as usize) {
            came[from][side] = (from as u16, side as u8, u8::MAX);
            queue.push_back((from, side));
        }
    }
    occupied[from] = false;
    let mut found = None;
    'search: while let Some((boxed, side)) = queue.pop_front() {
        let direction = side ^ 1; // the player pushes away from its side
        let to = neighbours[boxed][direction];
        if to == NONE || walls[to as usize] || occupied[to as usize] || dead[to as usize] {
            continue;
        }
        let to = to as usize;
        occupied[to] = true;
        scratch.flood(neighbours, walls, occupied, boxed);
        occupied[to] = false;
        for new_side in 0..4 {
            let at = neighbours[to][new_side];
            if at != NONE && scratch.contains(at as usize) && came[to][new_side].0 == NONE {
                came[to][new_side] = (boxed as u16, side as u8, direction as u8);
                if to == target && target_side.is_none_or(|s| s == new_side) {
                    found = Some((to, new_side));
                    break 'search;
                }
                queue.push_back((to, new_side));
            }
        }
    }
    occupied[from] = true;
    let (mut cell, mut side) = found?;
    let mut path = Vec::new();
    loop {
        let (previous, previous_side, direction) = came[cell][side];
        if direction == u8::MAX {
            break;
        }
        path.push((previous, direction));
        (cell, side) = (previous as usize, previous_side as usize);
    }
    path.reverse();
    Some(path)
}

/// Turns the chain of pushes ending at `index` into LURD and replays it on the level.
fn replay(level: &Level, nodes: &[Node], paths: &[Vec<(u16, u8)>], mut index: u32) -> Option<Outcome> {
    let mut pushes = Vec::new();
    while nodes[index as usize].parent != u32::MAX {
        match nodes[index as usize].path {
            u32::MAX => pushes.push(nodes[index as usize].push),
            path => pushes.extend(paths[path as usize].iter().rev()),
        }
        index = nodes[index as usize].parent;
    }
    pushes.reverse();
    replay_pushes(level, &pushes)
}

/// Plays the pushes (box cell before each, direction) on the level, walking the player to each,
/// and reports the solution when they solve it.
pub(super) fn replay_pushes(level: &Level, pushes: &[(u16, u8)]) -> Option<Outcome> {
    let mut game = Game::new(level.clone());
    for &(boxed, direction) in pushes {
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
pub(super) mod tests {
    use super::*;
    use std::collections::HashSet;
    use crate::games::sokoban::level::parse_collection;

    /// Solved or proven unsolvable within a second, else None.
    fn verdict(level: &Level, techniques: Techniques) -> Option<bool> {
        let deadline = Instant::now() + std::time::Duration::from_secs(1);
        match solve_with(level, Some(deadline), &AtomicBool::new(false), techniques, usize::MAX) {
            Outcome::Solved { lurd, .. } => {
                assert!(verify(level, &lurd), "level {}", level.title);
                Some(true)
            }
            Outcome::Unsolvable => Some(false),
            Outcome::OutOfTime => None,
        }
    }

    /// PI-corral pruning and goal macros never turn a solvable position into "unsolvable" (nor
    /// the reverse): positions reached by random walks on the small Microban levels, many of
    /// them deadlocked, get the same answer with the techniques on and off.
    #[test]
    fn pruning_never_changes_whether_a_position_is_solvable() {
        let plain = Techniques { pi_corrals: false, goal_macros: false, fewest_pushes: false, goal_rooms: false };
        let full = Techniques { pi_corrals: true, goal_macros: true, fewest_pushes: false, goal_rooms: true };
        let (mut solvable, mut unsolvable) = (0, 0);
        for (title, position, lurd) in random_walk_positions(16, 5, 80, 4, 10..60) {
            let (Some(without), Some(with)) = (verdict(&position, plain), verdict(&position, full)) else { continue };
            assert_eq!(with, without, "level {title} after {lurd}");
            if with { solvable += 1 } else { unsolvable += 1 }
        }
        assert!(solvable >= 20 && unsolvable >= 10, "too few positions compared: {solvable} solvable, {unsolvable} not");
    }

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

    /// Short limits keep the best-first search's share; long ones give it at most the cap, so
    /// that FESS is not kept waiting (at 60 s: 2 s, not 9 s).
    #[test]
    fn the_first_search_gets_a_share_capped_in_seconds() {
        assert_eq!(first_share(Duration::from_secs(10)), Duration::from_secs_f64(1.5));
        assert_eq!(first_share(Duration::from_secs(2)), Duration::from_secs_f64(0.3));
        assert_eq!(first_share(Duration::from_secs(60)), Duration::from_secs(2));
        assert_eq!(first_share(Duration::from_secs(600)), FIRST_CAP);
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

    /// The board tables, the boxes and the player's region of a level's start.
    fn start(text: &str) -> (Level, Vec<[u16; 4]>, Vec<bool>, Vec<bool>, Region) {
        let level = parse_collection(text).unwrap().remove(0);
        let (neighbours, walls, dead) = board_tables(&level);
        let mut region = Region::new(walls.len());
        region.flood(&neighbours, &walls, &level.boxes, level.player);
        (level, neighbours, walls, dead, region)
    }

    /// Fewest pushes by plain breadth-first search over (boxes, player's area), nothing pruned.
    fn fewest_pushes_by_brute_force(level: &Level) -> Option<usize> {
        let size = level.width * level.height;
        let key = |boxes: &[bool], player: usize| {
            let area = level.reachable(player, |c| level.walls[c] || boxes[c]);
            (boxes.to_vec(), (0..size).find(|&c| area[c]).unwrap())
        };
        let mut seen = HashSet::from([key(&level.boxes, level.player)]);
        let mut layer = vec![(level.boxes.clone(), level.player)];
        for pushes in 0.. {
            if layer.is_empty() {
                return None;
            }
            let mut next_layer = Vec::new();
            for (boxes, player) in layer {
                if (0..size).all(|c| !boxes[c] || level.goals[c]) {
                    return Some(pushes);
                }
                let area = level.reachable(player, |c| level.walls[c] || boxes[c]);
                for cell in (0..size).filter(|&c| boxes[c]) {
                    for direction in 0..4 {
                        let (Some(behind), Some(to)) = (level.neighbour(cell, direction ^ 1), level.neighbour(cell, direction)) else { continue };
                        if area[behind] && !level.walls[to] && !boxes[to] {
                            let mut moved = boxes.clone();
                            (moved[cell], moved[to]) = (false, true);
                            if seen.insert(key(&moved, cell)) {
                                next_layer.push((moved, cell));
                            }
                        }
                    }
                }
            }
            layer = next_layer;
        }
        unreachable!()
    }

    #[test]
    fn fewest_pushes_matches_brute_force() {
        let levels = parse_collection(include_str!("../../../samples/sokoban/microban_155.xsb")).unwrap();
        let cancel = AtomicBool::new(false);
        let mut compared = 0;
        for level in levels.iter().filter(|l| l.boxes.iter().filter(|&&b| b).count() <= 3).take(12) {
            let Outcome::Solved { lurd, pushes, .. } = solve_fewest_pushes(level, None, &cancel, DEFAULT_MEMORY) else { panic!("level {}", level.title) };
            assert!(verify(level, &lurd));
            assert_eq!(Some(pushes), fewest_pushes_by_brute_force(level), "level {}", level.title);
            let Outcome::Solved { pushes: greedy, .. } = solve(level, None, &cancel) else { panic!("level {}", level.title) };
            assert!(pushes <= greedy, "level {}", level.title);
            compared += 1;
        }
        assert!(compared >= 8, "{compared}");
    }

    #[test]
    fn tunnel_macro_pushes_through_a_corridor_and_stops_at_its_end() {
        let (level, neighbours, walls, dead, _) = start("###########\n#@$     . #\n#### ######\n   ###\n");
        let board = Board { neighbours: &neighbours, walls: &walls, goals: &level.goals, dead: &dead };
        let cell = |x: usize| level.width + x;
        let mut occupied = level.boxes.clone();
        // The box goes from 2 to 3; the corridor runs on to the goal at 8, but cell 4 has an
        // opening below, so the macro stops with the box on 4 (the corridor's end).
        let mut steps = vec![(cell(2) as u16, 3)];
        assert_eq!(follow_tunnel(&board, &occupied, (cell(2), cell(3)), 3, &mut steps), (cell(3), cell(4)));
        assert_eq!(steps, vec![(cell(2) as u16, 3), (cell(3) as u16, 3)]);
        // From 5 on, it runs to the goal and stops there.
        occupied[cell(2)] = false;
        let mut steps = vec![(cell(5) as u16, 3)];
        assert_eq!(follow_tunnel(&board, &occupied, (cell(5), cell(6)), 3, &mut steps), (cell(7), cell(8)));
        assert_eq!(steps.len(), 3);
        // A box in the way stops it.
        occupied[cell(7)] = true;
        let mut steps = vec![(cell(5) as u16, 3)];
        assert_eq!(follow_tunnel(&board, &occupied, (cell(5), cell(6)), 3, &mut steps), (cell(5), cell(6)));
        assert_eq!(steps.len(), 1);
    }

    #[test]
    fn goal_macro_finds_the_fewest_pushes_around_other_boxes() {
        let (level, neighbours, walls, dead, region) = start("#######\n#     #\n# $#  #\n#@ $ .#\n#  . ##\n#######\n");
        let at = |x: usize, y: usize| y * level.width + x;
        let mut occupied = level.boxes.clone();
        let mut scratch = Region::new(walls.len());
        let path = push_path(&neighbours, &walls, &dead, &mut occupied, &region, at(3, 3), at(5, 3), &mut scratch).unwrap();
        assert_eq!(path, vec![(at(3, 3) as u16, 3), (at(4, 3) as u16, 3)]);
        assert_eq!(occupied, level.boxes, "the boxes are as they were");
        // The box at (2,2) cannot go right (a wall) nor along row 3 (a box): down, down, right.
        let path = push_path(&neighbours, &walls, &dead, &mut occupied, &region, at(2, 2), at(3, 4), &mut scratch).unwrap();
        assert_eq!(path, vec![(at(2, 2) as u16, 1), (at(2, 3) as u16, 1), (at(2, 4) as u16, 3)]);
        // No way into a wall-locked corner.
        assert_eq!(push_path(&neighbours, &walls, &dead, &mut occupied, &region, at(3, 3), at(1, 1), &mut scratch), None);
    }

    /// Positions reached by random walks on the first `levels` Microban levels with at most
    /// `most_boxes` boxes: `walks` per level, each of a random number of steps in `steps`. Each
    /// comes with its level's title and the moves that reached it.
    pub(in crate::games::sokoban) fn random_walk_positions(seed: u64, most_boxes: usize, levels: usize, walks: usize, steps: std::ops::Range<usize>) -> Vec<(String, Level, String)> {
        let all = parse_collection(include_str!("../../../samples/sokoban/microban_155.xsb")).unwrap();
        let mut rng = ChaCha8Rng::seed_from_u64(seed);
        let mut positions = Vec::new();
        for level in all.iter().filter(|l| l.boxes.iter().filter(|&&b| b).count() <= most_boxes).take(levels) {
            for _ in 0..walks {
                let mut game = Game::new(level.clone());
                for _ in 0..rng.gen_range(steps.clone()) {
                    game.step(rng.gen_range(0..4));
                }
                positions.push((level.title.clone(), game.position.clone(), game.lurd()));
            }
        }
        positions
    }

    /// Whether the plain search (no pruning but dead squares, freeze and matching) proves
    /// `level` unsolvable.
    pub(in crate::games::sokoban) fn proved_unsolvable(level: &Level) -> bool {
        let plain = Techniques { pi_corrals: false, goal_macros: false, fewest_pushes: false, goal_rooms: false };
        solve_with(level, None, &AtomicBool::new(false), plain, usize::MAX) == Outcome::Unsolvable
    }

    /// `count` distinct cells drawn at random from `cells` (all of them when there are fewer).
    pub(in crate::games::sokoban) fn random_cells(rng: &mut impl Rng, cells: &[u16], count: usize) -> Vec<u16> {
        let mut drawn: Vec<u16> = Vec::new();
        while drawn.len() < count.min(cells.len()) {
            let cell = cells[rng.gen_range(0..cells.len())];
            if !drawn.contains(&cell) {
                drawn.push(cell);
            }
        }
        drawn
    }

    /// The matching check agrees with the cheapest assignment's, on random boxes (on cells from
    /// which some goal is still reachable) on the Microban levels.
    #[test]
    fn matching_check_agrees_with_the_lower_bound() {
        let levels = parse_collection(include_str!("../../../samples/sokoban/microban_155.xsb")).unwrap();
        let mut rng = ChaCha8Rng::seed_from_u64(5);
        let (mut matched, mut unmatched) = (0, 0);
        for level in &levels {
            let tables = Tables::new(level);
            let live: Vec<u16> = (0..tables.distance_to_goal.len()).filter(|&c| tables.distance_to_goal[c] != u16::MAX).map(|c| c as u16).collect();
            // Cells that some goals cannot be reached from (along walls): boxes there compete.
            let partial: Vec<u16> = live.iter().copied().filter(|&c| tables.distance_to_each_goal.iter().any(|d| d[c as usize] == u16::MAX)).collect();
            let n = tables.distance_to_each_goal.len();
            for round in 0..40 {
                let live = if round % 2 == 1 && partial.len() >= n { &partial } else { &live };
                let boxes = random_cells(&mut rng, live, n);
                let expected = tables.lower_bound(&boxes).is_some();
                assert_eq!(tables.can_match(&boxes), expected, "level {} boxes {boxes:?}", level.title);
                if expected { matched += 1 } else { unmatched += 1 }
            }
        }
        assert!(matched > 500 && unmatched > 500, "{matched} matched, {unmatched} not");
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

    /// With no deadline, only its memory budget stops the best-first search on a level that
    /// takes it hundreds of thousands of positions; a small level is solved within the same
    /// budget.
    #[test]
    fn the_best_first_search_gives_up_when_its_memory_is_full() {
        let levels = parse_collection(include_str!("../../../samples/sokoban/microban_155.xsb")).unwrap();
        let techniques = Techniques { pi_corrals: true, goal_macros: true, fewest_pushes: false, goal_rooms: true };
        let cancel = AtomicBool::new(false);
        assert_eq!(solve_with(&levels[152], None, &cancel, techniques, 4 << 20), Outcome::OutOfTime);
        assert!(matches!(solve_with(&levels[0], None, &cancel, techniques, 4 << 20), Outcome::Solved { .. }));
    }
}
