//! A fast move generator and perft for English checkers (and any rule set with the same flags:
//! men move and capture forwards only, kings move one step, capturing is compulsory with free
//! choice among captures, a man crowned during a capture stops there).
//!
//! It works on the engine's own 64-bit boards (`bit = row * 8 + col`), moving whole sets of
//! pieces at once with shifts: one step is `>> 9` (up-left), `>> 7` (up-right), `<< 7`
//! (down-left) or `<< 9` (down-right). No column masks are needed: a shift that wraps around a
//! board edge always lands on a light square, and every set it is combined with (the empty dark
//! squares, the opponent's pieces) holds dark squares only. Jumps are two such shifts (onto an
//! opponent's piece, then onto an empty square). Perft counts the last ply in bulk (plain moves
//! by population count) and walks plain moves straight from the shifted sets, without building a
//! move list; captures, which are rare, go through a per-ply buffer allocated once per call.
//!
//! Captured pieces are taken off the board at once here, where the generic generator leaves them
//! until the move ends: under these rules it makes no difference, since a jump's landing square
//! is two rows and two columns from the previous one, so it is never a square a piece was
//! captured on, and a piece is never jumped twice (kings skip captured pieces; men only go
//! forwards).
//!
//! `tests` checks it against [`super::movegen::generate`] on many random positions.

use super::bitboard::{row_mask, Square, Squares, DARK};
use super::movegen::Duplicates;
use super::position::{Color, Position};
use super::rules::{CapturePrecedence, PromotionInCapture, Rules};

/// Whether `rules` are the English rules this module implements.
pub fn applies(rules: &Rules) -> bool {
    !rules.men_capture_backwards
        && !rules.flying_kings
        && rules.men_capture_kings
        && rules.precedence == CapturePrecedence::FREE
        && rules.promotion_in_capture == PromotionInCapture::CrownAndStop
}

#[derive(Clone, Copy)]
struct Board {
    black: u64,
    white: u64,
    kings: u64,
}

/// One capture sequence, as its effect on the board.
#[derive(Clone, Copy)]
struct Capture {
    from: u64,
    to: u64,
    captured: u64,
    crowns: bool,
}

/// One step in direction `D`: 0 up-left, 1 up-right, 2 down-left, 3 down-right.
#[inline(always)]
fn step<const D: u8>(x: u64) -> u64 {
    match D {
        0 => x >> 9,
        1 => x >> 7,
        2 => x << 7,
        _ => x << 9,
    }
}

/// One step against direction `D`.
#[inline(always)]
fn back<const D: u8>(x: u64) -> u64 {
    match D {
        0 => x << 9,
        1 => x << 7,
        2 => x >> 7,
        _ => x >> 9,
    }
}

/// The side to move, as a type, so that each side's code is compiled with its constants.
trait Side {
    type Other: Side;
    /// The two forward directions of this side's men.
    const F0: u8;
    const F1: u8;
    /// The row this side's men are crowned on.
    const PROMOTION: u64;
    fn own(b: &Board) -> u64;
    fn opp(b: &Board) -> u64;
    fn board(own: u64, opp: u64, kings: u64) -> Board;
}

struct Black;
struct White;

impl Side for Black {
    type Other = White;
    const F0: u8 = 2;
    const F1: u8 = 3;
    const PROMOTION: u64 = row_mask(7);
    #[inline(always)]
    fn own(b: &Board) -> u64 {
        b.black
    }
    #[inline(always)]
    fn opp(b: &Board) -> u64 {
        b.white
    }
    #[inline(always)]
    fn board(own: u64, opp: u64, kings: u64) -> Board {
        Board { black: own, white: opp, kings }
    }
}

impl Side for White {
    type Other = Black;
    const F0: u8 = 0;
    const F1: u8 = 1;
    const PROMOTION: u64 = row_mask(0);
    #[inline(always)]
    fn own(b: &Board) -> u64 {
        b.white
    }
    #[inline(always)]
    fn opp(b: &Board) -> u64 {
        b.black
    }
    #[inline(always)]
    fn board(own: u64, opp: u64, kings: u64) -> Board {
        Board { black: opp, white: own, kings }
    }
}

#[inline(always)]
fn empty_squares(b: &Board) -> u64 {
    DARK & !(b.black | b.white)
}

