//! Legal move generation: plain moves and exact capture sequences for every rule set.
//!
//! Captured pieces stay on the board until the move ends (they block the path and may not be
//! jumped twice); flying kings must land where they can capture on, if any such landing exists;
//! the variant's precedence rules (majority and its tie-breaks, king-first) filter the captures;
//! and two sequences with the same start, end, captured set and crowning are one move (a camera
//! cannot tell them apart), keeping the first path found for notation.

use super::bitboard::{bit, row_of, shift, Dir, Square, Squares, ALL_DIRS, DARK, RAYS, RAY_LEN};
use super::position::{Color, Position};
use super::rules::{PromotionInCapture, Rules};

/// The start square and every landing square of a capture: 12 captures at most on 8x8.
pub const MAX_PATH: usize = 13;

#[derive(Clone, Copy, PartialEq, Eq, Hash)]
pub struct Move {
    pub from: Square,
    pub to: Square,
    /// The captured pieces' squares.
    pub captured: u64,
    /// The moving man is crowned at the end of this move.
    pub crowns: bool,
    path_len: u8,
    path: [Square; MAX_PATH],
}

impl Move {
    fn new(path: &[Square], captured: u64, crowns: bool) -> Move {
        let mut stored = [0; MAX_PATH];
        stored[..path.len()].copy_from_slice(path);
        Move {
            from: path[0],
            to: path[path.len() - 1],
            captured,
            crowns,
            path_len: path.len() as u8,
            path: stored,
        }
    }

    /// A plain (non-capturing) move.
    pub fn simple(from: Square, to: Square, crowns: bool) -> Move {
        Move::new(&[from, to], 0, crowns)
    }

    /// The start square, then every landing square.
    pub fn path(&self) -> &[Square] {
        &self.path[..self.path_len as usize]
    }

    pub fn is_capture(&self) -> bool {
        self.captured != 0
    }

    pub fn capture_count(&self) -> u32 {
        self.captured.count_ones()
    }

    /// Same start, end, captured set and crowning: indistinguishable on the board.
    pub fn same_effect(&self, other: &Move) -> bool {
        self.from == other.from
            && self.to == other.to
            && self.captured == other.captured
            && self.crowns == other.crowns
    }

    /// The captured squares in the order the sequence jumps them.
    pub fn captured_in_order(&self) -> Vec<Square> {
        self.path()
            .windows(2)
            .filter_map(|leg| {
                let (a, b) = (leg[0], leg[1]);
                let dir = direction_between(a, b)?;
                RAYS[a as usize][dir as usize]
                    .iter()
                    .take_while(|&&sq| sq != b && sq < 64)
                    .copied()
                    .find(|&sq| self.captured & bit(sq) != 0)
            })
            .collect()
    }
}

impl std::fmt::Debug for Move {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let sep = if self.is_capture() { "x" } else { "-" };
        let squares: Vec<String> = self.path().iter().map(|s| format!("r{}c{}", s / 8, s % 8)).collect();
        write!(f, "{}", squares.join(sep))?;
        if self.crowns {
            write!(f, "=K")?;
        }
        Ok(())
    }
}

/// The diagonal direction leading from `a` to `b`, if they share a diagonal.
pub fn direction_between(a: Square, b: Square) -> Option<Dir> {
    let (dr, dc) = (row_of(b) as i8 - row_of(a) as i8, (b % 8) as i8 - (a % 8) as i8);
    if dr == 0 || dr.abs() != dc.abs() {
        return None;
    }
    Some(match (dr < 0, dc < 0) {
        (true, true) => Dir::UpLeft,
        (true, false) => Dir::UpRight,
        (false, true) => Dir::DownLeft,
        (false, false) => Dir::DownRight,
    })
}

pub type MoveList = Vec<Move>;

/// Whether duplicate capture paths (same start, end, captured set, crowning) are kept.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Duplicates {
    Remove,
    Keep,
}

