//! Rule tests for both rule sets, undo, and the incremental capture check against a plain
//! whole-board reference of the original program's rules.

use super::board::*;
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;

use Player::{Black, Red};

fn board(w: usize, h: usize, rules: Rules) -> Board {
    Board::new(w, h, rules).unwrap()
}

/// Play `(x, y, player)` dots in order, each must be legal.
fn put(b: &mut Board, dots: &[(usize, usize, Player)]) -> Vec<MoveOutcome> {
    dots.iter()
        .map(|&(x, y, p)| {
            b.play_as(x, y, p)
                .unwrap_or_else(|e| panic!("({x},{y}) {p:?}: {e}"))
        })
        .collect()
}

/// A diamond of `p` around (x, y): closes it on the last dot.
fn diamond(x: usize, y: usize, p: Player) -> Vec<(usize, usize, Player)> {
    vec![(x, y - 1, p), (x - 1, y, p), (x + 1, y, p), (x, y + 1, p)]
}

#[test]
fn single_dot_captured_with_its_chain_both_rules() {
    for rules in [Rules::Standard, Rules::Classic] {
        let mut b = board(7, 7, rules);
        put(&mut b, &[(2, 2, Black)]);
        let outcomes = put(&mut b, &diamond(2, 2, Red));
        assert!(outcomes[..3].iter().all(|o| !o.captured), "{rules:?}");
        assert!(
            outcomes[3].captured && outcomes[3].enclosures == 1,
            "{rules:?}"
        );
        assert_eq!(b.captured(Red), 1);
        assert_eq!(b.captured(Black), 0);
        assert_eq!(b.point(2, 2), Point::CapturedDot(Black));
        let enclosure = &b.enclosures()[0];
        assert_eq!(enclosure.player, Red);
        let mut segments: Vec<_> = enclosure
            .segments
            .iter()
            .map(|s| {
                let mut s = *s;
                s.sort();
                s
            })
            .collect();
        segments.sort();
        assert_eq!(
            segments,
            vec![
                [(1, 2), (2, 1)],
                [(1, 2), (2, 3)],
                [(2, 1), (3, 2)],
                [(2, 3), (3, 2)]
            ],
            "{rules:?}"
        );
        // The captured point is out of play.
        assert_eq!(b.play_as(2, 2, Red), Err(IllegalMove::OutOfPlay(2, 2)));
        assert_eq!(b.play_as(2, 1, Black), Err(IllegalMove::Taken(2, 1)));
    }
}

#[test]
fn dots_on_the_edge_are_never_captured() {
    for rules in [Rules::Standard, Rules::Classic] {
        let mut b = board(6, 6, rules);
        put(
            &mut b,
            &[(0, 2, Black), (0, 1, Red), (1, 2, Red), (0, 3, Red)],
        );
        assert_eq!(b.captured(Red), 0, "{rules:?}");
        assert_eq!(b.point(0, 2), Point::Dot(Black));
        // A corner too.
        put(
            &mut b,
            &[(5, 5, Black), (4, 5, Red), (5, 4, Red), (4, 4, Red)],
        );
        assert_eq!(b.captured(Red), 0, "{rules:?}");
    }
}

#[test]
fn a_dot_one_step_from_the_edge_is_captured() {
    for rules in [Rules::Standard, Rules::Classic] {
        let mut b = board(6, 6, rules);
        put(
            &mut b,
            &[
                (1, 1, Black),
                (1, 0, Red),
                (0, 1, Red),
                (2, 1, Red),
                (1, 2, Red),
            ],
        );
        assert_eq!(b.captured(Red), 1, "{rules:?}");
        assert_eq!(b.point(1, 1), Point::CapturedDot(Black));
    }
}

#[test]
fn standard_empty_enclosure_is_a_house_and_a_dot_played_into_it_is_captured_at_once() {
    let mut b = board(7, 7, Rules::Standard);
    let outcomes = put(&mut b, &diamond(3, 3, Red));
    assert!(!outcomes[3].captured);
    assert_eq!(b.point(3, 3), Point::House(Red));
    assert_eq!(b.captured(Red), 0);
    assert!(b.enclosures().is_empty(), "an empty enclosure is not drawn");
    let o = b.play_as(3, 3, Black).unwrap();
    assert!(o.captured);
    assert_eq!(b.captured(Red), 1);
    assert_eq!(b.point(3, 3), Point::CapturedDot(Black));
    assert_eq!(b.enclosures().len(), 1);
    assert_eq!(b.enclosures()[0].player, Red);
    assert_eq!(b.to_move(), Red, "standard rules alternate");
}

