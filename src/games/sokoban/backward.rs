//! The backward search: from the solved position, boxes are *pulled* until they stand where the
//! level starts them and the player is in the start's area; the pulls, reversed, are pushes
//! that solve the level. It joins the FESS searches (`fess.rs`) as one more turn-taker.
//!
//! Why: a goal room that must be filled in a careful order is hard going forwards (every wrong
//! box in the room has to come out again) and easy backwards (pulling boxes out of a room never
//! shuts another in), while the start's open rooms are easy to fill backwards. And where the
//! forward searches come near the end and stall, the backward one may have been there: a
//! forward position it has reached is solved (`fess.rs`).
//!
//! The search is FESS-like too: box moves (one box pulled any number of times, the others
//! still), a feature space of boxes on start squares and areas of free floor, visited in turn,
//! the moves its two advisors suggest costing nothing. Its own pruning: a box is never pulled onto a
//! cell that no start square can push a box to, and the minimum-cost matching of boxes to start
//! squares (pushes from the square to the box) must exist. Pull positions have no freeze or
//! corral deadlocks of the forward kind, so none are sought.

use std::collections::VecDeque;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Instant;

use super::fess::{Areas, Cells, KeyTable, Node, Step};
use super::level::Level;
use super::solver::{board_tables, minimum_matching, push_distances, push_path_to, replay_pushes, Outcome, Reach, Region, Tables, NONE};


/// A position's coordinates in the backward feature space.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
struct Features {
    /// Boxes standing on start squares.
    placed: u16,
    /// Areas of free floor, up to [`AREAS_CAP`].
    areas: u16,
}

/// More areas than this share one cell of the feature space.
const AREAS_CAP: u16 = 3;

struct Child {
    boxes: Box<[u16]>,
    player: u16,
    moved: (u16, u16, u8),
    pulls: u32,
    features: Features,
    bound: u32,
    key: u64,
}

/// The backward search, resumable in turns.
pub(super) struct Backward<'a> {
    level: &'a Level,
    tables: &'a Tables<'a>,
    neighbours: Vec<[u16; 4]>,
    walls: Vec<bool>,
    /// The forward dead cells (for rebuilding the pushes).
    dead: Vec<bool>,
    /// Cells no start square can push a box to: a box is never pulled there.
    stranded: Vec<bool>,
    /// For each start square, the pushes from it to each cell.
    from_start: Vec<Vec<u16>>,
    /// For each cell, the start squares that can push a box to it.
    reach_starts: Reach,
    nearest_start: Vec<u16>,
    on_start: Vec<bool>,
    start_player: u16,
    region: Region,
    scratch: Region,
    areas: Areas,
    occupied: Vec<bool>,
    n: usize,
    arena: Vec<u16>,
    nodes: Vec<Node>,
    /// The positions reached, with their index (for a forward search that meets one).
    seen: KeyTable<u32>,
    cells: Cells<Features>,
    visited: Vec<[bool; 4]>,
    touched: Vec<usize>,
    queue: VecDeque<(u16, u8, u8, u32)>,
    children: Vec<Child>,
    /// The (cell, player's area) pairs the pulled box has reached (one child each).
    made: Vec<(u16, u16)>,
    cost: Vec<u32>,
    /// The bytes its positions may take ([`Backward::with_memory`]).
    memory: usize,
}