/// Whether the side to move has any capture.
#[inline(always)]
fn has_capture<S: Side>(b: &Board) -> bool {
    let own = S::own(b);
    let opp = S::opp(b);
    let empty = empty_squares(b);
    let mut landings = step_dir(step_dir(own, S::F0) & opp, S::F0) & empty;
    landings |= step_dir(step_dir(own, S::F1) & opp, S::F1) & empty;
    let kings = own & b.kings;
    if kings != 0 {
        // The backward directions of this side are the forward ones of the other.
        let (b0, b1) = (<S::Other as Side>::F0, <S::Other as Side>::F1);
        landings |= back_jump(kings, opp, empty, b0) | back_jump(kings, opp, empty, b1);
    }
    landings != 0
}

#[inline(always)]
fn back_jump(kings: u64, opp: u64, empty: u64, dir: u8) -> u64 {
    match dir {
        0 => step::<0>(step::<0>(kings) & opp) & empty,
        1 => step::<1>(step::<1>(kings) & opp) & empty,
        2 => step::<2>(step::<2>(kings) & opp) & empty,
        _ => step::<3>(step::<3>(kings) & opp) & empty,
    }
}

/// The capture search of one piece.
struct Jumps<'a> {
    opp: u64,
    /// Empty dark squares, the moving piece's start square included.
    empty: u64,
    from: u64,
    /// Where this piece's sequences start in `out`, for removing duplicates.
    first: usize,
    remove_duplicates: bool,
    out: &'a mut Vec<Capture>,
}

impl Jumps<'_> {
    #[inline(always)]
    fn man_dir<S: Side>(&mut self, dir: u8, at: u64, captured: u64) -> bool {
        let victim = step_dir(at, dir) & self.opp;
        let landing = step_dir(victim, dir) & self.empty;
        if landing == 0 {
            return false;
        }
        let captured = captured | victim;
        if landing & S::PROMOTION != 0 {
            self.out.push(Capture { from: self.from, to: landing, captured, crowns: true });
        } else if !self.man::<S>(landing, captured) {
            self.out.push(Capture { from: self.from, to: landing, captured, crowns: false });
        }
        true
    }

    /// Continue a man's sequence from `at`; whether it could jump at all.
    fn man<S: Side>(&mut self, at: u64, captured: u64) -> bool {
        let a = self.man_dir::<S>(S::F0, at, captured);
        let b = self.man_dir::<S>(S::F1, at, captured);
        a | b
    }

    #[inline(always)]
    fn king_dir<const D: u8>(&mut self, at: u64, captured: u64) -> bool {
        let victim = step::<D>(at) & self.opp & !captured;
        let landing = step::<D>(victim) & self.empty;
        if landing == 0 {
            return false;
        }
        let captured = captured | victim;
        if !self.king(landing, captured) {
            let duplicate = self.remove_duplicates
                && self.out[self.first..].iter().any(|c| c.to == landing && c.captured == captured);
            if !duplicate {
                self.out.push(Capture { from: self.from, to: landing, captured, crowns: false });
            }
        }
        true
    }

    /// Continue a king's sequence from `at`; whether it could jump at all.
    fn king(&mut self, at: u64, captured: u64) -> bool {
        let a = self.king_dir::<0>(at, captured);
        let b = self.king_dir::<1>(at, captured);
        let c = self.king_dir::<2>(at, captured);
        let d = self.king_dir::<3>(at, captured);
        a | b | c | d
    }
}

/// The pieces of the side to move that can capture (men forwards, kings both ways).
#[inline(always)]
fn jumpers<S: Side>(b: &Board) -> u64 {
    let own = S::own(b);
    let opp = S::opp(b);
    let empty = empty_squares(b);
    let (f0, f1) = (S::F0, S::F1);
    let (b0, b1) = (<S::Other as Side>::F0, <S::Other as Side>::F1);
    // A piece can jump forwards where, two steps back from an empty square, one step back is
    // an opponent's piece.
    let mut from = back_dir(back_dir(empty, f0) & opp, f0) | back_dir(back_dir(empty, f1) & opp, f1);
    let kings = own & b.kings;
    if kings != 0 {
        from &= own;
        from |= kings & (back_dir(back_dir(empty, b0) & opp, b0) | back_dir(back_dir(empty, b1) & opp, b1));
        return from;
    }
    from & own
}

