//! 64-bit boards over the 8x8 grid (`bit = row * 8 + col`) and the diagonal geometry.

/// A square on the 8x8 grid, `row * 8 + col`.
pub type Square = u8;

pub const fn square(row: u8, col: u8) -> Square {
    row * 8 + col
}
pub const fn row_of(sq: Square) -> u8 {
    sq / 8
}
pub const fn col_of(sq: Square) -> u8 {
    sq % 8
}
pub const fn bit(sq: Square) -> u64 {
    1u64 << sq
}
pub const fn is_dark(sq: Square) -> bool {
    (row_of(sq) + col_of(sq)) % 2 == 1
}

/// The 32 playing (dark) squares.
pub const DARK: u64 = {
    let mut b = 0u64;
    let mut sq = 0;
    while sq < 64 {
        if is_dark(sq as u8) {
            b |= 1 << sq;
        }
        sq += 1;
    }
    b
};

pub const fn row_mask(row: u8) -> u64 {
    0xffu64 << (row * 8)
}

/// The four diagonal directions, as (row step, column step).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Dir {
    /// Towards row 0, column - 1.
    UpLeft = 0,
    /// Towards row 0, column + 1.
    UpRight = 1,
    /// Towards row 7, column - 1.
    DownLeft = 2,
    /// Towards row 7, column + 1.
    DownRight = 3,
}

pub const ALL_DIRS: [Dir; 4] = [Dir::UpLeft, Dir::UpRight, Dir::DownLeft, Dir::DownRight];

impl Dir {
    pub const fn delta(self) -> (i8, i8) {
        match self {
            Dir::UpLeft => (-1, -1),
            Dir::UpRight => (-1, 1),
            Dir::DownLeft => (1, -1),
            Dir::DownRight => (1, 1),
        }
    }
    pub const fn is_up(self) -> bool {
        matches!(self, Dir::UpLeft | Dir::UpRight)
    }
    pub const fn opposite(self) -> Dir {
        match self {
            Dir::UpLeft => Dir::DownRight,
            Dir::UpRight => Dir::DownLeft,
            Dir::DownLeft => Dir::UpRight,
            Dir::DownRight => Dir::UpLeft,
        }
    }
}

/// `RAYS[sq][dir]`: the squares met walking from `sq` in `dir` to the board edge, nearest first,
/// padded with 64. Precomputed so that flying kings and captures never test board edges.
pub const RAYS: [[[u8; 7]; 4]; 64] = {
    let mut rays = [[[64u8; 7]; 4]; 64];
    let mut sq = 0;
    while sq < 64 {
        let mut d = 0;
        while d < 4 {
            let (dr, dc) = ALL_DIRS[d].delta();
            let mut r = (sq / 8) as i8 + dr;
            let mut c = (sq % 8) as i8 + dc;
            let mut n = 0;
            while r >= 0 && r < 8 && c >= 0 && c < 8 {
                rays[sq][d][n] = (r * 8 + c) as u8;
                n += 1;
                r += dr;
                c += dc;
            }
            d += 1;
        }
        sq += 1;
    }
    rays
};

/// `RAY_LEN[sq][dir]`: how many squares `RAYS[sq][dir]` holds.
pub const RAY_LEN: [[u8; 4]; 64] = {
    let mut lens = [[0u8; 4]; 64];
    let mut sq = 0;
    while sq < 64 {
        let mut d = 0;
        while d < 4 {
            let mut n = 0;
            while n < 7 && RAYS[sq][d][n] < 64 {
                n += 1;
            }
            lens[sq][d] = n as u8;
            d += 1;
        }
        sq += 1;
    }
    lens
};

const NOT_COL0: u64 = !0x0101_0101_0101_0101;
const NOT_COL7: u64 = !0x8080_8080_8080_8080;

/// Shift every piece one step in `dir` (pieces that would leave the board vanish).
#[inline(always)]
pub const fn shift(b: u64, dir: Dir) -> u64 {
    match dir {
        Dir::UpLeft => (b & NOT_COL0) >> 9,
        Dir::UpRight => (b & NOT_COL7) >> 7,
        Dir::DownLeft => (b & NOT_COL0) << 7,
        Dir::DownRight => (b & NOT_COL7) << 9,
    }
}

/// Iterate over the set squares of a bitboard, lowest first.
#[derive(Clone, Copy)]
pub struct Squares(pub u64);

impl Iterator for Squares {
    type Item = Square;
    #[inline(always)]
    fn next(&mut self) -> Option<Square> {
        if self.0 == 0 {
            None
        } else {
            let sq = self.0.trailing_zeros() as Square;
            self.0 &= self.0 - 1;
            Some(sq)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn thirty_two_dark_squares_with_light_top_left() {
        assert_eq!(DARK.count_ones(), 32);
        assert!(!is_dark(square(0, 0)));
        assert!(is_dark(square(7, 0)));
    }

    #[test]
    fn rays_stop_at_the_edge() {
        let sq = square(7, 0);
        assert_eq!(RAY_LEN[sq as usize][Dir::UpRight as usize], 7);
        assert_eq!(RAYS[sq as usize][Dir::UpRight as usize][6], square(0, 7));
        assert_eq!(RAY_LEN[sq as usize][Dir::UpLeft as usize], 0);
        assert_eq!(RAY_LEN[sq as usize][Dir::DownRight as usize], 0);
    }

    #[test]
    fn shift_does_not_wrap_columns() {
        assert_eq!(shift(bit(square(3, 0)), Dir::UpLeft), 0);
        assert_eq!(shift(bit(square(3, 7)), Dir::DownRight), 0);
        assert_eq!(shift(bit(square(3, 3)), Dir::DownRight), bit(square(4, 4)));
        assert_eq!(shift(bit(square(3, 3)), Dir::UpRight), bit(square(2, 4)));
    }
}