/// The directions a man of `color` may move in (forward).
fn forward_dirs(color: Color) -> [Dir; 2] {
    match color {
        Color::Black => [Dir::DownLeft, Dir::DownRight],
        Color::White => [Dir::UpLeft, Dir::UpRight],
    }
}

fn dir_mask(dirs: &[Dir]) -> u8 {
    dirs.iter().fold(0, |m, &d| m | 1 << d as u8)
}

/// Depth-first search over capture sequences of one piece.
struct CaptureSearch<'a> {
    rules: &'a Rules,
    opponents: u64,
    opponent_kings: u64,
    /// Empty squares, the moving piece's start square included.
    empty: u64,
    color: Color,
    man_dirs: u8,
    path: [Square; MAX_PATH],
    path_len: usize,
    out: &'a mut MoveList,
}

impl CaptureSearch<'_> {
    fn record(&mut self, captured: u64, crowns: bool) {
        self.out.push(Move::new(&self.path[..self.path_len], captured, crowns));
    }

    fn can_jump(&self, victim: Square, captured: u64, by_king: bool) -> bool {
        let b = bit(victim);
        self.opponents & b != 0
            && captured & b == 0
            && (by_king || self.rules.men_capture_kings || self.opponent_kings & b == 0)
    }

    /// Continue a sequence with a man standing on `sq`. Returns whether any jump was possible.
    fn man(&mut self, sq: Square, captured: u64) -> bool {
        let mut found = false;
        for dir in ALL_DIRS {
            if self.man_dirs & (1 << dir as u8) == 0 || RAY_LEN[sq as usize][dir as usize] < 2 {
                continue;
            }
            let ray = &RAYS[sq as usize][dir as usize];
            let (victim, landing) = (ray[0], ray[1]);
            if !self.can_jump(victim, captured, false) || self.empty & bit(landing) == 0 {
                continue;
            }
            found = true;
            let captured = captured | bit(victim);
            self.path[self.path_len] = landing;
            self.path_len += 1;
            if row_of(landing) == self.color.promotion_row() {
                match self.rules.promotion_in_capture {
                    PromotionInCapture::CrownAndStop => self.record(captured, true),
                    PromotionInCapture::CrownAndContinue => {
                        if !self.king(landing, captured, true) {
                            self.record(captured, true);
                        }
                    }
                    PromotionInCapture::ContinueAsMan => {
                        if !self.man(landing, captured) {
                            self.record(captured, true);
                        }
                    }
                }
            } else if !self.man(landing, captured) {
                self.record(captured, false);
            }
            self.path_len -= 1;
        }
        found
    }

    /// The first capture a king on `sq` could make in `dir`: (victim, squares beyond it).
    fn king_jump(&self, sq: Square, dir: Dir, captured: u64) -> Option<(Square, &'static [Square])> {
        let ray = &RAYS[sq as usize][dir as usize];
        let len = RAY_LEN[sq as usize][dir as usize] as usize;
        let mut i = 0;
        if self.rules.flying_kings {
            while i < len && self.empty & bit(ray[i]) != 0 {
                i += 1;
            }
        }
        if i + 1 >= len || !self.can_jump(ray[i], captured, true) || self.empty & bit(ray[i + 1]) == 0 {
            return None;
        }
        let mut end = i + 2;
        if self.rules.flying_kings {
            while end < len && self.empty & bit(ray[end]) != 0 {
                end += 1;
            }
        }
        Some((ray[i], &ray[i + 1..end]))
    }

    fn king_can_capture(&self, sq: Square, captured: u64) -> bool {
        ALL_DIRS.iter().any(|&dir| self.king_jump(sq, dir, captured).is_some())
    }

    /// Continue a sequence with a king on `sq`. `crowns` marks a man crowned during this move.
    fn king(&mut self, sq: Square, captured: u64, crowns: bool) -> bool {
        let mut found = false;
        for dir in ALL_DIRS {
            let Some((victim, landings)) = self.king_jump(sq, dir, captured) else {
                continue;
            };
            found = true;
            let captured = captured | bit(victim);
            // A king must land where it can capture on, when such a landing exists.
            let must_continue = landings.len() > 1
                && landings.iter().any(|&l| self.king_can_capture(l, captured));
            for &landing in landings {
                self.path[self.path_len] = landing;
                self.path_len += 1;
                if must_continue {
                    if self.king_can_capture(landing, captured) {
                        self.king(landing, captured, crowns);
                    }
                } else if !self.king(landing, captured, crowns) {
                    self.record(captured, crowns);
                }
                self.path_len -= 1;
            }
        }
        found
    }
}

