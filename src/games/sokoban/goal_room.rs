//! Goal-room deadlocks: the patterns of boxes in a goal room from which it can still be filled.
//!
//! A search that fills most of a goal room can stall with a pattern no other check proves dead:
//! an empty goal closed in by boxes on goals, which only a box pushed from the goal beside it
//! could fill, which in turn only ... (original 90, levels 29, 35, 71, 89). Whether the room can
//! still be filled depends only on the boxes inside it and on where the player stands, so it
//! is found once per level for every such pattern: a search pulling boxes out of the filled
//! room, back to every pattern from which the filled room can be reached.
//!
//! A *room* is a group of goals next to each other (a group of two or more), with the floor
//! around it when there are no more than [`MOST_CELLS`] cells in all (a box parked in the
//! doorway is then part of the pattern). The search around it is relaxed, so that it never finds dead a position that is not: the rest of the level is
//! open floor where the player walks anywhere, boxes outside the room are not in the way, and a
//! box may enter the room, or leave it, wherever a push allows with walls alone. A pattern the
//! search does not reach can then not be filled in the real level either: every real push maps
//! to one of the relaxed search, pushed the other way.
//!
//! A pattern is the set of the room's cells holding a box, and the player's *side*: outside (on
//! any cell of the level out of the room, or on a cell of the room it can walk out of), or shut
//! in a pocket of the room's free cells (named by its first cell). The patterns reached are kept
//! as bits, two to the room's cells times the sides; groups of goals larger than [`MOST_CELLS`],
//! or whose search would keep more than [`MOST_PATTERNS`] patterns, are left unchecked.

use super::level::Level;
use super::solver::{board_tables, NONE};

/// The largest room checked (cells): its bits take 2^cells x (cells + 1) bits (12 MB at 22).
pub(super) const MOST_CELLS: usize = 22;

/// The most patterns the search of one room may reach before the room is left unchecked (its
/// stack and time grow with them: about half a second for five million).
pub(super) const MOST_PATTERNS: usize = 5_000_000;

/// What lies one step from a cell of a room.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
enum Beside {
    Wall,
    /// A cell of the room, by its bit.
    Room(u8),
    /// Floor out of the room.
    Out,
}

/// One room and the patterns from which it can be filled.
struct Room {
    /// Its cells, in cell order (bit i is cells[i]).
    cells: Vec<u16>,
    /// For each cell (bit) and direction, what lies one and two steps away.
    one: Vec<[Beside; 4]>,
    two: Vec<[Beside; 4]>,
    /// For each cell, its neighbours in the room as bits.
    near: Vec<u32>,
    /// The cells with floor out of the room beside them.
    doors: u32,
    /// The cells that are goals (the others are floor around them).
    goal_bits: u32,
    /// Patterns from which the room can be filled: bit `mask * (cells + 1) + side`.
    fillable: Vec<u64>,
}

impl Room {
    /// The room of `cells` (goals, and floor around them) with its patterns, and its cells in
    /// cell order; None when it has no way in or its search reaches more than [`MOST_PATTERNS`].
    fn new(neighbours: &[[u16; 4]], walls: &[bool], goals: &[bool], mut cells: Vec<usize>) -> Option<(Vec<usize>, Room)> {
        cells.sort_unstable();
        let bit_of = |cell: u16| cells.binary_search(&(cell as usize)).ok();
        let beside = |cell: u16| {
            if cell == NONE || walls[cell as usize] {
                Beside::Wall
            } else {
                bit_of(cell).map_or(Beside::Out, |b| Beside::Room(b as u8))
            }
        };
        let one: Vec<[Beside; 4]> = cells.iter().map(|&c| std::array::from_fn(|d| beside(neighbours[c][d]))).collect();
        let two: Vec<[Beside; 4]> = cells
            .iter()
            .map(|&c| {
                std::array::from_fn(|d| match neighbours[c][d] {
                    n if n == NONE || walls[n as usize] => Beside::Wall,
                    n => beside(neighbours[n as usize][d]),
                })
            })
            .collect();
        let near = one.iter().map(|sides| sides.iter().fold(0, |bits, s| if let Beside::Room(b) = s { bits | 1 << b } else { bits })).collect();
        let doors = one.iter().enumerate().filter(|(_, sides)| sides.contains(&Beside::Out)).fold(0, |bits, (i, _)| bits | 1 << i);
        let goal_bits = cells.iter().enumerate().filter(|(_, &c)| goals[c]).fold(0, |bits, (i, _)| bits | 1 << i);
        let mut room = Room { cells: cells.iter().map(|&c| c as u16).collect(), one, two, near, doors, goal_bits, fillable: Vec::new() };
        (room.doors != 0 && room.search()).then_some((cells, room))
    }

