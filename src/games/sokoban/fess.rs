//! FESS-style search (after Shoham and Schaeffer, "The FESS Algorithm: A Feature Based Approach
//! to Single-Agent Search", 2020, the search of their solver Festival).
//!
//! Moves are *box moves*: one box pushed any number of times to any cell it can reach with the
//! other boxes standing still (a breadth-first search over the box's cell and the side the player
//! is on). Every position is projected onto a small *feature space*:
//!
//! * packing: how many goals are filled in the packing order (`packing.rs`), counted from the
//!   first goal of the order up to the first empty one;
//! * connectivity: into how many separate areas the boxes cut the free floor;
//! * out of plan: boxes standing on goals whose turn in the packing order has not come.
//!
//! The search visits the non-empty cells of the feature space in turn (round-robin); in each it
//! takes the unexpanded position with the least accumulated *weight* and expands it fully. A
//! child's weight is its parent's plus the move's cost: 0 for a move that an *advisor* suggests
//! (the packing advisor: a move that fills the next goal of the order; the connectivity
//! advisor: the move that leaves the fewest areas, when it joins some; the out-of-plan advisor:
//! the move that leaves the fewest boxes out of plan, when it takes one off a goal too early;
//! the hotspot advisor: the move of a box with boxes on two or more sides to a cell no other box
//! touches; ties to the smaller bound, then the fewer pushes; a named child that the deadlock
//! checks below find dead is dropped at once), 1 for any other move. So the search
//! follows the advisors' plans deeply while still keeping every other move in reserve, and its
//! attention is spread over positions of different kinds instead of one priority. Ties within a
//! cell go to the smaller bound (each box's pushes to its nearest goal) or the fewer pushes.
//!
//! Five such searches, with different feature spaces (some features capped, so that fewer cells
//! share the turns), tie-breaks and advisors ([`CONFIGS`]; one has an *approach* advisor: the
//! move that brings its box nearest the next goal of the order, among those that bring their
//! box nearer it), take turns of a fixed number of expansions: each solves levels the others
//! miss. A sixth, whose packing counts every box on a goal instead of following the order, joins
//! them when the search runs long ([`LATE_CONFIGS`]), and so does the backward search
//! (`backward.rs`): once it runs, a forward position it has reached is solved by its pulls,
//! pushed the other way. The connectivity
//! features and the player's area after a push come from the articulation points of the free
//! floor (one depth-first search per box, of the area its cell joins, instead of a flood per
//! push). A child's key and features are updated from its parent's, and its boxes are only
//! written out when it is expanded; the search's order does not depend on any of this.
//!
//! Pruning is the solver's: dead squares (a box never enters one), freeze deadlocks, matching
//! deadlocks, PI-corrals (only box moves whose first push enters the corral) and corral
//! deadlocks, and also corral deadlocks proved by a small search of a corral's boxes alone
//! (`deadlock.rs`), boxes that can reach no free goal, or free goals no box can reach, once
//! the boxes frozen on goals are walls (`frozen_goals.rs`), and goal rooms whose boxes make a
//! pattern from which they can no longer be filled (`goal_room.rs`: a look-up, made for every
//! child as it is made). Each search keeps the boxes of the
//! positions it has expanded only (the others' are their parent's with one box moved) and gives
//! up when its positions fill its share of the memory [`search`] is given. Running out of
//! positions proves nothing here (the caller then searches in full); a solution is rebuilt push
//! by push and replayed by the game before it is reported.

use std::collections::HashMap;
use std::hash::{BuildHasherDefault, Hash, Hasher};
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

use super::backward::Backward;
use super::corral::{Board, Corrals, Verdict};
use super::deadlock::Deadlocks;
use super::frozen_goals::FrozenGoals;
use super::goal_room::GoalRooms;
use super::level::Level;
use super::packing::packing_order;
use super::solver::{board_tables, flood_from, push_path_to, replay_pushes, Order, Outcome, Region, Tables, NONE};

/// Positions by Zobrist key, each with a value: an open-addressing table with linear probing.
/// The keys are uniformly random already, so their low bits pick the slot; one probe usually
/// touches a single cache line (a general hash map reads its control bytes and then the slot).
/// Key 0 marks an empty slot, so a key of 0 is stored as 1 (one more possible collision, which
/// can only hide a position, as any Zobrist collision). [`Seen`] keeps no value (its slots are
/// the keys alone); the backward search keeps each position's index.
pub(super) struct KeyTable<V> {
    slots: Vec<(u64, V)>,
    len: usize,
}

/// The positions seen by a FESS search.
pub(super) type Seen = KeyTable<()>;

impl<V: Copy + Default> KeyTable<V> {
    pub(super) fn new() -> KeyTable<V> {
        KeyTable { slots: vec![(0, V::default()); 1 << 12], len: 0 }
    }

    fn slot(&self, key: u64) -> (usize, bool) {
        let mask = self.slots.len() - 1;
        let mut at = key as usize & mask;
        loop {
            match self.slots[at].0 {
                0 => return (at, false),
                k if k == key => return (at, true),
                _ => at = (at + 1) & mask,
            }
        }
    }

    /// The key in the slot where the probe for `key` starts.
    fn home(&self, key: u64) -> u64 {
        self.slots[key.max(1) as usize & (self.slots.len() - 1)].0
    }

    #[cfg(test)]
    pub(super) fn contains(&self, key: u64) -> bool {
        self.slot(key.max(1)).1
    }

    /// The value kept with `key`, if it is there.
    pub(super) fn get(&self, key: u64) -> Option<V> {
        let (at, found) = self.slot(key.max(1));
        found.then(|| self.slots[at].1)
    }

    /// The bytes its slots take.
    pub(super) fn memory(&self) -> usize {
        self.slots.len() * std::mem::size_of::<(u64, V)>()
    }

    /// Adds `key` with `value`; false (and the value kept) when it was there already.
    pub(super) fn insert_with(&mut self, key: u64, value: V) -> bool {
        let key = key.max(1);
        if 2 * (self.len + 1) > self.slots.len() {
            let grown = vec![(0, V::default()); 2 * self.slots.len()];
            let old = std::mem::replace(&mut self.slots, grown);
            for (k, v) in old.into_iter().filter(|&(k, _)| k != 0) {
                let (at, _) = self.slot(k);
                self.slots[at] = (k, v);
            }
        }
        let (at, found) = self.slot(key);
        if !found {
            self.slots[at] = (key, value);
            self.len += 1;
        }
        !found
    }
}

impl Seen {
    /// Adds `key`; false when it was there already.
    pub(super) fn insert(&mut self, key: u64) -> bool {
        self.insert_with(key, ())
    }
}

/// A queue of positions by (weight, tie-break, index), least first: a heap with four children
/// per node, half as deep as a binary heap, so that taking the least position from a large
/// queue misses the cache about half as often (the triples, all distinct by index, come out
/// in the same order from any heap). Weights and tie-breaks are kept in 16 bits each,
/// saturated (8 bytes an entry: the queues hold every unexpanded position of a search, most
/// of its memory; no search of a minute comes near 65,535 in either).
#[derive(Default)]
struct Queue {
    /// The triples packed into one number each, which orders them the same way.
    keys: Vec<u64>,
}

impl Queue {
    fn push(&mut self, (weight, tie, index): (u32, u32, u32)) {
        let key = u64::from(weight.min(0xffff)) << 48 | u64::from(tie.min(0xffff)) << 32 | u64::from(index);
        self.keys.push(key);
        self.sift_up(self.keys.len() - 1, key);
    }

    fn pop(&mut self) -> Option<(u32, u32, u32)> {
        let last = self.keys.pop()?;
        let least = match self.keys.first() {
            None => last,
            Some(&least) => {
                // The hole at the top goes down along the least children to the bottom, and
                // the last key rises from there (fewer comparisons than sifting it down).
                let (len, mut at) = (self.keys.len(), 0);
                while 4 * at + 1 < len {
                    let first = 4 * at + 1;
                    let child = (first..len.min(first + 4)).min_by_key(|&c| self.keys[c]).expect("a child");
                    self.keys[at] = self.keys[child];
                    at = child;
                }
                self.sift_up(at, last);
                least
            }
        };
        Some(((least >> 48) as u32, (least >> 32) as u32 & 0xffff, least as u32))
    }

    /// Puts `key` at `at` or above, moving greater parents down.
    fn sift_up(&mut self, mut at: usize, key: u64) {
        while at > 0 {
            let parent = (at - 1) / 4;
            if self.keys[parent] <= key {
                break;
            }
            self.keys[at] = self.keys[parent];
            at = parent;
        }
        self.keys[at] = key;
    }

    /// The bytes its entries take.
    fn memory(&self) -> usize {
        self.keys.capacity() * std::mem::size_of::<u64>()
    }

    fn is_empty(&self) -> bool {
        self.keys.is_empty()
    }
}

/// A position of a search (also of the backward search): its boxes live in the search's box
/// arena.
pub(super) struct Node {
    /// The smallest cell of the player's area.
    pub(super) player: u16,
    pub(super) parent: u32,
    /// The box move that led here: the box's cell before and after, and a side the player
    /// stands on (forwards: a side of the box after that the player reaches; backwards: the side
    /// of the cell before where the first pull starts, where a forward push ends).
    pub(super) moved: (u16, u16, u8),
    /// The areas of free floor (its features' connectivity, kept so as not to count again).
    pub(super) areas: u16,
}

