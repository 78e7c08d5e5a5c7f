//! A level being played: moves and pushes, unlimited undo/redo, LURD records, walking and
//! dragging boxes along shortest paths.

use std::collections::VecDeque;

use super::level::Level;
use super::LURD_LETTERS;

/// A level with its current position and history.
#[derive(Clone, Debug)]
pub struct Game {
    start: Level,
    pub position: Level,
    /// Steps made, as `(direction, pushed a box)`.
    history: Vec<(usize, bool)>,
    redo: Vec<(usize, bool)>,
}

impl Game {
    pub fn new(level: Level) -> Game {
        Game { position: level.clone(), start: level, history: Vec::new(), redo: Vec::new() }
    }

    pub fn moves(&self) -> usize {
        self.history.len()
    }

    pub fn pushes(&self) -> usize {
        self.history.iter().filter(|step| step.1).count()
    }

    pub fn is_solved(&self) -> bool {
        self.position.is_solved()
    }

    /// The level as it was before the first move.
    pub fn start(&self) -> &Level {
        &self.start
    }

    /// True when undone steps wait to be redone.
    pub fn can_redo(&self) -> bool {
        !self.redo.is_empty()
    }

    /// One step; pushes a box when one is in the way and the cell behind it is free.
    /// Returns false (and changes nothing) when the step is blocked.
    pub fn step(&mut self, direction: usize) -> bool {
        let level = &mut self.position;
        let Some(next) = level.neighbour(level.player, direction) else { return false };
        if level.walls[next] {
            return false;
        }
        let pushed = level.boxes[next];
        if pushed {
            match level.neighbour(next, direction) {
                Some(beyond) if !level.walls[beyond] && !level.boxes[beyond] => {
                    level.boxes[next] = false;
                    level.boxes[beyond] = true;
                }
                _ => return false,
            }
        }
        level.player = next;
        self.history.push((direction, pushed));
        self.redo.clear();
        true
    }

    pub fn undo(&mut self) -> bool {
        let Some((direction, pushed)) = self.history.pop() else { return false };
        let level = &mut self.position;
        let back = direction ^ 1; // up<->down, left<->right
        let from = level.player;
        if pushed {
            let boxed = level.neighbour(from, direction).expect("a pushed box stays on the grid");
            level.boxes[boxed] = false;
            level.boxes[from] = true;
        }
        level.player = level.neighbour(from, back).expect("the player came from the grid");
        self.redo.push((direction, pushed));
        true
    }

    pub fn redo(&mut self) -> bool {
        let Some((direction, _)) = self.redo.pop() else { return false };
        let kept = std::mem::take(&mut self.redo);
        let done = self.step(direction);
        self.redo = kept;
        done
    }

    pub fn restart(&mut self) {
        self.position = self.start.clone();
        self.history.clear();
        self.redo.clear();
    }

    /// The moves so far as LURD (upper case for pushes).
    pub fn lurd(&self) -> String {
        self.history.iter().map(|&(d, pushed)| if pushed { LURD_LETTERS[d].to_ascii_uppercase() } else { LURD_LETTERS[d] }).collect()
    }

    /// Plays a LURD string; fails at the first letter that is not a legal step (its 1-based index).
    pub fn play_lurd(&mut self, lurd: &str) -> Result<(), String> {
        for (index, letter) in lurd.chars().filter(|c| !c.is_whitespace()).enumerate() {
            let Some(direction) = LURD_LETTERS.iter().position(|&l| l == letter.to_ascii_lowercase()) else {
                return Err(format!("move {}: {letter:?} is not one of l, u, r, d", index + 1));
            };
            let had_box = self.position.neighbour(self.position.player, direction).is_some_and(|c| self.position.boxes[c]);
            if had_box != letter.is_ascii_uppercase() || !self.step(direction) {
                return Err(format!("move {}: {letter:?} is not possible here", index + 1));
            }
        }
        Ok(())
    }

    /// Walks to `target` by the shortest way around boxes and walls; false when it cannot be reached.
    pub fn walk_to(&mut self, target: usize) -> bool {
        let level = &self.position;
        let Some(path) = shortest_walk(level, level.player, target) else { return false };
        path.into_iter().all(|direction| self.step(direction))
    }

