//! The computer player: Monte Carlo tree search (UCT) with the game's usual heuristics.
//!
//! - Candidates are the free points within two steps of a dot already on the board (play far
//!   from everything is almost never right in Dots); houses are left out: one's own is wasted,
//!   the enemy's is suicide under the standard rules.
//! - Tactics: each candidate is tried for both players when its node is expanded; a dot that
//!   captures, or that takes the point where the enemy would capture, starts with virtual wins
//!   (progressive bias) and is expanded first.
//! - Candidates leave out pointless moves unless they capture: corners, and points where the enemy
//!   surrounds the new dot on three sides with the fourth free (oppai prunes the same in its tree).
//! - A node lists its moves (with the capture tries above) only when it is reached a second time;
//!   most leaves get one playout and no more.
//! - Playouts are local: they fill the free points within three steps of the dots at the root and
//!   near the last few dots, in random order and never into a house, and score win/draw/loss by
//!   captured dots against the margin at the root (komi), so the search still tells moves apart
//!   when one side leads by far.
//! - One working board is played down the tree and through the playout, then taken back with
//!   [`Board::undo`], so an iteration costs no copy of the board.
//!
//! Deterministic given the RNG and an iteration budget; with a time budget the caller's `stop`
//! closure (which owns the clock) ends the search. The move is always one of the legal points.

use rand::seq::SliceRandom;
use rand::Rng;

use super::board::{Action, Board, Player};

/// Strength levels: thinking time per move and the iteration count that stands for it when a
/// game must be reproducible.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Level {
    pub level: u8,
    pub millis: u64,
    pub iterations: u32,
}

pub const LEVELS: [Level; 4] = [
    Level {
        level: 1,
        millis: 100,
        iterations: 300,
    },
    Level {
        level: 2,
        millis: 400,
        iterations: 1_200,
    },
    Level {
        level: 3,
        millis: 1_500,
        iterations: 5_000,
    },
    Level {
        level: 4,
        millis: 5_000,
        iterations: 20_000,
    },
];
pub const DEFAULT_LEVEL: u8 = 2;

impl Level {
    /// How long to let the search run so that the answer, set-up included (trying every
    /// candidate for captures at the root), comes within the level's time.
    pub fn search_time(&self) -> std::time::Duration {
        std::time::Duration::from_millis(self.millis * 85 / 100)
    }
}

pub fn level(n: u8) -> Option<Level> {
    LEVELS.iter().copied().find(|l| l.level == n)
}

/// Exploration constant of UCT (rewards are in 0..=1). 0.5 won 13 of 24 games against oppai
/// where 0.8 won 7 of 24 (15x15, 0.3 s a move, local playouts and komi both times).
const EXPLORATION: f32 = 0.5;

struct Node {
    /// The point played to reach this node (unused at the root).
    pos: u32,
    /// Who played it.
    player: Player,
    visits: u32,
    /// Sum of rewards for `player`.
    wins: f32,
    children: Vec<u32>,
    /// Moves not expanded yet, with their tactical value; the best is expanded last-in-first.
    /// None until the node is reached a second time: most leaves get one playout and no more,
    /// and listing a node's moves (each tried for captures) costs more than the playout.
    untried: Option<Vec<(u32, u32)>>,
}

/// Virtual visits given to a tactical move, and the share of them counted as won.
const PRIOR_VISITS: f32 = 20.0;

/// What the search found.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Choice {
    pub x: usize,
    pub y: usize,
    pub iterations: u32,
}