/// Fill `out` with every capture sequence of the side to move.
fn captures<S: Side>(b: &Board, duplicates: Duplicates, out: &mut Vec<Capture>) {
    out.clear();
    let empty = empty_squares(b);
    let mut jumps = Jumps {
        opp: S::opp(b),
        empty,
        from: 0,
        first: 0,
        remove_duplicates: duplicates == Duplicates::Remove,
        out,
    };
    let mut pieces = jumpers::<S>(b);
    while pieces != 0 {
        let from = pieces & pieces.wrapping_neg();
        pieces &= pieces - 1;
        jumps.from = from;
        jumps.first = jumps.out.len();
        jumps.empty = empty | from;
        if b.kings & from != 0 {
            jumps.king(from, 0);
        } else {
            jumps.man::<S>(from, 0);
        }
    }
}

/// How many capture sequences a man on `at` has (0 if it cannot jump). A man's sequences
/// never have the same effect: the captured set, sorted by row, gives the path.
fn man_sequences<S: Side>(at: u64, opp: u64, empty: u64) -> u32 {
    let mut n = 0;
    for dir in [S::F0, S::F1] {
        let victim = step_dir(at, dir) & opp;
        let landing = step_dir(victim, dir) & empty;
        if landing != 0 {
            n += if landing & S::PROMOTION != 0 { 1 } else { man_sequences::<S>(landing, opp, empty).max(1) };
        }
    }
    n
}

/// How many capture sequences a king on `at` has, every path counted.
fn king_paths(at: u64, opp: u64, empty: u64, captured: u64) -> u32 {
    let mut n = 0;
    for dir in 0..4 {
        let victim = step_dir(at, dir) & opp & !captured;
        let landing = step_dir(victim, dir) & empty;
        if landing != 0 {
            n += king_paths(landing, opp, empty, captured | victim).max(1);
        }
    }
    n
}

/// The number of captures of the side to move (which has one at least).
fn count_captures<S: Side>(b: &Board, duplicates: Duplicates, buf: &mut Vec<Capture>) -> u64 {
    let opp = S::opp(b);
    let empty = empty_squares(b);
    let pieces = jumpers::<S>(b);
    let mut n = 0;
    for from in Bits(pieces & !b.kings) {
        n += man_sequences::<S>(from, opp, empty);
    }
    let kings = pieces & b.kings;
    if kings != 0 {
        if duplicates == Duplicates::Keep {
            for from in Bits(kings) {
                n += king_paths(from, opp, empty | from, 0);
            }
        } else {
            buf.clear();
            let mut jumps = Jumps { opp, empty, from: 0, first: 0, remove_duplicates: true, out: buf };
            for from in Bits(kings) {
                jumps.from = from;
                jumps.first = jumps.out.len();
                jumps.empty = empty | from;
                jumps.king(from, 0);
            }
            n += buf.len() as u32;
        }
    }
    n as u64
}

/// The set bits of a board, one at a time, as one-bit boards.
struct Bits(u64);

impl Iterator for Bits {
    type Item = u64;
    #[inline(always)]
    fn next(&mut self) -> Option<u64> {
        if self.0 == 0 {
            return None;
        }
        let b = self.0 & self.0.wrapping_neg();
        self.0 &= self.0 - 1;
        Some(b)
    }
}

#[inline(always)]
fn make<S: Side>(b: &Board, c: &Capture) -> Board {
    let own = (S::own(b) & !c.from) | c.to;
    let opp = S::opp(b) & !c.captured;
    let mut kings = b.kings & !(c.captured | c.from);
    if c.crowns || b.kings & c.from != 0 {
        kings |= c.to;
    }
    S::board(own, opp, kings)
}

/// The number of legal moves (bulk counting at perft's last ply).
#[inline(always)]
fn count<S: Side>(b: &Board, duplicates: Duplicates, buf: &mut Vec<Capture>) -> u64 {
    if has_capture::<S>(b) {
        return count_captures::<S>(b, duplicates, buf);
    }
    let own = S::own(b);
    let empty = empty_squares(b);
    let mut n = (step_dir(own, S::F0) & empty).count_ones() + (step_dir(own, S::F1) & empty).count_ones();
    let kings = own & b.kings;
    if kings != 0 {
        let (b0, b1) = (<S::Other as Side>::F0, <S::Other as Side>::F1);
        n += (step_dir(kings, b0) & empty).count_ones() + (step_dir(kings, b1) & empty).count_ones();
    }
    n as u64
}

