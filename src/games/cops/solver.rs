//! The perfect player: an exact retrograde analysis of a map over every state (policeman 1,
//! policeman 2, thief, piece to move).
//!
//! The value of a state is the minimax number of single moves until the capture: the police
//! capture as fast as can be forced, the thief holds out as long as he can. Both modes share one
//! turn cycle (policeman 1, policeman 2, thief), so one analysis serves both; a mode only picks
//! the piece to move at the start. Under the 150-move limit the police win from a state after
//! `m` moves exactly when its value is at most `150 - m`, and playing by the unlimited values is
//! optimal under the limit too (the least number of moves the police can force is the same
//! number whatever budget is left).
//!
//! The analysis runs backwards from the captures, layer by layer (value 1, 2, ...): a police
//! state takes its value from the first successor resolved, a thief state from the last one
//! (a count of unresolved successors per thief state). States never reached are those where
//! the thief escapes for ever. Memory: two bytes per state plus one per thief state, with
//! `roads^3 * 3` states.

use super::map::{Map, Square};
use super::rules::{Piece, Positions};

use thiserror::Error;

#[derive(Debug, Error, PartialEq, Eq)]
pub enum SolveError {
    #[error("the map has {roads} road squares: {states} states to solve, more than the limit of {limit} (about {mib} MiB); use a smaller map")]
    TooLarge { roads: usize, states: u64, limit: u64, mib: u64 },
}

/// Default most states [`solve`] takes on (about 1 GiB of memory).
pub const DEFAULT_MAX_STATES: u64 = 400_000_000;

/// Bytes of memory per state (value) and per thief state (counter).
const BYTES_PER_STATE: f64 = 2.0 + 1.0 / 3.0;

/// The values of every state of one map.
pub struct Solution {
    /// Road number of each square (`u32::MAX` on buildings).
    road_index: Vec<u32>,
    roads: usize,
    /// Moves to capture by state; 0 where the thief is never caught (and for impossible states).
    value: Vec<u16>,
}

fn turn_number(piece: Piece) -> usize {
    match piece {
        Piece::Police1 => 0,
        Piece::Police2 => 1,
        Piece::Thief => 2,
    }
}

/// The number of states [`solve`] would take on for `map`, or why it refuses the map.
pub fn check_size(map: &Map, max_states: u64) -> Result<u64, SolveError> {
    let roads = map.road_count();
    let states = (roads as u64).pow(3) * 3;
    if states > max_states {
        let mib = (states as f64 * BYTES_PER_STATE / 1048576.0) as u64;
        return Err(SolveError::TooLarge { roads, states, limit: max_states, mib });
    }
    Ok(states)
}

/// Solves a map; refuses maps with more than `max_states` states.
pub fn solve(map: &Map, max_states: u64) -> Result<Solution, SolveError> {
    let states = check_size(map, max_states)?;
    let mut road_index = vec![u32::MAX; map.road.len()];
    let mut squares = Vec::new();
    for square in 0..map.road.len() {
        if map.road[square] {
            road_index[square] = squares.len() as u32;
            squares.push(square as Square);
        }
    }
    let roads = squares.len();
    // Neighbours by road number.
    let neighbours: Vec<Vec<u32>> =
        squares.iter().map(|&s| map.road_neighbours(s).map(|n| road_index[n as usize]).collect()).collect();
    let r = roads;
    let index = |p1: usize, p2: usize, t: usize, turn: usize| ((p1 * r + p2) * r + t) * 3 + turn;
    let mut value = vec![0u16; states as usize];
    let mut unresolved = vec![0u8; (roads as u64).pow(3) as usize];
    let mut frontier: Vec<u32> = Vec::new();
    for p1 in 0..r {
        for p2 in (0..r).filter(|&p2| p2 != p1) {
            for t in (0..r).filter(|&t| t != p1 && t != p2) {
                // A policeman next to the thief captures in one move.
                if neighbours[p1].contains(&(t as u32)) {
                    value[index(p1, p2, t, 0)] = 1;
                    frontier.push(index(p1, p2, t, 0) as u32);
                }
                if neighbours[p2].contains(&(t as u32)) {
                    value[index(p1, p2, t, 1)] = 1;
                    frontier.push(index(p1, p2, t, 1) as u32);
                }
                let thief_steps = neighbours[t].iter().filter(|&&n| n as usize != p1 && n as usize != p2).count();
                unresolved[(p1 * r + p2) * r + t] = thief_steps.max(1) as u8;
            }
        }
    }
    let mut depth: u16 = 1;
    while !frontier.is_empty() {
        assert!(depth < u16::MAX - 1, "more moves to capture than a u16 holds");
        let mut next = Vec::new();
        for &state in &frontier {
            let state = state as usize;
            let turn = state % 3;
            let positions = state / 3;
            let (t, p2, p1) = (positions % r, (positions / r) % r, positions / (r * r));
            let mut pieces = [p1, p2, t];
            // The piece that moved into this state.
            let mover = (turn + 2) % 3;
            let here = pieces[mover];
            let others = [pieces[(mover + 1) % 3], pieces[(mover + 2) % 3]];
            let mut reached = |pieces: [usize; 3], value: &mut Vec<u16>, next: &mut Vec<u32>| {
                let previous = index(pieces[0], pieces[1], pieces[2], mover);
                if value[previous] != 0 {
                    return;
                }
                if mover == 2 {
                    let count = &mut unresolved[previous / 3];
                    *count -= 1;
                    if *count > 0 {
                        return;
                    }
                }
                value[previous] = depth + 1;
                next.push(previous as u32);
            };
            // Steps back: the mover came from a neighbour the other two pieces do not hold.
            for &from in &neighbours[here] {
                let from = from as usize;
                if !others.contains(&from) {
                    pieces[mover] = from;
                    reached(pieces, &mut value, &mut next);
                    pieces[mover] = here;
                }
            }
            // Or it had no step at all and stayed: every neighbour held by a piece that blocks it
            // (both policemen block the thief; only the other policeman blocks a policeman, who
            // may step onto the thief).
            let blocks = |n: usize| if mover == 2 { others.contains(&n) } else { n == pieces[1 - mover] };
            if neighbours[here].iter().all(|&n| blocks(n as usize)) {
                reached(pieces, &mut value, &mut next);
            }
        }
        frontier = next;
        depth += 1;
    }
    Ok(Solution { road_index, roads, value })
}

