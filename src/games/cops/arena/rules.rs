//! The moving-walls arena's rules: the board, its gates and walls, one tick of the clock, and
//! the capture and escape checks. Pure: randomness comes from the RNG passed in.
//!
//! The lecture's rules, and how each ambiguity is decided here (each has a test below):
//! - Squares are `[row, column]` of an n x n board; a player moves up, down, left, right or stays.
//!   A move off the board is not performed (the same as staying).
//! - **Gates** lie on the board's edge, made of unit *segments*: the edge has 4n of them,
//!   numbered clockwise from the top-left corner (top edge left to right, right edge top to
//!   bottom, bottom edge right to left, left edge bottom to top). A gate of width w covers w
//!   consecutive segments clockwise from its `start`; its *squares* are the board squares
//!   behind those segments. Around a corner two segments belong to the same corner square, which
//!   is the lecture's corner rule: a width-2 gate in a corner lets one out through one square only.
//! - Each tick a gate first reverses its direction with P(reverse), then moves one segment in its
//!   direction with P(move). Gates are transparent to each other (they may overlap) and are not
//!   stopped by anything: a gate may slide under a standing player.
//! - **Walls** are 1 x L, horizontal or vertical for the whole game, each heading in one of the
//!   four directions. Each tick a wall first turns, with P(turn), to one of the other three
//!   directions (uniformly), then steps one square with P(move). A step that would leave the board
//!   is a bounce: the wall reverses and steps the other way in the same tick (if that is blocked
//!   too, it stays). Walls are transparent to each other (they may overlap). A wall step that
//!   would cover a player's old square (where he stands before the players move) is abandoned:
//!   the wall stays, keeping its direction. Walls and gates do not interact.
//! - Walls and gates move first; then all players move at once from their old squares. A move
//!   into a wall square is not performed; a policeman's move into a gate square is not performed
//!   (policemen may not enter gates, but one may stand in a gate that slid under him, and leave).
//!   Policemen may share a square (the lecture forbids it nowhere, and simultaneous moves give no
//!   fair way to settle who gets it).
//! - After the players move, at tick t: if the thief's square equals any policeman's, he is
//!   caught at t; otherwise, if his square is a gate square, he escapes at t (so a gate sliding
//!   under a standing thief lets him out). The capture check comes first, as in the lecture, so
//!   a thief stepping onto a gate square where a policeman stands is caught. A thief and a
//!   policeman who swap squares in one tick are not a capture: positions are compared only
//!   after the moves, as the lecture states the rule.
//! - After T ticks without either, the thief has survived.

use rand::Rng;
use serde::{Deserialize, Serialize};

use super::params::{Ending, Params};

/// A square: `[row, column]`, both from 0.
pub type Pos = [u16; 2];

/// A player's move in one tick.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub enum Move {
    #[serde(rename = "U")]
    Up,
    #[serde(rename = "D")]
    Down,
    #[serde(rename = "L")]
    Left,
    #[serde(rename = "R")]
    Right,
    #[serde(rename = "S")]
    Stay,
}

impl Move {
    pub const ALL: [Move; 5] = [Move::Up, Move::Down, Move::Left, Move::Right, Move::Stay];
    pub const STEPS: [Move; 4] = [Move::Up, Move::Down, Move::Left, Move::Right];

    /// The square this move leads to from `from`, or `None` off an n x n board.
    pub fn apply(self, from: Pos, n: u16) -> Option<Pos> {
        let [r, c] = from;
        match self {
            Move::Up => r.checked_sub(1).map(|r| [r, c]),
            Move::Down => (r + 1 < n).then_some([r + 1, c]),
            Move::Left => c.checked_sub(1).map(|c| [r, c]),
            Move::Right => (c + 1 < n).then_some([r, c + 1]),
            Move::Stay => Some(from),
        }
    }

    pub fn reverse(self) -> Move {
        match self {
            Move::Up => Move::Down,
            Move::Down => Move::Up,
            Move::Left => Move::Right,
            Move::Right => Move::Left,
            Move::Stay => Move::Stay,
        }
    }

    /// The move that leads from `from` to the neighbouring (or same) square `to`.
    pub fn between(from: Pos, to: Pos) -> Option<Move> {
        Move::ALL.into_iter().find(|m| m.apply(from, u16::MAX) == Some(to))
    }

