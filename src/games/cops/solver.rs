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
//! the thief escapes for ever.
//!
//! Layout: states are indexed by road-number triples `(p1 * r + p2) * r + t` in flat arrays. Only
//! the thief-to-move states keep a value, one byte each (the same byte holds the count of
//! unresolved successors while the analysis runs); a police-to-move state needs only one "seen"
//! bit during the analysis, since its value is the layer that first reaches it, and afterwards it
//! is worked out from the thief states one or two moves on (at most 4 x 4 look-ups). The two
//! policemen are not interchangeable (policeman 1 always moves first), so no symmetry halves the
//! table. Memory: `roads^3 * 1.25` bytes plus the queues of the layer being solved.

use super::map::{Map, Square};
use super::rules::{Piece, Positions};

use thiserror::Error;

#[derive(Debug, Error, PartialEq, Eq)]
pub enum SolveError {
    #[error("the map has {roads} road squares: {states} states to solve, more than the limit of {limit} (it would need about {mib} MiB of memory); use a smaller map")]
    TooLarge { roads: usize, states: u64, limit: u64, mib: u64 },
    #[error("the map has {roads} road squares: {roads}^3 positions do not fit this machine's address space")]
    TooManyPositions { roads: usize },
    #[error("a capture takes more than {most} moves from some state of this map, more than the solver can store")]
    TooDeep { most: u32 },
}

/// Default most states [`solve`] takes on (about 170 MiB of tables).
pub const DEFAULT_MAX_STATES: u64 = 400_000_000;

/// Bytes of memory per state (there are three states per position triple): one byte per thief
/// state and one bit per police state, without the queues (8 bytes per state of the layers being
/// worked on: measured at about the table's size again on board1, 1% of it on a 64x64 map).
const BYTES_PER_STATE: f64 = (1.0 + 2.0 / 8.0) / 3.0;

/// Memory [`solve`] needs for a map of `roads` road squares, in bytes (tables only).
pub fn table_bytes(roads: usize) -> u64 {
    (roads as u64).pow(3) * 5 / 4
}

/// Cell contents of the thief table: 0 for impossible triples (two pieces on one square),
/// `1..=MAX_COUNT` for a thief state not yet resolved (successors left), `RESOLVED + code` once
/// resolved, and the type's largest value for a thief who is never caught.
const MAX_COUNT: u32 = 4;
const RESOLVED: u32 = MAX_COUNT + 1;

/// A cell of the thief table: one byte, or two on a map whose captures take too long for one.
trait Cell: Copy + Send + Sync + 'static {
    const NEVER: u32;
    fn get(self) -> u32;
    fn new(v: u32) -> Self;
}

impl Cell for u8 {
    const NEVER: u32 = u8::MAX as u32;
    fn get(self) -> u32 {
        self as u32
    }
    fn new(v: u32) -> Self {
        v as u8
    }
}

impl Cell for u16 {
    const NEVER: u32 = u16::MAX as u32;
    fn get(self) -> u32 {
        self as u32
    }
    fn new(v: u32) -> Self {
        v as u16
    }
}

/// A thief state's value is 3k + 2 or 3k + 3 (the thief moves, then a policeman captures on the
/// first or second move of a police turn), so `v - 2 - (v - 2) / 3` numbers them without gaps and
/// one byte holds values up to 375.
fn encode_thief_value(v: u32) -> u32 {
    debug_assert!(v >= 2 && v % 3 != 1, "thief value {v}");
    (v - 2) - (v - 2) / 3
}

fn decode_thief_value(code: u32) -> u32 {
    3 * (code / 2) + 2 + (code & 1)
}

/// The thief table in whichever width the map needed.
enum Table {
    Narrow(Vec<u8>),
    Wide(Vec<u16>),
}

/// The values of every state of one map.
pub struct Solution {
    /// Road number of each square (`u32::MAX` on buildings).
    road_index: Vec<u32>,
    roads: usize,
    /// Road neighbours by road number (`degree` of them are used).
    neighbours: Vec<[u32; 4]>,
    degree: Vec<u8>,
    /// One cell per (p1, p2, t) with the thief to move; see [`Cell`].
    thief: Table,
}

