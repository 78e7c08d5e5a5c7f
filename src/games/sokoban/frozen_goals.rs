//! Deadlocks behind boxes frozen on goals.
//!
//! A box on a goal that can move on neither axis (walls, dead squares or other such boxes on
//! both sides: [`Tables::is_frozen`]) never moves again in any solution, so to every other box
//! it is a wall. A box off a goal that can then push its way to no free goal makes the position
//! dead, which the dead squares (computed with the walls alone) cannot see. This is how a
//! search stalls one or two boxes short of the end: the goals packed first shut the way into
//! the last ones, or a box is walled into a corner of the goal room.
//!
//! The check is one search pulling boxes back from every free goal at once, with
//! the frozen boxes as walls; its answer for each set of frozen boxes is kept, so positions
//! sharing that set (most of a search's, once a goal room fills) cost one look-up.

use std::collections::HashMap;

use super::corral::Board;
use super::solver::{pull_reachable, Tables};

/// Sets of frozen boxes whose live cells are kept before the table is cleared (to bound its
/// memory: a few hundred bytes each).
const MOST_SETS: usize = 1 << 16;

/// Scratch space and the live cells found for each set of frozen boxes, reused across positions.
pub(super) struct FrozenGoals {
    /// Scratch for the freeze check.
    seen: Vec<usize>,
    /// The frozen boxes of the position being checked, in cell order.
    frozen: Vec<u16>,
    /// The walls with the frozen boxes added (restored after each check).
    walls: Vec<bool>,
    /// For each set of frozen boxes (their cells), the cells from which a box can still be
    /// pushed to a free goal, one bit per cell.
    live: HashMap<Vec<u16>, Vec<u64>>,
    /// The bytes `live` takes (about).
    bytes: usize,
}

impl FrozenGoals {
    pub(super) fn new(walls: &[bool]) -> FrozenGoals {
        FrozenGoals { seen: Vec::new(), frozen: Vec::new(), walls: walls.to_vec(), live: HashMap::new(), bytes: 0 }
    }

    /// Whether some box off a goal can reach no free goal once the boxes frozen on goals are
    /// walls (`occupied`: the cells of `boxes`).
    pub(super) fn dead(&mut self, tables: &Tables, board: &Board, occupied: &[bool], boxes: &[u16]) -> bool {
        self.frozen.clear();
        for &b in boxes {
            if board.goals[b as usize] && tables.is_frozen(b as usize, occupied, &mut self.seen) {
                self.frozen.push(b);
            }
        }
        // No frozen box, or no box left off a goal: the walls alone decide (the dead squares).
        if self.frozen.is_empty() || boxes.iter().all(|&b| board.goals[b as usize]) {
            return false;
        }
        let shut_off = |live: &[u64]| boxes.iter().any(|&b| !board.goals[b as usize] && live[b as usize / 64] & 1 << (b % 64) == 0);
        if let Some(live) = self.live.get(&self.frozen) {
            return shut_off(live);
        }
        if self.live.len() >= MOST_SETS {
            self.live.clear();
            self.bytes = 0;
        }
        let live = self.live_cells(board);
        let dead = shut_off(&live);
        self.bytes += 64 + 2 * self.frozen.len() + 8 * live.len();
        self.live.insert(self.frozen.clone(), live);
        dead
    }

    /// The cells from which a box can be pushed to a goal not in `self.frozen`, the frozen
    /// boxes being walls (other boxes aside).
    fn live_cells(&mut self, board: &Board) -> Vec<u64> {
        let size = board.walls.len();
        self.frozen.iter().for_each(|&f| self.walls[f as usize] = true);
        let free_goals = (0..size).filter(|&c| board.goals[c] && !self.walls[c]);
        let reached = pull_reachable(board.neighbours, &self.walls, free_goals);
        self.frozen.iter().for_each(|&f| self.walls[f as usize] = false);
        let mut live = vec![0u64; size.div_ceil(64)];
        (0..size).filter(|&c| reached[c]).for_each(|c| live[c / 64] |= 1 << (c % 64));
        live
    }

    /// The bytes its table of live cells takes (about).
    pub(super) fn memory(&self) -> usize {
        self.bytes
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::games::sokoban::level::parse_collection;
    use crate::games::sokoban::solver::{board_tables, solve_with, Outcome, Techniques};

    fn check(text: &str) -> bool {
        let level = parse_collection(text).unwrap().remove(0);
        let tables = Tables::new(&level);
        let (neighbours, walls, dead) = board_tables(&level);
        let board = Board { neighbours: &neighbours, walls: &walls, goals: &level.goals, dead: &dead };
        let boxes: Vec<u16> = (0..walls.len()).filter(|&c| level.boxes[c]).map(|c| c as u16).collect();
        FrozenGoals::new(&walls).dead(&tables, &board, &level.boxes, &boxes)
    }

    #[test]
    fn a_box_shut_out_of_the_last_goal_by_frozen_boxes_is_dead() {
        // The two boxes on goals in the corridor hold each other (neither can be pushed: the
        // player would have to stand on the other) and close the way to the goal at its end:
        // the box in the room can no longer reach it, though with the walls alone it can.
        let shut = "########\n#.**   #\n#####  #\n#   $  #\n#  @   #\n########\n";
        assert!(check(shut), "the goal at the corridor's end is shut off");
        let level = parse_collection(shut).unwrap().remove(0);
        let (_, _, dead) = board_tables(&level);
        assert!(!dead[3 * level.width + 4], "with the walls alone the box in the room is live");
        // The plain search proves the level unsolvable (it does not use this check).
        let techniques = Techniques { pi_corrals: true, goal_macros: false, fewest_pushes: false };
        assert!(matches!(solve_with(&level, None, &std::sync::atomic::AtomicBool::new(false), techniques, usize::MAX), Outcome::Unsolvable));
    }

    #[test]
    fn boxes_on_goals_that_can_still_move_are_no_walls() {
        // The box on the goal at (2, 1) has free floor left and right: not frozen, so the way
        // to the goal at (1, 1) stays open (it can be pushed on to it, and the other box in).
        assert!(!check("######\n#.*  #\n#  $ #\n# @  #\n######\n"));
        // A frozen box with every other box on a goal: nothing to check.
        assert!(!check("####\n#*@#\n####\n"));
    }

    #[test]
    fn verdicts_agree_with_a_fresh_check_after_the_table_is_used() {
        // The same set of frozen boxes, a second time, from the table.
        let level = parse_collection("########\n#.**   #\n#####  #\n#   $  #\n#  @   #\n########\n").unwrap().remove(0);
        let tables = Tables::new(&level);
        let (neighbours, walls, dead) = board_tables(&level);
        let board = Board { neighbours: &neighbours, walls: &walls, goals: &level.goals, dead: &dead };
        let boxes: Vec<u16> = (0..walls.len()).filter(|&c| level.boxes[c]).map(|c| c as u16).collect();
        let mut frozen_goals = FrozenGoals::new(&walls);
        assert!(frozen_goals.dead(&tables, &board, &level.boxes, &boxes));
        assert!(frozen_goals.dead(&tables, &board, &level.boxes, &boxes));
        assert_eq!(frozen_goals.live.len(), 1);
        assert_eq!(frozen_goals.walls, walls, "the walls are restored");
    }
}