/// Append every capture sequence of the side to move, before precedence rules.
fn all_captures(pos: &Position, rules: &Rules, out: &mut MoveList) {
    let color = pos.to_move;
    let own = pos.pieces(color);
    let opponents = pos.pieces(color.opponent());
    let forward = forward_dirs(color);
    let man_dirs: &[Dir] = if rules.men_capture_backwards { &ALL_DIRS } else { &forward };
    let mut search = CaptureSearch {
        rules,
        opponents,
        opponent_kings: opponents & pos.kings,
        empty: DARK & !pos.occupied(),
        color,
        man_dirs: dir_mask(man_dirs),
        path: [0; MAX_PATH],
        path_len: 1,
        out,
    };
    // Only men with a piece to jump next to them and an empty square beyond can start a
    // capture; kings (flying or not) are all searched.
    let empty = DARK & !pos.occupied();
    let victims = if rules.men_capture_kings { opponents } else { opponents & !pos.kings };
    let men = own & !pos.kings;
    let mut starts = own & pos.kings;
    for &dir in man_dirs {
        let back = dir.opposite();
        starts |= men & shift(shift(empty, back) & victims, back);
    }
    for sq in Squares(starts) {
        search.path[0] = sq;
        search.empty |= bit(sq);
        if pos.kings & bit(sq) != 0 {
            search.king(sq, 0, false);
        } else {
            search.man(sq, 0);
        }
        search.empty &= !bit(sq);
    }
}

/// Keep only the captures the variant's precedence rules allow.
fn apply_precedence(pos: &Position, rules: &Rules, moves: &mut MoveList) {
    let p = rules.precedence;
    let by_king = |m: &Move| pos.kings & bit(m.from) != 0;
    if p.king_first && moves.iter().any(by_king) {
        moves.retain(by_king);
    }
    if p.majority {
        retain_max(moves, |m| m.capture_count());
    }
    if p.prefer_king_capturer && moves.iter().any(by_king) {
        moves.retain(by_king);
    }
    if p.most_kings {
        retain_max(moves, |m| (m.captured & pos.kings).count_ones());
    }
    if p.earliest_king {
        // Bit 11 for a king taken first, bit 10 second, ...: larger means kings met earlier.
        retain_max(moves, |m| {
            m.captured_in_order()
                .iter()
                .enumerate()
                .filter(|(_, &sq)| pos.kings & bit(sq) != 0)
                .fold(0u32, |key, (i, _)| key | 1 << (11 - i))
        });
    }
}

fn retain_max(moves: &mut MoveList, key: impl Fn(&Move) -> u32) {
    if let Some(best) = moves.iter().map(&key).max() {
        moves.retain(|m| key(m) == best);
    }
}

fn remove_duplicates(moves: &mut MoveList) {
    let mut kept = 0;
    for i in 0..moves.len() {
        if !moves[..kept].iter().any(|m| m.same_effect(&moves[i])) {
            moves[kept] = moves[i];
            kept += 1;
        }
    }
    moves.truncate(kept);
}