/// The number of states [`solve`] would take on for `map`, or why it refuses the map.
pub fn check_size(map: &Map, max_states: u64) -> Result<u64, SolveError> {
    let roads = map.road_count();
    let states = (roads as u64).pow(3) * 3;
    if states > max_states {
        let mib = (states as f64 * BYTES_PER_STATE / 1048576.0).ceil() as u64;
        return Err(SolveError::TooLarge { roads, states, limit: max_states, mib });
    }
    if usize::try_from(states).is_err() {
        return Err(SolveError::TooManyPositions { roads });
    }
    Ok(states)
}

/// The road graph in road numbers.
/// The states one step back from `states` by the policeman whose road index is multiplied by
/// `stride` in a state's index (policeman 1: `r * r`, policeman 2: `r`): he stepped here from a
/// road that neither the other policeman nor the thief holds, or stayed because the other
/// policeman held his only road. Each state is queued once (`seen`).
fn police_steps_back(states: &[u64], graph: &Graph, r: usize, stride: usize, seen: &mut Bits, next: &mut Vec<u64>) {
    for &i in states {
        let i = i as usize;
        let t = i % r;
        let (p1, p2) = ((i / r) / r, (i / r) % r);
        let (mover, other) = if stride == r { (p2, p1) } else { (p1, p2) };
        let base = i - mover * stride;
        let mut stayed = true;
        for &from in graph.of(mover) {
            let from = from as usize;
            if from != other {
                stayed = false;
                if from != t && seen.insert(base + from * stride) {
                    next.push((base + from * stride) as u64);
                }
            }
        }
        if stayed && seen.insert(i) {
            next.push(i as u64);
        }
    }
}

struct Graph {
    r: usize,
    neighbours: Vec<[u32; 4]>,
    degree: Vec<u8>,
}

impl Graph {
    fn of(&self, road: usize) -> &[u32] {
        &self.neighbours[road][..self.degree[road] as usize]
    }
}

/// The roads numbered in square order: each square's road number (`u32::MAX` for a building),
/// and each road's square.
fn number_roads(map: &Map) -> (Vec<u32>, Vec<Square>) {
    let mut road_index = vec![u32::MAX; map.road.len()];
    let mut squares = Vec::new();
    for square in 0..map.road.len() {
        if map.road[square] {
            road_index[square] = squares.len() as u32;
            squares.push(square as Square);
        }
    }
    (road_index, squares)
}

/// Solves a map; refuses maps with more than `max_states` states.
pub fn solve(map: &Map, max_states: u64) -> Result<Solution, SolveError> {
    check_size(map, max_states)?;
    let (road_index, squares) = number_roads(map);
    let r = squares.len();
    let mut neighbours = vec![[0u32; 4]; r];
    let mut degree = vec![0u8; r];
    for (i, &s) in squares.iter().enumerate() {
        for n in map.road_neighbours(s) {
            neighbours[i][degree[i] as usize] = road_index[n as usize];
            degree[i] += 1;
        }
    }
    let graph = Graph { r, neighbours, degree };
    // One byte per thief state holds every value on ordinary maps; a map whose longest capture
    // does not fit is solved again with two.
    let thief = match analyse::<u8>(&graph) {
        Some(table) => Table::Narrow(table),
        None => Table::Wide(analyse::<u16>(&graph).ok_or(SolveError::TooDeep { most: decode_thief_value(u16::MAX as u32 - 1 - RESOLVED) })?),
    };
    Ok(Solution { road_index, roads: r, neighbours: graph.neighbours, degree: graph.degree, thief })
}

/// A set of position triples, one bit each.
struct Bits(Vec<u64>);

impl Bits {
    fn new(n: usize) -> Bits {
        Bits(vec![0; n.div_ceil(64)])
    }

    /// Sets bit `i`; true if it was clear.
    #[inline]
    fn insert(&mut self, i: usize) -> bool {
        let word = &mut self.0[i / 64];
        let bit = 1u64 << (i % 64);
        let fresh = *word & bit == 0;
        *word |= bit;
        fresh
    }
}