#[inline(always)]
fn step_dir(x: u64, dir: u8) -> u64 {
    match dir {
        0 => step::<0>(x),
        1 => step::<1>(x),
        2 => step::<2>(x),
        _ => step::<3>(x),
    }
}

#[inline(always)]
fn back_dir(x: u64, dir: u8) -> u64 {
    match dir {
        0 => back::<0>(x),
        1 => back::<1>(x),
        2 => back::<2>(x),
        _ => back::<3>(x),
    }
}

/// A child of a node: counted in place at the last ply, searched otherwise.
#[inline(always)]
fn child<S: Side>(b: &Board, depth: u32, duplicates: Duplicates, bufs: &mut [Vec<Capture>]) -> u64 {
    if depth == 1 {
        count::<S>(b, duplicates, &mut bufs[0])
    } else {
        node::<S>(b, depth, duplicates, bufs)
    }
}

fn node<S: Side>(b: &Board, depth: u32, duplicates: Duplicates, bufs: &mut [Vec<Capture>]) -> u64 {
    let (buf, rest) = bufs.split_first_mut().expect("one capture buffer per ply");
    if depth == 1 {
        return count::<S>(b, duplicates, buf);
    }
    let mut sum = 0;
    if has_capture::<S>(b) {
        captures::<S>(b, duplicates, buf);
        for c in buf.iter() {
            sum += child::<S::Other>(&make::<S>(b, c), depth - 1, duplicates, rest);
        }
        return sum;
    }
    let own = S::own(b);
    let opp = S::opp(b);
    let empty = empty_squares(b);
    let men = own & !b.kings;
    let kings = own & b.kings;
    sum += plain_men::<S>(S::F0, men, own, opp, b.kings, empty, depth, duplicates, rest);
    sum += plain_men::<S>(S::F1, men, own, opp, b.kings, empty, depth, duplicates, rest);
    if kings != 0 {
        sum += plain_kings::<S, 0>(kings, own, opp, b.kings, empty, depth, duplicates, rest);
        sum += plain_kings::<S, 1>(kings, own, opp, b.kings, empty, depth, duplicates, rest);
        sum += plain_kings::<S, 2>(kings, own, opp, b.kings, empty, depth, duplicates, rest);
        sum += plain_kings::<S, 3>(kings, own, opp, b.kings, empty, depth, duplicates, rest);
    }
    sum
}

#[allow(clippy::too_many_arguments)]
#[inline(always)]
fn plain_men<S: Side>(
    dir: u8,
    men: u64,
    own: u64,
    opp: u64,
    kings: u64,
    empty: u64,
    depth: u32,
    duplicates: Duplicates,
    bufs: &mut [Vec<Capture>],
) -> u64 {
    let mut sum = 0;
    let mut targets = step_dir(men, dir) & empty;
    while targets != 0 {
        let to = targets & targets.wrapping_neg();
        targets &= targets - 1;
        let from = back_dir(to, dir);
        let next = S::board(own ^ (from | to), opp, kings | (to & S::PROMOTION));
        sum += child::<S::Other>(&next, depth - 1, duplicates, bufs);
    }
    sum
}

#[allow(clippy::too_many_arguments)]
#[inline(always)]
fn plain_kings<S: Side, const D: u8>(
    own_kings: u64,
    own: u64,
    opp: u64,
    kings: u64,
    empty: u64,
    depth: u32,
    duplicates: Duplicates,
    bufs: &mut [Vec<Capture>],
) -> u64 {
    let mut sum = 0;
    let mut targets = step::<D>(own_kings) & empty;
    while targets != 0 {
        let to = targets & targets.wrapping_neg();
        targets &= targets - 1;
        let moved = back::<D>(to) | to;
        let next = S::board(own ^ moved, opp, kings ^ moved);
        sum += child::<S::Other>(&next, depth - 1, duplicates, bufs);
    }
    sum
}