    pub fn letter(self) -> char {
        match self {
            Move::Up => 'U',
            Move::Down => 'D',
            Move::Left => 'L',
            Move::Right => 'R',
            Move::Stay => 'S',
        }
    }
}

/// A gate: `width` edge segments clockwise from `start`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Gate {
    pub start: u32,
    /// Hidden from the players (they see where the gate is, not where it is heading).
    pub clockwise: bool,
}

/// A wall: `length` squares from its top-left square `at`, rightwards if horizontal, else down.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Wall {
    pub at: Pos,
    pub horizontal: bool,
    /// Hidden from the players.
    pub heading: Move,
}

/// The square behind edge segment `segment` (numbered clockwise from the top-left corner).
pub fn segment_square(n: u16, segment: u32) -> Pos {
    let n32 = n as u32;
    let s = segment % (4 * n32);
    let (side, i) = ((s / n32), (s % n32) as u16);
    match side {
        0 => [0, i],
        1 => [i, n - 1],
        2 => [n - 1, n - 1 - i],
        _ => [n - 1 - i, 0],
    }
}

impl Gate {
    /// The gate's squares, without repeats (a corner square counts once).
    pub fn squares(&self, params: &Params) -> Vec<Pos> {
        let mut squares: Vec<Pos> = Vec::with_capacity(params.gate_width as usize);
        for i in 0..params.gate_width as u32 {
            let square = segment_square(params.n, self.start + i);
            if !squares.contains(&square) {
                squares.push(square);
            }
        }
        squares
    }
}

impl Wall {
    /// The wall's squares; `None` if some would be off the board.
    pub fn squares_at(at: Pos, horizontal: bool, params: &Params) -> Option<Vec<Pos>> {
        let length = params.wall_length;
        let end = if horizontal { at[1] + length } else { at[0] + length };
        if at[0] >= params.n || at[1] >= params.n || end > params.n {
            return None;
        }
        Some((0..length).map(|i| if horizontal { [at[0], at[1] + i] } else { [at[0] + i, at[1]] }).collect())
    }

    pub fn squares(&self, params: &Params) -> Vec<Pos> {
        Wall::squares_at(self.at, self.horizontal, params).expect("a wall stays on the board")
    }
}

/// What the players see of the board at one tick: where everything is, not where it is heading.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct State {
    pub t: u32,
    pub thief: Pos,
    pub police: Vec<Pos>,
    pub gates: Vec<GateView>,
    pub walls: Vec<WallView>,
}

#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct GateView {
    pub start: u32,
    pub squares: Vec<Pos>,
}

#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct WallView {
    pub at: Pos,
    pub horizontal: bool,
    pub squares: Vec<Pos>,
}

/// The whole board, hidden directions included.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Board {
    pub params: Params,
    /// The tick being played (ticks 0..t are over).
    pub t: u32,
    pub gates: Vec<Gate>,
    pub walls: Vec<Wall>,
    pub thief: Pos,
    pub police: Vec<Pos>,
    pub ending: Option<Ending>,
}

/// A square-indexed table of flags (walls, gates) for quick look-ups.
#[derive(Clone, Debug)]
pub struct Grid {
    n: u16,
    cells: Vec<bool>,
}

impl Grid {
    pub fn new(n: u16) -> Grid {
        Grid { n, cells: vec![false; n as usize * n as usize] }
    }

    pub fn set(&mut self, p: Pos) {
        self.cells[p[0] as usize * self.n as usize + p[1] as usize] = true;
    }

    pub fn get(&self, p: Pos) -> bool {
        self.cells[p[0] as usize * self.n as usize + p[1] as usize]
    }
}

