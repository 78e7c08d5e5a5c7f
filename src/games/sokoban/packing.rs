//! Goal-room packing order: in which order the goals should be filled so that no box placed
//! early blocks the way to a goal filled later.
//!
//! Found backwards from the solved position (every goal holding a box): again and again, take
//! out a box that the player can reach and pull off the goals, to a cell that is no goal and
//! that a box can be pushed to from the start, with the boxes still on goals in the way. The
//! order of taking out, reversed, is an order in which boxes can be pushed in. The search uses
//! it as guidance only (a penalty for boxes that sit on goals out of turn), never as a rule, so
//! a wrong or missing order costs time, not solutions.

use std::collections::VecDeque;

use super::solver::{push_distances, NONE};

/// The goals (cells) in the order they should be filled, or None when taking the boxes out of
/// the solved position gets stuck wherever the player stands (then no order is used).
///
/// The player is first put in its own starting area; when that fails (the start is shut in by
/// the filled goals, as in a level whose player starts among the goals), in each other area of
/// free floor of the solved position in turn: the last push may well leave it elsewhere.
pub(super) fn packing_order(neighbours: &[[u16; 4]], walls: &[bool], goals: &[bool], boxes: &[bool], player: usize) -> Option<Vec<u16>> {
    // A box counts as taken out only on a cell a box can be pushed to from the start, around
    // the goals still filled: pulled into a pocket no box can enter then (original 90, level
    // 39: floor beside its goal room that the player reaches alone), it would be filled from
    // nowhere. When no order takes all its boxes out that way (9 of the original 90, 39 among
    // them: boxes taken out one at a time do not model boxes parked on the way), any cell that
    // is no goal will do for a box, but only when no box can be taken out the strict way.
    let starts: Vec<usize> = (0..walls.len()).filter(|&c| boxes[c]).collect();
    packing_order_to(neighbours, walls, goals, Some(&starts), false, player).or_else(|| packing_order_to(neighbours, walls, goals, Some(&starts), true, player))
}

/// [`packing_order`], a box out once on a cell that is no goal and one a box can be pushed to
/// from the `starts` (when given; when also `relaxed`, any cell that is no goal for a box when
/// no box can be taken out so).
fn packing_order_to(neighbours: &[[u16; 4]], walls: &[bool], goals: &[bool], starts: Option<&[usize]>, relaxed: bool, player: usize) -> Option<Vec<u16>> {
    let size = walls.len();
    // One try per area of free floor, the player's own first.
    let mut tried = vec![false; size];
    for cell in std::iter::once(player).chain(0..size) {
        if walls[cell] || goals[cell] || tried[cell] {
            continue;
        }
        let area = flood(neighbours, walls, goals, cell);
        (0..size).filter(|&c| area[c] < u32::MAX).for_each(|c| tried[c] = true);
        if let Some(order) = packing_order_from(neighbours, walls, goals, starts, relaxed, cell) {
            return Some(order);
        }
    }
    None
}

/// [`packing_order`] with the player on `player` (no goal) in the solved position.
fn packing_order_from(neighbours: &[[u16; 4]], walls: &[bool], goals: &[bool], starts: Option<&[usize]>, relaxed: bool, player: usize) -> Option<Vec<u16>> {
    let size = walls.len();
    let mut occupied: Vec<bool> = goals.to_vec();
    let mut remaining: Vec<usize> = (0..size).filter(|&c| goals[c]).collect();
    let mut taken_out = Vec::with_capacity(remaining.len());
    while !remaining.is_empty() {
        let region = flood(neighbours, walls, &occupied, player);
        // Prefer the box the player reaches first (nearest the way in): it is the last to fill.
        let choose = |starts: Option<&[usize]>| {
            remaining
                .iter()
                .enumerate()
                .filter(|&(_, &g)| neighbours[g].iter().any(|&n| n != NONE && region[n as usize] < u32::MAX))
                .min_by_key(|&(_, &g)| neighbours[g].iter().filter(|&&n| n != NONE).map(|&n| region[n as usize]).min())
                .map(|(slot, _)| slot)
                .filter(|&slot| can_take_out(neighbours, walls, goals, starts, &occupied, remaining[slot], &region))
                .or_else(|| (0..remaining.len()).find(|&slot| can_take_out(neighbours, walls, goals, starts, &occupied, remaining[slot], &region)))
        };
        let slot = choose(starts).or_else(|| if relaxed { choose(None) } else { None })?;
        let goal = remaining.swap_remove(slot);
        occupied[goal] = false;
        taken_out.push(goal as u16);
    }
    taken_out.reverse();
    Some(taken_out)
}