/// The retrograde analysis proper: the thief table, or `None` if some value does not fit `C`.
fn analyse<C: Cell>(graph: &Graph) -> Option<Vec<C>> {
    let r = graph.r;
    let n = r * r * r;
    let mut thief = vec![C::new(0); n];
    // Unresolved successors of each thief state: its steps, or 1 when it must stay. A row (p1, p2)
    // starts as every road's degree (1 for a road with no road beside it), less one beside each
    // policeman: a copy and a few fixes rather than a look at every neighbour of every square.
    let degrees: Vec<C> = (0..r).map(|t| C::new(graph.of(t).len().max(1) as u32)).collect();
    for p1 in 0..r {
        for p2 in (0..r).filter(|&p2| p2 != p1) {
            let row = &mut thief[(p1 * r + p2) * r..][..r];
            row.copy_from_slice(&degrees);
            for &n in graph.of(p1).iter().chain(graph.of(p2)) {
                row[n as usize] = C::new(row[n as usize].get() - 1);
            }
            // A thief with no step stays: one successor (only a square beside a policeman can
            // have lost its last step here).
            for &n in graph.of(p1).iter().chain(graph.of(p2)) {
                row[n as usize] = C::new(row[n as usize].get().max(1));
            }
            row[p1] = C::new(0);
            row[p2] = C::new(0);
        }
    }
    let mut seen1 = Bits::new(n);
    let mut seen2 = Bits::new(n);
    // Layer 1: a policeman next to the thief captures in one move.
    let (mut police1, mut police2): (Vec<u64>, Vec<u64>) = (Vec::new(), Vec::new());
    for a in 0..r {
        for &t in graph.of(a) {
            let t = t as usize;
            for b in (0..r).filter(|&b| b != a && b != t) {
                let i = (a * r + b) * r + t;
                seen1.insert(i);
                police1.push(i as u64);
                let i = (b * r + a) * r + t;
                seen2.insert(i);
                police2.push(i as u64);
            }
        }
    }
    let mut thieves: Vec<u64> = Vec::new();
    let mut depth: u32 = 1;
    let most = C::NEVER - 1 - RESOLVED;
    while !(police1.is_empty() && police2.is_empty() && thieves.is_empty()) {
        let (mut next1, mut next2, mut next_thieves) = (Vec::new(), Vec::new(), Vec::new());
        // Policeman 1 to move, resolved at `depth`: the thief stepped here (or stayed, boxed in).
        for &i in &police1 {
            let i = i as usize;
            let t = i % r;
            let (p1, p2) = ((i / r) / r, (i / r) % r);
            let row = i - t;
            let mut stayed = true;
            for &from in graph.of(t) {
                let from = from as usize;
                if from != p1 && from != p2 {
                    stayed = false;
                    resolve_thief(&mut thief, row + from, depth, most, &mut next_thieves)?;
                }
            }
            if stayed {
                resolve_thief(&mut thief, i, depth, most, &mut next_thieves)?;
            }
        }
        // Policeman 2 to move: policeman 1 stepped here from a square the others do not hold, or
        // stayed because policeman 2 held his only road (he may step onto the thief).
        let rr = r * r;
        police_steps_back(&police2, &graph, r, rr, &mut seen1, &mut next1);
        // The thief to move: policeman 2 stepped here, or stayed (only policeman 1 blocks him).
        police_steps_back(&thieves, &graph, r, r, &mut seen2, &mut next2);
        police1 = next1;
        police2 = next2;
        thieves = next_thieves;
        depth += 1;
    }
    // Thief states left unresolved: he is never caught.
    for cell in thief.iter_mut() {
        if (1..RESOLVED).contains(&cell.get()) {
            *cell = C::new(C::NEVER);
        }
    }
    Some(thief)
}

/// One successor of thief state `i` resolved at `depth`; the last one resolves it at `depth + 1`.
#[inline]
fn resolve_thief<C: Cell>(thief: &mut [C], i: usize, depth: u32, most: u32, next: &mut Vec<u64>) -> Option<()> {
    let count = thief[i].get();
    debug_assert!((1..RESOLVED).contains(&count), "thief state {i} counted down past its successors");
    if count > 1 {
        thief[i] = C::new(count - 1);
        return Some(());
    }
    let code = encode_thief_value(depth + 1);
    if code > most {
        return None;
    }
    thief[i] = C::new(RESOLVED + code);
    next.push(i as u64);
    Some(())
}

impl Solution {
    fn road(&self, s: Square) -> usize {
        self.road_index[s as usize] as usize
    }