impl Board {
    /// A random, conflict-free start: walls anywhere on the board (they may overlap each
    /// other), gates anywhere on the edge, then the players on distinct squares that are neither
    /// wall nor gate squares.
    pub fn random_start(params: &Params, rng: &mut impl Rng) -> Board {
        let n = params.n;
        let walls = (0..params.walls)
            .map(|_| {
                let horizontal = rng.gen_bool(0.5);
                let span = n - params.wall_length + 1;
                let at = if horizontal { [rng.gen_range(0..n), rng.gen_range(0..span)] } else { [rng.gen_range(0..span), rng.gen_range(0..n)] };
                Wall { at, horizontal, heading: Move::STEPS[rng.gen_range(0..4)] }
            })
            .collect();
        let gates = (0..params.gates).map(|_| Gate { start: rng.gen_range(0..params.perimeter()), clockwise: rng.gen_bool(0.5) }).collect();
        let mut board = Board { params: *params, t: 0, gates, walls, thief: [0, 0], police: Vec::new(), ending: None };
        let mut taken = board.wall_grid();
        let gate_grid = board.gate_grid();
        let mut free_square = |rng: &mut dyn rand::RngCore| loop {
            // Params::check leaves at least half the inner squares free, so this ends quickly.
            let p = [rng.gen_range(0..n), rng.gen_range(0..n)];
            if !taken.get(p) && !gate_grid.get(p) {
                taken.set(p);
                return p;
            }
        };
        board.thief = free_square(rng);
        board.police = (0..params.policemen).map(|_| free_square(rng)).collect();
        board
    }

    pub fn wall_grid(&self) -> Grid {
        let mut grid = Grid::new(self.params.n);
        for wall in &self.walls {
            for p in wall.squares(&self.params) {
                grid.set(p);
            }
        }
        grid
    }

    pub fn gate_grid(&self) -> Grid {
        let mut grid = Grid::new(self.params.n);
        for gate in &self.gates {
            for p in gate.squares(&self.params) {
                grid.set(p);
            }
        }
        grid
    }

    pub fn is_over(&self) -> bool {
        self.ending.is_some()
    }

    /// First half of a tick: the gates and then the walls move (they take their squares first).
    pub fn move_obstacles(&mut self, rng: &mut impl Rng) {
        let params = self.params;
        let perimeter = params.perimeter();
        for gate in &mut self.gates {
            if rng.gen_bool(params.p_gate_reverse) {
                gate.clockwise = !gate.clockwise;
            }
            if rng.gen_bool(params.p_gate_move) {
                gate.start = if gate.clockwise { (gate.start + 1) % perimeter } else { (gate.start + perimeter - 1) % perimeter };
            }
        }
        let players: Vec<Pos> = std::iter::once(self.thief).chain(self.police.iter().copied()).collect();
        for wall in &mut self.walls {
            if rng.gen_bool(params.p_wall_turn) {
                let others: Vec<Move> = Move::STEPS.into_iter().filter(|&m| m != wall.heading).collect();
                wall.heading = others[rng.gen_range(0..others.len())];
            }
            if rng.gen_bool(params.p_wall_move) {
                step_wall(wall, &players, &params);
            }
        }
    }

    /// Second half of a tick: every player moves at once from his old square, then the capture
    /// and escape checks; the clock advances.
    pub fn move_players(&mut self, thief: Move, police: &[Move]) {
        assert!(!self.is_over(), "the game is over");
        let n = self.params.n;
        let walls = self.wall_grid();
        let gates = self.gate_grid();
        let step = |from: Pos, m: Move, barred_from_gates: bool| match m.apply(from, n) {
            Some(to) if walls.get(to) => from,
            Some(to) if barred_from_gates && gates.get(to) && to != from => from,
            Some(to) => to,
            None => from,
        };
        self.thief = step(self.thief, thief, false);
        for (i, p) in self.police.iter_mut().enumerate() {
            *p = step(*p, police.get(i).copied().unwrap_or(Move::Stay), true);
        }
        let t = self.t;
        if self.police.contains(&self.thief) {
            self.ending = Some(Ending::Caught { t });
        } else if gates.get(self.thief) {
            self.ending = Some(Ending::Escaped { t });
        }
        self.t += 1;
        if self.ending.is_none() && self.t >= self.params.t_max {
            self.ending = Some(Ending::Survived);
        }
    }

    /// What the players see now.
    pub fn view(&self) -> State {
        State {
            t: self.t,
            thief: self.thief,
            police: self.police.clone(),
            gates: self.gates.iter().map(|g| GateView { start: g.start, squares: g.squares(&self.params) }).collect(),
            walls: self.walls.iter().map(|w| WallView { at: w.at, horizontal: w.horizontal, squares: w.squares(&self.params) }).collect(),
        }
    }
}

