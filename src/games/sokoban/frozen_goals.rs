//! Deadlocks behind boxes frozen on goals.
//!
//! A box on a goal that can move on neither axis (walls, dead squares or other such boxes on
//! both sides: [`Tables::is_frozen`]) never moves again in any solution, so to every other box
//! it is a wall. A box off a goal that can then push its way to no free goal makes the position
//! dead, which the dead squares (computed with the walls alone) cannot see; and so does a free
//! goal that no box left free to move can be pushed to. This is how a
//! search stalls one or two boxes short of the end: the goals packed first shut the way into
//! the last ones, or a box is walled into a corner of the goal room.
//!
//! The check is one search pulling boxes back from each free goal, with the frozen boxes as
//! walls; its answer for each set of frozen boxes is kept, so positions sharing that set (most
//! of a search's, once a goal room fills) cost one look-up.

use std::collections::HashMap;

use super::corral::Board;
use super::solver::{pull_reachable, Tables};

/// Sets of frozen boxes whose reach is kept before the table is cleared (to bound its memory:
/// a few hundred bytes to a few kilobytes each).
const MOST_SETS: usize = 1 << 16;

/// For one set of frozen boxes, cells as bits (one per cell) from which a box can be pushed,
/// the frozen boxes being walls and the other boxes aside.
struct Reach {
    /// To some free goal.
    live: Vec<u64>,
    /// To each free goal.
    each_goal: Vec<Vec<u64>>,
}

/// Whether `cell` is among `cells` (one bit per cell).
fn has(cells: &[u64], cell: u16) -> bool {
    cells[cell as usize / 64] & 1 << (cell % 64) != 0
}

/// Scratch space and the reach found for each set of frozen boxes, reused across positions.
pub(super) struct FrozenGoals {
    /// Scratch for the freeze check.
    seen: Vec<usize>,
    /// The frozen boxes of the position being checked, in cell order.
    frozen: Vec<u16>,
    /// The walls with the frozen boxes added (restored after each check).
    walls: Vec<bool>,
    /// For each set of frozen boxes (their cells), where boxes can still go.
    reach: HashMap<Vec<u16>, Reach>,
    /// The bytes `reach` takes (about).
    bytes: usize,
}

impl FrozenGoals {
    pub(super) fn new(walls: &[bool]) -> FrozenGoals {
        FrozenGoals { seen: Vec::new(), frozen: Vec::new(), walls: walls.to_vec(), reach: HashMap::new(), bytes: 0 }
    }

    /// Whether, once the boxes frozen on goals are walls, some box off a goal can reach no free
    /// goal or some free goal can be reached by no box (`occupied`: the cells of `boxes`).
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
        // A frozen box is a wall, so it is in no goal's reach: any box found there can move.
        let verdict = |reach: &Reach| {
            boxes.iter().any(|&b| !board.goals[b as usize] && !has(&reach.live, b)) || reach.each_goal.iter().any(|cells| !boxes.iter().any(|&b| has(cells, b)))
        };
        if let Some(reach) = self.reach.get(&self.frozen) {
            return verdict(reach);
        }
        if self.reach.len() >= MOST_SETS {
            self.reach.clear();
            self.bytes = 0;
        }
        let reach = self.reach_of(board);
        let dead = verdict(&reach);
        self.bytes += 64 + 2 * self.frozen.len() + 8 * reach.live.len() * (1 + reach.each_goal.len());
        self.reach.insert(self.frozen.clone(), reach);
        dead
    }

    /// Where boxes can go to the goals not in `self.frozen`, the frozen boxes being walls.
    fn reach_of(&mut self, board: &Board) -> Reach {
        let size = board.walls.len();
        let bits = |reached: &[bool]| {
            let mut cells = vec![0u64; size.div_ceil(64)];
            (0..size).filter(|&c| reached[c]).for_each(|c| cells[c / 64] |= 1 << (c % 64));
            cells
        };
        self.frozen.iter().for_each(|&f| self.walls[f as usize] = true);
        let each_goal: Vec<Vec<u64>> = (0..size).filter(|&c| board.goals[c] && !self.walls[c]).map(|goal| bits(&pull_reachable(board.neighbours, &self.walls, [goal]))).collect();
        self.frozen.iter().for_each(|&f| self.walls[f as usize] = false);
        let live = each_goal.iter().fold(vec![0u64; size.div_ceil(64)], |mut all, cells| {
            all.iter_mut().zip(cells).for_each(|(a, c)| *a |= c);
            all
        });
        Reach { live, each_goal }
    }

    /// The bytes its table of reach takes (about).
    pub(super) fn memory(&self) -> usize {
        self.bytes
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::games::sokoban::level::parse_collection;
    use crate::games::sokoban::solver::board_tables;
    use crate::games::sokoban::solver::tests::{proved_unsolvable, random_walk_positions};

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
        assert!(proved_unsolvable(&level));
    }

    #[test]
    fn a_free_goal_no_box_can_reach_is_dead() {
        // The corner goal at (1, 1) is shut in by the frozen boxes beside it, while both boxes
        // off goals can still reach the goal at (3, 5): only the goal's own reach shows it.
        let sealed = "#######\n#.*#  #\n#*    #\n## $$.#\n# @   #\n#######\n";
        assert!(check(sealed));
        assert!(proved_unsolvable(&parse_collection(sealed).unwrap().remove(0)));
        // With floor below the goal's frozen neighbour, a box can still come in from below.
        assert!(!check("#######\n#.*#  #\n# *   #\n#  $$.#\n# @   #\n#######\n"));
    }

    /// Positions reached by random walks on the small Microban levels: every one called dead
    /// is unsolvable (a full search proves it), and some are called dead only by a free goal
    /// that no box can reach.
    #[test]
    fn positions_called_dead_are_unsolvable() {
        let (mut dead, mut by_goal) = (0, 0);
        for (title, position, lurd) in random_walk_positions(35, 6, usize::MAX, 40, 10..120) {
            let tables = Tables::new(&position);
            let (neighbours, walls, dead_cells) = board_tables(&position);
            let board = Board { neighbours: &neighbours, walls: &walls, goals: &position.goals, dead: &dead_cells };
            let boxes: Vec<u16> = (0..walls.len()).filter(|&c| position.boxes[c]).map(|c| c as u16).collect();
            let mut frozen_goals = FrozenGoals::new(&walls);
            if !frozen_goals.dead(&tables, &board, &position.boxes, &boxes) {
                continue;
            }
            dead += 1;
            assert!(proved_unsolvable(&position), "level {title} after {lurd}");
            let reach = frozen_goals.reach.get(&frozen_goals.frozen).expect("kept");
            if boxes.iter().all(|&b| position.goals[b as usize] || has(&reach.live, b)) {
                by_goal += 1;
            }
        }
        assert!(dead >= 50 && by_goal >= 5, "too few: {dead} dead, {by_goal} by a goal no box reaches");
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
        assert_eq!(frozen_goals.reach.len(), 1);
        assert_eq!(frozen_goals.walls, walls, "the walls are restored");
    }
}