    fn steps(&self, road: usize) -> &[u32] {
        &self.neighbours[road][..self.degree[road] as usize]
    }

    /// Value of the thief-to-move state (road numbers), `None` if never caught.
    fn thief_value(&self, p1: usize, p2: usize, t: usize) -> Option<u32> {
        let i = (p1 * self.roads + p2) * self.roads + t;
        let cell = match &self.thief {
            Table::Narrow(v) => Cell::get(v[i]),
            Table::Wide(v) => Cell::get(v[i]),
        };
        let never = match &self.thief {
            Table::Narrow(_) => <u8 as Cell>::NEVER,
            Table::Wide(_) => <u16 as Cell>::NEVER,
        };
        (cell >= RESOLVED && cell != never).then(|| decode_thief_value(cell - RESOLVED))
    }

    /// Value of a policeman-to-move state: one move more than his best step (he may step onto
    /// the thief, which is the capture, and stays only when the other policeman holds every road).
    fn police_value(&self, mover: usize, pieces: [usize; 3]) -> Option<u32> {
        let (here, other, t) = (pieces[mover], pieces[1 - mover], pieces[2]);
        let after = |to: usize| -> Option<u32> {
            if to == t {
                return Some(0);
            }
            let mut next = pieces;
            next[mover] = to;
            if mover == 0 { self.police_value(1, next) } else { self.thief_value(next[0], next[1], next[2]) }
        };
        let steps = self.steps(here).iter().map(|&s| s as usize).filter(|&s| s != other);
        let mut moved = false;
        let mut best: Option<u32> = None;
        for to in steps {
            moved = true;
            if let Some(v) = after(to) {
                best = Some(best.map_or(v, |b| b.min(v)));
            }
        }
        if !moved {
            best = after(here);
        }
        best.map(|v| v + 1)
    }