/// A position's coordinates in the feature space.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub(super) struct Features {
    pub packed: u16,
    pub areas: u16,
    pub out_of_plan: u16,
}

/// What the depth-first search of [`Areas::analyse_around`] finds for one free cell (kept together:
/// one bounds check and one cache line per cell).
#[derive(Clone, Copy)]
struct Visit {
    /// Discovery time, valid when above [`Areas::base`].
    discovered: u32,
    /// The earliest discovery time reached from the cell's subtree by one edge.
    low: u32,
    /// The last discovery time in the cell's subtree (its times run from `discovered` to this).
    last: u32,
    /// The cell's parent in the depth-first tree ([`NONE`] for an area's first cell).
    parent: u16,
    /// The smallest cell of the cell's subtree.
    least: u16,
    /// Into how many areas the cell's own area falls when a box stands on it.
    pieces: u16,
    /// The cell's area, named by its smallest cell (where the search started it).
    root: u16,
}

/// Hashes [`Features`] (three small numbers) by a multiplication: the standard hasher resists
/// chosen keys, which the search's own features need not, at a cost on every child's look-up.
#[derive(Default)]
struct FeatureHasher(u64);

impl Hasher for FeatureHasher {
    fn write(&mut self, bytes: &[u8]) {
        bytes.iter().for_each(|&b| self.write_u16(b.into()));
    }

    fn write_u16(&mut self, n: u16) {
        self.0 = self.0 << 16 | u64::from(n);
    }

    fn finish(&self) -> u64 {
        // The high bits of the product depend on all of the fields: folded down for the low bits.
        let h = self.0.wrapping_mul(0x9e37_79b9_7f4a_7c15);
        h ^ h >> 32
    }
}

/// The cells of a feature space, each a queue of positions by (weight, tie-break, index),
/// visited in turn (round-robin): the forward searches' and the backward search's.
pub(super) struct Cells<F> {
    cell_of: HashMap<F, usize, BuildHasherDefault<FeatureHasher>>,
    queues: Vec<Queue>,
    /// The next cell to take a position from.
    turn: usize,
}

impl<F: Hash + Eq> Cells<F> {
    pub(super) fn new() -> Cells<F> {
        Cells { cell_of: HashMap::default(), queues: Vec::new(), turn: 0 }
    }

    /// Queues a position in the cell of `features`.
    pub(super) fn push(&mut self, features: F, item: (u32, u32, u32)) {
        let queues = &mut self.queues;
        let index = *self.cell_of.entry(features).or_insert_with(|| {
            queues.push(Queue::default());
            queues.len() - 1
        });
        queues[index].push(item);
    }

    /// The first position of the next non-empty cell in turn; None when every cell is empty.
    pub(super) fn next(&mut self) -> Option<(u32, u32, u32)> {
        let count = self.queues.len();
        let offset = (0..count).find(|&k| !self.queues[(self.turn + k) % count].is_empty())?;
        let cell = (self.turn + offset) % count;
        self.turn = cell + 1;
        self.queues[cell].pop()
    }

    /// The bytes its queues take.
    pub(super) fn memory(&self) -> usize {
        self.queues.iter().map(Queue::memory).sum()
    }

    /// How many cells have been used.
    #[cfg(test)]
    pub(super) fn len(&self) -> usize {
        self.queues.len()
    }
}

/// Counts the separate areas of free floor (neither wall nor box), and, for a fixed set of
/// boxes, how many there would be with one more box on any free cell (from the articulation
/// points of the free floor, one depth-first search for all cells).
pub(super) struct Areas {
    mark: Vec<u32>,
    stamp: u32,
    /// The stamp of the first area named by [`Areas::label`] (in `mark`).
    first_label: u32,
    /// The smallest cell of each area named by [`Areas::label`], by its stamp from `first_label`.
    area_least: Vec<u16>,
    stack: Vec<u16>,
    visits: Vec<Visit>,
    time: u32,
    base: u32,
    /// The areas found by the last analysis.
    total: u16,
    /// For each area's smallest cell, the area's second smallest ([`NONE`] if none).
    second: Vec<u16>,
    dfs: Vec<(u16, u8, u16)>,
    /// The cells that are not walls, in order (where areas can start).
    floor: Vec<u16>,
    /// Each cell's neighbours that are not walls, in the neighbour table's order, then [`NONE`]s
    /// (the search then skips walls without looking at them).
    open: Vec<[u16; 4]>,
}

impl Areas {
    pub(super) fn new(neighbours: &[[u16; 4]], walls: &[bool]) -> Areas {
        let size = walls.len();
        let open = neighbours
            .iter()
            .map(|around| {
                let mut open = [NONE; 4];
                for (slot, &n) in around.iter().filter(|&&n| n != NONE && !walls[n as usize]).enumerate() {
                    open[slot] = n;
                }
                open
            })
            .collect();
        let unvisited = Visit { discovered: 0, low: 0, last: 0, parent: NONE, least: NONE, pieces: 0, root: NONE };
        Areas {
            open,
            floor: (0..size).filter(|&c| !walls[c]).map(|c| c as u16).collect(),
            mark: vec![0; size],
            stamp: 0,
            first_label: 1,
            area_least: Vec::new(),
            stack: Vec::new(),
            visits: vec![unvisited; size],
            time: 0,
            base: 0,
            total: 0,
            second: vec![NONE; size],
            dfs: Vec::new(),
        }
    }

    pub(super) fn count(&mut self, neighbours: &[[u16; 4]], walls: &[bool], occupied: &[bool]) -> u16 {
        self.stamp += 1;
        let stamp = self.stamp;
        let mut areas = 0;
        for start in 0..walls.len() {
            if walls[start] || occupied[start] || self.mark[start] == stamp {
                continue;
            }
            areas += 1;
            flood_from(&mut self.mark, &mut self.stack, stamp, start, neighbours, walls, occupied);
        }
        areas
    }

    /// Names the areas of free floor with these boxes, for [`Areas::analyse_around`]; returns
    /// how many there are.
    pub(super) fn label(&mut self, neighbours: &[[u16; 4]], walls: &[bool], occupied: &[bool]) -> u16 {
        if self.stamp > u32::MAX - walls.len() as u32 - 1 {
            self.mark.iter_mut().for_each(|m| *m = 0);
            self.stamp = 0;
        }
        // Each area gets its own stamp, from `first_label` on.
        self.first_label = self.stamp + 1;
        self.area_least.clear();
        for &start in &self.floor {
            let start = start as usize;
            if occupied[start] || self.mark[start] >= self.first_label {
                continue;
            }
            self.stamp += 1;
            self.area_least.push(start as u16); // the floor in order: the area's smallest cell
            flood_from(&mut self.mark, &mut self.stack, self.stamp, start, neighbours, walls, occupied);
        }
        self.area_least.len() as u16
    }

    /// Prepares [`Areas::with_box_on`] for these boxes (Tarjan's articulation points), for the
    /// whole board (the tests' reference for [`Areas::analyse_around`]).
    #[cfg(test)]
    pub(super) fn analyse(&mut self, walls: &[bool], occupied: &[bool]) {
        self.begin(walls);
        self.total = 0;
        for i in 0..self.floor.len() {
            let start = self.floor[i] as usize;
            if !occupied[start] && self.visits[start].discovered <= self.base {
                self.total += 1;
                self.search(start, occupied);
            }
        }
    }

    /// Prepares [`Areas::with_box_on`] (Tarjan's articulation points) for the cells of one area
    /// only: the area that the cell `from`, freed in `occupied` (its box taken away) since
    /// [`Areas::label`], joins with the areas around it. The others are left out: no box move
    /// of that box reaches them.
    pub(super) fn analyse_around(&mut self, walls: &[bool], occupied: &[bool], from: usize) {
        self.begin(walls);
        // The areas around `from` become one, whose smallest cell starts the search.
        let (mut joined, mut around) = ([0; 4], 0);
        let mut start = from;
        for &next in &self.open[from] {
            if next == NONE || occupied[next as usize] {
                continue;
            }
            let label = self.mark[next as usize];
            if !joined[..around].contains(&label) {
                joined[around] = label;
                around += 1;
                start = start.min(self.area_least[(label - self.first_label) as usize] as usize);
            }
        }
        self.total = self.area_least.len() as u16 + 1 - around as u16;
        self.search(start, occupied);
    }

    /// Starts a new analysis: the discovery times from before it fall at or below `base`.
    fn begin(&mut self, walls: &[bool]) {
        let size = walls.len() as u32;
        if self.time > u32::MAX - size - 1 {
            self.visits.iter_mut().for_each(|v| v.discovered = 0);
            self.time = 0;
        }
        self.base = self.time;
    }