#[test]
fn standard_own_house_is_playable_and_harmless() {
    let mut b = board(7, 7, Rules::Standard);
    put(&mut b, &diamond(3, 3, Red));
    let o = b.play_as(3, 3, Red).unwrap();
    assert!(!o.captured);
    assert_eq!(b.point(3, 3), Point::Dot(Red));
    assert_eq!(b.captured(Red) + b.captured(Black), 0);
}

#[test]
fn standard_dot_into_a_house_survives_when_it_closes_its_own_chain() {
    let mut b = board(7, 7, Rules::Standard);
    put(&mut b, &[(3, 1, Black), (2, 2, Black), (4, 2, Black)]);
    put(&mut b, &diamond(3, 3, Red));
    assert_eq!(b.point(3, 3), Point::House(Red));
    // Black's dot in the house completes black's ring round red (3, 2).
    let o = b.play_as(3, 3, Black).unwrap();
    assert!(o.captured);
    assert_eq!(b.captured(Black), 1);
    assert_eq!(b.captured(Red), 0);
    assert_eq!(b.point(3, 3), Point::Dot(Black));
    assert_eq!(b.point(3, 2), Point::CapturedDot(Red));
}

#[test]
fn classic_dot_in_a_house_lives_until_the_owner_moves_then_capture_and_place_again() {
    let mut b = board(7, 7, Rules::Classic);
    put(&mut b, &diamond(3, 3, Red));
    assert_eq!(
        b.point(3, 3),
        Point::Empty,
        "the original program marks no houses"
    );
    let o = b.play_as(3, 3, Black).unwrap();
    assert!(!o.captured);
    assert_eq!(b.point(3, 3), Point::Dot(Black));
    assert_eq!(b.to_move(), Red);
    // Red plays anywhere: the enclosed black dot is taken, and red places again.
    let o = b.play(0, 6).unwrap();
    assert!(o.captured);
    assert_eq!(b.captured(Red), 1);
    assert_eq!(b.point(3, 3), Point::CapturedDot(Black));
    assert_eq!(b.to_move(), Red, "whoever captures places another dot");
    b.play(6, 6).unwrap();
    assert_eq!(b.to_move(), Black);
}

#[test]
fn classic_captures_territory_with_the_group() {
    // Red ring round a 2x1 hole holding one black dot and one empty point.
    let mut b = board(8, 6, Rules::Classic);
    put(&mut b, &[(2, 2, Black)]);
    put(
        &mut b,
        &[
            (2, 1, Red),
            (3, 1, Red),
            (1, 2, Red),
            (4, 2, Red),
            (2, 3, Red),
            (3, 3, Red),
        ],
    );
    assert_eq!(b.captured(Red), 1);
    assert_eq!(b.point(3, 2), Point::Territory(Red));
    assert_eq!(b.play_as(3, 2, Black), Err(IllegalMove::OutOfPlay(3, 2)));
}

#[test]
fn the_new_dot_closes_the_smallest_enclosures_separately() {
    // Two compartments either side of (3, 2); the black dot is in the left one only.
    let walls = [(2, 1), (1, 2), (2, 3), (4, 1), (5, 2), (4, 3)];
    for rules in [Rules::Standard, Rules::Classic] {
        let mut b = board(7, 5, rules);
        put(&mut b, &[(2, 2, Black)]);
        put(&mut b, &walls.map(|(x, y)| (x, y, Red)));
        let o = b.play_as(3, 2, Red).unwrap();
        assert_eq!(o.enclosures, 1, "{rules:?}");
        assert_eq!(b.captured(Red), 1);
        assert_eq!(b.point(2, 2), Point::CapturedDot(Black));
        let right = if rules == Rules::Standard {
            Point::House(Red)
        } else {
            Point::Empty
        };
        assert_eq!(
            b.point(4, 2),
            right,
            "{rules:?}: the empty compartment captures nothing"
        );
        assert_eq!(b.point(3, 1), Point::Empty);
    }
}