/// Choose a dot for the player to move. `max_iterations` bounds the search; `stop` is asked
/// before every iteration (return true to stop: the clock). None when the game is over.
pub fn choose_move<R: Rng>(
    board: &Board,
    max_iterations: u32,
    rng: &mut R,
    stop: &mut dyn FnMut() -> bool,
) -> Option<Choice> {
    if board.end().is_some() {
        return None;
    }
    let mut work = board.clone();
    work.record_enclosures = false;
    let root_moves = candidates(&mut work, rng);
    if root_moves.is_empty() {
        return None;
    }
    if root_moves.len() == 1 {
        let (x, y) = work.xy(root_moves[0].0 as usize);
        return Some(Choice {
            x,
            y,
            iterations: 0,
        });
    }
    let mut nodes = vec![Node {
        pos: 0,
        player: work.to_move().other(),
        visits: 0,
        wins: 0.0,
        children: Vec::new(),
        untried: Some(root_moves),
    }];
    let mut path: Vec<u32> = Vec::new();
    let area = playout_area(&work);
    // Playouts are scored against the margin at the root (komi), as strong programs do: when one
    // side is far ahead every playout would otherwise end the same way and no move would look
    // better than another.
    let komi = work.score_margin();
    let mut order: Vec<u32> = Vec::with_capacity(area.len());
    let mut iterations = 0;
    while iterations < max_iterations && !(iterations > 0 && stop()) {
        iterations += 1;
        path.clear();
        path.push(0);
        let mut played = 0;
        // Selection: descend through fully expanded nodes.
        let mut current = 0usize;
        while nodes[current].untried.as_ref().is_some_and(|u| u.is_empty()) && !nodes[current].children.is_empty() {
            let parent_visits = nodes[current].visits.max(1) as f32;
            let log = parent_visits.ln();
            let best = *nodes[current]
                .children
                .iter()
                .max_by(|&&a, &&b| {
                    let ucb = |i: u32| {
                        let n = &nodes[i as usize];
                        let visits = n.visits.max(1) as f32;
                        n.wins / visits + EXPLORATION * (log / visits).sqrt()
                    };
                    ucb(a).total_cmp(&ucb(b))
                })
                .expect("children");
            current = best as usize;
            let node = &nodes[current];
            work.play_pos(node.pos as usize, node.player);
            played += 1;
            path.push(best);
        }
        // Expansion: the most promising untried move.
        if nodes[current].untried.is_none() {
            nodes[current].untried = Some(if work.end().is_none() { candidates(&mut work, rng) } else { Vec::new() });
        }
        if let Some((pos, value)) = nodes[current].untried.as_mut().and_then(|u| u.pop()) {
            let player = work.to_move();
            work.play_pos(pos as usize, player);
            played += 1;
            let (visits, wins) = if value > 0 {
                // Optimistic: counted as won, so the search looks at it closely; its real
                // results soon outweigh the bias if the tactic is a trap.
                let visits = PRIOR_VISITS * (value as f32).min(4.0) / 4.0 + PRIOR_VISITS / 2.0;
                (visits as u32, visits.floor())
            } else {
                (0, 0.0)
            };
            nodes.push(Node {
                pos,
                player,
                visits,
                wins,
                children: Vec::new(),
                untried: None,
            });
            let child = (nodes.len() - 1) as u32;
            nodes[current].children.push(child);
            path.push(child);
        }
        // Playout, then back to the root position.
        played += playout(&mut work, rng, &area, &mut order);
        let red_reward = reward(work.score_margin() - komi);
        for _ in 0..played {
            work.undo();
        }
        for &i in &path {
            let node = &mut nodes[i as usize];
            node.visits += 1;
            node.wins += if node.player == Player::Red {
                red_reward
            } else {
                1.0 - red_reward
            };
        }
    }
    let best = nodes[0].children.iter().max_by_key(|&&c| {
        (
            nodes[c as usize].visits,
            std::cmp::Reverse(nodes[c as usize].pos),
        )
    })?;
    let (x, y) = work.xy(nodes[*best as usize].pos as usize);
    Some(Choice { x, y, iterations })
}

/// Red's reward for a finished playout: mostly the result, partly the margin (so the search
/// sees a dot won even when random play would decide the game anyway).
fn reward(red_margin: i64) -> f32 {
    let result = match red_margin {
        m if m > 0 => 1.0,
        0 => 0.5,
        _ => 0.0,
    };
    let margin = 0.5 + 0.5 * (red_margin as f32 / 8.0).clamp(-1.0, 1.0);
    0.7 * result + 0.3 * margin
}