    /// The depth-first search of the area whose smallest cell is `start`.
    fn search(&mut self, start: usize, occupied: &[bool]) {
        let base = self.base;
        let visits = &mut self.visits[..];
        self.time += 1;
        // The root: one area per subtree.
        visits[start] = Visit { discovered: self.time, low: self.time, last: 0, parent: NONE, least: start as u16, pieces: 0, root: start as u16 };
        let mut second = NONE;
        // The cell being searched, the next of its neighbours to look at and its parent, kept
        // out of `dfs` (which holds those of the cells above it).
        let (mut cell, mut k, mut parent) = (start, 0, NONE);
        loop {
            let next = if k < 4 { self.open[cell][k] } else { NONE };
            if next != NONE {
                k += 1;
                let n = next as usize;
                if occupied[n] {
                    continue;
                }
                let found = visits[n].discovered;
                if found <= base {
                    self.time += 1;
                    // One piece holds its parent.
                    visits[n] = Visit { discovered: self.time, low: self.time, last: 0, parent: cell as u16, least: next, pieces: 1, root: start as u16 };
                    second = second.min(next);
                    self.dfs.push((cell as u16, k as u8, parent));
                    (cell, k, parent) = (n, 0, cell as u16);
                } else if next != parent {
                    visits[cell].low = visits[cell].low.min(found);
                }
            } else {
                visits[cell].last = self.time;
                let Some((up, up_k, up_parent)) = self.dfs.pop() else { break };
                let (done, p) = (visits[cell], up as usize);
                let above = &mut visits[p];
                above.least = above.least.min(done.least);
                above.low = above.low.min(done.low);
                if done.low >= above.discovered {
                    above.pieces += 1;
                }
                (cell, k, parent) = (p, up_k as usize, up_parent);
            }
        }
        self.second[start] = second;
    }

    /// Into how many areas the area of the free `cell` falls when a box stands on it (after
    /// [`Areas::analyse_around`]).
    pub(super) fn pieces(&self, cell: usize) -> u16 {
        self.visits[cell].pieces
    }

    /// The smallest cell of the area of `cell` without `cell` (after [`Areas::analyse_around`]; when a
    /// box on `cell` cuts nothing off, the area left is that).
    pub(super) fn area_without(&self, cell: usize) -> u16 {
        let root = self.visits[cell].root;
        if root as usize == cell { self.second[cell] } else { root }
    }

    /// With one more box on the free cell `at`, the smallest cell of the area that holds its free
    /// neighbour `beside` (after [`Areas::analyse_around`]; what a flood from `beside` would find).
    pub(super) fn area_beside(&self, neighbours: &[[u16; 4]], at: usize, beside: usize) -> u16 {
        // Every edge of a depth-first search joins a cell to its ancestor or descendant, so
        // `beside` is in the subtree of a child of `at` or an ancestor of `at`. A child's subtree
        // whose low point does not reach above `at` is cut off as an area of its own; all else
        // stays with the search's first cell, the smallest of the area.
        let (time, base, v) = (self.visits[beside].discovered, self.base, &self.visits[at]);
        if time > v.discovered && time <= v.last {
            let visits = &self.visits;
            let in_subtree = |c: usize| visits[c].discovered > base && visits[c].parent as usize == at && visits[c].discovered <= time && time <= visits[c].last;
            let child = neighbours[at].iter().map(|&c| c as usize).find(|&c| c != NONE as usize && in_subtree(c)).expect("a descendant is in a child's subtree");
            if visits[child].low >= v.discovered {
                return visits[child].least;
            }
        }
        v.root
    }

    /// The number of areas with one more box on the free `cell` (after [`Areas::analyse_around`]).
    pub(super) fn with_box_on(&self, cell: usize) -> u16 {
        self.total + self.visits[cell].pieces - 1
    }
}

/// The feature-space coordinates of a position with these boxes and `areas` areas.
pub(super) fn features(order: &Order, goals: &[bool], boxes: &[u16], areas: u16) -> Features {
    let on_goals = boxes.iter().filter(|&&b| goals[b as usize]).count() as u16;
    let out_of_plan = order.out_of_turn(boxes) as u16;
    Features { packed: on_goals - out_of_plan, areas, out_of_plan }
}

/// A child found while expanding: its player, move (its boxes are the parent's with the move's
/// box moved), the pushes it took, features.
struct Child {
    player: u16,
    moved: (u16, u16, u8),
    pushes: u32,
    features: Features,
    bound: u32,
    key: u64,
    /// Its goal rooms make a pattern from which they cannot be filled: it is dropped, after the
    /// advisors have named their children (see there).
    room_dead: bool,
}

/// How one FESS search orders its work; [`search`] runs several side by side, because each
/// solves levels the others miss.
#[derive(Clone, Copy, Debug)]
pub(super) struct Config {
    /// The number of areas counts in the feature space up to this (0: not at all; more areas
    /// share the cell of this many).
    pub areas_cap: u16,
    /// The same for the number of boxes out of plan.
    pub plan_cap: u16,
    /// Among positions of equal weight in a cell, the one with the fewest pushes in its last
    /// move first (else the one with the smallest bound).
    pub fewest_pushes_first: bool,
    /// Turns of [`SLICE`] expansions this configuration takes in each round.
    pub turns: u64,
    /// Packing counts the goals filled in the packing order (else all boxes on goals, and no
    /// box is out of plan).
    pub ordered: bool,
    /// Corral deadlocks are also sought by a small search of the corral's boxes (`deadlock.rs`).
    pub corral_search: bool,
    /// The approach advisor: the move that brings its box nearest the next goal of the packing
    /// order, among those that bring their box nearer it, costs nothing.
    pub approach: bool,
}

/// The configurations [`search`] interleaves (measured on the original 90 at 5 s: each solves
/// levels the others miss). Capping a feature merges the cells beyond the cap, so the round-robin
/// spreads the turns over fewer cells: with areas up to 3 and no out-of-plan coordinate, the
/// first configuration alone solves Microban 153 in 2.8 s instead of 10.6 s, and it takes two
/// turns in each round. After its twin (below): without areas, with the fewest pushes first
/// (areas up to 3, boxes out of plan up to 1), and packing alone.
///
/// The second is the first with the approach advisor: the move that brings its box nearest the
/// next goal of the packing order, among those that bring their box nearer it, costs nothing,
/// so a box is walked towards a goal room over many moves (original 90, level 40: this
/// configuration alone solves it in 7.4 s; the others fill at most 8 of its 16 goals in 60 s).
/// It used to join late; from the start, levels 15 and 40 are solved sooner (27 s -> 19 s and
/// 12 s). Given to all four others instead, it did worse: levels they solved in 3 s took 20-60 s.
pub(super) const CONFIGS: [Config; 5] = [
    Config { areas_cap: 3, plan_cap: 0, fewest_pushes_first: false, turns: 2, ordered: true, corral_search: true, approach: false },
    Config { areas_cap: 3, plan_cap: 0, fewest_pushes_first: false, turns: 1, ordered: true, corral_search: true, approach: true },
    Config { areas_cap: 0, plan_cap: u16::MAX, fewest_pushes_first: false, turns: 1, ordered: true, corral_search: true, approach: false },
    Config { areas_cap: 3, plan_cap: 1, fewest_pushes_first: true, turns: 1, ordered: true, corral_search: true, approach: false },
    Config { areas_cap: 0, plan_cap: 0, fewest_pushes_first: false, turns: 1, ordered: true, corral_search: true, approach: false },
];

/// Configurations that join the others once the search has run for [`LATE_JOIN`]: they solve
/// some long searches the others do not, and would only slow down the short ones. Packing
/// without the order (every box on a goal counts): the order is a guess, and a wrong one
/// keeps the packing feature and its advisor from helping at all (original 90, level 26:
/// not solved in 60 s with the order, in 3.4 s by this configuration alone). Without the
/// corral deadlock search: with it, this configuration alone no longer solved level 26 within
/// 10 s (pruning dead positions changes which positions each cell offers; no position of
/// the solution it finds without it is pruned), so the two kinds of search differ here too.
pub(super) const LATE_CONFIGS: [Config; 1] = [Config { areas_cap: 3, plan_cap: 0, fewest_pushes_first: false, turns: 1, ordered: false, corral_search: false, approach: false }];

/// When the [`LATE_CONFIGS`] join the search (later than Microban's slowest levels take with
/// the first configurations: 153 needs 7 s of FESS).
pub(super) const LATE_JOIN: Duration = Duration::from_secs(8);


/// Expansions each configuration makes in its turn.
const SLICE: u64 = 500;

/// Into how many equal shares [`search`]'s memory is cut: one for each forward search (the
/// [`CONFIGS`] and the [`LATE_CONFIGS`]) and one for the backward search. A search whose
/// positions fill its share gives up, rather than exhaust the machine's memory.
const MEMORY_SHARES: usize = CONFIGS.len() + LATE_CONFIGS.len() + 1;

