//! Corral deadlocks proved by a small search (after the "corral deadlock" detection of YASS and
//! JSoko), remembered in a table.
//!
//! A corral (free cells the player cannot reach) is *unfinished* when it holds an empty goal or
//! a box touching it stands off a goal. Take the boxes touching it (its barrier, and the boxes
//! inside) alone, the other boxes off the board, and search every push of them: if no sequence
//! of pushes ever puts them all on goals or lets the player into the corral, the position is
//! dead; when that proves nothing, the same again with the boxes beside the barrier added (a
//! barrier box may be held by one that does not touch the corral). That holds for the whole
//! position because the other boxes can only get in the way: any solution, its pushes of the
//! other boxes left out, is a push sequence of these boxes alone that puts them on goals (the
//! player, where it walks over an absent box, only gains room).
//!
//! The search stops after [`LIMIT`] positions (then nothing is proved), and its verdict is kept
//! by the boxes' cells, the player's area and the corral's cells, so a corral met again costs
//! one look-up.

use std::collections::{HashMap, HashSet};

use super::corral::{Board, CorralFlood};
use super::solver::{Region, Tables, NONE};

/// Positions the search of one corral may visit before it gives up.
pub(super) const LIMIT: usize = 1000;

/// Corrals with more boxes than this are not searched (the search rarely finishes for them).
const MOST_BOXES: usize = 12;

/// Verdicts kept before the table is cleared (to bound its memory).
const MOST_VERDICTS: usize = 1 << 21;

/// Scratch space and the table of verdicts, reused across positions.
pub(super) struct Deadlocks {
    flood: CorralFlood,
    cells: Vec<u16>,
    barrier: Vec<u16>,
    occupied: Vec<bool>,
    region: Region,
    /// Scratch for the freeze deadlock check.
    frozen: Vec<usize>,
    /// Verdicts by the boxes' and the player's Zobrist key: true when dead.
    verdicts: HashMap<u64, bool>,
    /// The same verdicts by the key with the player's cell as given (before the flood that
    /// normalises it, which most look-ups then skip).
    given: HashMap<u64, bool>,
    /// Positions found dead by a search (not counting look-ups).
    pub(super) proved: u64,
}

impl Deadlocks {
    pub(super) fn new(size: usize) -> Deadlocks {
        Deadlocks {
            flood: CorralFlood::new(size),
            cells: Vec::new(),
            barrier: Vec::new(),
            occupied: vec![false; size],
            region: Region::new(size),
            frozen: Vec::new(),
            verdicts: HashMap::new(),
            given: HashMap::new(),
            proved: 0,
        }
    }

    /// Whether some unfinished corral of the position (boxes in `occupied`, the player's area in
    /// `region`, whose smallest cell is `player`) is proved dead by a search of its boxes alone.
    pub(super) fn dead(&mut self, tables: &Tables, board: &Board, occupied: &[bool], region: &Region, player: usize, boxes: usize) -> bool {
        debug_assert_eq!(Some(player), (0..board.walls.len()).find(|&c| region.contains(c)));
        self.flood.begin();
        loop {
            // The corral's cells and the boxes touching it.
            self.cells.clear();
            self.barrier.clear();
            let (cells, barrier) = (&mut self.cells, &mut self.barrier);
            let Some((_, unfinished)) = self.flood.next(board, occupied, region, |c| cells.push(c), |b| barrier.push(b)) else { break };
            if !unfinished || self.barrier.len() >= boxes || self.barrier.len() > MOST_BOXES {
                continue;
            }
            if self.search(tables, board.neighbours, board.walls, board.goals, player) {
                return true;
            }
            // The barrier with the boxes beside it: a barrier box held by a box that does not
            // touch the corral can still leave in the search of the barrier alone, where that box
            // is off the board (original 90, level 39: four boxes in a square, each holding
            // another, beside a one-cell corral). Any set of boxes that includes the barrier
            // proves a deadlock the same way.
            let before = self.barrier.len();
            for k in 0..before {
                for &next in &board.neighbours[self.barrier[k] as usize] {
                    if next != NONE && occupied[next as usize] && !self.barrier.contains(&next) {
                        self.barrier.push(next);
                    }
                }
            }
            let grown = self.barrier.len();
            if grown > before && grown < boxes && grown <= MOST_BOXES && self.search(tables, board.neighbours, board.walls, board.goals, player) {
                return true;
            }
        }
        false
    }