impl<'a> Backward<'a> {
    /// The search from the solved position, the player in each of its areas in turn.
    pub(super) fn new(level: &'a Level, tables: &'a Tables<'a>) -> Backward<'a> {
        let size = level.width * level.height;
        let (neighbours, walls, dead) = board_tables(level);
        let starts: Vec<usize> = (0..size).filter(|&c| level.boxes[c]).collect();
        let from_start: Vec<Vec<u16>> = starts.iter().map(|&s| push_distances(&neighbours, &walls, &[s])).collect();
        let nearest_start = push_distances(&neighbours, &walls, &starts);
        let goals: Vec<u16> = (0..size).filter(|&c| level.goals[c]).map(|c| c as u16).collect();
        let mut search = Backward {
            level,
            tables,
            stranded: nearest_start.iter().map(|&d| d == u16::MAX).collect(),
            reach_starts: Reach::new(&from_start, size),
            from_start,
            nearest_start,
            on_start: level.boxes.clone(),
            start_player: 0,
            region: Region::new(size),
            scratch: Region::new(size),
            areas: Areas::new(&neighbours, &walls),
            occupied: vec![false; size],
            n: goals.len(),
            arena: Vec::new(),
            nodes: Vec::new(),
            seen: KeyTable::new(),
            cells: Cells::new(),
            visited: vec![[false; 4]; size],
            touched: Vec::new(),
            queue: VecDeque::new(),
            children: Vec::new(),
            made: Vec::new(),
            cost: Vec::new(),
            memory: usize::MAX,
            neighbours,
            walls,
            dead,
        };
        starts.iter().for_each(|&b| search.occupied[b] = true);
        search.start_player = search.region.flood(&search.neighbours, &search.walls, &search.occupied, level.player);
        // The roots: the goals filled, the player in any area of the free floor.
        search.occupied.iter_mut().for_each(|o| *o = false);
        goals.iter().for_each(|&g| search.occupied[g as usize] = true);
        let areas = search.areas.count(&search.neighbours, &search.walls, &search.occupied);
        let placed = goals.iter().filter(|&&g| search.on_start[g as usize]).count() as u16;
        let bound: u32 = goals.iter().map(|&g| search.nearest_start[g as usize] as u32).sum();
        let (mut roots, mut covered) = (Vec::new(), vec![false; size]);
        for cell in 0..size {
            if search.walls[cell] || search.occupied[cell] || covered[cell] {
                continue;
            }
            roots.push(search.region.flood(&search.neighbours, &search.walls, &search.occupied, cell));
            (0..size).filter(|&c| search.region.contains(c)).for_each(|c| covered[c] = true);
        }
        for player in roots {
            let index = search.nodes.len() as u32;
            search.nodes.push(Node { player, parent: u32::MAX, moved: (0, 0, 0), areas });
            search.arena.extend_from_slice(&goals);
            search.seen.insert_with(tables.hash(&goals, player), index);
            search.enqueue(Features { placed, areas }, (0, bound, index));
        }
        search
    }

    fn enqueue(&mut self, mut features: Features, item: (u32, u32, u32)) {
        features.areas = features.areas.min(AREAS_CAP);
        self.cells.push(features, item);
    }

    /// Whether every box can be given its own start square that can push a box to it (else the
    /// position can never be pulled back to the start).
    fn can_match(&mut self, boxes: &[u16]) -> bool {
        if let Some(verdict) = self.reach_starts.can_match(boxes) {
            return verdict;
        }
        // More than 128 start squares: the cheapest assignment (pushes from each start square to
        // each box) exists or not.
        self.cost.clear();
        for &b in boxes {
            self.cost.extend(self.from_start.iter().map(|d| match d[b as usize] {
                u16::MAX => u32::MAX,
                pushes => pushes as u32,
            }));
        }
        minimum_matching(&self.cost, boxes.len()).is_some()
    }

    /// The same search, giving up (as [`Step::Full`]) once its positions take about `bytes`.
    pub(super) fn with_memory(self, bytes: usize) -> Backward<'a> {
        Backward { memory: bytes, ..self }
    }

    /// About the bytes the positions take (what the vectors and tables hold).
    fn memory_used(&self) -> usize {
        self.nodes.capacity() * std::mem::size_of::<Node>() + self.arena.capacity() * std::mem::size_of::<u16>() + self.seen.memory() + self.cells.memory()
    }