#[test]
fn enclosure_inside_enclosure_adds_up() {
    for rules in [Rules::Standard, Rules::Classic] {
        let mut b = board(11, 11, rules);
        put(&mut b, &[(5, 5, Black)]);
        put(&mut b, &diamond(5, 5, Red));
        assert_eq!(b.captured(Red), 1);
        // Black dots next to the first ring, then a bigger red ring (all points at distance 4).
        put(&mut b, &[(3, 5, Black), (7, 5, Black)]);
        let mut ring = Vec::new();
        for y in 1..=9usize {
            for x in 1..=9usize {
                if x.abs_diff(5) + y.abs_diff(5) == 4 {
                    ring.push((x, y, Red));
                }
            }
        }
        let outcomes = put(&mut b, &ring);
        assert!(
            outcomes[..ring.len() - 1].iter().all(|o| !o.captured),
            "{rules:?}"
        );
        assert!(outcomes.last().unwrap().captured, "{rules:?}");
        assert_eq!(b.captured(Red), 3, "{rules:?}");
        assert_eq!(b.point(5, 5), Point::CapturedDot(Black));
        assert_eq!(b.point(3, 5), Point::CapturedDot(Black));
        assert_eq!(
            b.point(4, 5),
            Point::Dot(Red),
            "{rules:?}: the inner ring stays in play"
        );
        assert_eq!(b.enclosures().len(), 2);
    }
}

#[test]
fn recapture_frees_the_dots_captured_before() {
    for rules in [Rules::Standard, Rules::Classic] {
        let mut b = board(9, 9, rules);
        put(&mut b, &[(4, 4, Black)]);
        put(&mut b, &diamond(4, 4, Red));
        assert_eq!(b.captured(Red), 1);
        let ring = [
            (4, 2),
            (3, 3),
            (2, 4),
            (3, 5),
            (4, 6),
            (5, 5),
            (6, 4),
            (5, 3),
        ];
        let outcomes = put(&mut b, &ring.map(|(x, y)| (x, y, Black)));
        assert!(outcomes.last().unwrap().captured, "{rules:?}");
        assert_eq!(b.captured(Black), 4, "{rules:?}: the red ring");
        assert_eq!(
            b.captured(Red),
            0,
            "{rules:?}: the freed black dot no longer counts"
        );
        assert_eq!(b.point(4, 4), Point::Dot(Black), "{rules:?}");
        assert_eq!(b.point(4, 3), Point::CapturedDot(Red));
    }
}

#[test]
fn grounding_gives_loose_dots_to_the_other_player() {
    let mut b = board(8, 8, Rules::Standard);
    // Red: a grounded chain from the edge, and a loose pair in the middle.
    put(
        &mut b,
        &[
            (0, 3, Red),
            (1, 3, Red),
            (4, 4, Red),
            (4, 5, Red),
            (7, 7, Black),
        ],
    );
    let loose = b.ground(Red).unwrap();
    assert_eq!(loose, 2);
    assert_eq!(b.captured(Black), 2);
    assert_eq!(b.end(), Some(End::Grounded(Red)));
    assert_eq!(b.play_as(6, 6, Black), Err(IllegalMove::GameOver));
    assert_eq!(b.undo(), Some(Action::Ground { player: Red }));
    assert_eq!(b.captured(Black), 0);
    assert_eq!(b.end(), None);
}

#[test]
fn full_board_ends_the_game() {
    for seed in 0..20 {
        let mut b = board(5, 5, Rules::Standard);
        let mut rng = ChaCha8Rng::seed_from_u64(seed);
        while b.end().is_none() {
            // House points included: a dot may go there until the board is full.
            let free = b.free_points();
            assert!(!free.is_empty(), "seed {seed}: no point left but the game is not over");
            let (x, y) = free[rng.gen_range(0..free.len())];
            b.play(x, y).unwrap();
        }
        assert_eq!(b.end(), Some(End::Full));
        assert!(b.free_points().is_empty(), "seed {seed}: over with points free");
    }
}

/// 5x5, standard rules: black along the top edge, red everywhere else but (2, 2), which red's
/// dots surround: the only free point is inside red's empty house.
fn only_a_red_house_left(rules: Rules) -> Board {
    let mut b = board(5, 5, rules);
    let mut dots: Vec<(usize, usize, Player)> = (0..5).map(|x| (x, 0, Black)).collect();
    for y in 1..5 {
        for x in 0..5 {
            if (x, y) != (2, 2) {
                dots.push((x, y, Red));
            }
        }
    }
    put(&mut b, &dots);
    b
}