/// One wall step in its heading, bouncing off the edge, abandoned over a player's square.
fn step_wall(wall: &mut Wall, players: &[Pos], params: &Params) {
    let try_heading = |heading: Move| -> Option<Pos> {
        let at = heading.apply(wall.at, params.n)?;
        Wall::squares_at(at, wall.horizontal, params).map(|_| at)
    };
    let (heading, at) = match try_heading(wall.heading) {
        Some(at) => (wall.heading, at),
        None => match try_heading(wall.heading.reverse()) {
            Some(at) => (wall.heading.reverse(), at),
            None => return,
        },
    };
    // A bounce turns the wall even when the step is then abandoned.
    wall.heading = heading;
    let squares = Wall::squares_at(at, wall.horizontal, params).expect("checked above");
    if squares.iter().any(|s| players.contains(s)) {
        return;
    }
    wall.at = at;
}

#[cfg(test)]
mod tests {
    use super::*;
    use rand::SeedableRng;
    use rand_chacha::ChaCha8Rng;

    fn params() -> Params {
        Params { n: 10, policemen: 2, gates: 1, walls: 1, ..Params::default() }
    }

    /// A board with nothing moving on its own, for rule tests.
    fn still(params: Params) -> Params {
        Params { p_gate_move: 0.0, p_gate_reverse: 0.0, p_wall_move: 0.0, p_wall_turn: 0.0, ..params }
    }

    fn board(params: Params, thief: Pos, police: Vec<Pos>, gates: Vec<Gate>, walls: Vec<Wall>) -> Board {
        Board { params, t: 0, gates, walls, thief, police, ending: None }
    }

    #[test]
    fn segments_run_clockwise_and_corners_share_a_square() {
        let n = 10;
        assert_eq!(segment_square(n, 0), [0, 0]);
        assert_eq!(segment_square(n, 9), [0, 9]);
        assert_eq!(segment_square(n, 10), [0, 9]); // the top-right corner again, from the right edge
        assert_eq!(segment_square(n, 19), [9, 9]);
        assert_eq!(segment_square(n, 20), [9, 9]);
        assert_eq!(segment_square(n, 29), [9, 0]);
        assert_eq!(segment_square(n, 30), [9, 0]);
        assert_eq!(segment_square(n, 39), [0, 0]);
        assert_eq!(segment_square(n, 40), [0, 0]); // wraps
    }

    #[test]
    fn a_width_two_gate_in_a_corner_has_one_square() {
        let p = params();
        assert_eq!(Gate { start: 9, clockwise: true }.squares(&p), vec![[0, 9]]);
        assert_eq!(Gate { start: 39, clockwise: true }.squares(&p), vec![[0, 0]]);
        assert_eq!(Gate { start: 4, clockwise: true }.squares(&p), vec![[0, 4], [0, 5]]);
        assert_eq!(Gate { start: 15, clockwise: true }.squares(&p), vec![[5, 9], [6, 9]]);
    }

    #[test]
    fn gates_move_along_the_edge_both_ways_and_reverse() {
        let mut p = still(params());
        p.p_gate_move = 1.0;
        let mut rng = ChaCha8Rng::seed_from_u64(1);
        let mut b = board(p, [5, 5], vec![], vec![Gate { start: 39, clockwise: true }, Gate { start: 0, clockwise: false }], vec![]);
        b.move_obstacles(&mut rng);
        assert_eq!((b.gates[0].start, b.gates[1].start), (0, 39), "clockwise wraps forward, counter-clockwise back");
        b.params.p_gate_reverse = 1.0;
        b.move_obstacles(&mut rng);
        assert_eq!((b.gates[0].start, b.gates[1].start), (39, 0), "both reversed, then moved");
        assert!(!b.gates[0].clockwise && b.gates[1].clockwise);
    }