/// Free points outside houses: the ones worth playing.
fn is_candidate(board: &Board, pos: usize) -> bool {
    board.is_free(pos) && board.house_at(pos).is_none()
}

/// Candidate moves with their tactical value (dots the mover would win there plus dots the
/// enemy would win there), ordered for expansion: the best last, ties in random order.
fn candidates<R: Rng>(board: &mut Board, rng: &mut R) -> Vec<(u32, u32)> {
    let points = candidate_points(board, rng);
    let me = board.to_move();
    let mut out: Vec<(u32, u32)> = Vec::with_capacity(points.len());
    let mut pointless: Vec<(u32, u32)> = Vec::new();
    for pos in points {
        let mine = gain(board, pos as usize, me);
        let value = mine + gain(board, pos as usize, me.other());
        if mine == 0 && (is_corner(board, pos as usize) || is_self_atari(board, pos as usize, me)) {
            pointless.push((pos, value));
        } else {
            out.push((pos, value));
        }
    }
    if out.is_empty() {
        out = pointless;
    }
    // Stable sort keeps the random order among equals.
    out.sort_by_key(|&(_, value)| value);
    out
}

/// A corner point: a dot there can neither be captured nor help close a chain.
fn is_corner(board: &Board, pos: usize) -> bool {
    let (x, y) = board.xy(pos);
    (x == 0 || x + 1 == board.width()) && (y == 0 || y + 1 == board.height())
}

/// A dot of `player` at `pos` would have enemy dots on three sides and a free point on the
/// fourth: the enemy closes the ring there next and takes it. (On the edge a side is off the
/// board, neither an enemy dot nor free, so an edge point never counts.)
fn is_self_atari(board: &Board, pos: usize, player: Player) -> bool {
    let around = board.neighbours8(pos);
    let sides = [around[0], around[2], around[4], around[6]];
    let enemies = sides.iter().filter(|&&p| board.is_live_dot(p, player.other())).count();
    enemies == 3 && sides.iter().any(|&p| board.is_free(p))
}

/// Dots `player` would win by playing at `pos` now (tried and taken back).
fn gain(board: &mut Board, pos: usize, player: Player) -> u32 {
    if !board.may_capture_at(pos, player) {
        return 0;
    }
    let before = board.captured(player) as i64 - board.captured(player.other()) as i64;
    let outcome = board.play_pos(pos, player);
    let after = board.captured(player) as i64 - board.captured(player.other()) as i64;
    board.undo();
    if outcome.captured {
        (after - before).max(0) as u32
    } else {
        0
    }
}

/// Candidate points in random order: free points within two steps of a dot, else near the
/// middle on an empty board, else any free point outside houses, else any house point.
fn candidate_points<R: Rng>(board: &Board, rng: &mut R) -> Vec<u32> {
    let (w, h) = (board.width(), board.height());
    let (mut near, any_dot) = near_dots(board, 2);
    if !any_dot {
        let (cx, cy) = (w / 2, h / 2);
        for y in cy - 1..=cy + 1 {
            for x in cx - 1..=cx + 1 {
                near[board.pos(x, y)] = true;
            }
        }
    }
    let mut out: Vec<u32> = (0..board.padded_len())
        .filter(|&p| near[p] && is_candidate(board, p))
        .map(|p| p as u32)
        .collect();
    if out.is_empty() {
        out = (0..board.padded_len())
            .filter(|&p| is_candidate(board, p))
            .map(|p| p as u32)
            .collect();
    }
    if out.is_empty() {
        // Only house points are left and the game is not over (standard rules): a dot must go
        // into one. The search tells the mover's own house (harmless) from the enemy's (the dot
        // is captured at once) by the score after the move.
        out = (0..board.padded_len())
            .filter(|&p| board.is_free(p))
            .map(|p| p as u32)
            .collect();
    }
    out.shuffle(rng);
    out
}

/// How far from the dots on the board a playout plays (in steps, diagonals counting one).
const PLAYOUT_RADIUS: usize = 3;

