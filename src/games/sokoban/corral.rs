//! PI-corral pruning (after the Sokoban wiki's description of YASS and JSoko).
//!
//! A *corral* is a connected area of free cells the player cannot reach; the boxes touching it
//! form its *barrier*. It is a *PI-corral* when
//! * (I) no barrier box can ever be pushed out of the corral's side while the barrier stands:
//!   every such push is blocked by a wall or another barrier box, needs the player inside the
//!   corral, or ends on a dead square, whatever the other boxes do; and
//! * (P) the player can make every push of a barrier box into the corral right now.
//!
//! If the corral is not finished (a goal in it, or a barrier box off a goal), some barrier box
//! must move in every solution, and the first to move goes into the corral. That push is
//! possible now and commutes with everything done outside before it (those pushes never touch
//! the corral or its barrier, and the player's area only grows when a barrier box steps in), so
//! searching only the pushes into one PI-corral keeps a solution whenever one exists. A PI-corral
//! with no such push at all can never be opened: the position is dead (a corral deadlock).

use super::solver::{Region, NONE};

/// What the corrals of a position allow.
#[derive(Debug, PartialEq, Eq)]
pub(super) enum Verdict {
    /// No unfinished PI-corral: every push must be searched.
    Free,
    /// An unfinished PI-corral that can never be opened: no solution from here.
    Dead,
    /// Only these pushes (box cell, direction) need searching: those into the PI-corral with
    /// the fewest of them.
    Only(Vec<(u16, u8)>),
}

/// The board facts corral detection needs, all indexed by cell.
pub(super) struct Board<'a> {
    pub neighbours: &'a [[u16; 4]],
    pub walls: &'a [bool],
    pub goals: &'a [bool],
    /// Cells a box can never leave for a goal.
    pub dead: &'a [bool],
}

/// Labels the corrals of a position one at a time, for PI-corral pruning ([`Corrals`]) and the
/// corral deadlock search (`deadlock.rs`). Labels carry ever-growing ids, so nothing is cleared
/// between positions.
pub(super) struct CorralFlood {
    /// Each free cell's corral id (the position's corrals have ids from [`CorralFlood::begin`]'s on).
    pub(super) label: Vec<u32>,
    /// Each box's id of the last corral it touched.
    pub(super) mark: Vec<u32>,
    next_id: u32,
    first: u32,
    /// Where to look for the next corral's first cell.
    from: usize,
    stack: Vec<u16>,
}

impl CorralFlood {
    pub(super) fn new(size: usize) -> CorralFlood {
        CorralFlood { label: vec![0; size], mark: vec![0; size], next_id: 1, first: 1, from: 0, stack: Vec::new() }
    }

    /// Starts on a position and returns the id its first corral gets; the ids start again from 1
    /// (labels and marks cleared) before they could run out.
    pub(super) fn begin(&mut self) -> u32 {
        let size = self.label.len() as u32;
        if self.next_id > u32::MAX - 2 * size - 2 {
            self.label.iter_mut().for_each(|l| *l = 0);
            self.mark.iter_mut().for_each(|l| *l = 0);
            self.next_id = 1;
        }
        self.first = self.next_id;
        self.from = 0;
        self.first
    }

    /// One past the id of the position's last corral flooded so far.
    pub(super) fn end(&self) -> u32 {
        self.next_id
    }

    /// Floods the position's next corral (boxes in `occupied`, the player's area in `region`):
    /// calls `on_cell` for each of its cells and `on_box` once for each box touching it (marked
    /// with its id), and returns its id and whether it is unfinished (an empty goal in it or a box
    /// touching it off a goal); None when every corral has been flooded.
    #[inline]
    pub(super) fn next(
        &mut self,
        board: &Board,
        occupied: &[bool],
        region: &Region,
        mut on_cell: impl FnMut(u16),
        mut on_box: impl FnMut(u16),
    ) -> Option<(u32, bool)> {
        let size = board.walls.len();
        let first = self.first;
        let start = (self.from..size).find(|&c| !board.walls[c] && !occupied[c] && !region.contains(c) && self.label[c] < first)?;
        self.from = start + 1;
        let id = self.next_id;
        self.next_id += 1;
        self.stack.clear();
        self.stack.push(start as u16);
        self.label[start] = id;
        let mut unfinished = false;
        while let Some(cell) = self.stack.pop() {
            on_cell(cell);
            let cell = cell as usize;
            unfinished |= board.goals[cell];
            for &next in &board.neighbours[cell] {
                if next == NONE || board.walls[next as usize] {
                    continue;
                }
                let n = next as usize;
                if occupied[n] {
                    if self.mark[n] != id {
                        self.mark[n] = id;
                        on_box(next);
                        unfinished |= !board.goals[n];
                    }
                } else if self.label[n] != id {
                    self.label[n] = id;
                    self.stack.push(next);
                }
            }
        }
        Some((id, unfinished))
    }
}