    #[test]
    fn gates_and_walls_move_and_turn_as_often_as_the_probabilities_say() {
        // The lecture's defaults: gates move 0.5 / reverse 0.01, walls move 0.75 / turn 0.05.
        let p = Params { n: 20, gates: 1, walls: 1, wall_length: 1, ..Params::default() };
        let mut rng = ChaCha8Rng::seed_from_u64(11);
        let mut b = board(p, [0, 0], vec![], vec![Gate { start: 0, clockwise: true }], vec![Wall { at: [10, 10], horizontal: true, heading: Move::Up }]);
        let ticks = 20_000;
        let (mut gate_moves, mut gate_reversals, mut wall_moves, mut wall_turns, mut inside_ticks) = (0, 0, 0, 0, 0);
        for _ in 0..ticks {
            let (gate, wall) = (b.gates[0], b.walls[0]);
            b.thief = [19, 19];
            b.move_obstacles(&mut rng);
            gate_moves += (b.gates[0].start != gate.start) as u32;
            gate_reversals += (b.gates[0].clockwise != gate.clockwise) as u32;
            wall_moves += (b.walls[0].at != wall.at) as u32;
            // A bounce also turns a wall: count only turns away from the edges.
            let inside = (2..18).contains(&wall.at[0]) && (2..18).contains(&wall.at[1]);
            wall_turns += (inside && b.walls[0].heading != wall.heading) as u32;
            inside_ticks += inside as u32;
        }
        let rate = |count: u32| count as f64 / ticks as f64;
        assert!((rate(gate_moves) - 0.5).abs() < 0.02, "gate moves {}", rate(gate_moves));
        assert!((rate(gate_reversals) - 0.01).abs() < 0.004, "gate reversals {}", rate(gate_reversals));
        // A wall blocked by the thief's square stays: the thief sits in the corner, rarely reached.
        assert!((rate(wall_moves) - 0.75).abs() < 0.02, "wall moves {}", rate(wall_moves));
        let turn_rate = wall_turns as f64 / inside_ticks as f64;
        assert!((turn_rate - 0.05).abs() < 0.01, "wall turns {turn_rate} over {inside_ticks} ticks");
    }

    #[test]
    fn gates_are_transparent_to_each_other() {
        let mut p = still(params());
        p.gates = 2;
        p.p_gate_move = 1.0;
        let mut rng = ChaCha8Rng::seed_from_u64(1);
        let mut b = board(p, [5, 5], vec![], vec![Gate { start: 3, clockwise: true }, Gate { start: 4, clockwise: false }], vec![]);
        b.move_obstacles(&mut rng);
        assert_eq!((b.gates[0].start, b.gates[1].start), (4, 3), "they pass through each other");
    }

    #[test]
    fn walls_move_bounce_off_the_edge_and_keep_their_orientation() {
        let mut p = still(params());
        p.p_wall_move = 1.0;
        let mut rng = ChaCha8Rng::seed_from_u64(1);
        let mut b = board(p, [9, 9], vec![], vec![], vec![Wall { at: [3, 5], horizontal: true, heading: Move::Right }]);
        b.move_obstacles(&mut rng);
        assert_eq!(b.walls[0].at, [3, 6], "a horizontal wall of 4 reaches column 9");
        b.move_obstacles(&mut rng);
        assert_eq!((b.walls[0].at, b.walls[0].heading), ([3, 5], Move::Left), "it bounced off the right edge");
        b.walls[0].heading = Move::Up;
        b.walls[0].at = [0, 5];
        b.move_obstacles(&mut rng);
        assert_eq!((b.walls[0].at, b.walls[0].heading, b.walls[0].horizontal), ([1, 5], Move::Down, true));
    }

    #[test]
    fn a_wall_turns_to_another_direction() {
        let mut p = still(params());
        p.p_wall_turn = 1.0;
        let mut rng = ChaCha8Rng::seed_from_u64(7);
        let mut b = board(p, [9, 9], vec![], vec![], vec![Wall { at: [3, 3], horizontal: false, heading: Move::Up }]);
        let mut seen = std::collections::HashSet::new();
        for _ in 0..60 {
            let before = b.walls[0].heading;
            b.move_obstacles(&mut rng);
            assert_ne!(b.walls[0].heading, before, "a turn picks another direction");
            assert_ne!(b.walls[0].heading, Move::Stay);
            seen.insert(b.walls[0].heading);
        }
        assert_eq!(seen.len(), 4);
        assert_eq!(b.walls[0].at, [3, 3], "turning alone does not move it");
    }

    #[test]
    fn walls_are_transparent_to_each_other() {
        let mut p = still(params());
        p.walls = 2;
        p.p_wall_move = 1.0;
        let mut rng = ChaCha8Rng::seed_from_u64(1);
        let walls = vec![Wall { at: [2, 2], horizontal: true, heading: Move::Down }, Wall { at: [3, 2], horizontal: true, heading: Move::Up }];
        let mut b = board(p, [9, 9], vec![], vec![], walls);
        b.move_obstacles(&mut rng);
        assert_eq!((b.walls[0].at, b.walls[1].at), ([3, 2], [2, 2]));
    }