fn board_of(pos: &Position) -> Board {
    Board { black: pos.black & DARK, white: pos.white & DARK, kings: pos.kings & DARK }
}

/// Perft under English rules: the leaves of the legal move tree `depth` plies deep.
pub fn perft(pos: &Position, depth: u32, duplicates: Duplicates) -> u64 {
    if depth == 0 {
        return 1;
    }
    let b = board_of(pos);
    let mut bufs: Vec<Vec<Capture>> = (0..depth).map(|_| Vec::with_capacity(64)).collect();
    match pos.to_move {
        Color::Black => node::<Black>(&b, depth, duplicates, &mut bufs),
        Color::White => node::<White>(&b, depth, duplicates, &mut bufs),
    }
}

/// A legal move as this generator sees it: its effect on the board, without the path.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Effect {
    pub from: Square,
    pub to: Square,
    pub captured: u64,
    pub crowns: bool,
}

/// The legal moves of `pos` under English rules, as effects (one per capture path when
/// `duplicates` is [`Duplicates::Keep`]).
pub fn moves(pos: &Position, duplicates: Duplicates) -> Vec<Effect> {
    let b = board_of(pos);
    let mut buf = Vec::new();
    let has = match pos.to_move {
        Color::Black => has_capture::<Black>(&b),
        Color::White => has_capture::<White>(&b),
    };
    let square = |x: u64| x.trailing_zeros() as Square;
    if has {
        match pos.to_move {
            Color::Black => captures::<Black>(&b, duplicates, &mut buf),
            Color::White => captures::<White>(&b, duplicates, &mut buf),
        }
        return buf
            .iter()
            .map(|c| Effect { from: square(c.from), to: square(c.to), captured: c.captured, crowns: c.crowns })
            .collect();
    }
    let (own, forward, promotion): (u64, [u8; 2], u64) = match pos.to_move {
        Color::Black => (b.black, [Black::F0, Black::F1], Black::PROMOTION),
        Color::White => (b.white, [White::F0, White::F1], White::PROMOTION),
    };
    let empty = empty_squares(&b);
    let mut out = Vec::new();
    for from in Squares(own) {
        let bit = 1u64 << from;
        let king = b.kings & bit != 0;
        for dir in 0..4u8 {
            if !king && !forward.contains(&dir) {
                continue;
            }
            let to = step_dir(bit, dir) & empty;
            if to != 0 {
                let crowns = !king && to & promotion != 0;
                out.push(Effect { from, to: square(to), captured: 0, crowns });
            }
        }
    }
    out
}