/// The FESS search until `deadline` or `cancel`: the [`CONFIGS`] take turns of [`SLICE`]
/// expansions each, some several turns in a row, joined by the [`LATE_CONFIGS`] and the
/// backward search (`backward.rs`) after [`LATE_JOIN`]. From then on, a forward position the
/// backward search has reached solves the level (the forward pushes to it, then the backward
/// search's pushes from it to the solved position). None when all the forward searches run
/// out of positions (which proves nothing, see the module's comment) or of the `memory` they may
/// use (bytes, in all, with the level's goal `rooms`).
pub(super) fn search(level: &Level, deadline: Option<Instant>, cancel: &AtomicBool, rooms: &GoalRooms, memory: usize) -> Option<Outcome> {
    if level.is_solved() {
        return replay_pushes(level, &[]);
    }
    let tables = Tables::new(level);
    let started = Instant::now();
    let share = memory.saturating_sub(rooms.memory()) / MEMORY_SHARES;
    let mut searches = Vec::new();
    for config in CONFIGS {
        match Search::new(level, &tables, rooms, config, share) {
            Ok(search) => searches.push(search),
            Err(outcome) => return Some(outcome),
        }
    }
    // Joins late: it solves few levels alone (original level 18 in 7 s) and it meets the forward
    // searches near the end of long ones (level 44), but its turns would slow the short ones.
    let mut backward: Option<Backward> = None;
    let mut backward_running = false;
    while !searches.is_empty() {
        if backward.is_none() && started.elapsed() >= LATE_JOIN {
            for config in LATE_CONFIGS {
                match Search::new(level, &tables, rooms, config, share) {
                    Ok(search) => searches.push(search),
                    Err(outcome) => return Some(outcome),
                }
            }
            backward = Some(Backward::new(level, &tables).with_memory(share));
            backward_running = true;
        }
        let mut k = 0;
        while k < searches.len() {
            let turns = searches[k].config.turns;
            match searches[k].run(SLICE * turns, deadline, cancel, backward.as_ref()) {
                Step::Paused => k += 1,
                Step::Exhausted | Step::Full => {
                    searches.remove(k);
                }
                Step::Done(outcome) => return Some(outcome),
            }
        }
        if let (true, Some(b)) = (backward_running, backward.as_mut()) {
            match b.run(SLICE, deadline, cancel) {
                Step::Paused => {}
                // Its positions stay for the forward searches to meet.
                Step::Exhausted | Step::Full => backward_running = false,
                Step::Done(outcome) => return Some(outcome),
            }
        }
    }
    None
}

/// How a turn of one search ended.
pub(super) enum Step {
    /// Its expansions are used up; it can go on.
    Paused,
    /// No position left.
    Exhausted,
    /// Its positions fill the memory it may use (its share of [`search`]'s).
    Full,
    /// Solved, out of time or cancelled.
    Done(Outcome),
}

/// One FESS search, resumable.
struct Search<'a> {
    level: &'a Level,
    tables: &'a Tables<'a>,
    /// The goal rooms' patterns from which they can be filled, shared by the searches.
    rooms: &'a GoalRooms,
    config: Config,
    neighbours: Vec<[u16; 4]>,
    walls: Vec<bool>,
    dead: Vec<bool>,
    order: Order,
    region: Region,
    scratch: Region,
    areas: Areas,
    checks: Checks,
    occupied: Vec<bool>,
    /// Boxes per position.
    n: usize,
    /// The boxes of every expanded position (and of the start), `n` at a time. Those of the
    /// others (most of the positions: each expansion makes about twenty) are their parent's
    /// with one box moved, written out when they are expanded.
    arena: Vec<u16>,
    nodes: Vec<Node>,
    /// Where each position's boxes start in `arena` divided by `n` ([`UNWRITTEN`]: not yet).
    boxes_at: Vec<u32>,
    seen: Seen,
    /// The feature space's cells.
    cells: Cells<Features>,
    visited: Vec<[bool; 4]>,
    touched: Vec<usize>,
    queue: std::collections::VecDeque<(u16, u8, u32)>,
    children: Vec<Child>,
    /// The boxes of the position being expanded (also those marked in `occupied`).
    boxes: Vec<u16>,
    /// For each cell, the last box moved to it (a stamp per box of each expansion) and the
    /// player's area then, so that each (cell, area) a box reaches makes one child.
    made_at: Vec<(u32, u16)>,
    made_stamp: u32,
    /// The (cell, area) pairs the current box reached besides those in `made_at` (a box
    /// reaching a cell with the player in more than one area).
    made: Vec<(u16, u16)>,
    /// Scratch for the freeze deadlock check.
    frozen: Vec<usize>,
    /// Scratch for the boxes of a child checked for deadlocks.
    child_boxes: Vec<u16>,
    expanded: u64,
    /// The bytes its positions may take.
    memory: usize,
}

