//! Corpus-wide checks over `../shared/data/draughts` (run by `make corpus`; `#[ignore]`d
//! otherwise): every archive game of a supported variant replays legally and survives a round
//! trip through the writer, and perft reproduces the published tables at full depth.

mod common;

use std::path::Path;

use boardwatch::draughts::game::{record_variant, replay, replay_choosing, Game, VariantSource};
use boardwatch::draughts::movegen::Duplicates;
use boardwatch::draughts::pdn::{read_games, ReadMode};
use boardwatch::draughts::perft::perft;
use boardwatch::draughts::{Position, Variant};

struct Tally {
    games: usize,
    legal: usize,
    failures: Vec<String>,
}

/// Replay every game of a file (games of other game types are not counted) and round-trip each
/// legal one: written back, read strictly, replayed, it has the same moves and positions.
fn replay_file(path: &Path, default: Variant) -> Tally {
    let text = common::load_lossy(path);
    let records = read_games(&text, ReadMode::Lenient).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    let mut tally = Tally { games: 0, legal: 0, failures: vec![] };
    for (i, record) in records.iter().enumerate() {
        if record_variant(record, default).is_err() {
            continue;
        }
        tally.games += 1;
        match replay(record, default) {
            Ok(game) => {
                round_trip(&game, path, i);
                tally.legal += 1;
            }
            Err(e) => tally.failures.push(format!("{} game {}: {e}", path.display(), i + 1)),
        }
    }
    tally
}

fn round_trip(game: &Game, path: &Path, index: usize) {
    let text = game.to_pdn();
    let context = || format!("{} game {}:\n{text}", path.display(), index + 1);
    let records = read_games(&text, ReadMode::Strict).unwrap_or_else(|e| panic!("{e}: {}", context()));
    let again = replay(&records[0], game.variant).unwrap_or_else(|e| panic!("{e}: {}", context()));
    assert_eq!(again.start, game.start, "{}", context());
    assert_eq!(again.plies.len(), game.plies.len(), "{}", context());
    for (a, b) in game.plies.iter().zip(&again.plies) {
        assert!(a.mv.same_effect(&b.mv) && a.after == b.after, "{} vs {}: {}", a.text, b.text, context());
    }
    assert_eq!(again.result, game.result, "{}", context());
}

fn check(relative: &str, default: Variant, expected_games: usize) {
    let Some(data) = common::shared_data() else { return };
    let tally = replay_file(&data.join("draughts").join(relative), default);
    assert_eq!(tally.failures, Vec::<String>::new());
    assert_eq!((tally.games, tally.legal), (expected_games, expected_games), "{relative}");
}

#[test]
#[ignore = "corpus: needs ../shared, run by make corpus"]
fn english_acf_archive_replays_completely() {
    check("english/ACF__EricCJoyce_Datasets__converted.pdn", Variant::English, 9377);
}

#[test]
#[ignore = "corpus: needs ../shared, run by make corpus"]
fn other_english_records_replay() {
    check("english/British_Computer_Championship_2002__mig0_Games-Checkers.pdn", Variant::English, 16);
    check("english/german_open_2004__bcorfman_raven-checkers.pdn", Variant::English, 1);
    check("english/test__mig0_Games-Checkers.pdn", Variant::English, 1);
    // Algebraic squares, first mover on ranks 1-3, multi-captures written leg by leg.
    check("online_lidraughts_playstrategy/american__playstrategy_via_miskibin_py-draughts.pdn", Variant::English, 30);
    check("misc/11_man_english_ballots__eygilbert_CheckerBoard.pdn", Variant::English, 2400);
    check("misc/3_vs_1_King_Theory.phn__mig0_Games-Checkers.pdn", Variant::English, 1);
}

/// Every game of an archive read without `GameType` tags (removed here when it has them): the
/// variants chosen and how many games replay legally under them.
fn detected(relative: &str) -> (Vec<(Variant, usize)>, usize) {
    let data = common::shared_data().expect("checked by the caller");
    let path = data.join("draughts").join(relative);
    let text: String = common::load_lossy(&path).lines().filter(|l| !l.starts_with("[GameType ")).map(|l| format!("{l}\n")).collect();
    let records = read_games(&text, ReadMode::Lenient).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    let mut chosen: Vec<(Variant, usize)> = Vec::new();
    let mut legal = 0;
    for record in &records {
        let read = replay_choosing(record, None).unwrap();
        if read.source == VariantSource::Detected {
            legal += 1;
        }
        match chosen.iter_mut().find(|(v, _)| *v == read.variant) {
            Some((_, n)) => *n += 1,
            None => chosen.push((read.variant, 1)),
        }
    }
    (chosen, legal)
}