    /// Expands up to `budget` positions.
    pub(super) fn run(&mut self, budget: u64, deadline: Option<Instant>, cancel: &AtomicBool) -> Step {
        let n = self.n;
        for expanded in 0..budget {
            let Some((weight, _, parent)) = self.cells.next() else { return Step::Exhausted };
            if expanded % 16 == 15 && (cancel.load(Ordering::Relaxed) || deadline.is_some_and(|d| Instant::now() >= d)) {
                return Step::Done(Outcome::OutOfTime);
            }
            if expanded % 1024 == 0 && self.memory_used() > self.memory {
                return Step::Full;
            }
            let at = parent as usize * n;
            let boxes: Vec<u16> = self.arena[at..at + n].to_vec();
            if !self.can_match(&boxes) {
                continue;
            }
            self.occupied.iter_mut().for_each(|o| *o = false);
            boxes.iter().for_each(|&b| self.occupied[b as usize] = true);
            self.region.flood(&self.neighbours, &self.walls, &self.occupied, self.nodes[parent as usize].player as usize);
            let parent_bound: u32 = boxes.iter().map(|&b| self.nearest_start[b as usize] as u32).sum();
            let parent_features = Features { placed: boxes.iter().filter(|&&b| self.on_start[b as usize]).count() as u16, areas: self.nodes[parent as usize].areas };
            self.expand(&boxes, parent_bound);
            // The advisors: a move that puts one more box on a start square, and the move that
            // joins areas; each costs nothing.
            let children = std::mem::take(&mut self.children);
            let pick = |better: &dyn Fn(&Child) -> Option<(u32, u32)>| {
                children.iter().enumerate().filter_map(|(i, c)| better(c).map(|rank| (rank, c.pulls, i))).min().map(|(_, _, i)| i)
            };
            let placing = pick(&|c| (c.features.placed > parent_features.placed).then_some((0, c.bound)));
            let connecting = pick(&|c| (c.features.areas < parent_features.areas).then_some((c.features.areas as u32, c.bound)));
            for (i, child) in children.iter().enumerate() {
                let index = self.nodes.len() as u32;
                if !self.seen.insert_with(child.key, index) {
                    continue;
                }
                self.nodes.push(Node { player: child.player, parent, moved: child.moved, areas: child.features.areas });
                self.arena.extend_from_slice(&child.boxes);
                if child.features.placed as usize == n && child.player == self.start_player {
                    return Step::Done(self.rebuild(index).unwrap_or(Outcome::OutOfTime));
                }
                let advised = [placing, connecting].contains(&Some(i));
                self.enqueue(child.features, (weight + u32::from(!advised), child.bound, index));
            }
            self.children = children;
            self.children.clear();
        }
        Step::Paused
    }

    /// Every pull move of the position with these `boxes` (the player's region in `region`)
    /// into `children`, but those seen before.
    fn expand(&mut self, boxes: &[u16], parent_bound: u32) {
        let (neighbours, walls) = (&self.neighbours, &self.walls);
        let occupied = &mut self.occupied;
        let (visited, touched, queue, children, made) = (&mut self.visited, &mut self.touched, &mut self.queue, &mut self.children, &mut self.made);
        children.clear();
        // The position's areas, named once for all its boxes.
        self.areas.label(neighbours, walls, occupied);
        for slot in 0..boxes.len() {
            let from = boxes[slot] as usize;
            for &c in touched.iter() {
                visited[c] = [false; 4];
            }
            touched.clear();
            queue.clear();
            made.clear();
            touched.push(from);
            // Breadth-first over (box cell, side the player reaches); the player pulls the box
            // towards its side, stepping one further.
            for side in 0..4 {
                let next = neighbours[from][side];
                if next != NONE && self.region.contains(next as usize) {
                    visited[from][side] = true;
                    queue.push_back((from as u16, side as u8, side as u8, 0));
                }
            }
            if queue.is_empty() {
                continue;
            }
            occupied[from] = false;
            // Only the box's own area changes without it.
            self.areas.analyse_around(walls, occupied, from);
            while let Some((boxed, side, first, pulls)) = queue.pop_front() {
                let to = neighbours[boxed as usize][side as usize];
                let beyond = if to == NONE { NONE } else { neighbours[to as usize][side as usize] };
                if beyond == NONE || walls[beyond as usize] || occupied[beyond as usize] || self.stranded[to as usize] {
                    continue;
                }
                let to = to as usize;
                occupied[to] = true;
                // The player's area after the pull, from the articulation points (no flood).
                let areas = &self.areas;
                let whole = areas.pieces(to) == 1;
                let player = if whole { areas.area_without(to) } else { areas.area_beside(neighbours, to, beyond as usize) };
                debug_assert_eq!(player, self.scratch.flood(neighbours, walls, occupied, beyond as usize));
                for new_side in 0..4 {
                    let next = neighbours[to][new_side];
                    let reached = next != NONE && !walls[next as usize] && !occupied[next as usize] && (whole || areas.area_beside(neighbours, to, next as usize) == player);
                    if reached && !visited[to][new_side] {
                        if visited[to] == [false; 4] {
                            touched.push(to);
                        }
                        visited[to][new_side] = true;
                        queue.push_back((to as u16, new_side as u8, first, pulls + 1));
                    }
                }
                if !made.contains(&(to as u16, player)) {
                    made.push((to as u16, player));
                    let mut next: Box<[u16]> = boxes.into();
                    next[slot] = to as u16;
                    next.sort_unstable();
                    let key = self.tables.hash(&next, player);
                    if self.seen.get(key).is_none() {
                        let placed = next.iter().filter(|&&b| self.on_start[b as usize]).count() as u16;
                        let features = Features { placed, areas: self.areas.with_box_on(to) };
                        let bound = parent_bound - self.nearest_start[from] as u32 + self.nearest_start[to] as u32;
                        children.push(Child { boxes: next, player, moved: (from as u16, to as u16, first), pulls: pulls + 1, features, bound, key });
                    }
                }
                occupied[to] = false;
            }
            occupied[from] = true;
        }
    }