    fn sides(&self) -> usize {
        self.cells.len() + 1
    }

    /// The side index of "outside".
    fn outside(&self) -> u8 {
        self.cells.len() as u8
    }

    fn full(&self) -> u32 {
        ((1u64 << self.cells.len()) - 1) as u32
    }

    /// The free cells of the room (bits) the player reaches from the cells `from`, the boxes on `mask`.
    fn reach(&self, from: u32, mask: u32) -> u32 {
        let free = self.full() & !mask;
        let mut reach = from & free;
        let mut frontier = reach;
        while frontier != 0 {
            let mut next = 0;
            let mut bits = frontier;
            while bits != 0 {
                let i = bits.trailing_zeros() as usize;
                bits &= bits - 1;
                next |= self.near[i];
            }
            frontier = next & free & !reach;
            reach |= frontier;
        }
        reach
    }

    /// The player's side standing on cell (bit) `at` of the room, the boxes on `mask`.
    fn side_from(&self, at: u8, mask: u32) -> u8 {
        let reach = self.reach(1 << at, mask);
        if reach & self.doors != 0 {
            self.outside()
        } else {
            reach.trailing_zeros() as u8
        }
    }

    fn pattern(&self, mask: u32, side: u8) -> usize {
        mask as usize * self.sides() + side as usize
    }

    fn is_fillable(&self, mask: u32, side: u8) -> bool {
        let at = self.pattern(mask, side);
        self.fillable[at / 64] & 1 << (at % 64) != 0
    }

    /// Every pattern from which the room can be filled: pulls from the filled room, the player
    /// outside. False when more than [`MOST_PATTERNS`] are reached.
    fn search(&mut self) -> bool {
        let sides = self.sides();
        self.fillable = vec![0; ((1usize << self.cells.len()) * sides).div_ceil(64)];
        // The filled room, the player anywhere it is not.
        let filled = self.goal_bits;
        let mut stack = vec![(filled, self.outside())];
        let mut free = self.full() & !filled;
        while free != 0 {
            let at = free.trailing_zeros() as u8;
            free &= free - 1;
            let side = self.side_from(at, filled);
            if !stack.contains(&(filled, side)) {
                stack.push((filled, side));
            }
        }
        for &(mask, side) in &stack {
            let at = self.pattern(mask, side);
            self.fillable[at / 64] |= 1 << (at % 64);
        }
        let mut reached = stack.len();
        let mut next = Vec::new();
        while let Some((mask, side)) = stack.pop() {
            next.clear();
            self.pulls(mask, side, &mut next);
            for &(mask, side) in &next {
                let at = self.pattern(mask, side);
                if self.fillable[at / 64] & 1 << (at % 64) == 0 {
                    self.fillable[at / 64] |= 1 << (at % 64);
                    reached += 1;
                    if reached > MOST_PATTERNS {
                        return false;
                    }
                    stack.push((mask, side));
                }
            }
        }
        true
    }

    /// The player's side after a pull that leaves it on `at`.
    fn side_at(&self, at: Beside, mask: u32) -> Option<u8> {
        match at {
            Beside::Wall => None,
            Beside::Out => Some(self.outside()),
            Beside::Room(m) if mask & 1 << m != 0 => None,
            Beside::Room(m) => Some(self.side_from(m, mask)),
        }
    }