    /// Searches the pushes of the barrier's boxes alone from `player`: true when none of them
    /// leads to all boxes on goals or to the player inside the corral, within [`LIMIT`] positions.
    fn search(&mut self, tables: &Tables, neighbours: &[[u16; 4]], walls: &[bool], goals: &[bool], player: usize) -> bool {
        self.barrier.sort_unstable();
        // The verdict is the corral's: the same boxes can border another corral (the barrier
        // with the boxes beside it, above all), which they may well open.
        let corral = self.cells.iter().fold(0u64, |key, &c| key ^ tables.player_key(c).rotate_left(17));
        let given = tables.hash(&self.barrier, player as u16) ^ corral;
        if let Some(&dead) = self.given.get(&given) {
            return dead;
        }
        let start = self.barrier.clone();
        let key = self.normalise(tables, neighbours, walls, &start, player) ^ corral;
        let dead = match self.verdicts.get(&key) {
            Some(&dead) => dead,
            None => {
                let dead = self.explore(tables, neighbours, walls, goals, start, player);
                if self.verdicts.len() >= MOST_VERDICTS {
                    self.verdicts.clear();
                }
                self.verdicts.insert(key, dead);
                if dead {
                    self.proved += 1;
                }
                dead
            }
        };
        if self.given.len() >= MOST_VERDICTS {
            self.given.clear();
        }
        self.given.insert(given, dead);
        dead
    }

    /// Floods the player's area with only `boxes` on the board (left in `self.region`) and
    /// returns the position's key.
    fn normalise(&mut self, tables: &Tables, neighbours: &[[u16; 4]], walls: &[bool], boxes: &[u16], player: usize) -> u64 {
        boxes.iter().for_each(|&b| self.occupied[b as usize] = true);
        let least = self.region.flood(neighbours, walls, &self.occupied, player);
        boxes.iter().for_each(|&b| self.occupied[b as usize] = false);
        tables.hash(boxes, least)
    }