#[test]
fn standard_a_house_point_keeps_the_game_going_and_a_dot_there_is_captured_at_once() {
    let mut b = only_a_red_house_left(Rules::Standard);
    assert_eq!(b.point(2, 2), Point::House(Red));
    assert_eq!(b.free_points(), vec![(2, 2)]);
    assert_eq!(b.end(), None, "a dot may still go into the house: not over");
    assert_eq!((b.captured(Red), b.captured(Black)), (0, 0));
    assert_eq!(b.to_move(), Black);
    let o = b.play(2, 2).expect("a dot into the enemy's house is legal");
    assert!(o.captured);
    assert_eq!(b.point(2, 2), Point::CapturedDot(Black));
    assert_eq!((b.captured(Red), b.captured(Black)), (1, 0));
    assert_eq!(b.score_margin(), 1);
    assert_eq!(b.end(), Some(End::Full), "now no point is free");
    assert_eq!(b.play_as(2, 2, Red), Err(IllegalMove::GameOver));
    // Undo restores the open game.
    b.undo();
    assert_eq!(b.end(), None);
    assert_eq!(b.point(2, 2), Point::House(Red));
    assert_eq!(b.captured(Red), 0);
}

#[test]
fn standard_the_last_point_in_a_house_survives_when_it_closes_a_capturing_chain() {
    // y0: B B B B B      Red's diamond round (2, 2) is a house, the only free point; black's
    // y1: B B R B B      dot there closes black's ring (2,0) (1,1) (2,2) (3,1) round red (2, 1).
    // y2: R R . R R
    // y3: R R R R R
    // y4: R R R R R
    let mut b = board(5, 5, Rules::Standard);
    let mut dots: Vec<(usize, usize, Player)> = Vec::new();
    for (x, y) in [(0, 0), (1, 0), (2, 0), (3, 0), (4, 0), (0, 1), (1, 1), (3, 1), (4, 1)] {
        dots.push((x, y, Black));
    }
    dots.push((2, 1, Red));
    for y in 2..5 {
        for x in 0..5 {
            if (x, y) != (2, 2) {
                dots.push((x, y, Red));
            }
        }
    }
    put(&mut b, &dots);
    assert_eq!(b.point(2, 2), Point::House(Red));
    assert_eq!(b.free_points(), vec![(2, 2)]);
    assert_eq!(b.end(), None);
    let o = b.play_as(2, 2, Black).unwrap();
    assert!(o.captured);
    assert_eq!(b.point(2, 2), Point::Dot(Black), "not captured: its chain captured");
    assert_eq!(b.point(2, 1), Point::CapturedDot(Red));
    assert_eq!((b.captured(Red), b.captured(Black)), (0, 1));
    assert_eq!(b.end(), Some(End::Full));
}

#[test]
fn classic_the_last_point_inside_an_enclosure_ends_the_game_uncaptured() {
    // The original program marks no houses and captures only on the owner's move, which never
    // comes once the board is full: the difference from the standard rules, kept on purpose.
    let mut b = only_a_red_house_left(Rules::Classic);
    assert_eq!(b.point(2, 2), Point::Empty);
    assert_eq!(b.end(), None);
    let o = b.play_as(2, 2, Black).unwrap();
    assert!(!o.captured);
    assert_eq!(b.point(2, 2), Point::Dot(Black));
    assert_eq!((b.captured(Red), b.captured(Black)), (0, 0));
    assert_eq!(b.end(), Some(End::Full));
}

fn snapshot(b: &Board) -> (Vec<Point>, u32, u32, Player, usize) {
    let mut points = Vec::new();
    for y in 0..b.height() {
        for x in 0..b.width() {
            points.push(b.point(x, y));
        }
    }
    (
        points,
        b.captured(Red),
        b.captured(Black),
        b.to_move(),
        b.enclosures().len(),
    )
}