/// The playout area narrows to the fight: points within this many steps of one of the last
/// [`FOCUS_DOTS`] dots, when at least [`FOCUS_MIN_POINTS`] such points are left. Tuned on 30x24 at
/// 0.3 s a move against oppai: 5 of 8 games won with it, 2 of 8 without (dots captured 440 to 415,
/// and 306 to 483).
const FOCUS_RADIUS: usize = 6;
const FOCUS_DOTS: usize = 8;
const FOCUS_MIN_POINTS: usize = 30;

/// The points playouts fill: free points outside houses within [`PLAYOUT_RADIUS`] of a dot (all of
/// them on an empty board), and of those only the ones near the last few dots (see
/// [`FOCUS_RADIUS`]). Filling the whole board at random would let captures far from the fight,
/// which neither player is making, decide the playout; strong programs play out locally. On a
/// crowded big board "near a dot" is most of the board, hence the second narrowing.
fn playout_area(board: &Board) -> Vec<u32> {
    let (near, any_dot) = near_dots(board, PLAYOUT_RADIUS);
    let all: Vec<u32> = (0..board.padded_len()).filter(|&p| (near[p] || !any_dot) && is_candidate(board, p)).map(|p| p as u32).collect();
    let recent: Vec<(usize, usize)> = board
        .history()
        .rev()
        .filter_map(|a| match a {
            Action::Dot { x, y, .. } => Some((x as usize, y as usize)),
            _ => None,
        })
        .take(FOCUS_DOTS)
        .collect();
    let focused: Vec<u32> = all
        .iter()
        .copied()
        .filter(|&p| {
            let (x, y) = board.xy(p as usize);
            recent.iter().any(|&(rx, ry)| x.abs_diff(rx) <= FOCUS_RADIUS && y.abs_diff(ry) <= FOCUS_RADIUS)
        })
        .collect();
    if focused.len() >= FOCUS_MIN_POINTS {
        focused
    } else {
        all
    }
}

/// Which points (padded positions) lie within `radius` steps of a dot, diagonals counting one;
/// and whether the board has any dot.
fn near_dots(board: &Board, radius: usize) -> (Vec<bool>, bool) {
    let (w, h) = (board.width(), board.height());
    let mut near = vec![false; board.padded_len()];
    let mut any_dot = false;
    for y in 0..h {
        for x in 0..w {
            if board.has_dot(board.pos(x, y)) {
                any_dot = true;
                for ny in y.saturating_sub(radius)..(y + radius + 1).min(h) {
                    for nx in x.saturating_sub(radius)..(x + radius + 1).min(w) {
                        near[board.pos(nx, ny)] = true;
                    }
                }
            }
        }
    }
    (near, any_dot)
}

