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

/// Scratch space reused across positions (labels carry ever-growing ids, so nothing is cleared).
pub(super) struct Corrals {
    label: Vec<u32>,
    barrier_mark: Vec<u32>,
    /// Boxes in the barrier of any corral of the position: marked with the position's first id.
    union_mark: Vec<u32>,
    next_id: u32,
    stack: Vec<u16>,
    barrier: Vec<u16>,
    all_barrier: Vec<u16>,
}

impl Corrals {
    pub fn new(size: usize) -> Corrals {
        Corrals {
            label: vec![0; size],
            barrier_mark: vec![0; size],
            union_mark: vec![0; size],
            next_id: 1,
            stack: Vec::new(),
            barrier: Vec::new(),
            all_barrier: Vec::new(),
        }
    }

    /// Looks at every corral of the position (boxes in `occupied`, the player's area in
    /// `region`), and at the union of all of them (which catches corrals that are only PI
    /// together), and says which pushes need searching.
    pub fn analyse(&mut self, board: &Board, occupied: &[bool], region: &Region) -> Verdict {
        let size = board.walls.len();
        if self.next_id > u32::MAX - 2 * size as u32 - 2 {
            self.label.iter_mut().for_each(|l| *l = 0);
            self.barrier_mark.iter_mut().for_each(|l| *l = 0);
            self.union_mark.iter_mut().for_each(|l| *l = 0);
            self.next_id = 1;
        }
        let first = self.next_id;
        let mut best: Option<Vec<(u16, u8)>> = None;
        let mut any_unfinished = false;
        self.all_barrier.clear();
        for start in 0..size {
            if board.walls[start] || occupied[start] || region.contains(start) || self.label[start] >= first {
                continue;
            }
            let id = self.next_id;
            self.next_id += 1;
            let unfinished = self.flood(board, occupied, start, id, first);
            if !unfinished {
                continue;
            }
            any_unfinished = true;
            let barrier = std::mem::take(&mut self.barrier);
            let verdict = self.check(board, region, &barrier, |label| label == id, |cell| self.barrier_mark[cell] == id);
            self.barrier = barrier;
            match verdict {
                Some(pushes) if pushes.is_empty() => return Verdict::Dead,
                Some(pushes) if best.as_ref().is_none_or(|b| pushes.len() < b.len()) => best = Some(pushes),
                _ => {}
            }
        }
        let last = self.next_id;
        if best.is_none() && any_unfinished && last - first > 1 {
            // All corrals together: a barrier box between two corrals counts as inside.
            let barrier = std::mem::take(&mut self.all_barrier);
            let verdict = self.check(board, region, &barrier, |label| label >= first && label < last, |cell| self.union_mark[cell] == first);
            self.all_barrier = barrier;
            match verdict {
                Some(pushes) if pushes.is_empty() => return Verdict::Dead,
                Some(pushes) => best = Some(pushes),
                None => {}
            }
        }
        best.map_or(Verdict::Free, Verdict::Only)
    }

    /// Labels the corral holding `start` with `id`, collects its barrier (boxes marked `id`;
    /// the union's barrier gets each box once, marked `first`) and says whether it is unfinished.
    fn flood(&mut self, board: &Board, occupied: &[bool], start: usize, id: u32, first: u32) -> bool {
        self.barrier.clear();
        self.stack.clear();
        self.stack.push(start as u16);
        self.label[start] = id;
        let mut unfinished = false;
        while let Some(cell) = self.stack.pop() {
            let cell = cell as usize;
            unfinished |= board.goals[cell];
            for &next in &board.neighbours[cell] {
                if next == NONE || board.walls[next as usize] {
                    continue;
                }
                let n = next as usize;
                if occupied[n] {
                    if self.barrier_mark[n] != id {
                        self.barrier_mark[n] = id;
                        self.barrier.push(next);
                        unfinished |= !board.goals[n];
                    }
                    if self.union_mark[n] != first {
                        self.union_mark[n] = first;
                        self.all_barrier.push(next);
                    }
                } else if self.label[n] != id {
                    self.label[n] = id;
                    self.stack.push(next);
                }
            }
        }
        unfinished
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
                let in_corral = |cell: usize| inside(self.label[cell]) && !region.contains(cell);
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
    fn a_corral_that_can_never_be_opened_is_dead() {
        // The box's only push into the corral ends in a dead corner, and it cannot be pushed
        // out of the corral's side because the player cannot get behind it.
        let (_, found) = verdict("######\n#+ $ #\n######\n");
        assert_eq!(found, Verdict::Dead);
    }
}