#[test]
fn undo_restores_every_position_of_random_games() {
    for rules in [Rules::Standard, Rules::Classic] {
        let mut captures = 0;
        for seed in 0..20 {
            let mut rng = ChaCha8Rng::seed_from_u64(seed);
            let mut b = board(8, 7, rules);
            let mut snapshots = vec![snapshot(&b)];
            while b.end().is_none() {
                let free = b.free_points();
                let (x, y) = free[rng.gen_range(0..free.len())];
                b.play(x, y).unwrap();
                snapshots.push(snapshot(&b));
            }
            captures += b.enclosures().len();
            while b.undo().is_some() {
                snapshots.pop();
                assert_eq!(
                    &snapshot(&b),
                    snapshots.last().unwrap(),
                    "{rules:?} seed {seed} after undo to move {}",
                    b.move_count()
                );
            }
        }
        assert!(
            captures > 20,
            "{rules:?}: random games should capture often, got {captures}"
        );
    }
}

/// The original program's rules, checked the plain way: after every move, every group of the
/// opponent's dots on the whole board is tested. The engine checks only near the new dot.
struct Reference {
    w: usize,
    h: usize,
    /// (dot owner, holder): holder is the capturer for captured dots and territory.
    cells: Vec<(Option<Player>, Option<Player>)>,
    captured: [u32; 2],
}

impl Reference {
    fn play(&mut self, x: usize, y: usize, p: Player) -> bool {
        self.cells[y * self.w + x] = (Some(p), Some(p));
        let wall = |c: (Option<Player>, Option<Player>)| c.0.is_some() && c.1 == Some(p);
        let mut done = vec![false; self.cells.len()];
        let mut any = false;
        for start in 0..self.cells.len() {
            let c = self.cells[start];
            if done[start] || !(c.0.is_some() && c.1 == Some(p.other())) {
                continue;
            }
            let mut region = vec![start];
            let mut seen = vec![false; self.cells.len()];
            seen[start] = true;
            let (mut i, mut open) = (0, false);
            while i < region.len() {
                let q = region[i];
                i += 1;
                let (qx, qy) = ((q % self.w) as i64, (q / self.w) as i64);
                for (dx, dy) in [(0, -1), (1, 0), (0, 1), (-1, 0)] {
                    let (nx, ny) = (qx + dx, qy + dy);
                    if nx < 0 || ny < 0 || nx >= self.w as i64 || ny >= self.h as i64 {
                        open = true;
                        continue;
                    }
                    let n = ny as usize * self.w + nx as usize;
                    if !seen[n] && !wall(self.cells[n]) {
                        seen[n] = true;
                        region.push(n);
                    }
                }
            }
            for &q in &region {
                done[q] = true;
            }
            if open {
                continue;
            }
            any = true;
            for &q in &region {
                let (dot, holder) = self.cells[q];
                match dot {
                    None => self.cells[q] = (None, Some(p)),
                    Some(d) if holder == Some(p.other()) => {
                        if d == p {
                            self.captured[p.other().index()] -= 1;
                        } else {
                            self.captured[p.index()] += 1;
                        }
                        self.cells[q] = (Some(d), Some(p));
                    }
                    _ => {}
                }
            }
        }
        any
    }
}

#[test]
fn classic_incremental_check_matches_the_whole_board_reference() {
    for seed in 0..30 {
        let mut rng = ChaCha8Rng::seed_from_u64(100 + seed);
        let (w, h) = (6 + seed as usize % 5, 5 + seed as usize % 4);
        let mut b = board(w, h, Rules::Classic);
        let mut r = Reference {
            w,
            h,
            cells: vec![(None, None); w * h],
            captured: [0, 0],
        };
        while b.end().is_none() {
            let free = b.free_points();
            let (x, y) = free[rng.gen_range(0..free.len())];
            let p = b.to_move();
            let o = b.play(x, y).unwrap();
            let any = r.play(x, y, p);
            if (o.enclosures > 0) != any {
                for yy in 0..h {
                    let row: String = (0..w)
                        .map(|xx| match b.point(xx, yy) {
                            Point::Empty => '.',
                            Point::Dot(Red) => 'R',
                            Point::Dot(Black) => 'B',
                            Point::CapturedDot(Red) => 'r',
                            Point::CapturedDot(Black) => 'b',
                            Point::Territory(Red) => '+',
                            Point::Territory(Black) => '-',
                            Point::House(_) => 'h',
                        })
                        .collect();
                    eprintln!("{row}");
                }
                eprintln!(
                    "{p:?} at ({x},{y}) engine {o:?} reference {any} {:?}",
                    r.captured
                );
            }
            assert_eq!(o.enclosures > 0, any, "seed {seed}: move ({x},{y})");
            assert_eq!(
                [b.captured(Red), b.captured(Black)],
                r.captured,
                "seed {seed}: move ({x},{y})"
            );
            for yy in 0..h {
                for xx in 0..w {
                    let (dot, holder) = r.cells[yy * w + xx];
                    let expected = match (dot, holder) {
                        (None, None) => Point::Empty,
                        (None, Some(p)) => Point::Territory(p),
                        (Some(d), Some(hp)) if d == hp => Point::Dot(d),
                        (Some(d), _) => Point::CapturedDot(d),
                    };
                    assert_eq!(
                        b.point(xx, yy),
                        expected,
                        "seed {seed}: ({xx},{yy}) after ({x},{y})"
                    );
                }
            }
        }
    }
}

