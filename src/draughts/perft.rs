//! Perft: count the leaves of the legal move tree, the standard check of a move generator.

use super::fast_english;
use super::movegen::{count_moves, generate, Duplicates, MoveList};
use super::position::Position;
use super::rules::Rules;

/// Leaf count at `depth` plies, counting the last ply in bulk. English rules go through the
/// shift-based generator of [`fast_english`], the others through [`perft_generic`].
pub fn perft(pos: &Position, rules: &Rules, depth: u32, duplicates: Duplicates) -> u64 {
    if fast_english::applies(rules) {
        fast_english::perft(pos, depth, duplicates)
    } else {
        perft_generic(pos, rules, depth, duplicates)
    }
}

/// Perft through the generic generator ([`generate`], [`count_moves`]), for every rule set.
pub fn perft_generic(pos: &Position, rules: &Rules, depth: u32, duplicates: Duplicates) -> u64 {
    let mut stack: Vec<MoveList> = (0..depth.max(1)).map(|_| MoveList::with_capacity(64)).collect();
    perft_with(pos, rules, depth, duplicates, &mut stack)
}

fn perft_with(pos: &Position, rules: &Rules, depth: u32, duplicates: Duplicates, stack: &mut [MoveList]) -> u64 {
    match depth {
        0 => 1,
        1 => count_moves(pos, rules, duplicates, &mut stack[0]),
        _ => {
            let (list, rest) = stack.split_first_mut().expect("stack holds one list per ply");
            generate(pos, rules, duplicates, list);
            list.iter().map(|m| perft_with(&pos.play(m), rules, depth - 1, duplicates, rest)).sum()
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::draughts::rules::Variant;

    fn start_counts(variant: Variant, depth: u32) -> Vec<u64> {
        let rules = variant.rules();
        let pos = Position::start(&rules);
        (1..=depth).map(|d| perft(&pos, &rules, d, Duplicates::Remove)).collect()
    }

    // Published tables (see BENCHMARKS.md for the deep ones, run by `make corpus`).
    #[test]
    fn pool_start() {
        assert_eq!(start_counts(Variant::Pool, 7), [7, 49, 302, 1469, 7482, 37986, 190146]);
    }
    #[test]
    fn russian_start() {
        assert_eq!(start_counts(Variant::Russian, 7), [7, 49, 302, 1469, 7482, 37986, 190146]);
    }
    #[test]
    fn brazilian_start() {
        assert_eq!(start_counts(Variant::Brazilian, 7)[4..], [7473, 37628, 187302]);
    }
    #[test]
    fn english_start() {
        assert_eq!(start_counts(Variant::English, 7), [7, 49, 302, 1469, 7361, 36768, 179740]);
    }
    #[test]
    fn italian_start() {
        assert_eq!(start_counts(Variant::Italian, 7)[5..], [36473, 177532]);
    }
    #[test]
    fn spanish_start() {
        assert_eq!(start_counts(Variant::Spanish, 7)[5..], [36473, 177532]);
    }
    #[test]
    fn czech_start() {
        assert_eq!(start_counts(Variant::Czech, 7)[5..], [36768, 179740]);
    }
}