impl Solution {
    fn state(&self, positions: &Positions, to_move: Piece) -> usize {
        let road = |s: Square| self.road_index[s as usize] as usize;
        ((road(positions.police1) * self.roads + road(positions.police2)) * self.roads + road(positions.thief)) * 3
            + turn_number(to_move)
    }

    /// Moves to the capture under perfect play from `positions` with `to_move` to move; `None`
    /// when the thief is never caught. `Some(0)` for a position already captured.
    pub fn moves_to_capture(&self, positions: &Positions, to_move: Piece) -> Option<u32> {
        if positions.is_capture() {
            return Some(0);
        }
        match self.value[self.state(positions, to_move)] {
            0 => None,
            v => Some(v as u32),
        }
    }

    /// The perfect move of `piece`: the police take the step with the fewest moves left to the
    /// capture, the thief the step with the most (never caught is best). `None`: no step, stay.
    pub fn best_move(&self, map: &Map, positions: &Positions, piece: Piece) -> Option<Square> {
        let after = |step: Square| {
            let mut next = *positions;
            next.set(piece, step);
            // Never caught counts as the longest.
            self.moves_to_capture(&next, piece.next()).unwrap_or(u32::MAX)
        };
        let steps = positions.legal_steps(map, piece);
        match piece {
            Piece::Thief => steps.into_iter().rev().max_by_key(|&s| after(s)),
            _ => steps.into_iter().min_by_key(|&s| after(s)),
        }
    }
}

#[cfg(test)]
mod tests {
    use std::collections::HashMap;

    use rand::SeedableRng;
    use rand_chacha::ChaCha8Rng;

    use super::*;
    use crate::games::cops::rules::{Game, Mode, Team};
    use crate::games::cops::{classic, MOVE_LIMIT};

    /// Brute-force minimax from the rules alone (memoised by budget): the fewest moves within
    /// which the police force a capture, `None` if not within `budget`.
    fn brute(map: &Map, positions: Positions, piece: Piece, budget: u32, memo: &mut HashMap<(Positions, Piece, u32), Option<u32>>) -> Option<u32> {
        if budget == 0 {
            return None;
        }
        if let Some(known) = memo.get(&(positions, piece, budget)) {
            return *known;
        }
        let steps = positions.legal_steps(map, piece);
        let successors: Vec<Positions> = if steps.is_empty() {
            vec![positions]
        } else {
            steps.iter().map(|&s| { let mut p = positions; p.set(piece, s); p }).collect()
        };
        let mut results = successors.into_iter().map(|next| {
            if next.is_capture() { Some(1) } else { brute(map, next, piece.next(), budget - 1, memo).map(|v| v + 1) }
        });
        let answer = if piece == Piece::Thief {
            results.try_fold(0, |worst, r| r.map(|v| worst.max(v)))
        } else {
            results.flatten().min()
        };
        memo.insert((positions, piece, budget), answer);
        answer
    }