    /// The patterns one pull from (`mask`, `side`) leads to (a box pulled within the room, out
    /// of it, or into it from the floor outside).
    fn pulls(&self, mask: u32, side: u8, next: &mut Vec<(u32, u8)>) {
        let outside = side == self.outside();
        let from = if outside { self.doors } else { 1 << side };
        let reach = self.reach(from, mask);
        // The player on a cell of the room, stepping away from the box behind it.
        let mut bits = reach;
        while bits != 0 {
            let j = bits.trailing_zeros() as usize;
            bits &= bits - 1;
            for d in 0..4 {
                let behind = self.one[j][d ^ 1];
                let moved = match behind {
                    Beside::Room(i) if mask & 1 << i != 0 => mask & !(1 << i) | 1 << j,
                    Beside::Out => mask | 1 << j,
                    _ => continue,
                };
                if let Some(side) = self.side_at(self.one[j][d], moved) {
                    next.push((moved, side));
                }
            }
        }
        // The player outside, pulling a box of the room out.
        if outside {
            let mut bits = mask;
            while bits != 0 {
                let i = bits.trailing_zeros() as usize;
                bits &= bits - 1;
                for d in 0..4 {
                    if self.one[i][d] != Beside::Out {
                        continue;
                    }
                    let moved = mask & !(1 << i);
                    if let Some(side) = self.side_at(self.two[i][d], moved) {
                        next.push((moved, side));
                    }
                }
            }
        }
    }
}

/// The level's goal rooms, each with the patterns from which it can be filled.
pub(super) struct GoalRooms {
    rooms: Vec<Room>,
    /// For each cell, its room and bit (`NO_ROOM`: none).
    at: Vec<(u8, u8)>,
}

const NO_ROOM: (u8, u8) = (u8::MAX, u8::MAX);

impl GoalRooms {
    /// The rooms of `level`'s goals.
    pub(super) fn of_level(level: &Level) -> GoalRooms {
        let (neighbours, walls, _) = board_tables(level);
        GoalRooms::new(&neighbours, &walls, &level.goals)
    }

    /// The rooms of the goals (cells), with the level's neighbour table and walls.
    pub(super) fn new(neighbours: &[[u16; 4]], walls: &[bool], goals: &[bool]) -> GoalRooms {
        let size = walls.len();
        let mut at = vec![NO_ROOM; size];
        let mut rooms = Vec::new();
        let mut grouped = vec![false; size];
        for first in 0..size {
            if !goals[first] || grouped[first] || walls[first] {
                continue;
            }
            // The group of goals next to each other around `first`.
            let mut cells = vec![first];
            grouped[first] = true;
            let mut k = 0;
            while k < cells.len() {
                for &n in &neighbours[cells[k]] {
                    if n != NONE && goals[n as usize] && !walls[n as usize] && !grouped[n as usize] {
                        grouped[n as usize] = true;
                        cells.push(n as usize);
                    }
                }
                k += 1;
            }
            if cells.len() < 2 || cells.len() > MOST_CELLS || rooms.len() == u8::MAX as usize {
                continue;
            }
            // With the floor around the goals when the room stays small enough (original 90,
            // level 87: solved in 26 s with it, not in 60 s without it), else, or when its
            // search reaches too many patterns, the goals alone.
            let mut ring: Vec<usize> = Vec::new();
            for &c in &cells {
                for &n in &neighbours[c] {
                    let n = n as usize;
                    if n != NONE as usize && !walls[n] && !goals[n] && at[n] == NO_ROOM && !ring.contains(&n) {
                        ring.push(n);
                    }
                }
            }
            let with_ring = (cells.len() + ring.len() <= MOST_CELLS).then(|| [cells.as_slice(), &ring].concat());
            let Some((cells, room)) = with_ring.into_iter().chain([cells]).find_map(|cells| Room::new(neighbours, walls, goals, cells)) else { continue };
            let id = rooms.len() as u8;
            for (bit, &c) in cells.iter().enumerate() {
                at[c] = (id, bit as u8);
            }
            rooms.push(room);
        }
        GoalRooms { rooms, at }
    }