impl<'a> Search<'a> {
    /// The search from the level's start, or the outcome when the start is already dead.
    fn new(level: &'a Level, tables: &'a Tables<'a>, rooms: &'a GoalRooms, config: Config, memory: usize) -> Result<Search<'a>, Outcome> {
        let size = level.width * level.height;
        let (neighbours, walls, dead) = board_tables(level);
        let start_boxes: Vec<u16> = (0..size).filter(|&c| level.boxes[c]).map(|c| c as u16).collect();
        if start_boxes.iter().any(|&b| tables.distance_to_goal[b as usize] == u16::MAX) || !tables.can_match(&start_boxes) {
            return Err(Outcome::Unsolvable);
        }
        let order = Order::new(packing_order(&neighbours, &walls, &level.goals, &level.boxes, level.player).filter(|_| config.ordered), size);
        let mut search = Search {
            level,
            tables,
            rooms,
            config,
            order,
            region: Region::new(size),
            scratch: Region::new(size),
            areas: Areas::new(&neighbours, &walls),
            checks: Checks { corrals: Corrals::new(size), deadlocks: Deadlocks::new(size), frozen_goals: FrozenGoals::new(&walls), corral_search: config.corral_search },
            occupied: vec![false; size],
            n: start_boxes.len(),
            arena: start_boxes.clone(),
            nodes: Vec::new(),
            boxes_at: Vec::new(),
            seen: Seen::new(),
            cells: Cells::new(),
            visited: vec![[false; 4]; size],
            touched: Vec::new(),
            queue: std::collections::VecDeque::new(),
            children: Vec::new(),
            boxes: start_boxes.clone(),
            made_at: vec![(0, NONE); size],
            made_stamp: 0,
            made: Vec::new(),
            frozen: Vec::new(),
            child_boxes: Vec::new(),
            expanded: 0,
            memory,
            neighbours,
            walls,
            dead,
        };
        start_boxes.iter().for_each(|&b| search.occupied[b as usize] = true);
        let player = search.region.flood(&search.neighbours, &search.walls, &search.occupied, level.player);
        let areas = search.areas.count(&search.neighbours, &search.walls, &search.occupied);
        let start_features = features(&search.order, &level.goals, &start_boxes, areas);
        search.nodes.push(Node { player, parent: u32::MAX, moved: (0, 0, 0), areas });
        search.boxes_at.push(0);
        search.seen.insert(tables.hash(&start_boxes, player));
        // Every other position is a child, whose goal rooms are checked as it is made: a start
        // whose rooms cannot be filled is never expanded (the search runs out of positions).
        if !rooms.dead(&start_boxes, player as usize) {
            search.enqueue(start_features, (0, 0, 0));
        }
        Ok(search)
    }

    fn enqueue(&mut self, mut features: Features, item: (u32, u32, u32)) {
        features.areas = features.areas.min(self.config.areas_cap);
        features.out_of_plan = features.out_of_plan.min(self.config.plan_cap);
        self.cells.push(features, item);
    }

    /// Expands up to `budget` positions.
    fn run(&mut self, budget: u64, deadline: Option<Instant>, cancel: &AtomicBool, meet: Option<&Backward>) -> Step {
        let level = self.level;
        let tables = self.tables;
        let rooms = self.rooms;
        let mut room_masks = Vec::new();
        let n = self.n;
        for _ in 0..budget {
            // The next non-empty cell in turn.
            let Some((weight, _, parent)) = self.cells.next() else { return Step::Exhausted };
            self.expanded += 1;
            if self.expanded.is_multiple_of(16) && (cancel.load(Ordering::Relaxed) || deadline.is_some_and(|d| Instant::now() >= d)) {
                return Step::Done(Outcome::OutOfTime);
            }
            if self.expanded.is_multiple_of(1024) && self.memory_used() > self.memory {
                return Step::Full;
            }
            let (neighbours, walls, dead) = (&self.neighbours, &self.walls, &self.dead);
            // `occupied` holds the last expanded position's boxes: only they are cleared.
            let occupied = &mut self.occupied;
            self.boxes.iter().for_each(|&b| occupied[b as usize] = false);
            self.boxes.clear();
            let node = &self.nodes[parent as usize];
            match self.boxes_at[parent as usize] {
                UNWRITTEN => {
                    // The parent's parent has been expanded: its boxes are written.
                    let at = self.boxes_at[node.parent as usize] as usize * n;
                    push_moved(&mut self.boxes, &self.arena[at..at + n], node.moved.0, node.moved.1);
                    self.boxes_at[parent as usize] = (self.arena.len() / n) as u32;
                    self.arena.extend_from_slice(&self.boxes);
                }
                at => self.boxes.extend_from_slice(&self.arena[at as usize * n..(at as usize + 1) * n]),
            }
            let boxes = &self.boxes;
            boxes.iter().for_each(|&b| occupied[b as usize] = true);
            let player = self.region.flood(neighbours, walls, occupied, self.nodes[parent as usize].player as usize);
            let parent_bound: u32 = boxes.iter().map(|&b| tables.distance_to_goal[b as usize] as u32).sum();
            let parent_features = features(&self.order, &level.goals, boxes, self.nodes[parent as usize].areas);
            // What a child's key and features are updated from (instead of counted over its boxes).
            let boxes_key = tables.boxes_key(boxes);
            let filled = self.order.filled(boxes);
            let on_goals = parent_features.packed + parent_features.out_of_plan;
            // The next goal's distances, for the approach advisor.
            let target = self
                .config
                .approach
                .then(|| self.order.next_goal(boxes))
                .flatten()
                .and_then(|g| tables.goal_index[g as usize])
                .map(|g| &tables.distance_to_each_goal[g]);
            // Deadlocks are found here rather than for every child (most are never expanded);
            // the first pushes allowed are all, or only those into a PI-corral.
            let board = Board { neighbours, walls, goals: &level.goals, dead };
            let Some(only) = self.checks.verdict(tables, &board, occupied, boxes, &self.region, player as usize) else { continue };
            // Each child's goal rooms are checked as it is made (a look-up), so that their
            // dead patterns take no place in the queues (and need no check here).
            rooms.masks(boxes, &mut room_masks);
            let (visited, touched, queue, children, made) = (&mut self.visited, &mut self.touched, &mut self.queue, &mut self.children, &mut self.made);
            children.clear();
            let mut labelled = false;
            for slot in 0..n {
                let from = boxes[slot] as usize;
                // Breadth-first over (box cell, player's side), the other boxes standing still.
                for &c in touched.iter() {
                    visited[c] = [false; 4];
                }
                touched.clear();
                queue.clear();
                touched.push(from);
                for side in 0..4 {
                    let next = neighbours[from][side];
                    if next == NONE || !self.region.contains(next as usize) {
                        continue;
                    }
                    if only.as_ref().is_some_and(|o| !o.contains(&(from as u16, side as u8 ^ 1))) {
                        continue;
                    }
                    visited[from][side] = true;
                    queue.push_back((from as u16, side as u8, 0));
                }
                if queue.is_empty() {
                    continue; // the box cannot be pushed
                }
                occupied[from] = false;
                made.clear();
                if self.made_stamp == u32::MAX {
                    self.made_at.iter_mut().for_each(|m| *m = (0, NONE));
                    self.made_stamp = 0;
                }
                self.made_stamp += 1;
                // The areas without the box, analysed at its first push (many boxes have none).
                let mut analysed = false;
                while let Some((boxed, side, pushes)) = queue.pop_front() {
                    let boxed = boxed as usize;
                    let direction = side as usize ^ 1;
                    let to = neighbours[boxed][direction];
                    if to == NONE || walls[to as usize] || occupied[to as usize] || dead[to as usize] {
                        continue;
                    }
                    if !analysed {
                        if !labelled {
                            // The position's areas, named once for all its boxes.
                            occupied[from] = true;
                            let count = self.areas.label(neighbours, walls, occupied);
                            debug_assert_eq!(count, self.nodes[parent as usize].areas);
                            occupied[from] = false;
                            labelled = true;
                        }
                        // Only the box's own area changes without it.
                        self.areas.analyse_around(walls, occupied, from);
                        analysed = true;
                    }
                    let to = to as usize;
                    occupied[to] = true;
                    // The player's area after the push: when the box's new cell cuts nothing
                    // off, all of the cell's area but the cell (no flood needed).
                    let whole = self.areas.pieces(to) == 1;
                    // Else the area holding the player (no flood either).
                    let areas = &self.areas;
                    let player = if whole { areas.area_without(to) } else { areas.area_beside(neighbours, to, boxed) };
                    debug_assert_eq!(player, self.scratch.flood(neighbours, walls, occupied, boxed));
                    let mut first_side = None;
                    for new_side in 0..4 {
                        let next = neighbours[to][new_side];
                        let reached = next != NONE && !walls[next as usize] && !occupied[next as usize] && (whole || areas.area_beside(neighbours, to, next as usize) == player);
                        if reached {
                            first_side.get_or_insert(new_side);
                            if !visited[to][new_side] {
                                if visited[to] == [false; 4] {
                                    touched.push(to);
                                }
                                visited[to][new_side] = true;
                                queue.push_back((to as u16, new_side as u8, pushes + 1));
                            }
                        }
                    }
                    let side = first_side.expect("the player stands next to the box it pushed");
                    let first = &mut self.made_at[to];
                    let new = if first.0 != self.made_stamp {
                        *first = (self.made_stamp, player);
                        true
                    } else {
                        first.1 != player && !made.contains(&(to as u16, player))
                    };
                    if new {
                        if first.1 != player {
                            made.push((to as u16, player));
                        }
                        // A new child, unless frozen (seen ones are dropped below).
                        if !tables.is_freeze_deadlock_with(to, occupied, &mut self.frozen) {
                            let key = boxes_key ^ tables.box_key(from) ^ tables.box_key(to) ^ tables.player_key(player);
                            // The cheap bound (each box to its nearest goal) breaks ties in
                            // the cell's queue; the matching is checked at expansion.
                            let bound = parent_bound - tables.distance_to_goal[from] as u32 + tables.distance_to_goal[to] as u32;
                            let filled = filled.map(|f| f & !self.order.bit(from as u16) | self.order.bit(to as u16));
                            let out_of_plan = Order::out_of_turn_of(filled) as u16;
                            let on_goals = on_goals - u16::from(level.goals[from]) + u16::from(level.goals[to]);
                            let features = Features { packed: on_goals - out_of_plan, areas: self.areas.with_box_on(to), out_of_plan };
                            debug_assert!({
                                let mut next = boxes.clone();
                                next[slot] = to as u16;
                                next.sort_unstable();
                                key == tables.hash(&next, player) && features == self::features(&self.order, &level.goals, &next, features.areas)
                            });
                            let room_dead = rooms.dead_after_move(&room_masks, from, to, boxed);
                            children.push(Child { player, moved: (from as u16, to as u16, side as u8), pushes: pushes + 1, features, bound, key, room_dead });
                        }
                    }
                    occupied[to] = false;
                }
                occupied[from] = true;
            }
            // Positions seen before are dropped and the others recorded, all together: the
            // table's slots are mostly cache misses, so first every probe's slot is read without
            // a branch (the reads overlap). Two moves of one expansion never reach the same
            // position (a box's move to a cell with the player in an area is made once).
            let seen = &mut self.seen;
            std::hint::black_box(children.iter().fold(0, |x, c| x ^ seen.home(c.key)));
            children.retain(|c| seen.insert(c.key));
            // A child whose goal rooms cannot be filled is passed over by the advisors (they
            // name their best live child), except the approach advisor, which then names none
            // (original 90 at 60 s: passed over by every advisor, level 40 was not solved; by
            // none, 77 was not; as here, 40, 77 and 87 are).
            let live = |c: &Child| !c.room_dead;
            // The advisors: each names at most one child, which then costs nothing: its best
            // (by rank, bound, pushes), unless the checks the child's expansion would make find
            // it dead. Then the child is dropped and the advisor names none: on original level
            // 35 a third of the named children were dead, and each had cost the search a
            // turn. Naming the next best instead lost levels 16, 19 and 77 of the original 90
            // (74 solved within 60 s against 77).
            let (neighbours, goals, occupied) = (&self.neighbours, &level.goals, &self.occupied);
            let named = [
                advice(children, |c| (live(c) && c.features.packed > parent_features.packed).then_some(0)),
                advice(children, |c| (live(c) && c.features.areas < parent_features.areas).then_some(c.features.areas as u32)),
                advice(children, |c| (live(c) && c.features.out_of_plan < parent_features.out_of_plan).then_some(c.features.out_of_plan as u32)),
                target.and_then(|distance| advice(children, |c| approaching(distance, c))),
                advice(children, |c| if live(c) { freeing(neighbours, goals, occupied, c) } else { None }),
            ];
            let mut children = std::mem::take(&mut self.children);
            // The named children checked (index, dead), each once: at most one per advisor.
            let mut checked = [(usize::MAX, false); 5];
            let advised = named.map(|named| {
                named.filter(|&i| {
                    let slot = checked.iter().position(|&(c, _)| c == i || c == usize::MAX).expect("five advisors");
                    if checked[slot].0 != i {
                        checked[slot] = (i, children[i].room_dead || self.child_is_dead(&children[i]));
                    }
                    !checked[slot].1
                })
            });
            for (i, child) in children.drain(..).enumerate() {
                if child.room_dead || checked.contains(&(i, true)) {
                    continue;
                }
                let index = self.nodes.len() as u32;
                let advised = advised.contains(&Some(i));
                let child_weight = weight + u32::from(!advised);
                self.nodes.push(Node { player: child.player, parent, moved: child.moved, areas: child.features.areas });
                self.boxes_at.push(UNWRITTEN);
                // Every box on a goal: packed or out of plan.
                if (child.features.packed + child.features.out_of_plan) as usize == n {
                    let pushes = forward_pushes(&self.neighbours, &self.walls, &self.dead, &self.arena, &self.boxes_at, n, &self.nodes, index);
                    return Step::Done(pushes.and_then(|p| replay_pushes(level, &p)).unwrap_or(Outcome::OutOfTime));
                }
                // A position the backward search has reached: the two halves solve the level.
                if let Some(home) = meet.and_then(|b| b.reached(child.key).map(|at| b.pushes_home(at))) {
                    let mut pushes = forward_pushes(&self.neighbours, &self.walls, &self.dead, &self.arena, &self.boxes_at, n, &self.nodes, index);
                    if let (Some(pushes), Some(home)) = (pushes.as_mut(), home) {
                        pushes.extend(home);
                        if let Some(outcome) = replay_pushes(level, pushes) {
                            return Step::Done(outcome);
                        }
                    }
                }
                let tie = if self.config.fewest_pushes_first { child.pushes } else { child.bound };
                self.enqueue(child.features, (child_weight, tie, index));
            }
            self.children = children;
        }
        Step::Paused
    }
}