    fn all_positions(map: &Map) -> Vec<Positions> {
        let roads: Vec<Square> = (0..map.road.len() as Square).filter(|&s| map.is_road(s)).collect();
        let mut all = Vec::new();
        for &police1 in &roads {
            for &police2 in &roads {
                for &thief in &roads {
                    if police1 != police2 && police1 != thief && police2 != thief {
                        all.push(Positions { police1, police2, thief });
                    }
                }
            }
        }
        all
    }

    #[test]
    fn agrees_with_brute_force_minimax_on_small_maps() {
        const BUDGET: u32 = 16;
        // A ring, a map with dead ends, and one with a road the police cannot reach.
        for text in ["2003\n0110\n4000\n", "20100\n00003\n10140\n", "2010\n4013\n0010\n"] {
            let map = Map::parse(text).unwrap();
            let solution = solve(&map, DEFAULT_MAX_STATES).unwrap();
            let mut memo = HashMap::new();
            let (mut caught, mut escaped) = (0, 0);
            for positions in all_positions(&map) {
                for piece in [Piece::Police1, Piece::Police2, Piece::Thief] {
                    let solved = solution.moves_to_capture(&positions, piece);
                    let expected = brute(&map, positions, piece, BUDGET, &mut memo);
                    match solved {
                        Some(v) if v <= BUDGET => assert_eq!(Some(v), expected, "{text} {positions:?} {piece:?}"),
                        _ => assert_eq!(expected, None, "{text} {positions:?} {piece:?}: solver says {solved:?}"),
                    }
                    if expected.is_some() { caught += 1 } else { escaped += 1 }
                }
            }
            assert!(caught > 0, "{text}: some states end in a capture");
            if text.starts_with("2010") {
                assert!(escaped > 0, "{text}: the thief escapes from some states");
            }
        }
    }

    #[test]
    fn refuses_maps_too_large_for_the_memory_limit() {
        let map = Map::parse("2003\n0110\n4000\n").unwrap();
        assert!(matches!(solve(&map, 100), Err(SolveError::TooLarge { roads: 10, states: 3000, .. })));
    }

    /// Plays a game of `mode` with one side perfect and the other classic (or perfect).
    fn play(map: &Map, solution: &Solution, mode: Mode, perfect: Team, both_perfect: bool, seed: u64) -> Game {
        let mut rng = ChaCha8Rng::seed_from_u64(seed);
        let mut game = Game::new(map, mode);
        while game.outcome.is_none() {
            let piece = game.to_move;
            let step = if both_perfect || piece.team() == perfect {
                solution.best_move(map, &game.positions, piece)
            } else {
                classic::choose_move(map, &game.positions, piece, &mut rng)
            };
            game.play(map, step).unwrap();
        }
        game
    }

    #[test]
    fn perfect_players_keep_to_the_solution() {
        let mut predicted_captures = 0;
        for seed in 0..6 {
            let map = Map::random(9, 9, 0.3, &mut ChaCha8Rng::seed_from_u64(seed));
            let solution = solve(&map, DEFAULT_MAX_STATES).unwrap();
            for mode in [Mode::Police, Mode::Thief] {
                let predicted = solution.moves_to_capture(&map.start, mode.first_piece()).filter(|&m| m <= MOVE_LIMIT);
                // Perfect against perfect: exactly the predicted game.
                let exact = play(&map, &solution, mode, Team::Police, true, seed).outcome.unwrap();
                assert_eq!(exact.winner == Team::Police, predicted.is_some(), "seed {seed} {mode:?}");
                if let Some(moves) = predicted {
                    assert_eq!(exact.moves, moves);
                    predicted_captures += 1;
                }
                for game_seed in 0..5 {
                    // Perfect police never lose where the solution says they win, nor take longer.
                    let police = play(&map, &solution, mode, Team::Police, false, game_seed).outcome.unwrap();
                    if let Some(moves) = predicted {
                        assert_eq!(police.winner, Team::Police, "seed {seed} {mode:?}");
                        assert!(police.moves <= moves);
                    }
                    // The perfect thief is never caught earlier than the solution says.
                    let thief = play(&map, &solution, mode, Team::Thief, false, game_seed).outcome.unwrap();
                    match predicted {
                        Some(moves) => assert!(thief.winner == Team::Thief || thief.moves >= moves),
                        None => assert_eq!(thief.winner, Team::Thief, "seed {seed} {mode:?}"),
                    }
                }
            }
        }
        assert!(predicted_captures >= 4, "the random maps must exercise police wins: {predicted_captures}");
    }
}