    /// Whether some room's pattern (the boxes on its cells, and the player, on `player`) is one
    /// from which it cannot be filled.
    pub(super) fn dead(&self, boxes: &[u16], player: usize) -> bool {
        if self.rooms.is_empty() {
            return false;
        }
        let mut masks = Vec::new();
        self.masks(boxes, &mut masks);
        let (player_room, player_bit) = self.at[player];
        self.rooms.iter().enumerate().any(|(r, room)| {
            let side = if player_room as usize == r { room.side_from(player_bit, masks[r]) } else { room.outside() };
            !room.is_fillable(masks[r], side)
        })
    }

    /// Each room's cells holding one of `boxes`, as bits, into `masks`.
    pub(super) fn masks(&self, boxes: &[u16], masks: &mut Vec<u32>) {
        masks.clear();
        masks.resize(self.rooms.len(), 0);
        for &b in boxes {
            let (room, bit) = self.at[b as usize];
            if room != NO_ROOM.0 {
                masks[room as usize] |= 1 << bit;
            }
        }
    }

    /// [`GoalRooms::dead`] for a position one box move from a live one (its rooms' `masks`):
    /// the box from `from` to `to`, the player then on `player`. Only the rooms the box leaves
    /// or enters can have changed: the player, shut in a room before, pushed a box of that room.
    pub(super) fn dead_after_move(&self, masks: &[u32], from: usize, to: usize, player: usize) -> bool {
        let (from_room, from_bit) = self.at[from];
        let (to_room, to_bit) = self.at[to];
        let (player_room, player_bit) = self.at[player];
        [from_room, to_room].iter().enumerate().any(|(k, &r)| {
            if r == NO_ROOM.0 || (k == 1 && r == from_room) {
                return false;
            }
            let room = &self.rooms[r as usize];
            let mut mask = masks[r as usize];
            if from_room == r {
                mask &= !(1 << from_bit);
            }
            if to_room == r {
                mask |= 1 << to_bit;
            }
            let side = if player_room == r { room.side_from(player_bit, mask) } else { room.outside() };
            !room.is_fillable(mask, side)
        })
    }

    /// Whether there is any room to check.
    #[cfg(test)]
    fn is_empty(&self) -> bool {
        self.rooms.is_empty()
    }

    /// How many rooms are checked.
    #[cfg(test)]
    fn len(&self) -> usize {
        self.rooms.len()
    }

