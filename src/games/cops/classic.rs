//! The original program's computer players, both built on breadth-first search over the roads.
//!
//! - Thief: find the nearer policeman (BFS distance; policeman 1 on a tie). Rank the thief's
//!   first steps by the length of the shortest path from that step to him (not back through the
//!   thief's own square) and take the step whose path reaches him latest. If only one first step
//!   leads to him and there are other steps, choose randomly among the others; if no step leads
//!   to him, move randomly.
//! - Policeman: the first step of a shortest path to the thief (the other policeman blocks);
//!   but when both policemen stand in one row or column with only road between them, a temporary
//!   wall goes on the square next to the mover in the direction of the other policeman, so the
//!   two do not chase down the same street.
//!
//! Ties between equally good steps go to the first in the order up, down, left, right.

use std::collections::VecDeque;

use rand::Rng;

use super::map::{Map, Square};
use super::rules::{Piece, Positions};

/// Road distances from `from` to every square, not entering `blocked` squares (`u32::MAX`:
/// unreachable).
fn distances(map: &Map, from: Square, blocked: &[Square]) -> Vec<u32> {
    let mut distance = vec![u32::MAX; map.road.len()];
    distance[from as usize] = 0;
    let mut queue = VecDeque::from([from]);
    while let Some(square) = queue.pop_front() {
        for next in map.road_neighbours(square) {
            if distance[next as usize] == u32::MAX && !blocked.contains(&next) {
                distance[next as usize] = distance[square as usize] + 1;
                queue.push_back(next);
            }
        }
    }
    distance
}

/// The original program's move for `piece`: `None` when it has no legal step and stays.
pub fn choose_move(map: &Map, positions: &Positions, piece: Piece, rng: &mut impl Rng) -> Option<Square> {
    let steps = positions.legal_steps(map, piece);
    if steps.is_empty() {
        return None;
    }
    Some(match piece {
        Piece::Thief => thief_move(map, positions, &steps, rng),
        _ => police_move(map, positions, piece, &steps, rng),
    })
}

fn thief_move(map: &Map, positions: &Positions, steps: &[Square], rng: &mut impl Rng) -> Square {
    let from_thief = distances(map, positions.thief, &[]);
    let (d1, d2) = (from_thief[positions.police1 as usize], from_thief[positions.police2 as usize]);
    let nearer = if d2 < d1 { positions.police2 } else { positions.police1 };
    // Paths from the policeman back to each step, not through the thief's square.
    let from_policeman = distances(map, nearer, &[positions.thief]);
    let leading: Vec<(Square, u32)> =
        steps.iter().map(|&s| (s, from_policeman[s as usize])).filter(|(_, d)| *d != u32::MAX).collect();
    match leading.len() {
        0 => steps[rng.gen_range(0..steps.len())],
        1 if steps.len() > 1 => {
            let others: Vec<Square> = steps.iter().copied().filter(|s| *s != leading[0].0).collect();
            others[rng.gen_range(0..others.len())]
        }
        _ => {
            let latest = leading.iter().map(|(_, d)| *d).max().expect("not empty");
            leading.iter().find(|(_, d)| *d == latest).expect("the maximum is there").0
        }
    }
}

fn police_move(map: &Map, positions: &Positions, piece: Piece, steps: &[Square], rng: &mut impl Rng) -> Square {
    let mover = positions.of(piece);
    let other = positions.of(if piece == Piece::Police1 { Piece::Police2 } else { Piece::Police1 });
    let mut blocked = vec![other];
    if let Some(wall) = wall_towards_partner(map, mover, other, positions.thief) {
        blocked.push(wall);
    }
    let from_thief = distances(map, positions.thief, &blocked);
    let best = steps.iter().copied().filter(|s| !blocked.contains(s) || *s == positions.thief).min_by_key(|s| from_thief[*s as usize]);
    match best {
        Some(step) if from_thief[step as usize] != u32::MAX => step,
        // No path to the thief (walled off): a random legal step.
        _ => steps[rng.gen_range(0..steps.len())],
    }
}