/// Append every plain move of the side to move.
fn plain_moves(pos: &Position, rules: &Rules, out: &mut MoveList) {
    let color = pos.to_move;
    let own = pos.pieces(color);
    let empty = DARK & !pos.occupied();
    let men = own & !pos.kings;
    let promotion_row = color.promotion_row();
    for sq in Squares(men) {
        for dir in forward_dirs(color) {
            if RAY_LEN[sq as usize][dir as usize] > 0 {
                let to = RAYS[sq as usize][dir as usize][0];
                if empty & bit(to) != 0 {
                    out.push(Move::simple(sq, to, row_of(to) == promotion_row));
                }
            }
        }
    }
    for sq in Squares(own & pos.kings) {
        for dir in ALL_DIRS {
            let ray = &RAYS[sq as usize][dir as usize];
            let reach = if rules.flying_kings { RAY_LEN[sq as usize][dir as usize] as usize } else { 1 };
            for &to in ray.iter().take(reach) {
                if to >= 64 || empty & bit(to) == 0 {
                    break;
                }
                out.push(Move::simple(sq, to, false));
            }
        }
    }
}

/// Fill `out` with the legal moves of `pos` (captures when any exist: capturing is compulsory).
pub fn generate(pos: &Position, rules: &Rules, duplicates: Duplicates, out: &mut MoveList) {
    out.clear();
    all_captures(pos, rules, out);
    if out.is_empty() {
        plain_moves(pos, rules, out);
        return;
    }
    apply_precedence(pos, rules, out);
    if duplicates == Duplicates::Remove {
        remove_duplicates(out);
    }
}

/// The legal moves of `pos`, duplicate capture paths removed.
pub fn legal_moves(pos: &Position, rules: &Rules) -> MoveList {
    let mut out = MoveList::with_capacity(32);
    generate(pos, rules, Duplicates::Remove, &mut out);
    out
}

/// How many legal moves `pos` has, without building plain moves one by one (perft's last ply).
pub fn count_moves(pos: &Position, rules: &Rules, duplicates: Duplicates, scratch: &mut MoveList) -> u64 {
    scratch.clear();
    all_captures(pos, rules, scratch);
    if !scratch.is_empty() {
        apply_precedence(pos, rules, scratch);
        if duplicates == Duplicates::Remove {
            remove_duplicates(scratch);
        }
        return scratch.len() as u64;
    }
    let color = pos.to_move;
    let own = pos.pieces(color);
    let empty = DARK & !pos.occupied();
    let men = own & !pos.kings;
    let mut count = 0u64;
    for dir in forward_dirs(color) {
        count += (shift(men, dir) & empty).count_ones() as u64;
    }
    let kings = own & pos.kings;
    if kings != 0 {
        if rules.flying_kings {
            for sq in Squares(kings) {
                for dir in ALL_DIRS {
                    let ray = &RAYS[sq as usize][dir as usize];
                    let len = RAY_LEN[sq as usize][dir as usize] as usize;
                    count += ray[..len].iter().take_while(|&&to| empty & bit(to) != 0).count() as u64;
                }
            }
        } else {
            for dir in ALL_DIRS {
                count += (shift(kings, dir) & empty).count_ones() as u64;
            }
        }
    }
    count
}

impl Position {
    /// The position after `m` (which must be legal here), with the turn passed.
    pub fn play(&self, m: &Move) -> Position {
        let color = self.to_move;
        let (from, to) = (bit(m.from), bit(m.to));
        let was_king = self.kings & from != 0;
        let mut next = *self;
        match color {
            Color::Black => {
                next.black = (next.black & !from) | to;
                next.white &= !m.captured;
            }
            Color::White => {
                next.white = (next.white & !from) | to;
                next.black &= !m.captured;
            }
        }
        next.kings &= !(m.captured | from);
        if was_king || m.crowns {
            next.kings |= to;
        }
        next.to_move = color.opponent();
        next
    }

    /// Whether the side to move has any legal move at all.
    pub fn has_legal_move(&self, rules: &Rules) -> bool {
        let mut scratch = MoveList::new();
        count_moves(self, rules, Duplicates::Remove, &mut scratch) > 0
    }
}