impl Search<'_> {
    /// Whether `child` of the position being expanded (its boxes in `self.boxes` and
    /// `self.occupied`) is dead by the checks its own expansion would make.
    fn child_is_dead(&mut self, child: &Child) -> bool {
        let (from, to) = (child.moved.0, child.moved.1);
        let mut boxes = std::mem::take(&mut self.child_boxes);
        boxes.clear();
        push_moved(&mut boxes, &self.boxes, from, to);
        self.occupied[from as usize] = false;
        self.occupied[to as usize] = true;
        let player = self.scratch.flood(&self.neighbours, &self.walls, &self.occupied, child.player as usize);
        let board = Board { neighbours: &self.neighbours, walls: &self.walls, goals: &self.level.goals, dead: &self.dead };
        let dead = self.checks.verdict(self.tables, &board, &self.occupied, &boxes, &self.scratch, player as usize).is_none();
        self.occupied[to as usize] = false;
        self.occupied[from as usize] = true;
        self.child_boxes = boxes;
        dead
    }
}

/// The deadlock checks a position gets before it is expanded, with their tables.
struct Checks {
    corrals: Corrals,
    deadlocks: Deadlocks,
    frozen_goals: FrozenGoals,
    /// Whether corral deadlocks are also sought by a search ([`Config::corral_search`]).
    corral_search: bool,
}

impl Checks {
    /// None when the position (`occupied`: the cells of `boxes`; `region`: the player's area,
    /// whose smallest cell is `player`) is dead by a matching, frozen-goal, PI-corral or corral
    /// search deadlock; else the first pushes to search: all (None), or those into a PI-corral.
    /// (Its goal rooms were checked when it was made: [`Child::room_dead`].)
    fn verdict(&mut self, tables: &Tables, board: &Board, occupied: &[bool], boxes: &[u16], region: &Region, player: usize) -> Option<Option<Vec<(u16, u8)>>> {
        if !tables.can_match(boxes) || self.frozen_goals.dead(tables, board, occupied, boxes) {
            return None;
        }
        let only = match self.corrals.analyse(board, occupied, region) {
            Verdict::Dead => return None,
            Verdict::Only(pushes) => Some(pushes),
            Verdict::Free => None,
        };
        if self.corral_search && self.deadlocks.dead(tables, board, occupied, region, player, boxes.len()) {
            return None;
        }
        Some(only)
    }
}

/// What [`Search::boxes_at`] holds for a position whose boxes are not written out.
const UNWRITTEN: u32 = u32::MAX;

impl Search<'_> {
    /// About the bytes the search's positions take (what its vectors and tables hold).
    fn memory_used(&self) -> usize {
        self.nodes.capacity() * std::mem::size_of::<Node>()
            + self.boxes_at.capacity() * std::mem::size_of::<u32>()
            + self.arena.capacity() * std::mem::size_of::<u16>()
            + self.seen.memory()
            + self.cells.memory()
            + self.checks.frozen_goals.memory()
    }
}

/// Appends to `arena` the sorted `boxes` with the box on `from` moved to `to`, kept sorted.
fn push_moved(arena: &mut Vec<u16>, boxes: &[u16], from: u16, to: u16) {
    let start = arena.len();
    arena.extend_from_slice(boxes);
    let moved = &mut arena[start..];
    let mut at = moved.binary_search(&from).expect("the moved box is the parent's");
    moved[at] = to;
    while at > 0 && moved[at - 1] > to {
        moved.swap(at - 1, at);
        at -= 1;
    }
    while at + 1 < moved.len() && moved[at + 1] < to {
        moved.swap(at, at + 1);
        at += 1;
    }
}

/// The child an advisor names: the best by its `rank` (None: not advised), then the smaller
/// bound, then the fewer pushes.
fn advice(children: &[Child], rank: impl Fn(&Child) -> Option<u32>) -> Option<usize> {
    children.iter().enumerate().filter_map(|(i, c)| rank(c).map(|r| ((r, c.bound, c.pushes), i))).min().map(|(_, i)| i)
}

/// The approach advisor's rank of a child (for [`advice`]): when its moved box ends nearer the
/// next goal of the packing order than it stood (`distance`: the pushes to that goal from each
/// cell, other boxes aside), the pushes left, so that the nearest is named first.
fn approaching(distance: &[u16], child: &Child) -> Option<u32> {
    let (from, to) = (distance[child.moved.0 as usize], distance[child.moved.1 as usize]);
    (to < from).then_some(to as u32)
}

/// The hotspot advisor's rank of a child (for [`advice`]; `occupied`: the position's boxes):
/// the move of a box off a goal that has boxes on two or more sides (a knot of boxes that hinder
/// each other) to a cell no other box touches, the most crowded such box first. After the
/// hotspots advisor of FESS, which moves the box that most hinders the others out of their way
/// (original 90, level 72: solved in 41 s with it, not in 60 s without).
fn freeing(neighbours: &[[u16; 4]], goals: &[bool], occupied: &[bool], child: &Child) -> Option<u32> {
    let boxes_beside = |cell: u16, except: u16| neighbours[cell as usize].iter().filter(|&&c| c != NONE && c != except && occupied[c as usize]).count();
    let (from, to) = (child.moved.0, child.moved.1);
    let (before, after) = (boxes_beside(from, NONE), boxes_beside(to, from));
    (!goals[from as usize] && before >= 2 && after == 0).then_some(4 - before as u32)
}