    #[test]
    fn a_wall_move_onto_a_players_old_square_is_abandoned() {
        let mut p = still(params());
        p.p_wall_move = 1.0;
        let mut rng = ChaCha8Rng::seed_from_u64(1);
        let mut b = board(p, [4, 4], vec![[8, 8]], vec![], vec![Wall { at: [3, 1], horizontal: true, heading: Move::Down }]);
        b.move_obstacles(&mut rng);
        assert_eq!((b.walls[0].at, b.walls[0].heading), ([3, 1], Move::Down), "the thief at (4,4) holds the wall back");
        // The thief leaves; the wall may come now, and the thief's move into it is cancelled.
        b.move_players(Move::Right, &[Move::Stay]);
        assert_eq!(b.thief, [4, 5]);
        b.move_obstacles(&mut rng);
        assert_eq!(b.walls[0].at, [4, 1]);
        b.move_players(Move::Left, &[Move::Stay]);
        assert_eq!(b.thief, [4, 5], "moving into a wall is staying");
        // A policeman holds a wall back too.
        b.walls[0] = Wall { at: [7, 5], horizontal: true, heading: Move::Down };
        b.move_obstacles(&mut rng);
        assert_eq!(b.walls[0].at, [7, 5]);
    }

    #[test]
    fn walls_move_before_players_take_their_squares() {
        // The wall steps onto (5,3) in the same tick as the thief tries to: the wall wins.
        let mut p = still(params());
        p.p_wall_move = 1.0;
        let mut rng = ChaCha8Rng::seed_from_u64(1);
        let mut b = board(p, [5, 4], vec![[0, 0]], vec![], vec![Wall { at: [1, 3], horizontal: false, heading: Move::Down }]);
        b.move_obstacles(&mut rng);
        assert_eq!(b.walls[0].at, [2, 3]);
        b.move_players(Move::Left, &[Move::Stay]);
        assert_eq!(b.thief, [5, 4]);
    }

    #[test]
    fn moves_off_the_board_are_staying() {
        let p = still(params());
        let mut b = board(p, [0, 3], vec![[9, 9]], vec![Gate { start: 25, clockwise: true }], vec![]);
        b.move_players(Move::Up, &[Move::Right]);
        assert_eq!((b.thief, b.police[0]), ([0, 3], [9, 9]));
    }

    #[test]
    fn policemen_may_not_enter_gate_squares_but_may_leave_one() {
        let p = still(params());
        // Gate squares (0,4) and (0,5).
        let mut b = board(p, [8, 8], vec![[1, 4], [0, 5]], vec![Gate { start: 4, clockwise: true }], vec![]);
        b.police.push([5, 5]);
        b.move_players(Move::Stay, &[Move::Up, Move::Left, Move::Stay]);
        assert_eq!(b.police[0], [1, 4], "barred from the gate");
        assert_eq!(b.police[1], [0, 5], "moving within a gate is entering a gate square: barred");
        b.move_players(Move::Stay, &[Move::Stay, Move::Down, Move::Stay]);
        assert_eq!(b.police[1], [1, 5], "a policeman in a gate may leave it");
        assert!(b.ending.is_none());
    }

    #[test]
    fn policemen_may_share_a_square() {
        let p = still(params());
        let mut b = board(p, [8, 8], vec![[3, 3], [3, 5]], vec![Gate { start: 20, clockwise: true }], vec![]);
        b.move_players(Move::Stay, &[Move::Right, Move::Left]);
        assert_eq!(b.police, vec![[3, 4], [3, 4]]);
    }

    #[test]
    fn the_thief_escapes_through_a_gate_square() {
        let p = still(params());
        let mut b = board(p, [1, 5], vec![[8, 8], [8, 1]], vec![Gate { start: 4, clockwise: true }], vec![]);
        b.move_players(Move::Stay, &[Move::Stay, Move::Stay]);
        assert!(b.ending.is_none());
        b.move_players(Move::Up, &[Move::Stay, Move::Stay]);
        assert_eq!(b.ending, Some(Ending::Escaped { t: 1 }));
    }

    #[test]
    fn a_corner_gate_lets_the_thief_out_through_the_corner_square_only() {
        let p = still(params());
        let gate = Gate { start: 9, clockwise: true }; // segments 9 (top) and 10 (right): square (0,9)
        let mut b = board(p, [1, 8], vec![[8, 1], [8, 2]], vec![gate], vec![]);
        b.move_players(Move::Up, &[Move::Stay, Move::Stay]);
        assert!(b.ending.is_none(), "(0,8) is not a square of the corner gate");
        b.move_players(Move::Right, &[Move::Stay, Move::Stay]);
        assert_eq!(b.ending, Some(Ending::Escaped { t: 1 }));
    }