/// Walking distance from `start` to every cell (u32::MAX: unreachable) around the `occupied` cells.
fn flood(neighbours: &[[u16; 4]], walls: &[bool], occupied: &[bool], start: usize) -> Vec<u32> {
    let mut distance = vec![u32::MAX; walls.len()];
    let mut queue = VecDeque::from([start]);
    distance[start] = 0;
    while let Some(cell) = queue.pop_front() {
        for &next in &neighbours[cell] {
            let n = next as usize;
            if next != NONE && !walls[n] && !occupied[n] && distance[n] == u32::MAX {
                distance[n] = distance[cell] + 1;
                queue.push_back(n);
            }
        }
    }
    distance
}

/// Whether the box on `goal` can be pulled to a non-goal cell, the other `occupied` cells in
/// the way, starting with the player somewhere in `region`; when `starts` are given, to a cell
/// a box can be pushed to from them around those cells.
fn can_take_out(neighbours: &[[u16; 4]], walls: &[bool], goals: &[bool], starts: Option<&[usize]>, occupied: &[bool], goal: usize, region: &[u32]) -> bool {
    let size = walls.len();
    let mut others = occupied.to_vec();
    others[goal] = false;
    let blocked: Vec<bool> = (0..size).map(|c| walls[c] || others[c]).collect();
    let out = starts.map(|starts| push_distances(neighbours, &blocked, starts));
    let free = |cell: u16, others: &[bool]| cell != NONE && !walls[cell as usize] && !others[cell as usize];
    // States: (box cell, side of the box the player stands on).
    let mut seen = vec![[false; 4]; size];
    let mut queue = VecDeque::new();
    for side in 0..4 {
        let at = neighbours[goal][side];
        if at != NONE && region[at as usize] < u32::MAX {
            seen[goal][side] = true;
            queue.push_back((goal, side));
        }
    }
    while let Some((boxed, side)) = queue.pop_front() {
        // Pull: the player steps away from the box on its side, the box follows.
        let player = neighbours[boxed][side];
        let step = neighbours[player as usize][side];
        if !free(step, &others) {
            continue;
        }
        let new_box = player as usize;
        if !goals[new_box] && out.as_ref().is_none_or(|out| out[new_box] < u16::MAX) {
            return true;
        }
        others[new_box] = true;
        let reach = flood(neighbours, walls, &others, step as usize);
        others[new_box] = false;
        for new_side in 0..4 {
            let at = neighbours[new_box][new_side];
            if at != NONE && reach[at as usize] < u32::MAX && !seen[new_box][new_side] {
                seen[new_box][new_side] = true;
                queue.push_back((new_box, new_side));
            }
        }
    }
    false
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::games::sokoban::level::parse_collection;
    use crate::games::sokoban::solver::board_tables;

    #[test]
    fn a_goal_column_fills_from_its_dead_end() {
        // Microban 153: ten goals in a dead-end column open at the bottom. The top goal must be
        // filled first and the two goals by the opening last.
        let levels = parse_collection(include_str!("../../../samples/sokoban/microban_155.xsb")).unwrap();
        let level = &levels[152];
        let (neighbours, walls, _) = board_tables(level);
        let order = packing_order(&neighbours, &walls, &level.goals, &level.boxes, level.player).expect("an order exists");
        let at = |x: usize, y: usize| (y * level.width + x) as u16;
        assert_eq!(order.len(), 10);
        assert_eq!(order[0], at(1, 1));
        assert!(order[..6].iter().enumerate().all(|(i, &g)| g == at(1, 1 + i as usize)), "{order:?}");
        let mut sorted = order.clone();
        sorted.sort_unstable();
        assert_eq!(sorted, (0..walls.len()).filter(|&c| level.goals[c]).map(|c| c as u16).collect::<Vec<_>>());
    }

    #[test]
    fn the_player_shut_in_by_the_goals_ends_elsewhere() {
        // Microban 93: the player starts in the middle of a plus of goals; in the solved
        // position it is shut in there and no box can be taken out, but from a room the
        // corner goals open the way: an order exists, with a corner goal filled last.
        let levels = parse_collection(include_str!("../../../samples/sokoban/microban_155.xsb")).unwrap();
        let level = &levels[92];
        let (neighbours, walls, _) = board_tables(level);
        assert_eq!(packing_order_from(&neighbours, &walls, &level.goals, None, false, level.player), None);
        let order = packing_order(&neighbours, &walls, &level.goals, &level.boxes, level.player).expect("an order exists");
        let mut sorted = order.clone();
        sorted.sort_unstable();
        assert_eq!(sorted, (0..walls.len()).filter(|&c| level.goals[c]).map(|c| c as u16).collect::<Vec<_>>());
        let at = |x: usize, y: usize| (y * level.width + x) as u16;
        assert!([at(4, 4), at(6, 4), at(4, 6), at(6, 6)].contains(order.last().unwrap()), "{order:?}");
    }

    /// Whether each goal of `order` can be reached by a box pushed from the `starts`, the goals
    /// before it filled.
    fn fillable_in_turn(neighbours: &[[u16; 4]], walls: &[bool], starts: &[usize], order: &[u16]) -> bool {
        let mut blocked = walls.to_vec();
        order.iter().all(|&goal| {
            let reached = push_distances(neighbours, &blocked, starts)[goal as usize] < u16::MAX;
            blocked[goal as usize] = true;
            reached
        })
    }

    #[test]
    fn every_goal_in_turn_can_be_reached_from_the_start() {
        // Microban 19: pulled off the goals to the first cell that is no goal, a box would be
        // taken out to a pocket beside them that no box reaches, and the order would ask for
        // goals to be filled that no box can reach with those before filled.
        let levels = parse_collection(include_str!("../../../samples/sokoban/microban_155.xsb")).unwrap();
        let mut strict = 0;
        for (i, level) in levels.iter().enumerate() {
            let (neighbours, walls, _) = board_tables(level);
            let starts: Vec<usize> = (0..walls.len()).filter(|&c| level.boxes[c]).collect();
            let order = packing_order(&neighbours, &walls, &level.goals, &level.boxes, level.player);
            let Some(order) = order else { continue };
            let mut sorted = order.clone();
            sorted.sort_unstable();
            assert_eq!(sorted, (0..walls.len()).filter(|&c| level.goals[c]).map(|c| c as u16).collect::<Vec<_>>(), "level {}", i + 1);
            if packing_order_to(&neighbours, &walls, &level.goals, Some(&starts), false, level.player).is_some() {
                strict += 1;
                assert!(fillable_in_turn(&neighbours, &walls, &starts, &order), "level {}: {order:?}", i + 1);
            }
        }
        assert!(strict >= 120, "{strict} levels with an order of reachable goals");
        let level = &levels[18];
        let (neighbours, walls, _) = board_tables(level);
        let starts: Vec<usize> = (0..walls.len()).filter(|&c| level.boxes[c]).collect();
        let anywhere = packing_order_to(&neighbours, &walls, &level.goals, None, false, level.player).expect("an order exists");
        assert!(!fillable_in_turn(&neighbours, &walls, &starts, &anywhere), "{anywhere:?}");
    }

    #[test]
    fn a_box_is_parked_anywhere_when_no_order_of_reachable_goals_exists() {
        // Microban 43: no box can be taken out of the full goals to a cell a box can reach;
        // the order still covers every goal, one box at least going out to any other cell.
        let levels = parse_collection(include_str!("../../../samples/sokoban/microban_155.xsb")).unwrap();
        let level = &levels[42];
        let (neighbours, walls, _) = board_tables(level);
        let starts: Vec<usize> = (0..walls.len()).filter(|&c| level.boxes[c]).collect();
        assert_eq!(packing_order_to(&neighbours, &walls, &level.goals, Some(&starts), false, level.player), None);
        let order = packing_order(&neighbours, &walls, &level.goals, &level.boxes, level.player).expect("an order exists");
        assert_eq!(order.len(), level.goals.iter().filter(|&&g| g).count());
        assert!(!fillable_in_turn(&neighbours, &walls, &starts, &order), "{order:?}");
    }

    #[test]
    fn no_order_when_the_boxes_cannot_be_taken_out() {
        // The player is shut in behind the goal: in the solved position, pulling the box off it
        // needs a cell behind the player, and there is a wall.
        let level = parse_collection("#####\n#@.$#\n#####\n").unwrap().remove(0);
        let (neighbours, walls, _) = board_tables(&level);
        assert_eq!(packing_order(&neighbours, &walls, &level.goals, &level.boxes, level.player), None);
        let room = parse_collection("#######\n#.   .#\n#  @  #\n#$   $#\n#######\n").unwrap().remove(0);
        let (neighbours, walls, _) = board_tables(&room);
        assert_eq!(packing_order(&neighbours, &walls, &room.goals, &room.boxes, room.player).map(|o| o.len()), Some(2));
    }
}