/// The temporary wall: when the two policemen share a row or column with only road between
/// them (no building, no thief), the square next to `mover` towards `other`.
fn wall_towards_partner(map: &Map, mover: Square, other: Square, thief: Square) -> Option<Square> {
    let (mr, mc) = map.row_column(mover);
    let (or, oc) = map.row_column(other);
    if mr != or && mc != oc {
        return None;
    }
    let (dr, dc) = ((or as isize - mr as isize).signum(), (oc as isize - mc as isize).signum());
    let at = |k: isize| map.square((mr as isize + dr * k) as usize, (mc as isize + dc * k) as usize);
    let gap = (or as isize - mr as isize).abs().max((oc as isize - mc as isize).abs());
    let clear = (1..gap).map(at).all(|s| map.is_road(s) && s != thief);
    clear.then(|| at(1))
}

#[cfg(test)]
mod tests {
    use rand::SeedableRng;
    use rand_chacha::ChaCha8Rng;

    use super::*;

    #[test]
    fn policeman_takes_a_shortest_path_to_the_thief() {
        // Policeman 1 at the top left, thief at the bottom right: down or right are both
        // shortest; down comes first.
        let map = Map::parse("2000\n0000\n0003\n0400\n").unwrap();
        let mut rng = ChaCha8Rng::seed_from_u64(1);
        assert_eq!(choose_move(&map, &map.start, Piece::Police1, &mut rng), Some(map.square(1, 0)));
        // Policeman 1 steps straight onto an adjacent thief.
        let map = Map::parse("23\n40\n").unwrap();
        assert_eq!(choose_move(&map, &map.start, Piece::Police1, &mut rng), Some(1));
    }

    #[test]
    fn two_policemen_in_one_street_do_not_chase_down_it_together() {
        // Both policemen in row 0 with road between them; the thief below at the right end.
        // Without the wall policeman 1 would go right along the street (as short as down);
        // with it he must go down.
        let map = Map::parse("20040\n00000\n00003\n").unwrap();
        let mut rng = ChaCha8Rng::seed_from_u64(1);
        assert_eq!(wall_towards_partner(&map, 0, 3, map.start.thief), Some(1));
        assert_eq!(choose_move(&map, &map.start, Piece::Police1, &mut rng), Some(map.square(1, 0)));
        // A building between them: no wall.
        let map = Map::parse("20140\n00000\n00003\n").unwrap();
        assert_eq!(wall_towards_partner(&map, 0, 3, map.start.thief), None);
        // The thief between them: no wall either.
        let map = Map::parse("23040\n00000\n").unwrap();
        assert_eq!(wall_towards_partner(&map, 0, 3, map.start.thief), None);
    }

    #[test]
    fn thief_runs_to_the_step_that_keeps_him_farthest_away() {
        // A corridor: policeman 1 on the left, the thief in the middle; stepping right keeps
        // him farthest (policeman 2 is far off behind a wall).
        let map = Map::parse("2030\n1111\n4000\n").unwrap();
        let mut rng = ChaCha8Rng::seed_from_u64(1);
        assert_eq!(choose_move(&map, &map.start, Piece::Thief, &mut rng), Some(map.square(0, 3)));
    }

    #[test]
    fn thief_with_one_step_towards_the_policeman_takes_a_random_other_one() {
        // Thief at the centre of a cross; policeman 1 reachable only through the left arm, the
        // other three arms are dead ends. Every seed picks one of the three, and all three occur.
        let map = Map::parse("11011\n11011\n20300\n11011\n41011\n").unwrap();
        let left = map.square(2, 1);
        let mut seen = std::collections::HashSet::new();
        for seed in 0..40 {
            let mut rng = ChaCha8Rng::seed_from_u64(seed);
            let step = choose_move(&map, &map.start, Piece::Thief, &mut rng).unwrap();
            assert_ne!(step, left);
            seen.insert(step);
        }
        assert_eq!(seen.len(), 3);
        // The same seed gives the same choice.
        let pick = |seed| choose_move(&map, &map.start, Piece::Thief, &mut ChaCha8Rng::seed_from_u64(seed));
        assert_eq!(pick(7), pick(7));
    }
}