#[test]
#[ignore = "corpus: needs ../shared, run by make corpus"]
fn archives_without_game_type_are_read_under_the_rules_they_replay_legally_under() {
    if common::shared_data().is_none() {
        return;
    }
    // The English ACF archive with its tags removed: English checkers, every game legal
    // (read as pool checkers, as before, most of them were not).
    assert_eq!(detected("english/ACF__EricCJoyce_Datasets__converted.pdn"), (vec![(Variant::English, 9377)], 9377));
    assert_eq!(detected("english/British_Computer_Championship_2002__mig0_Games-Checkers.pdn"), (vec![(Variant::English, 16)], 16));
    // Algebraic squares, first mover on ranks 1-3.
    assert_eq!(detected("online_lidraughts_playstrategy/american__playstrategy_via_miskibin_py-draughts.pdn"), (vec![(Variant::English, 30)], 30));
    // Italian archives have no GameType tags; a short game that English rules allow too is
    // read as English checkers, the commoner game.
    assert_eq!(detected("italian/40champ-1996__mig0_Games-Checkers.pdn"), (vec![(Variant::Italian, 302)], 302));
    assert_eq!(detected("italian/ci98-perani__mig0_Games-Checkers.pdn"), (vec![(Variant::English, 1), (Variant::Italian, 18)], 19));
    // Russian games in algebraic notation: Russian before pool, whose rules most also obey.
    assert_eq!(detected("russian/World_Championship_1998__mig0_Games-Checkers.pdn"), (vec![(Variant::Russian, 460)], 460));
    assert_eq!(detected("czech/MR_Ceska_Dama_Druzstev_2008__mig0_Games-Checkers.pdn").1, 40);
}

#[test]
#[ignore = "corpus: needs ../shared, run by make corpus"]
fn russian_records_replay() {
    // Compact notation (`ed4`): three moves fit two legal moves each and are settled by the
    // rest of their game.
    check("russian/World_Championship_1998__mig0_Games-Checkers.pdn", Variant::Russian, 460);
    check("russian/First_Computers_Match_Moscow_1998__mig0_Games-Checkers.pdn", Variant::Russian, 6);
    check("russian/test__mig0_Games-Checkers.pdn", Variant::Russian, 3);
    // One game (17) has lost its header, GameType included: Russian by default.
    check("online_lidraughts_playstrategy/russian__lidraughts_via_miskibin_py-draughts.pdn", Variant::Russian, 22);
}

#[test]
#[ignore = "corpus: needs ../shared, run by make corpus"]
fn italian_and_czech_records_replay() {
    check("italian/40champ-1996__mig0_Games-Checkers.pdn", Variant::Italian, 302);
    check("italian/ci98-fero__mig0_Games-Checkers.pdn", Variant::Italian, 17);
    check("italian/ci98-perani__mig0_Games-Checkers.pdn", Variant::Italian, 19);
    check("misc/11_man_italian_ballots__eygilbert_CheckerBoard.pdn", Variant::Italian, 2400);
    check("czech/MR_Ceska_Dama_Druzstev_2008__mig0_Games-Checkers.pdn", Variant::Czech, 40);
}

fn deep(variant: Variant, depth: u32, removed: u64, kept: Option<u64>) {
    let rules = variant.rules();
    let start = Position::start(&rules);
    assert_eq!(perft(&start, &rules, depth, Duplicates::Remove), removed, "{variant} d{depth}");
    if let Some(kept) = kept {
        assert_eq!(perft(&start, &rules, depth, Duplicates::Keep), kept, "{variant} d{depth} with duplicates");
    }
}

#[test]
#[ignore = "deep perft: run by make corpus"]
fn published_perft_tables_at_full_depth() {
    deep(Variant::Pool, 8, 929_896, Some(929_902));
    deep(Variant::Pool, 9, 4_570_534, Some(4_570_615));
    deep(Variant::Russian, 8, 929_899, Some(929_905));
    deep(Variant::Russian, 9, 4_570_586, Some(4_570_667));
    deep(Variant::Brazilian, 8, 907_830, Some(907_836));
    deep(Variant::Brazilian, 9, 4_431_766, Some(4_431_847));
    deep(Variant::English, 8, 845_931, None);
    deep(Variant::English, 9, 3_963_680, None);
    deep(Variant::English, 10, 18_391_564, None);
    deep(Variant::English, 11, 85_242_128, None);
    deep(Variant::English, 12, 388_617_999, Some(388_623_673));
    deep(Variant::Italian, 8, 828_783, None);
    deep(Variant::Italian, 9, 3_860_875, None);
    deep(Variant::Italian, 10, 17_761_384, None);
    deep(Variant::Spanish, 8, 828_783, None);
    deep(Variant::Spanish, 9, 3_860_866, None);
    deep(Variant::Spanish, 10, 17_743_464, None);
    deep(Variant::Czech, 8, 845_931, None);
    deep(Variant::Czech, 9, 3_963_671, None);
    deep(Variant::Czech, 10, 18_368_918, None);
}