/// The number of legal moves of `pos` under English rules.
pub fn count_moves(pos: &Position, duplicates: Duplicates) -> u64 {
    let b = board_of(pos);
    let mut buf = Vec::new();
    match pos.to_move {
        Color::Black => count::<Black>(&b, duplicates, &mut buf),
        Color::White => count::<White>(&b, duplicates, &mut buf),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::draughts::bitboard::{bit, row_of};
    use crate::draughts::movegen::{count_moves as generic_count, generate, MoveList};
    use crate::draughts::perft::perft_generic;
    use crate::draughts::position::Piece;
    use crate::draughts::rules::Variant;
    use rand::{Rng, SeedableRng};
    use rand_chacha::ChaCha8Rng;

    const MODES: [Duplicates; 2] = [Duplicates::Remove, Duplicates::Keep];

    fn generic_effects(pos: &Position, duplicates: Duplicates) -> Vec<Effect> {
        let mut list = MoveList::new();
        generate(pos, &Variant::English.rules(), duplicates, &mut list);
        let mut effects: Vec<Effect> = list
            .iter()
            .map(|m| Effect { from: m.from, to: m.to, captured: m.captured, crowns: m.crowns })
            .collect();
        effects.sort();
        effects
    }

    fn fast_effects(pos: &Position, duplicates: Duplicates) -> Vec<Effect> {
        let mut effects = moves(pos, duplicates);
        effects.sort();
        effects
    }

    /// Pieces of both sides scattered over the board, kings as often as men at times; a man
    /// that would stand on its crowning row is a king instead.
    fn random_position(rng: &mut ChaCha8Rng) -> Position {
        let mut pos = Position::empty(if rng.gen() { Color::Black } else { Color::White });
        let king_share: f64 = rng.gen_range(0.0..1.0);
        let dark: Vec<Square> = Squares(DARK).collect();
        for color in [Color::Black, Color::White] {
            for _ in 0..rng.gen_range(1..=12) {
                let sq = dark[rng.gen_range(0..dark.len())];
                if pos.piece_at(sq).is_some() {
                    continue;
                }
                let king = rng.gen_bool(king_share) || row_of(sq) == color.promotion_row();
                pos.set(sq, Some(if king { Piece::King(color) } else { Piece::Man(color) }));
            }
        }
        pos
    }

    #[derive(Default, Debug)]
    struct Seen {
        positions: usize,
        captures: usize,
        multi_jumps: usize,
        king_captures: usize,
        crowning_captures: usize,
        crowning_steps: usize,
        king_steps: usize,
        duplicates: usize,
        no_move: usize,
    }

    fn check(pos: &Position, seen: &mut Seen) {
        let rules = Variant::English.rules();
        for duplicates in MODES {
            let expected = generic_effects(pos, duplicates);
            assert_eq!(fast_effects(pos, duplicates), expected, "{duplicates:?} in\n{pos:?}");
            let mut scratch = MoveList::new();
            assert_eq!(count_moves(pos, duplicates), generic_count(pos, &rules, duplicates, &mut scratch), "{pos:?}");
        }
        let kept = generic_effects(pos, Duplicates::Keep);
        let removed = generic_effects(pos, Duplicates::Remove);
        seen.positions += 1;
        seen.duplicates += usize::from(kept.len() > removed.len());
        seen.no_move += usize::from(kept.is_empty());
        for m in &kept {
            let by_king = pos.kings & bit(m.from) != 0;
            if m.captured != 0 {
                seen.captures += 1;
                seen.multi_jumps += usize::from(m.captured.count_ones() > 1);
                seen.king_captures += usize::from(by_king);
                seen.crowning_captures += usize::from(m.crowns);
            } else {
                seen.crowning_steps += usize::from(m.crowns);
                seen.king_steps += usize::from(by_king);
            }
        }
    }

    #[test]
    fn same_moves_as_the_generic_generator_on_random_positions() {
        let mut rng = ChaCha8Rng::seed_from_u64(36);
        let mut seen = Seen::default();
        for _ in 0..30_000 {
            check(&random_position(&mut rng), &mut seen);
        }
        // Every kind of move was met, so a bug in any of them would have failed above.
        assert!(seen.captures > 10_000 && seen.multi_jumps > 1_000, "{seen:?}");
        assert!(seen.king_captures > 1_000 && seen.crowning_captures > 500, "{seen:?}");
        assert!(seen.crowning_steps > 1_000 && seen.king_steps > 10_000, "{seen:?}");
        assert!(seen.duplicates > 5 && seen.no_move > 10, "{seen:?}");
    }

    #[test]
    fn same_moves_as_the_generic_generator_along_random_games() {
        let rules = Variant::English.rules();
        let mut rng = ChaCha8Rng::seed_from_u64(37);
        let mut seen = Seen::default();
        let mut list = MoveList::new();
        for _ in 0..400 {
            let mut pos = Position::start(&rules);
            for _ in 0..150 {
                check(&pos, &mut seen);
                generate(&pos, &rules, Duplicates::Keep, &mut list);
                if list.is_empty() {
                    break;
                }
                pos = pos.play(&list[rng.gen_range(0..list.len())]);
            }
        }
        assert!(seen.multi_jumps > 100 && seen.king_captures > 100, "{seen:?}");
    }

    #[test]
    fn same_perft_as_the_generic_generator() {
        let rules = Variant::English.rules();
        let mut rng = ChaCha8Rng::seed_from_u64(38);
        for _ in 0..300 {
            let pos = random_position(&mut rng);
            for duplicates in MODES {
                for depth in 1..=4 {
                    assert_eq!(
                        perft(&pos, depth, duplicates),
                        perft_generic(&pos, &rules, depth, duplicates),
                        "depth {depth} {duplicates:?} from\n{pos:?}"
                    );
                }
            }
        }
        let start = Position::start(&rules);
        for depth in 1..=8 {
            assert_eq!(perft(&start, depth, Duplicates::Remove), perft_generic(&start, &rules, depth, Duplicates::Remove));
        }
    }
}