/// Play the area's points in a random order, each mover taking the next point still playable.
/// Returns the number of dots played (for undo). Points outside the area and house points stay
/// empty: random dots there would only add noise to the score. (Also answering next to the previous
/// dot half the time, as the whole-board playouts did, lost more games against oppai: 1 of 12 won
/// against 4 of 12, 15x15 at 0.3 s a move.)
fn playout<R: Rng>(board: &mut Board, rng: &mut R, area: &[u32], order: &mut Vec<u32>) -> usize {
    order.clear();
    order.extend_from_slice(area);
    order.shuffle(rng);
    let mut played = 0;
    for &pos in order.iter() {
        if board.end().is_some() {
            break;
        }
        if is_candidate(board, pos as usize) {
            let player = board.to_move();
            board.play_pos(pos as usize, player);
            played += 1;
        }
    }
    played
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::games::dots::board::{Point, Rules};
    use rand::SeedableRng;
    use rand_chacha::ChaCha8Rng;

    fn never() -> impl FnMut() -> bool {
        || false
    }

    #[test]
    fn same_seed_same_move_and_always_legal() {
        for rules in [Rules::Standard, Rules::Classic] {
            let mut b = Board::new(8, 8, rules).unwrap();
            let mut game_rng = ChaCha8Rng::seed_from_u64(1);
            while b.end().is_none() {
                let a = choose_move(
                    &b,
                    60,
                    &mut ChaCha8Rng::seed_from_u64(b.move_count() as u64),
                    &mut never(),
                )
                .unwrap();
                let again = choose_move(
                    &b,
                    60,
                    &mut ChaCha8Rng::seed_from_u64(b.move_count() as u64),
                    &mut never(),
                )
                .unwrap();
                assert_eq!(a, again, "deterministic given the seed");
                assert!(
                    b.is_free(b.pos(a.x, a.y)),
                    "{rules:?}: ({}, {}) is not free",
                    a.x,
                    a.y
                );
                b.play(a.x, a.y).unwrap();
                // Mix in random dots so the AI meets many positions.
                if b.end().is_none() {
                    let free = b.free_points();
                    let (x, y) = free[game_rng.gen_range(0..free.len())];
                    b.play(x, y).unwrap();
                }
            }
            assert!(
                choose_move(&b, 10, &mut game_rng, &mut never()).is_none(),
                "no move once the game is over"
            );
        }
    }

    #[test]
    fn takes_a_free_capture() {
        // Black dot with three red neighbours: red to move closes the ring.
        let mut b = Board::new(9, 9, Rules::Standard).unwrap();
        for (x, y, p) in [
            (4, 4, Player::Black),
            (4, 3, Player::Red),
            (0, 8, Player::Black),
            (3, 4, Player::Red),
            (8, 0, Player::Black),
            (5, 4, Player::Red),
            (8, 8, Player::Black),
        ] {
            b.play_as(x, y, p).unwrap();
        }
        assert_eq!(b.to_move(), Player::Red);
        let c = choose_move(&b, 2000, &mut ChaCha8Rng::seed_from_u64(7), &mut never()).unwrap();
        assert_eq!((c.x, c.y), (4, 5), "closing the ring wins a dot");
        b.play(c.x, c.y).unwrap();
        assert_eq!(b.point(4, 4), Point::CapturedDot(Player::Black));
    }

    #[test]
    fn plays_into_a_house_when_nothing_else_is_left() {
        // 5x5: black along the top edge, red everywhere else but (2, 2), red's empty house.
        let mut b = Board::new(5, 5, Rules::Standard).unwrap();
        for x in 0..5 {
            b.play_as(x, 0, Player::Black).unwrap();
        }
        for y in 1..5 {
            for x in 0..5 {
                if (x, y) != (2, 2) {
                    b.play_as(x, y, Player::Red).unwrap();
                }
            }
        }
        assert_eq!(b.point(2, 2), Point::House(Player::Red));
        assert!(b.end().is_none());
        let c = choose_move(&b, 100, &mut ChaCha8Rng::seed_from_u64(1), &mut never())
            .expect("a move while the game is not over");
        assert_eq!((c.x, c.y), (2, 2));
    }

    #[test]
    fn playouts_fill_only_the_points_near_the_dots_and_are_taken_back() {
        let mut b = Board::new(20, 20, Rules::Standard).unwrap();
        b.play(2, 2).unwrap();
        b.play(3, 3).unwrap();
        let area = playout_area(&b);
        // Within three steps of (2, 2) or (3, 3): columns and rows 0 to 6, less the two dots.
        assert_eq!(area.len(), 7 * 7 - 2);
        assert!(area.iter().all(|&p| {
            let (x, y) = b.xy(p as usize);
            x <= 6 && y <= 6 && b.is_free(p as usize)
        }));
        let empty = Board::new(6, 5, Rules::Standard).unwrap();
        assert_eq!(playout_area(&empty).len(), 30, "an empty board plays out everywhere");
        let before: Vec<Point> = (0..20).flat_map(|y| (0..20).map(move |x| (x, y))).map(|(x, y)| b.point(x, y)).collect();
        let mut order = Vec::new();
        let played = playout(&mut b, &mut ChaCha8Rng::seed_from_u64(3), &area, &mut order);
        assert!(played > 0 && played <= area.len());
        for y in 0..20 {
            for x in 0..20 {
                if x > 6 || y > 6 {
                    assert_eq!(b.point(x, y), Point::Empty, "({x}, {y}) is outside the area");
                }
            }
        }
        for _ in 0..played {
            b.undo();
        }
        let after: Vec<Point> = (0..20).flat_map(|y| (0..20).map(move |x| (x, y))).map(|(x, y)| b.point(x, y)).collect();
        assert_eq!(before, after);
    }

    #[test]
    fn corners_and_self_ataris_are_left_out_unless_they_capture() {
        let mut b = Board::new(9, 9, Rules::Standard).unwrap();
        // Black on three sides of (4, 4); a red dot near the corner (0, 0).
        for (x, y, p) in [(4, 3, Player::Black), (1, 1, Player::Red), (3, 4, Player::Black), (7, 7, Player::Red), (5, 4, Player::Black)] {
            b.play_as(x, y, p).unwrap();
        }
        assert_eq!(b.to_move(), Player::Red);
        let listed = |b: &mut Board| -> Vec<(usize, usize)> {
            candidates(b, &mut ChaCha8Rng::seed_from_u64(2)).iter().map(|&(p, _)| b.xy(p as usize)).collect()
        };
        let moves = listed(&mut b);
        assert!(moves.contains(&(2, 2)) && moves.contains(&(4, 5)), "ordinary points are listed: {moves:?}");
        assert!(!moves.contains(&(4, 4)), "red at (4, 4) would be taken at (4, 5) next");
        assert!(!moves.contains(&(0, 0)) && !moves.contains(&(8, 8)), "corners are left out");
        // On the edge the fourth side is off the board: three enemy dots around it are no ring.
        for (x, y) in [(0, 3), (1, 4), (0, 5)] {
            b.play_as(x, y, Player::Black).unwrap();
        }
        assert!(!is_self_atari(&b, b.pos(0, 4), Player::Red));
        assert!(is_self_atari(&b, b.pos(4, 4), Player::Red));
        // The same point when it closes red's ring around the black dot at (4, 3): listed.
        let mut b = Board::new(9, 9, Rules::Standard).unwrap();
        for (x, y, p) in [(4, 3, Player::Black), (4, 2, Player::Red), (3, 4, Player::Black), (3, 3, Player::Red), (5, 4, Player::Black), (5, 3, Player::Red), (8, 6, Player::Black)] {
            b.play_as(x, y, p).unwrap();
        }
        assert_eq!(b.to_move(), Player::Red);
        assert!(is_self_atari(&b, b.pos(4, 4), Player::Red));
        assert!(listed(&mut b).contains(&(4, 4)), "a dot that captures is never pointless");
    }

    #[test]
    fn on_a_big_board_playouts_stay_near_the_last_dots() {
        let mut b = Board::new(39, 32, Rules::Standard).unwrap();
        // An old fight along the left edge, then eight dots far from it.
        for y in 0..10 {
            b.play(1 + y % 2, y * 3).unwrap();
        }
        for i in 0..FOCUS_DOTS {
            b.play(28 + i % 3, 20 + i).unwrap();
        }
        let area = playout_area(&b);
        assert!(area.len() >= FOCUS_MIN_POINTS);
        assert!(area.iter().all(|&p| {
            let (x, y) = b.xy(p as usize);
            (22..=36).contains(&x) && (14..=33).contains(&y)
        }));
        // Within three steps of a recent dot, every free point is in.
        assert!(area.contains(&(b.pos(25, 20) as u32)) && area.contains(&(b.pos(33, 27) as u32)));
        let (near, _) = near_dots(&b, PLAYOUT_RADIUS);
        assert!(near[b.pos(3, 3)], "the old fight's points are near dots, but left out");
    }

    #[test]
    fn stops_when_told() {
        let b = Board::new(20, 15, Rules::Standard).unwrap();
        let mut asked = 0;
        let c = choose_move(&b, u32::MAX, &mut ChaCha8Rng::seed_from_u64(0), &mut || {
            asked += 1;
            asked > 10
        })
        .unwrap();
        assert_eq!(c.iterations, 11);
    }
}