/// The pushes of the box moves from the start to `index`.
fn forward_pushes(neighbours: &[[u16; 4]], walls: &[bool], dead: &[bool], arena: &[u16], boxes_at: &[u32], n: usize, nodes: &[Node], mut index: u32) -> Option<Vec<(u16, u8)>> {
    let size = walls.len();
    let (mut region, mut scratch) = (Region::new(size), Region::new(size));
    let mut moves = Vec::new();
    while nodes[index as usize].parent != u32::MAX {
        moves.push(index);
        index = nodes[index as usize].parent;
    }
    let mut pushes = Vec::new();
    let mut occupied = vec![false; size];
    for &child in moves.iter().rev() {
        let parent = nodes[child as usize].parent as usize;
        occupied.iter_mut().for_each(|o| *o = false);
        // A parent has been expanded: its boxes are written.
        let at = boxes_at[parent] as usize * n;
        arena[at..at + n].iter().for_each(|&b| occupied[b as usize] = true);
        region.flood(neighbours, walls, &occupied, nodes[parent].player as usize);
        let (from, to, side) = nodes[child as usize].moved;
        let path = push_path_to(neighbours, walls, dead, &mut occupied, &region, from as usize, (to as usize, Some(side as usize)), &mut scratch)?;
        pushes.extend(path);
    }
    Some(pushes)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::games::sokoban::level::parse_collection;
    use crate::games::sokoban::solver::{verify, DEFAULT_MEMORY};

    #[test]
    fn features_count_packing_areas_and_boxes_out_of_plan() {
        // Three goals in a dead-end corridor (filled from its end, (1, 1) first) over a room; two
        // gaps in row 2 join them.
        let level = parse_collection("#######\n#...  #\n### # #\n#  $$ #\n# @$  #\n#######\n").unwrap().remove(0);
        let size = level.width * level.height;
        let (neighbours, walls, _) = board_tables(&level);
        let order = Order::new(packing_order(&neighbours, &walls, &level.goals, &level.boxes, level.player), size);
        let at = |x: usize, y: usize| (y * level.width + x) as u16;
        let mut areas = Areas::new(&neighbours, &walls);
        let measure = |boxes: &[u16], areas: &mut Areas| {
            let mut occupied = vec![false; size];
            boxes.iter().for_each(|&b| occupied[b as usize] = true);
            let mut sorted = boxes.to_vec();
            sorted.sort_unstable();
            let count = areas.count(&neighbours, &walls, &occupied);
            features(&order, &level.goals, &sorted, count)
        };
        assert_eq!(measure(&[at(1, 3), at(4, 4), at(5, 4)], &mut areas), Features { packed: 0, areas: 1, out_of_plan: 0 });
        // The deepest goal filled: packed 1.
        assert_eq!(measure(&[at(1, 1), at(4, 4), at(5, 4)], &mut areas), Features { packed: 1, areas: 1, out_of_plan: 0 });
        // A box on the goal by the entrance while the deeper ones are empty: out of plan, and it
        // cuts the corridor's end off from the rest (two areas).
        assert_eq!(measure(&[at(3, 1), at(4, 4), at(5, 4)], &mut areas), Features { packed: 0, areas: 2, out_of_plan: 1 });
        // Boxes in both gaps of row 2 cut the corridor off from the room.
        assert_eq!(measure(&[at(3, 2), at(5, 2), at(1, 3)], &mut areas), Features { packed: 0, areas: 2, out_of_plan: 0 });
        // All three goals filled in order, the room in one piece: packed 3.
        assert_eq!(measure(&[at(1, 1), at(2, 1), at(3, 1)], &mut areas), Features { packed: 3, areas: 1, out_of_plan: 0 });
    }

    /// The areas with one more box, from the articulation points, equal a plain count, and the
    /// area beside it a flood, on the Microban levels with their boxes and with random boxes.
    #[test]
    fn areas_with_one_more_box_match_a_plain_count() {
        use rand::{Rng, SeedableRng};
        let levels = parse_collection(include_str!("../../../samples/sokoban/microban_155.xsb")).unwrap();
        let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(7);
        let (mut checked, mut cut) = (0, 0);
        for level in levels.iter().take(60) {
            let (neighbours, walls, _) = board_tables(level);
            let size = walls.len();
            let mut areas = Areas::new(&neighbours, &walls);
            let mut region = Region::new(size);
            for round in 0..3 {
                let mut occupied: Vec<bool> = if round == 0 { level.boxes.clone() } else { (0..size).map(|c| !walls[c] && rng.gen_bool(0.3)).collect() };
                areas.analyse(&walls, &occupied);
                let total = areas.count(&neighbours, &walls, &occupied);
                assert_eq!(areas.total, total, "level {}", level.title);
                let free: Vec<usize> = (0..size).filter(|&c| !walls[c] && !occupied[c]).collect();
                for cell in free {
                    occupied[cell] = true;
                    let expected = areas.count(&neighbours, &walls, &occupied);
                    // Nothing cut off: the area left is the cell's area without it.
                    let beside = neighbours[cell].iter().find(|&&c| c != NONE && !walls[c as usize] && !occupied[c as usize]);
                    if let (1, Some(&beside)) = (areas.pieces(cell), beside) {
                        assert_eq!(areas.area_without(cell), region.flood(&neighbours, &walls, &occupied, beside as usize), "level {} cell {cell}", level.title);
                    }
                    // Each free neighbour's area, named by its smallest cell.
                    for &beside in neighbours[cell].iter().filter(|&&c| c != NONE && !walls[c as usize] && !occupied[c as usize]) {
                        let flooded = region.flood(&neighbours, &walls, &occupied, beside as usize);
                        assert_eq!(areas.area_beside(&neighbours, cell, beside as usize), flooded, "level {} cell {cell}", level.title);
                        cut += usize::from(areas.pieces(cell) > 1);
                    }
                    occupied[cell] = false;
                    assert_eq!(areas.with_box_on(cell), expected, "level {} cell {cell}", level.title);
                    checked += 1;
                }
            }
        }
        assert!(checked > 1000 && cut > 300, "{checked} cells, {cut} beside cutting ones");
    }

    /// With a box taken away, the analysis of its area alone (after naming the areas with the
    /// box) agrees with the analysis of the whole board, on every cell of that area.
    #[test]
    fn areas_around_a_box_match_the_whole_board() {
        use rand::{Rng, SeedableRng};
        let levels = parse_collection(include_str!("../../../samples/sokoban/microban_155.xsb")).unwrap();
        let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(11);
        let (mut checked, mut joined) = (0, 0);
        for level in levels.iter().take(60) {
            let (neighbours, walls, _) = board_tables(level);
            let size = walls.len();
            let (mut around, mut whole) = (Areas::new(&neighbours, &walls), Areas::new(&neighbours, &walls));
            let mut region = Region::new(size);
            for round in 0..4 {
                let mut occupied: Vec<bool> = if round == 0 { level.boxes.clone() } else { (0..size).map(|c| !walls[c] && rng.gen_bool(0.3)).collect() };
                let boxes: Vec<usize> = (0..size).filter(|&c| occupied[c]).collect();
                for from in boxes {
                    let before = around.label(&neighbours, &walls, &occupied);
                    assert_eq!(before, whole.count(&neighbours, &walls, &occupied));
                    occupied[from] = false;
                    around.analyse_around(&walls, &occupied, from);
                    whole.analyse(&walls, &occupied);
                    assert_eq!(around.total, whole.total, "level {} box {from}", level.title);
                    joined += usize::from(whole.total < before);
                    region.flood(&neighbours, &walls, &occupied, from);
                    for cell in (0..size).filter(|&c| region.contains(c)) {
                        assert_eq!(around.with_box_on(cell), whole.with_box_on(cell), "level {} box {from} cell {cell}", level.title);
                        assert_eq!(around.area_without(cell), whole.area_without(cell), "level {} box {from} cell {cell}", level.title);
                        for &beside in neighbours[cell].iter().filter(|&&c| c != NONE && !walls[c as usize] && !occupied[c as usize]) {
                            assert_eq!(around.area_beside(&neighbours, cell, beside as usize), whole.area_beside(&neighbours, cell, beside as usize));
                        }
                        checked += 1;
                    }
                    occupied[from] = true;
                }
            }
        }
        assert!(checked > 10_000 && joined > 100, "{checked} cells, {joined} boxes between areas");
    }

    /// The queue gives the same triples in the same order as a binary heap, through random
    /// pushes and pops.
    #[test]
    fn queue_pops_like_a_binary_heap() {
        use rand::{Rng, SeedableRng};
        use std::cmp::Reverse;
        let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(9);
        let (mut queue, mut heap) = (Queue::default(), std::collections::BinaryHeap::new());
        for index in 0..50_000u32 {
            // Small weights and ties repeat often; the index tells the triples apart.
            let item = (rng.gen_range(0..40), rng.gen_range(0..if index % 7 == 0 { u32::MAX } else { 30 }), index);
            queue.push(item);
            // Ties beyond 16 bits are saturated.
            heap.push(Reverse((item.0, item.1.min(0xffff), item.2)));
            if rng.gen_bool(0.4) {
                assert_eq!(queue.pop(), heap.pop().map(|Reverse(item)| item));
            }
        }
        while let Some(Reverse(item)) = heap.pop() {
            assert_eq!(queue.pop(), Some(item));
        }
        assert!(queue.is_empty() && queue.pop().is_none());
    }

    /// The seen table agrees with a standard set on random keys (and on 0 and 1, which it
    /// stores as one), through several growths.
    #[test]
    fn seen_table_agrees_with_a_hash_set() {
        use rand::{Rng, SeedableRng};
        let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(3);
        let mut seen = Seen::new();
        let mut reference = std::collections::HashSet::new();
        for round in 0..60_000 {
            // Small keys repeat often; the rest are random 64-bit keys.
            let key: u64 = if round % 3 == 0 { rng.gen_range(2..5000) } else { rng.gen() };
            assert_eq!(seen.contains(key), reference.contains(&key));
            assert_eq!(seen.insert(key), reference.insert(key));
            assert!(seen.contains(key));
        }
        assert_eq!(seen.len, reference.len());
        assert!(seen.insert(0) && !seen.insert(1) && seen.contains(1));
    }

    /// A configuration's caps merge the feature space's cells beyond them; without caps each
    /// count has its own cell.
    #[test]
    fn capped_features_share_a_cell() {
        let level = parse_collection("#######\n#@ $ .#\n#######\n").unwrap().remove(0);
        let tables = Tables::new(&level);
        let cells = |config: Config| {
            let rooms = GoalRooms::of_level(&level);
            let mut search = Search::new(&level, &tables, &rooms, config, usize::MAX).ok().unwrap();
            for (areas, out_of_plan) in [(1, 0), (3, 0), (5, 2), (5, 1)] {
                search.enqueue(Features { packed: 0, areas, out_of_plan }, (0, 0, 0));
            }
            search.cells.len()
        };
        let capped = Config { areas_cap: 3, plan_cap: 1, fewest_pushes_first: false, turns: 1, ordered: true, corral_search: true, approach: false };
        // The start's cell (packed 0, two areas: the box cuts the corridor), one area, and three
        // areas (with 5 beyond the cap) with 0 or 1 boxes out of plan (2 beyond the cap).
        assert_eq!(cells(capped), 4);
        assert_eq!(cells(Config { areas_cap: u16::MAX, plan_cap: u16::MAX, ..capped }), 5);
        assert_eq!(cells(Config { areas_cap: 0, plan_cap: 0, ..capped }), 1);
    }

    /// Without the order (the late configuration), every box on a goal counts as packed and
    /// none is out of plan; with it, a box on a goal whose turn has not come is out of plan.
    #[test]
    fn packing_without_the_order_counts_every_box_on_a_goal() {
        // Three goals in a dead-end corridor (filled from its end), a box on the one by the
        // entrance (out of turn), two more boxes below.
        let level = parse_collection("#######\n#..*  #\n### # #\n#  $$ #\n# @   #\n#######\n").unwrap().remove(0);
        let tables = Tables::new(&level);
        let boxes: Vec<u16> = (0..level.width * level.height).filter(|&c| level.boxes[c]).map(|c| c as u16).collect();
        let measure = |config: Config| {
            let rooms = GoalRooms::of_level(&level);
            let search = Search::new(&level, &tables, &rooms, config, usize::MAX).ok().unwrap();
            let f = features(&search.order, &level.goals, &boxes, search.nodes[0].areas);
            (f.packed, f.out_of_plan)
        };
        let unordered = LATE_CONFIGS[0];
        assert!(!unordered.ordered);
        assert_eq!(measure(unordered), (1, 0));
        assert_eq!(measure(Config { ordered: true, ..unordered }), (0, 1));
    }

    /// The late configuration alone solves levels, and every solution replays.
    #[test]
    fn the_late_configuration_solves_levels_alone() {
        let levels = parse_collection(include_str!("../../../samples/sokoban/microban_155.xsb")).unwrap();
        let cancel = AtomicBool::new(false);
        for level in levels.iter().take(20) {
            let tables = Tables::new(level);
            let rooms = GoalRooms::of_level(level);
            let mut search = Search::new(level, &tables, &rooms, LATE_CONFIGS[0], usize::MAX).ok().unwrap();
            match search.run(1_000_000, None, &cancel, None) {
                Step::Done(Outcome::Solved { lurd, .. }) => assert!(verify(level, &lurd), "level {}", level.title),
                _ => panic!("level {} not solved", level.title),
            }
        }
    }

    /// A search gives up once its positions fill its share of memory, and a larger share lets
    /// it go further.
    #[test]
    fn a_search_gives_up_when_its_memory_is_full() {
        let levels = parse_collection(include_str!("../../../samples/sokoban/microban_155.xsb")).unwrap();
        // Level 153 takes the search seconds: millions of positions.
        let level = &levels[152];
        let tables = Tables::new(level);
        let cancel = AtomicBool::new(false);
        let expanded_with = |memory: usize| {
            let rooms = GoalRooms::of_level(level);
            let mut search = Search::new(level, &tables, &rooms, CONFIGS[0], memory).ok().unwrap();
            assert!(matches!(search.run(u64::MAX, None, &cancel, None), Step::Full));
            // Checked every 1,024 expansions: a little over, never far.
            assert!(search.memory_used() < 2 * memory + (8 << 20), "{} bytes", search.memory_used());
            search.expanded
        };
        let (small, large) = (expanded_with(4 << 20), expanded_with(16 << 20));
        assert!(large > 2 * small, "{small} then {large} expansions");
    }

    /// The approach configuration alone solves levels, and every solution replays.
    #[test]
    fn the_approach_configuration_solves_levels_alone() {
        let levels = parse_collection(include_str!("../../../samples/sokoban/microban_155.xsb")).unwrap();
        let cancel = AtomicBool::new(false);
        let config = CONFIGS[1];
        assert!(config.approach && config.ordered);
        for level in levels.iter().take(20) {
            let tables = Tables::new(level);
            let rooms = GoalRooms::of_level(level);
            let mut search = Search::new(level, &tables, &rooms, config, usize::MAX).ok().unwrap();
            match search.run(1_000_000, None, &cancel, None) {
                Step::Done(Outcome::Solved { lurd, .. }) => assert!(verify(level, &lurd), "level {}", level.title),
                _ => panic!("level {} not solved", level.title),
            }
        }
    }

    #[test]
    fn the_approach_advisor_names_the_move_nearest_the_next_goal() {
        // Ten cells, each as many pushes from the next goal as its number.
        let distance: Vec<u16> = (0..10).collect();
        let child = |from: u16, to: u16, bound: u32, pushes: u32| Child {
            player: 0,
            moved: (from, to, 0),
            pushes,
            features: Features { packed: 0, areas: 1, out_of_plan: 0 },
            bound,
            key: 0,
            room_dead: false,
        };
        let approaching = |distance: &[u16], children: &[Child]| advice(children, |c| approaching(distance, c));
        // Moves that bring their box nearer: the nearest wins, then the smaller bound.
        let children = [child(5, 4, 1, 1), child(3, 2, 10, 1), child(5, 2, 8, 3), child(9, 8, 0, 1), child(2, 6, 0, 1)];
        assert_eq!(approaching(&distance, &children), Some(2));
        // Equal distances and bounds: the fewer pushes.
        let children = [child(5, 2, 8, 3), child(3, 2, 8, 1)];
        assert_eq!(approaching(&distance, &children), Some(1));
        // Nearer wins over a smaller bound.
        let children = [child(5, 2, 8, 3), child(3, 1, 20, 2)];
        assert_eq!(approaching(&distance, &children), Some(1));
        // A box far off that comes nearer counts, whatever the other boxes' distances.
        assert_eq!(approaching(&distance, &[child(9, 8, 0, 1)]), Some(0));
        // No box comes nearer: no advice.
        let children = [child(3, 4, 1, 1), child(5, 5, 1, 1), child(2, 9, 0, 1)];
        assert_eq!(approaching(&distance, &children), None);
    }

    #[test]
    fn a_child_is_dead_by_the_checks_its_expansion_would_make() {
        // Pushing the box at (4, 2) left completes a square of four boxes beside a one-cell
        // corral (left of (3, 3)): nothing but a push into a dead corner is left, which only
        // the corral search with the boxes beside the barrier sees. The box at (6, 2) pushed
        // up on its goal leaves the square open.
        let level = parse_collection("########\n#....@.#\n##$ $ $#\n## $$  #\n### ## #\n#      #\n########\n").unwrap().remove(0);
        let tables = Tables::new(&level);
        let rooms = GoalRooms::of_level(&level);
        let mut search = Search::new(&level, &tables, &rooms, CONFIGS[0], usize::MAX).ok().unwrap();
        let at = |x: usize, y: usize| (y * level.width + x) as u16;
        let child = |from: u16, to: u16| Child { player: from, moved: (from, to, 0), pushes: 1, features: Features { packed: 0, areas: 1, out_of_plan: 0 }, bound: 0, key: 0, room_dead: false };
        let occupied = search.occupied.clone();
        assert!(search.child_is_dead(&child(at(4, 2), at(3, 2))));
        assert!(!search.child_is_dead(&child(at(6, 2), at(6, 1))));
        assert_eq!(search.occupied, occupied, "the position's boxes are restored");
    }

    #[test]
    fn the_hotspot_advisor_frees_the_most_crowded_box() {
        let level = parse_collection("#########\n#       #\n#       #\n#   @   #\n#       #\n#       #\n#      $#\n#      .#\n#########\n").unwrap().remove(0);
        let neighbours = super::super::solver::board_tables(&level).0;
        let at = |x: usize, y: usize| (y * level.width + x) as u16;
        let mut occupied = vec![false; neighbours.len()];
        let mut goals = vec![false; neighbours.len()];
        // A box at (3, 3) with boxes on three sides; the one at (4, 3) has two; (6, 3) one.
        for cell in [at(3, 3), at(3, 2), at(2, 3), at(4, 3), at(4, 4), at(6, 3), at(6, 2)] {
            occupied[cell as usize] = true;
        }
        let child = |from: u16, to: u16, bound: u32| Child { player: 0, moved: (from, to, 0), pushes: 1, features: Features { packed: 0, areas: 1, out_of_plan: 0 }, bound, key: 0, room_dead: false };
        let freeing = |neighbours: &[[u16; 4]], goals: &[bool], occupied: &[bool], children: &[Child]| advice(children, |c| freeing(neighbours, goals, occupied, c));
        // The most crowded box moved clear of the others wins over a smaller bound; a box with
        // a single neighbour is no hotspot.
        let children = [child(at(6, 3), at(6, 6), 0), child(at(4, 3), at(5, 1), 1), child(at(3, 3), at(2, 6), 9)];
        assert_eq!(freeing(&neighbours, &goals, &occupied, &children), Some(2));
        assert_eq!(freeing(&neighbours, &goals, &occupied, &children[..2]), Some(1));
        assert_eq!(freeing(&neighbours, &goals, &occupied, &children[..1]), None);
        // Moved next to other boxes, it is not freed.
        let children = [child(at(3, 3), at(5, 3), 1), child(at(3, 3), at(2, 2), 1)];
        assert_eq!(freeing(&neighbours, &goals, &occupied, &children), None);
        // A box on its goal stays where it is.
        goals[at(3, 3) as usize] = true;
        assert_eq!(freeing(&neighbours, &goals, &occupied, &[child(at(3, 3), at(2, 6), 1)]), None);
    }

    #[test]
    fn a_level_solved_from_the_start_needs_no_move() {
        let level = parse_collection("#####\n#@* #\n#####\n").unwrap().remove(0);
        let outcome = search(&level, None, &AtomicBool::new(false), &GoalRooms::of_level(&level), DEFAULT_MEMORY);
        assert_eq!(outcome, Some(Outcome::Solved { lurd: String::new(), moves: 0, pushes: 0 }));
    }

    #[test]
    fn solves_levels_with_verified_solutions() {
        let levels = parse_collection(include_str!("../../../samples/sokoban/microban_155.xsb")).unwrap();
        let cancel = AtomicBool::new(false);
        let mut solved = 0;
        for level in levels.iter().take(30) {
            let deadline = Instant::now() + std::time::Duration::from_secs(5);
            match search(level, Some(deadline), &cancel, &GoalRooms::of_level(level), DEFAULT_MEMORY) {
                Some(Outcome::Solved { lurd, .. }) => {
                    assert!(verify(level, &lurd), "level {}", level.title);
                    solved += 1;
                }
                other => panic!("level {}: {other:?}", level.title),
            }
        }
        assert_eq!(solved, 30);
    }
}