    /// Pushes the box on `from` to `to` with the fewest moves, other boxes staying put;
    /// false (nothing changed) when there is no way.
    pub fn drag_box(&mut self, from: usize, to: usize) -> bool {
        let level = &self.position;
        if !level.boxes[from] || from == to {
            return false;
        }
        let size = level.width * level.height;
        // Breadth-first over (box cell, player cell): every step costs one move.
        let index = |boxed: usize, player: usize| boxed * size + player;
        let mut previous: Vec<Option<(usize, usize)>> = vec![None; size * size];
        let start = index(from, level.player);
        previous[start] = Some((start, 4));
        let mut queue = VecDeque::from([(from, level.player)]);
        let blocked = |cell: usize| level.walls[cell] || (level.boxes[cell] && cell != from);
        let mut found = None;
        while let Some((boxed, player)) = queue.pop_front() {
            if boxed == to {
                found = Some(index(boxed, player));
                break;
            }
            for direction in 0..4 {
                let Some(next) = level.neighbour(player, direction) else { continue };
                if blocked(next) {
                    continue;
                }
                let mut next_box = boxed;
                if next == boxed {
                    match level.neighbour(boxed, direction) {
                        Some(beyond) if !blocked(beyond) => next_box = beyond,
                        _ => continue,
                    }
                }
                let key = index(next_box, next);
                if previous[key].is_none() {
                    previous[key] = Some((index(boxed, player), direction));
                    queue.push_back((next_box, next));
                }
            }
        }
        let Some(mut key) = found else { return false };
        let mut path = Vec::new();
        while key != start {
            let (before, direction) = previous[key].unwrap();
            path.push(direction);
            key = before;
        }
        path.into_iter().rev().all(|direction| self.step(direction))
    }
}

/// Directions of a shortest walk from `from` to `to` that pushes nothing.
pub fn shortest_walk(level: &Level, from: usize, to: usize) -> Option<Vec<usize>> {
    let size = level.width * level.height;
    let mut came: Vec<Option<usize>> = vec![None; size];
    came[from] = Some(4);
    let mut queue = VecDeque::from([from]);
    while let Some(cell) = queue.pop_front() {
        if cell == to {
            let mut path = Vec::new();
            let mut at = to;
            while at != from {
                let direction = came[at].unwrap();
                path.push(direction);
                at = level.neighbour(at, direction ^ 1).unwrap();
            }
            path.reverse();
            return Some(path);
        }
        for direction in 0..4 {
            if let Some(next) = level.neighbour(cell, direction) {
                if came[next].is_none() && !level.walls[next] && !level.boxes[next] {
                    came[next] = Some(direction);
                    queue.push_back(next);
                }
            }
        }
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::games::sokoban::level::parse_collection;

    fn game(text: &str) -> Game {
        Game::new(parse_collection(text).unwrap().remove(0))
    }

    #[test]
    fn pushes_not_pulls_and_undo_redo() {
        let mut g = game("#######\n#@ $ .#\n#######\n");
        assert!(!g.step(2), "wall on the left");
        assert!(g.step(3) && g.step(3));
        assert_eq!((g.moves(), g.pushes()), (2, 1));
        assert!(g.step(2), "walking away leaves the box (no pull)");
        assert!(g.position.boxes[11]);
        assert!(g.undo() && g.undo());
        assert!(g.position.boxes[10] && g.position.player == 9);
        assert!(g.redo());
        assert!(g.position.boxes[11]);
        assert!(g.step(3));
        assert!(!g.redo(), "a new step drops the steps that were undone");
        assert!(g.is_solved());
        assert!(!g.step(3), "a box does not go into a wall");
        assert_eq!(g.lurd(), "rRR");
        let mut replay = game("#######\n#@ $ .#\n#######\n");
        replay.play_lurd(&g.lurd()).unwrap();
        assert!(replay.is_solved());
        assert!(game("#######\n#@ $ .#\n#######\n").play_lurd("rr").is_err(), "a push must be upper case");
        g.restart();
        assert_eq!(g.moves(), 0);
    }

    #[test]
    fn walks_and_drags() {
        let mut g = game("#######\n#@    #\n# $ . #\n#     #\n#######\n");
        assert!(g.walk_to(5 + 3 * 7));
        assert_eq!(g.moves(), 4 + 2);
        assert!(g.drag_box(2 + 2 * 7, 4 + 2 * 7));
        assert!(g.is_solved());
        assert!(!g.drag_box(4 + 2 * 7, 7 + 7), "into a wall row");
    }
}