/// Scratch space reused across positions.
pub(super) struct Corrals {
    flood: CorralFlood,
    /// Boxes in the barrier of any corral of the position: marked with the position's first id.
    union_mark: Vec<u32>,
    barrier: Vec<u16>,
    all_barrier: Vec<u16>,
}

impl Corrals {
    pub fn new(size: usize) -> Corrals {
        Corrals { flood: CorralFlood::new(size), union_mark: vec![0; size], barrier: Vec::new(), all_barrier: Vec::new() }
    }

    /// Looks at every corral of the position (boxes in `occupied`, the player's area in
    /// `region`), and at the union of all of them (which catches corrals that are only PI
    /// together), and says which pushes need searching.
    pub fn analyse(&mut self, board: &Board, occupied: &[bool], region: &Region) -> Verdict {
        let first = self.flood.begin();
        if first == 1 {
            // The ids start again: old union marks could be taken for this position's.
            self.union_mark.iter_mut().for_each(|l| *l = 0);
        }
        let mut best: Option<Vec<(u16, u8)>> = None;
        let mut any_unfinished = false;
        self.all_barrier.clear();
        loop {
            self.barrier.clear();
            let (barrier, union_mark, all_barrier) = (&mut self.barrier, &mut self.union_mark, &mut self.all_barrier);
            let on_box = |b: u16| {
                barrier.push(b);
                // The union's barrier gets each box once.
                if union_mark[b as usize] != first {
                    union_mark[b as usize] = first;
                    all_barrier.push(b);
                }
            };
            let Some((id, unfinished)) = self.flood.next(board, occupied, region, |_| {}, on_box) else { break };
            if !unfinished {
                continue;
            }
            any_unfinished = true;
            let verdict = self.check(board, region, &self.barrier, |label| label == id, |cell| self.flood.mark[cell] == id);
            match verdict {
                Some(pushes) if pushes.is_empty() => return Verdict::Dead,
                Some(pushes) if best.as_ref().is_none_or(|b| pushes.len() < b.len()) => best = Some(pushes),
                _ => {}
            }
        }
        let last = self.flood.end();
        if best.is_none() && any_unfinished && last - first > 1 {
            // All corrals together: a barrier box between two corrals counts as inside.
            let verdict = self.check(board, region, &self.all_barrier, |label| label >= first && label < last, |cell| self.union_mark[cell] == first);
            match verdict {
                Some(pushes) if pushes.is_empty() => return Verdict::Dead,
                Some(pushes) => best = Some(pushes),
                None => {}
            }
        }
        best.map_or(Verdict::Free, Verdict::Only)
    }