    /// Moves to the capture under perfect play from `positions` with `to_move` to move; `None`
    /// when the thief is never caught. `Some(0)` for a position already captured.
    pub fn moves_to_capture(&self, positions: &Positions, to_move: Piece) -> Option<u32> {
        if positions.is_capture() {
            return Some(0);
        }
        if positions.police1 == positions.police2 {
            return None;
        }
        let pieces = [self.road(positions.police1), self.road(positions.police2), self.road(positions.thief)];
        match to_move {
            Piece::Police1 => self.police_value(0, pieces),
            Piece::Police2 => self.police_value(1, pieces),
            Piece::Thief => self.thief_value(pieces[0], pieces[1], pieces[2]),
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

    /// The analysis as first written (kept as the reference): every state (police ones too) in a
    /// `u16` table, values layer by layer. Returns the road numbering and the table.
    fn reference_values(map: &Map) -> (Vec<u32>, usize, Vec<u16>) {
        let (road_index, squares) = number_roads(map);
        let r = squares.len();
        let neighbours: Vec<Vec<usize>> =
            squares.iter().map(|&s| map.road_neighbours(s).map(|n| road_index[n as usize] as usize).collect()).collect();
        let index = |p1: usize, p2: usize, t: usize, turn: usize| ((p1 * r + p2) * r + t) * 3 + turn;
        let mut value = vec![0u16; r * r * r * 3];
        let mut unresolved = vec![0u8; r * r * r];
        let mut frontier = Vec::new();
        for p1 in 0..r {
            for p2 in (0..r).filter(|&p2| p2 != p1) {
                for t in (0..r).filter(|&t| t != p1 && t != p2) {
                    for (turn, police) in [(0, p1), (1, p2)] {
                        if neighbours[police].contains(&t) {
                            value[index(p1, p2, t, turn)] = 1;
                            frontier.push(index(p1, p2, t, turn));
                        }
                    }
                    unresolved[(p1 * r + p2) * r + t] = neighbours[t].iter().filter(|&&n| n != p1 && n != p2).count().max(1) as u8;
                }
            }
        }
        let mut depth = 1;
        while !frontier.is_empty() {
            let mut next = Vec::new();
            for &state in &frontier {
                let (turn, positions) = (state % 3, state / 3);
                let pieces = [positions / (r * r), (positions / r) % r, positions % r];
                let mover = (turn + 2) % 3;
                let others = [pieces[(mover + 1) % 3], pieces[(mover + 2) % 3]];
                let mut previous_states: Vec<[usize; 3]> = neighbours[pieces[mover]]
                    .iter()
                    .filter(|from| !others.contains(from))
                    .map(|&from| { let mut p = pieces; p[mover] = from; p })
                    .collect();
                let blocks = |n: &usize| if mover == 2 { others.contains(n) } else { *n == pieces[1 - mover] };
                if neighbours[pieces[mover]].iter().all(blocks) {
                    previous_states.push(pieces);
                }
                for p in previous_states {
                    let previous = index(p[0], p[1], p[2], mover);
                    if value[previous] != 0 {
                        continue;
                    }
                    if mover == 2 {
                        unresolved[previous / 3] -= 1;
                        if unresolved[previous / 3] > 0 {
                            continue;
                        }
                    }
                    value[previous] = depth + 1;
                    next.push(previous);
                }
            }
            frontier = next;
            depth += 1;
        }
        (road_index, r, value)
    }

    /// Every state of `map`: the solver's value equals the reference's.
    fn assert_same_as_reference(map: &Map, solution: &Solution) -> u32 {
        let (road_index, r, value) = reference_values(map);
        let mut longest = 0;
        for positions in all_positions(map) {
            let road = |s: Square| road_index[s as usize] as usize;
            for (turn, piece) in [Piece::Police1, Piece::Police2, Piece::Thief].into_iter().enumerate() {
                let expected = value[((road(positions.police1) * r + road(positions.police2)) * r + road(positions.thief)) * 3 + turn];
                let expected = (expected != 0).then_some(expected as u32);
                assert_eq!(solution.moves_to_capture(&positions, piece), expected, "{positions:?} {piece:?}");
                longest = longest.max(expected.unwrap_or(0));
            }
        }
        longest
    }

    #[test]
    fn gives_the_reference_values_on_random_maps() {
        let mut escapes = 0;
        for seed in 0..8 {
            let (side, buildings) = [(5, 0.2), (6, 0.3), (7, 0.4), (8, 0.45)][seed as usize % 4];
            let map = Map::random(side, side + 1, buildings, &mut ChaCha8Rng::seed_from_u64(100 + seed));
            let solution = solve(&map, DEFAULT_MAX_STATES).unwrap();
            assert!(matches!(solution.thief, Table::Narrow(_)));
            let longest = assert_same_as_reference(&map, &solution);
            assert!(longest > 3, "seed {seed}: the map needs more than one police turn somewhere");
            escapes += all_positions(&map).iter().filter(|p| solution.moves_to_capture(p, Piece::Thief).is_none()).count();
        }
        assert!(escapes > 0, "some random map has states where the thief escapes");
    }

    #[test]
    fn thief_values_number_without_gaps() {
        let values: Vec<u32> = (2..400).filter(|v| v % 3 != 1).collect();
        for (code, &v) in values.iter().enumerate() {
            assert_eq!(encode_thief_value(v), code as u32);
            assert_eq!(decode_thief_value(code as u32), v);
        }
    }

    #[test]
    fn captures_longer_than_a_byte_holds_take_the_wide_table() {
        // A snake of 143 road squares with the police at its head and the thief at its tail: one
        // byte holds thief values up to 375 moves, and cornering him here takes longer.
        let (width, height) = (15, 17);
        let mut rows = vec![vec![b'1'; width]; height];
        for (row, line) in rows.iter_mut().enumerate() {
            if row % 2 == 0 {
                line.fill(b'0');
            } else {
                line[if row % 4 == 1 { width - 1 } else { 0 }] = b'0';
            }
        }
        rows[0][0] = b'2';
        rows[0][1] = b'4';
        rows[height - 1][if (height - 1) % 4 == 0 { width - 1 } else { 0 }] = b'3';
        let text: String = rows.iter().map(|l| format!("{}\n", String::from_utf8_lossy(l))).collect();
        let map = Map::parse(&text).unwrap();
        let solution = solve(&map, DEFAULT_MAX_STATES).unwrap();
        assert!(matches!(solution.thief, Table::Wide(_)));
        let longest = assert_same_as_reference(&map, &solution);
        assert!(longest > 375, "{longest}");
    }
}