    /// The position with this Zobrist key, when the backward search has reached it.
    pub(super) fn reached(&self, key: u64) -> Option<u32> {
        self.seen.get(key)
    }

    /// The forward pushes of the pull moves from the root to `index` (the level's start),
    /// replayed on the level.
    fn rebuild(&self, index: u32) -> Option<Outcome> {
        let pushes = self.pushes_home(index)?;
        replay_pushes(self.level, &pushes)
    }

    /// The pushes that take the position `index` to the solved root it was pulled from: its
    /// pull moves back to the root, each pushed the other way. (Once per solution, so its
    /// buffers are its own.)
    pub(super) fn pushes_home(&self, mut index: u32) -> Option<Vec<(u16, u8)>> {
        let (n, size) = (self.n, self.walls.len());
        let (mut region, mut scratch, mut occupied) = (Region::new(size), Region::new(size), vec![false; size]);
        let mut pushes = Vec::new();
        while self.nodes[index as usize].parent != u32::MAX {
            let node = &self.nodes[index as usize];
            let (from, to, first) = node.moved;
            occupied.iter_mut().for_each(|o| *o = false);
            self.arena[index as usize * n..(index as usize + 1) * n].iter().for_each(|&b| occupied[b as usize] = true);
            region.flood(&self.neighbours, &self.walls, &occupied, node.player as usize);
            let path = push_path_to(&self.neighbours, &self.walls, &self.dead, &mut occupied, &region, to as usize, (from as usize, Some(first as usize)), &mut scratch)?;
            pushes.extend(path);
            index = node.parent;
        }
        Some(pushes)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::games::sokoban::level::parse_collection;
    use crate::games::sokoban::solver::verify;

    fn microban() -> Vec<Level> {
        parse_collection(include_str!("../../../samples/sokoban/microban_155.xsb")).unwrap()
    }

    /// The backward search alone until `deadline`; None when it runs out of positions or memory.
    fn search_alone(level: &Level, deadline: Instant) -> Option<Outcome> {
        let tables = Tables::new(level);
        let mut backward = Backward::new(level, &tables);
        loop {
            match backward.run(500, Some(deadline), &AtomicBool::new(false)) {
                Step::Paused => {}
                Step::Exhausted | Step::Full => return None,
                Step::Done(outcome) => return Some(outcome),
            }
        }
    }

    #[test]
    fn the_backward_search_solves_levels_alone() {
        for level in microban().iter().take(20) {
            let deadline = Instant::now() + std::time::Duration::from_secs(5);
            match search_alone(level, deadline) {
                Some(Outcome::Solved { lurd, pushes, .. }) => {
                    assert!(pushes > 0 && verify(level, &lurd), "level {}", level.title);
                }
                other => panic!("level {}: {other:?}", level.title),
            }
        }
    }

    /// Every position the backward search reaches, set up as a level of its own (its boxes, the
    /// player anywhere in its area), is solved by the pushes home: what a forward search that
    /// meets it relies on.
    #[test]
    fn every_position_pulled_back_is_pushed_home() {
        let mut checked = 0;
        for level in microban().iter().take(60) {
            let tables = Tables::new(level);
            let mut backward = Backward::new(level, &tables);
            if !matches!(backward.run(100, None, &AtomicBool::new(false)), Step::Paused) {
                continue; // solved within 100 expansions: fewer positions to check
            }
            let n = backward.n;
            for (index, node) in backward.nodes.iter().enumerate().step_by(3) {
                let mut position = level.clone();
                position.boxes.iter_mut().for_each(|b| *b = false);
                backward.arena[index * n..(index + 1) * n].iter().for_each(|&b| position.boxes[b as usize] = true);
                position.player = node.player as usize;
                let pushes = backward.pushes_home(index as u32).unwrap_or_else(|| panic!("level {} position {index}", level.title));
                let solved = replay_pushes(&position, &pushes);
                assert!(matches!(solved, Some(Outcome::Solved { .. })), "level {} position {index}", level.title);
                checked += 1;
            }
        }
        assert!(checked > 500, "{checked}");
    }

    /// The start squares' matching check agrees with the cheapest assignment of start squares to
    /// boxes, on random boxes on the Microban levels.
    #[test]
    fn start_square_matching_agrees_with_the_cheapest_assignment() {
        use crate::games::sokoban::solver::tests::random_cells;
        use rand::SeedableRng;
        let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(9);
        let (mut matched, mut unmatched) = (0, 0);
        for level in microban().iter().take(80) {
            let tables = Tables::new(level);
            let mut backward = Backward::new(level, &tables);
            let open: Vec<u16> = (0..backward.walls.len()).filter(|&c| !backward.walls[c] && !backward.stranded[c]).map(|c| c as u16).collect();
            // Cells that some start squares cannot push a box to: boxes there compete.
            let partial: Vec<u16> = open.iter().copied().filter(|&c| backward.from_start.iter().any(|d| d[c as usize] == u16::MAX)).collect();
            for round in 0..20 {
                let open = if round % 2 == 1 && partial.len() >= backward.n { &partial } else { &open };
                let boxes = random_cells(&mut rng, open, backward.n);
                let cost: Vec<u32> = boxes.iter().flat_map(|&b| backward.from_start.iter().map(move |d| if d[b as usize] == u16::MAX { u32::MAX } else { d[b as usize] as u32 })).collect();
                let expected = minimum_matching(&cost, boxes.len()).is_some();
                assert_eq!(backward.can_match(&boxes), expected, "level {} boxes {boxes:?}", level.title);
                if expected { matched += 1 } else { unmatched += 1 }
            }
        }
        assert!(matched > 100 && unmatched > 100, "{matched} matched, {unmatched} not");
    }

    /// A box is pulled only where some start square can push it: here the box starts in a
    /// corridor's dead end, from which it can never leave, so no other cell is open to it.
    #[test]
    fn boxes_are_pulled_only_where_a_start_square_can_push_them() {
        let level = parse_collection("#######\n#$ . @#\n#######\n").unwrap().remove(0);
        let tables = Tables::new(&level);
        let backward = Backward::new(&level, &tables);
        let at = |x: usize| level.width + x;
        assert_eq!(backward.from_start[0][at(1)], 0);
        assert!((2..6).all(|x| backward.stranded[at(x)]), "{:?}", backward.stranded);
        // The level cannot be solved, and the search runs out of positions.
        assert!(search_alone(&level, Instant::now() + std::time::Duration::from_secs(5)).is_none());
    }
}