mod sgf_records {
    use super::*;
    use crate::games::dots::sgf;

    #[test]
    fn round_trip_of_random_games_both_rules() {
        for rules in [Rules::Standard, Rules::Classic] {
            for seed in 0..5 {
                let mut rng = ChaCha8Rng::seed_from_u64(seed);
                let mut b = board(12, 9, rules);
                while b.end().is_none() && b.move_count() < 80 {
                    let free = b.free_points();
                    let (x, y) = free[rng.gen_range(0..free.len())];
                    b.play(x, y).unwrap();
                }
                let text = sgf::write(&b, "Ann", "Bob]");
                let game = sgf::parse(&text).unwrap();
                assert_eq!((game.width, game.height, game.rules), (12, 9, Some(rules)));
                assert_eq!(game.black_name.as_deref(), Some("Bob]"));
                let again = game.to_board(None).unwrap();
                assert_eq!(snapshot(&again), snapshot(&b), "{rules:?} seed {seed}");
                assert_eq!(sgf::write(&again, "Ann", "Bob]"), text);
            }
        }
    }

    #[test]
    fn reads_what_other_programs_write() {
        // oppai style: square size, chains after the dot, a variation after the main line.
        let text = "(;GM[40]FF[4]SZ[9]RU[russian]\n;B[cc];W[cb];W[bc];W[dc];W[cd.cbdccdbc](;B[ee])(;B[ff]))";
        let game = sgf::parse(text).unwrap();
        assert_eq!((game.width, game.height), (9, 9));
        assert_eq!(game.moves.len(), 6);
        assert_eq!(
            (game.moves[5].x, game.moves[5].y),
            (4, 4),
            "the first variation is the main line"
        );
        let b = game.to_board(None).unwrap();
        assert_eq!(b.captured(Red), 1);
    }

    #[test]
    fn errors_name_the_place_in_the_file() {
        let e = sgf::parse("(;GM[40]SZ[9]\n;B[cc];W[zz])").unwrap_err();
        assert_eq!((e.line, e.column), (2, 10), "{e}");
        assert!(e.message.contains("off the 9x9 board"));
        let e = sgf::parse("(;GM[1]SZ[9])").unwrap_err();
        assert!(e.message.contains("not a Dots record"), "{e}");
        let b = sgf::parse("(;GM[40]SZ[9]\n;B[cc]\n;W[cc])").unwrap();
        let e = b.to_board(None).unwrap_err();
        assert_eq!((e.line, e.column), (3, 4), "{e}");
        assert!(e.message.contains("taken"));
        assert!(e.to_string().starts_with("line 3, column 4"), "{e}");
        let e = sgf::parse("(;GM[40]SZ[4]").unwrap_err();
        assert!(
            e.message.contains("not closed") || e.message.contains("5 to 64"),
            "{e}"
        );
    }

    #[test]
    fn big_boards_use_the_extended_letters() {
        let mut b = board(64, 64, Rules::Standard);
        b.play(63, 60).unwrap();
        let text = sgf::write(&b, "", "");
        assert!(text.contains(";W[-8]"), "{text}");
        assert_eq!(
            snapshot(&sgf::parse(&text).unwrap().to_board(None).unwrap()),
            snapshot(&b)
        );
    }
}