    #[test]
    fn a_gate_sliding_under_the_standing_thief_lets_him_out() {
        let mut p = still(params());
        p.p_gate_move = 1.0;
        let mut rng = ChaCha8Rng::seed_from_u64(1);
        let mut b = board(p, [0, 6], vec![[8, 1], [8, 2]], vec![Gate { start: 4, clockwise: true }], vec![]);
        b.move_obstacles(&mut rng);
        b.move_players(Move::Stay, &[Move::Stay, Move::Stay]);
        assert_eq!(b.ending, Some(Ending::Escaped { t: 0 }));
    }

    #[test]
    fn capture_is_checked_before_escape() {
        let mut p = still(params());
        p.p_gate_move = 1.0;
        let mut rng = ChaCha8Rng::seed_from_u64(1);
        // The gate slides under the standing policeman at (0,6); the thief steps onto him there.
        let mut b = board(p, [0, 7], vec![[0, 6], [8, 2]], vec![Gate { start: 4, clockwise: true }], vec![]);
        b.move_obstacles(&mut rng);
        assert!(b.gate_grid().get([0, 6]));
        b.move_players(Move::Left, &[Move::Stay, Move::Stay]);
        assert_eq!(b.ending, Some(Ending::Caught { t: 0 }));
    }

    #[test]
    fn capture_needs_the_same_square_after_the_moves() {
        let p = still(params());
        let mut b = board(p, [5, 5], vec![[5, 6], [8, 8]], vec![Gate { start: 25, clockwise: true }], vec![]);
        b.move_players(Move::Right, &[Move::Left, Move::Stay]);
        assert_eq!((b.thief, b.police[0]), ([5, 6], [5, 5]));
        assert!(b.ending.is_none(), "a swap is not a capture");
        b.move_players(Move::Stay, &[Move::Right, Move::Stay]);
        assert_eq!(b.ending, Some(Ending::Caught { t: 1 }));
    }

    #[test]
    fn the_thief_survives_t_ticks() {
        let mut p = still(params());
        p.t_max = 3;
        let mut b = board(p, [5, 5], vec![[8, 8], [8, 1]], vec![Gate { start: 25, clockwise: true }], vec![]);
        for _ in 0..2 {
            b.move_players(Move::Stay, &[Move::Stay, Move::Stay]);
            assert!(b.ending.is_none());
        }
        b.move_players(Move::Stay, &[Move::Stay, Move::Stay]);
        assert_eq!((b.ending, b.t), (Some(Ending::Survived), 3));
    }

    #[test]
    fn random_starts_are_conflict_free() {
        let p = Params::default();
        for seed in 0..300 {
            let mut rng = ChaCha8Rng::seed_from_u64(seed);
            let b = Board::random_start(&p, &mut rng);
            assert_eq!((b.gates.len(), b.walls.len(), b.police.len()), (2, 4, 5));
            let walls = b.wall_grid();
            let gates = b.gate_grid();
            let mut players = b.police.clone();
            players.push(b.thief);
            for (i, q) in players.iter().enumerate() {
                assert!(!walls.get(*q) && !gates.get(*q), "seed {seed}: player on a wall or gate");
                assert!(!players[..i].contains(q), "seed {seed}: two players on one square");
            }
            for w in &b.walls {
                assert_eq!(w.squares(&p).len(), 4);
            }
        }
    }

    #[test]
    fn players_never_stand_in_walls_over_random_play() {
        let p = Params::default();
        let mut rng = ChaCha8Rng::seed_from_u64(3);
        for _ in 0..20 {
            let mut b = Board::random_start(&p, &mut rng);
            while !b.is_over() {
                b.move_obstacles(&mut rng);
                let police: Vec<Move> = (0..5).map(|_| Move::ALL[rng.gen_range(0..5)]).collect();
                b.move_players(Move::ALL[rng.gen_range(0..5)], &police);
                let walls = b.wall_grid();
                assert!(!walls.get(b.thief) && b.police.iter().all(|&q| !walls.get(q)));
            }
        }
    }
}
