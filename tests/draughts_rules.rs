//! Hand-made positions for every rule subtlety that perft from the start position does not
//! reach: flying kings that must continue, majority and its tie-breaks, promotion during a
//! capture, Italian men against kings, Czech king precedence, duplicate capture paths.
//!
//! Diagrams use the engine's own geometry: row 0 at Black's edge, dark squares where
//! row + col is odd, `b`/`B` Black man/king, `w`/`W` White man/king.

use boardwatch::draughts::bitboard::{bit, square};
use boardwatch::draughts::movegen::{generate, legal_moves, Duplicates, Move, MoveList};
use boardwatch::draughts::{Color, Piece, Position, Variant};

fn diagram(rows: [&str; 8], to_move: Color) -> Position {
    let mut pos = Position::empty(to_move);
    for (r, line) in rows.iter().enumerate() {
        for (c, ch) in line.chars().enumerate() {
            if let Some(p) = Piece::from_grid_char(ch) {
                assert_eq!((r + c) % 2, 1, "piece on a light square at row {r} col {c}");
                pos.set(square(r as u8, c as u8), Some(p));
            }
        }
    }
    pos
}

fn moves(pos: &Position, variant: Variant) -> Vec<Move> {
    legal_moves(pos, &variant.rules())
}

fn captures_of(moves: &[Move]) -> Vec<u32> {
    moves.iter().map(|m| m.capture_count()).collect()
}

#[test]
fn flying_king_must_land_where_it_can_capture_on() {
    let pos = diagram(
        ["........", "........", "........", "..b.....", "........", "..b.....", "........", "W......."],
        Color::White,
    );
    for v in [Variant::Russian, Variant::Pool, Variant::Brazilian] {
        let ms = moves(&pos, v);
        // Landing on e5..h8 after taking c3 would end the move early: only d4 continues.
        assert_eq!(ms.len(), 2, "{v}: {ms:?}");
        for m in &ms {
            assert_eq!(m.capture_count(), 2);
            assert_eq!(m.path()[1], square(4, 3), "{v}: lands on d4 first");
        }
    }
}

#[test]
fn majority_rule_only_where_the_variant_has_it() {
    let pos = diagram(
        ["........", "........", ".....b..", "........", "...b....", "..w...b.", ".......w", "........"],
        Color::White,
    );
    assert_eq!(captures_of(&moves(&pos, Variant::Brazilian)), [2]);
    let mut free = captures_of(&moves(&pos, Variant::Russian));
    free.sort();
    assert_eq!(free, [1, 2]);
    assert_eq!(moves(&pos, Variant::Pool).len(), 2);
}

#[test]
fn italian_men_may_not_capture_kings() {
    let pos = diagram(
        ["........", "........", "........", "........", "...B....", "..w.....", "........", "........"],
        Color::White,
    );
    assert!(moves(&pos, Variant::Italian).iter().all(|m| !m.is_capture()));
    assert!(moves(&pos, Variant::English).iter().all(|m| m.is_capture()));
}

#[test]
fn italian_king_must_capture_rather_than_man() {
    let pos = diagram(
        ["........", "........", "........", "........", ".....b..", "......w.", ".b......", "W......."],
        Color::White,
    );
    let ms = moves(&pos, Variant::Italian);
    assert_eq!(ms.len(), 1);
    assert_eq!(ms[0].from, square(7, 0));
    assert_eq!(moves(&pos, Variant::English).len(), 2);
}

#[test]
fn italian_and_spanish_take_the_most_kings() {
    let pos = diagram(
        ["........", "........", "........", "..b.B...", "...W....", "........", "........", "........"],
        Color::White,
    );
    for v in [Variant::Italian, Variant::Spanish] {
        let ms = moves(&pos, v);
        assert!(!ms.is_empty(), "{v}");
        // Spanish kings fly: several landing squares, but always the king is taken.
        assert!(ms.iter().all(|m| m.captured == bit(square(3, 4))), "{v} takes the king: {ms:?}");
    }
    assert_eq!(moves(&pos, Variant::English).len(), 2);
}

#[test]
fn italian_takes_the_king_met_earliest() {
    let pos = diagram(
        ["........", "........", ".B...b..", "........", ".b.B....", "..W.....", "........", "........"],
        Color::White,
    );
    let ms = moves(&pos, Variant::Italian);
    assert_eq!(ms.len(), 1, "{ms:?}");
    assert_eq!(ms[0].captured_in_order(), [square(4, 3), square(2, 5)]);
    assert_eq!(moves(&pos, Variant::English).len(), 2);
}

#[test]
fn czech_king_captures_take_precedence() {
    let pos = diagram(
        [".....W..", "......b.", "........", "........", "...b....", "........", ".b......", "w......."],
        Color::White,
    );
    let ms = moves(&pos, Variant::Czech);
    assert_eq!(ms.len(), 1);
    assert_eq!(ms[0].from, square(0, 5));
    assert_eq!(ms[0].capture_count(), 1);
    let mut english = captures_of(&moves(&pos, Variant::English));
    english.sort();
    assert_eq!(english, [1, 2]);
}

#[test]
fn promotion_during_a_capture_per_variant() {
    let pos = diagram(
        ["........", "..b.b...", ".w......", "........", "........", "........", "........", "........"],
        Color::White,
    );
    // Pool and Brazilian: the man must capture on backwards and is not crowned.
    for v in [Variant::Pool, Variant::Brazilian] {
        let ms = moves(&pos, v);
        assert_eq!(ms.len(), 1, "{v}");
        assert_eq!((ms[0].capture_count(), ms[0].crowns, ms[0].to), (2, false, square(2, 5)), "{v}");
    }
    // Russian: crowned on the far row, it goes on as a flying king.
    let ms = moves(&pos, Variant::Russian);
    assert_eq!(ms.len(), 3);
    assert!(ms.iter().all(|m| m.crowns && m.capture_count() == 2));
    // English (men capture forwards only): crowned, and the move ends.
    let ms = moves(&pos, Variant::English);
    assert_eq!(ms.len(), 1);
    assert_eq!((ms[0].capture_count(), ms[0].crowns, ms[0].to), (1, true, square(0, 3)));
}

#[test]
fn captured_pieces_are_not_jumped_twice_and_duplicate_paths_are_one_move() {
    // A king jumps a ring of four men back to its start square, clockwise or counter-clockwise.
    let pos = diagram(
        ["........", "..b.b...", "........", "..b.b...", "...W....", "........", "........", "........"],
        Color::White,
    );
    let rules = Variant::English.rules();
    let mut list = MoveList::new();
    generate(&pos, &rules, Duplicates::Keep, &mut list);
    assert_eq!(list.len(), 2, "{list:?}");
    assert!(list.iter().all(|m| m.capture_count() == 4 && m.from == m.to));
    generate(&pos, &rules, Duplicates::Remove, &mut list);
    assert_eq!(list.len(), 1);
    let after = pos.play(&list[0]);
    assert_eq!(after.black, 0);
    assert_eq!(after.kings, bit(square(4, 3)));
}

#[test]
fn no_pieces_or_no_moves_means_no_legal_move() {
    let rules = Variant::English.rules();
    let blocked = diagram(
        ["........", "........", "........", "........", "........", "..b.....", ".b......", "w......."],
        Color::White,
    );
    assert!(!blocked.has_legal_move(&rules));
    assert!(!Position::empty(Color::Black).has_legal_move(&rules));
}