    fn explore(&mut self, tables: &Tables, neighbours: &[[u16; 4]], walls: &[bool], goals: &[bool], start: Vec<u16>, player: usize) -> bool {
        let mut queue = std::collections::VecDeque::from([(start, player as u16)]);
        let mut seen = HashSet::new();
        let mut visited = 0;
        while let Some((boxes, player)) = queue.pop_front() {
            let key = self.normalise(tables, neighbours, walls, &boxes, player as usize);
            if !seen.insert(key) {
                continue;
            }
            visited += 1;
            if visited > LIMIT {
                return false;
            }
            // The region is this position's (left by `normalise`).
            if boxes.iter().all(|&b| goals[b as usize]) || self.cells.iter().any(|&c| self.region.contains(c as usize)) {
                return false;
            }
            boxes.iter().for_each(|&b| self.occupied[b as usize] = true);
            for slot in 0..boxes.len() {
                let from = boxes[slot] as usize;
                for direction in 0..4 {
                    let (behind, ahead) = (neighbours[from][direction ^ 1], neighbours[from][direction]);
                    if behind == NONE || ahead == NONE || !self.region.contains(behind as usize) {
                        continue;
                    }
                    let ahead = ahead as usize;
                    if walls[ahead] || self.occupied[ahead] || tables.distance_to_goal[ahead] == u16::MAX {
                        continue;
                    }
                    self.occupied[from] = false;
                    self.occupied[ahead] = true;
                    let frozen = tables.is_freeze_deadlock_with(ahead, &self.occupied, &mut self.frozen);
                    self.occupied[ahead] = false;
                    self.occupied[from] = true;
                    if !frozen {
                        let mut next = boxes.clone();
                        next[slot] = ahead as u16;
                        next.sort_unstable();
                        queue.push_back((next, from as u16));
                    }
                }
            }
            boxes.iter().for_each(|&b| self.occupied[b as usize] = false);
        }
        true
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::games::sokoban::corral::{Corrals, Verdict};
    use crate::games::sokoban::level::parse_collection;
    use crate::games::sokoban::solver::board_tables;
    use crate::games::sokoban::solver::tests::{proved_unsolvable, random_walk_positions};

    fn dead_at_start(text: &str) -> bool {
        let level = parse_collection(text).unwrap().remove(0);
        let tables = Tables::new(&level);
        let (neighbours, walls, dead_cells) = board_tables(&level);
        let mut region = Region::new(walls.len());
        let player = region.flood(&neighbours, &walls, &level.boxes, level.player) as usize;
        let board = Board { neighbours: &neighbours, walls: &walls, goals: &level.goals, dead: &dead_cells };
        let boxes = level.boxes.iter().filter(|&&b| b).count();
        Deadlocks::new(walls.len()).dead(&tables, &board, &level.boxes, &region, player, boxes)
    }

    #[test]
    fn a_barrier_box_held_by_a_box_beside_the_corral_is_proved_dead() {
        // The corral is the cell left of (3, 3); its barrier, (2, 2) and (3, 3), can move
        // alone ((3, 3) pushed up from below, into the cell of (2, 3)), but with the boxes
        // beside it nothing moves except into a dead corner: the square of four is stuck (the
        // fifth box is not in the search, which never takes every box).
        let square = "########\n#....@.#\n##$$ $ #\n## $$  #\n### ## #\n#      #\n########\n";
        assert!(dead_at_start(square));
        assert!(proved_unsolvable(&parse_collection(square).unwrap().remove(0)));
        // One box of the square elsewhere: (3, 3) goes up and the corral opens.
        assert!(!dead_at_start("########\n#....@.#\n##$  $$#\n## $$  #\n### ## #\n#      #\n########\n"));
    }

    /// Positions reached by random walks on the small Microban levels: every one the corral
    /// search calls dead is unsolvable (a full search proves it), and it finds such positions
    /// that no dead square, freeze, matching or PI-corral check catches.
    #[test]
    fn corral_searches_find_only_real_deadlocks_and_some_new_ones() {
        let (mut dead, mut new) = (0, 0);
        for (title, position, lurd) in random_walk_positions(61, 6, usize::MAX, 20, 10..80) {
            let tables = Tables::new(&position);
            let (neighbours, walls, dead_cells) = board_tables(&position);
            let size = walls.len();
            let mut region = Region::new(size);
            let player = region.flood(&neighbours, &walls, &position.boxes, position.player) as usize;
            let boxes = position.boxes.iter().filter(|&&b| b).count();
            let board = Board { neighbours: &neighbours, walls: &walls, goals: &position.goals, dead: &dead_cells };
            let mut deadlocks = Deadlocks::new(size);
            if !deadlocks.dead(&tables, &board, &position.boxes, &region, player, boxes) {
                continue;
            }
            dead += 1;
            assert!(proved_unsolvable(&position), "level {title} after {lurd}");
            let on_dead_square = (0..size).any(|c| position.boxes[c] && dead_cells[c]);
            let frozen = (0..size).any(|c| position.boxes[c] && tables.is_freeze_deadlock(c, &position.boxes));
            let cells: Vec<u16> = (0..size).filter(|&c| position.boxes[c]).map(|c| c as u16).collect();
            let unmatched = tables.lower_bound(&cells).is_none();
            let corral_dead = Corrals::new(size).analyse(&board, &position.boxes, &region) == Verdict::Dead;
            if !on_dead_square && !frozen && !unmatched && !corral_dead {
                new += 1;
            }
        }
        assert!(dead >= 50 && new >= 10, "too few deadlocks found: {dead}, {new} not found otherwise");
    }
}