    /// The pushes into the corral (`inside` tells its labels) when it is a PI-corral, else None.
    fn check(
        &self,
        board: &Board,
        region: &Region,
        barrier: &[u16],
        inside: impl Fn(u32) -> bool,
        in_barrier: impl Fn(usize) -> bool,
    ) -> Option<Vec<(u16, u8)>> {
        let blocked = |cell: usize| board.walls[cell] || in_barrier(cell);
        let mut pushes = Vec::new();
        for &b in barrier {
            for direction in 0..4 {
                let (ahead, behind) = (board.neighbours[b as usize][direction], board.neighbours[b as usize][direction ^ 1]);
                if ahead == NONE || behind == NONE {
                    continue;
                }
                let (ahead, behind) = (ahead as usize, behind as usize);
                if blocked(ahead) || blocked(behind) || board.dead[ahead] {
                    continue;
                }
                // Labels of this position's corrals are never on the player's side.
                let in_corral = |cell: usize| inside(self.flood.label[cell]) && !region.contains(cell);
                if in_corral(ahead) {
                    if !region.contains(behind) {
                        return None; // (P) fails: this push may become possible later
                    }
                    pushes.push((b, direction as u8));
                } else if !in_corral(behind) {
                    return None; // (I) fails: the box might one day leave on the outside
                }
            }
        }
        Some(pushes)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::games::sokoban::level::{parse_collection, Level};
    use crate::games::sokoban::solver::{board_tables, Region};

    /// The verdict for a level's starting position.
    fn verdict(text: &str) -> (Level, Verdict) {
        let level = parse_collection(text).unwrap().remove(0);
        let (neighbours, walls, dead) = board_tables(&level);
        let board = Board { neighbours: &neighbours, walls: &walls, goals: &level.goals, dead: &dead };
        let mut region = Region::new(walls.len());
        region.flood(&neighbours, &walls, &level.boxes, level.player);
        let verdict = Corrals::new(walls.len()).analyse(&board, &level.boxes, &region);
        (level, verdict)
    }

    #[test]
    fn a_pi_corral_leaves_only_the_pushes_into_it() {
        // The right room is closed by the box in the doorway, and holds an empty goal: only the
        // push into it counts, not the left box's pushes.
        let (level, found) = verdict("#########\n#    #  #\n# $ @$. #\n#  . #  #\n#########\n");
        assert_eq!(found, Verdict::Only(vec![((2 * level.width + 5) as u16, 3)]));
        // Finished (the goal in the room is filled): nothing to prune.
        let (_, found) = verdict("#########\n#    #  #\n# $.@#* #\n#    #  #\n#########\n");
        assert_eq!(found, Verdict::Free);
        // The box can leave the doorway to the left too (the player can get behind it through
        // the room's second door): not a PI-corral.
        let (_, found) = verdict("#########\n#    #  #\n# $ @$. #\n#  .    #\n#########\n");
        assert_eq!(found, Verdict::Free);
    }

    #[test]
    fn the_flood_finds_each_corral_once_with_its_cells_and_boxes() {
        // Two corrals: one behind the two boxes in the middle (unfinished: they are off goals),
        // one behind the box on a goal, with no goal inside (finished); that box touches both.
        let level = parse_collection("#########\n#@ $ #  #\n#..$ *  #\n#########\n").unwrap().remove(0);
        let (neighbours, walls, dead) = board_tables(&level);
        let board = Board { neighbours: &neighbours, walls: &walls, goals: &level.goals, dead: &dead };
        let mut region = Region::new(walls.len());
        region.flood(&neighbours, &walls, &level.boxes, level.player);
        let at = |row: usize, column: usize| (row * level.width + column) as u16;
        let mut flood = CorralFlood::new(walls.len());
        for _ in 0..2 {
            // Twice: the labels of the first pass must not hide the corrals from the second.
            let first = flood.begin();
            let mut found = Vec::new();
            loop {
                let (mut cells, mut boxes) = (Vec::new(), Vec::new());
                let Some((id, unfinished)) = flood.next(&board, &level.boxes, &region, |c| cells.push(c), |b| boxes.push(b)) else { break };
                cells.sort_unstable();
                boxes.sort_unstable();
                assert!(boxes.iter().all(|&b| flood.mark[b as usize] == id));
                found.push((id - first, cells, boxes, unfinished));
            }
            assert_eq!(
                found,
                vec![
                    (0, vec![at(1, 4), at(2, 4)], vec![at(1, 3), at(2, 3), at(2, 5)], true),
                    (1, vec![at(1, 6), at(1, 7), at(2, 6), at(2, 7)], vec![at(2, 5)], false),
                ]
            );
            assert_eq!(flood.end(), first + 2);
        }
    }

    #[test]
    fn a_corral_that_can_never_be_opened_is_dead() {
        // The box's only push into the corral ends in a dead corner, and it cannot be pushed
        // out of the corral's side because the player cannot get behind it.
        let (_, found) = verdict("######\n#+ $ #\n######\n");
        assert_eq!(found, Verdict::Dead);
    }
}