    /// The bytes its tables take.
    pub(super) fn memory(&self) -> usize {
        self.rooms.iter().map(|r| r.fillable.len() * 8).sum::<usize>() + self.at.len() * 2
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::games::sokoban::level::parse_collection;
    use crate::games::sokoban::solver::board_tables;
    use crate::games::sokoban::solver::tests::{proved_unsolvable, random_walk_positions};

    /// The goal rooms of the level `text`, which has one, and the cell at (x, y).
    fn one_room(text: &str) -> (GoalRooms, impl Fn(usize, usize) -> u16) {
        let level = parse_collection(text).unwrap().remove(0);
        let (neighbours, walls, _) = board_tables(&level);
        let rooms = GoalRooms::new(&neighbours, &walls, &level.goals);
        assert_eq!(rooms.len(), 1);
        let width = level.width;
        (rooms, move |x: usize, y: usize| (y * width + x) as u16)
    }

    #[test]
    fn a_corridor_room_fills_only_from_its_far_end() {
        // Three goals in a corridor closed at the left, entered from the right.
        let (rooms, at) = one_room("########\n#...   #\n###### #\n#@ $$$ #\n########\n");
        let player = at(1, 3) as usize;
        assert!(!rooms.dead(&[at(1, 1), at(2, 1), at(3, 1)], player), "the filled room");
        assert!(!rooms.dead(&[at(3, 3), at(4, 3), at(5, 3)], player), "the empty room");
        assert!(!rooms.dead(&[at(3, 1), at(4, 3), at(5, 3)], player), "a box still to be pushed on");
        assert!(!rooms.dead(&[at(1, 1), at(3, 1), at(5, 3)], player), "the gap can be closed");
        // The two near goals filled with the far one empty: neither box can move left.
        assert!(rooms.dead(&[at(2, 1), at(3, 1), at(5, 3)], player));
        // The same with the player shut in on the far goal: it cannot push them out either.
        assert!(rooms.dead(&[at(2, 1), at(3, 1), at(5, 3)], at(1, 1) as usize));
    }

    #[test]
    fn a_goal_closed_in_by_boxes_on_goals_can_be_filled_from_the_goal_beside_it() {
        // A plus of goals entered from below: the top goal empty, closed in by the three
        // goals around the centre. The box on the centre can be pushed up into it, and the centre
        // filled again from below: not dead. With the way below shut by a box on the
        // bottom goal as well, the centre box cannot be reached from below: dead.
        let (rooms, at) = one_room("###########\n#####.#####\n####...####\n#####.#####\n##### #####\n##### #####\n#@ $$$$$  #\n#         #\n###########\n");
        let player = at(1, 6) as usize;
        assert!(!rooms.dead(&[at(4, 2), at(5, 2), at(6, 2), at(3, 6), at(4, 6)], player));
        assert!(rooms.dead(&[at(4, 2), at(5, 2), at(6, 2), at(5, 3), at(4, 6)], player));
    }

    /// Positions reached by random walks on the small Microban levels: every one called dead
    /// is unsolvable (a full search proves it), and some are called dead.
    #[test]
    fn positions_called_dead_are_unsolvable() {
        let mut dead = 0;
        for (title, position, lurd) in random_walk_positions(35, 6, usize::MAX, 40, 10..120) {
            let (neighbours, walls, _) = board_tables(&position);
            let rooms = GoalRooms::new(&neighbours, &walls, &position.goals);
            let boxes: Vec<u16> = (0..walls.len()).filter(|&c| position.boxes[c]).map(|c| c as u16).collect();
            if rooms.dead(&boxes, position.player) {
                dead += 1;
                assert!(proved_unsolvable(&position), "level {title} after {lurd}");
            }
        }
        assert!(dead >= 10, "too few called dead: {dead}");
    }

    /// From live positions of random walks, every push of a box (its cell ahead and the
    /// player's behind it free): the check after the move agrees with the whole check.
    #[test]
    fn the_check_after_a_move_agrees_with_the_whole_check() {
        let (mut pushes, mut dead) = (0, 0);
        for (_, position, _) in random_walk_positions(36, 6, usize::MAX, 20, 10..120) {
            let (neighbours, walls, _) = board_tables(&position);
            let rooms = GoalRooms::new(&neighbours, &walls, &position.goals);
            let boxes: Vec<u16> = (0..walls.len()).filter(|&c| position.boxes[c]).map(|c| c as u16).collect();
            if rooms.is_empty() || rooms.dead(&boxes, position.player) {
                continue;
            }
            let mut masks = Vec::new();
            rooms.masks(&boxes, &mut masks);
            for &from in &boxes {
                for d in 0..4 {
                    let (to, behind) = (neighbours[from as usize][d], neighbours[from as usize][d ^ 1]);
                    let free = |c: u16| c != NONE && !walls[c as usize] && !position.boxes[c as usize];
                    if !free(to) || !free(behind) {
                        continue;
                    }
                    let moved: Vec<u16> = boxes.iter().map(|&b| if b == from { to } else { b }).collect();
                    let whole = rooms.dead(&moved, from as usize);
                    assert_eq!(rooms.dead_after_move(&masks, from as usize, to as usize, from as usize), whole);
                    pushes += 1;
                    dead += usize::from(whole);
                }
            }
        }
        assert!(pushes >= 500 && dead >= 5, "{pushes} pushes, {dead} dead");
    }
}
