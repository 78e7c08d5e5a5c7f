//! The PDN syntax layer against the official PDN 3.0 parser test suite (wiegerw/pdn `games/`)
//! and real archives, all kept in the shared data folder next to the repository
//! (`../shared/data/draughts`). They are corpus tests: `#[ignore]`d, run by `make corpus`, and
//! they print a note and pass when that folder is missing.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use boardwatch::draughts::pdn::{
    read_games, write_record, GameRecord, GameResult, PdnError, PdnErrorKind, ReadMode, Reader,
    RecordCollector,
};

mod common;

/// The draughts archives in the shared data folder.
fn data_dir() -> Option<PathBuf> {
    common::shared_data().map(|d| d.join("draughts"))
}

fn load(path: &Path) -> String {
    common::load_lossy(path)
}

fn pdn_files(dir: &Path) -> Vec<PathBuf> {
    let mut files: Vec<PathBuf> = std::fs::read_dir(dir)
        .unwrap_or_else(|e| panic!("{}: {e}", dir.display()))
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|e| e == "pdn"))
        .collect();
    files.sort();
    files
}

fn name(path: &Path) -> String {
    path.file_name().unwrap().to_string_lossy().into_owned()
}

/// Every file of `succeed/` reads strictly, with this many games.
const SUCCEED: [(&str, usize); 39] = [
    ("090417ronde12.pdn", 7),
    ("Campionato_Assoluto_2005.pdn", 53),
    ("Cat.B1.pdn", 37),
    ("Cat.D1.pdn", 19),
    ("DUTCH96H.pdn", 13),
    ("OCA_2.0.pdn", 43),
    ("PROF2.pdn", 16),
    ("PWCP_2.pdn", 51),
    ("PWCP_2a.pdn", 59),
    ("Principles_of_Strategy.pdn", 16),
    ("Tricks_traps_and_shots.pdn", 91),
    ("alphanumeric.pdn", 1),
    ("beginner.pdn", 58),
    ("borderclassics.pdn", 183),
    ("bridges.pdn", 267),
    ("candidate95.pdn", 8),
    ("fen.pdn", 3),
    ("gameterminator.pdn", 1),
    ("gem.pdn", 162),
    ("goulds.pdn", 262),
    ("inferno.pdn", 68),
    ("kurnik.pdn", 4),
    ("linecomment.pdn", 1),
    ("lpc.pdn", 100),
    ("movestrength.pdn", 1),
    ("mrcd2000kval.pdn", 40),
    ("mrcd2006.pdn", 44),
    ("mrcd2007.pdn", 102),
    ("nk2003-amsterdam.pdn", 33),
    ("nk_ronde_01.pdn", 7),
    ("nk_ronde_02.pdn", 7),
    ("rk_ronde_12.pdn", 7),
    ("schildpad.pdn", 34),
    ("string.pdn", 1),
    ("unicode.pdn", 1),
    ("ussr1947.pdn", 153),
    ("variation.pdn", 1),
    ("windragon.pdn", 1),
    ("wk2003.pdn", 23),
];

#[test]
#[ignore = "corpus: needs ../shared, run by make corpus"]
fn every_succeed_file_reads_strictly() {
    let Some(data) = data_dir() else { return };
    let files = pdn_files(&data.join("pdn_testsuite_wiegerw/succeed"));
    let expected: BTreeMap<&str, usize> = SUCCEED.into_iter().collect();
    assert_eq!(files.len(), expected.len(), "files in succeed/: {files:?}");
    for path in files {
        let games = read_games(&load(&path), ReadMode::Strict)
            .unwrap_or_else(|e| panic!("{}: {e}", name(&path)));
        println!("succeed/{}: {} games", name(&path), games.len());
        assert_eq!(
            Some(&games.len()),
            expected.get(name(&path).as_str()),
            "{}",
            name(&path)
        );
        assert!(games.iter().all(|g| g.warnings.is_empty()));
    }
}

/// Why each file of `fail/` is invalid PDN 3.0: the first violation (kind, line, column, a
/// word of the message), and the kinds of all its violations (found by repairing each one at
/// the reported place and reading again until the file reads), which shows that the file is
/// rejected for that reason and nothing else. Squares and move numbers with leading zeros
/// (`01.`, `06-11`, in delfts.pdn) are *not* a reason: the reading grammar allows them
/// (`0[1-9]` squares, `[0-9]+.` move numbers; the standard's own setup example writes `01...`).
struct FailCase {
    file: &'static str,
    kind: PdnErrorKind,
    line: usize,
    col: usize,
    message: &'static str,
    /// Every violation in the file, by kind, in the order met.
    all: &'static [(PdnErrorKind, usize)],
    /// Games when read leniently (`None`: rejected in lenient mode too).
    lenient_games: Option<usize>,
}

const FAIL: [FailCase; 8] = [
    // Game 6 (round 3, Bubbi - Veronesi) is cut off after `1. 34-29 19-23`: no result and no
    // `*` ends it before the tags of the next game. A game separator is required between games.
    FailCase {
        file: "40Camp.DamaInternazionaleAssoluto.pdn",
        kind: PdnErrorKind::MissingGameTerminator,
        line: 228,
        col: 1,
        message: "'19-23'",
        all: &[(PdnErrorKind::MissingGameTerminator, 1)],
        lenient_games: Some(45),
    },
    // `3. 8-3 . 1-0`: a lone `.` is no token (only `N.`, `N...` and `...` exist).
    FailCase {
        file: "Cat.A1.pdn",
        kind: PdnErrorKind::InvalidToken,
        line: 405,
        col: 36,
        message: "stray '.'",
        all: &[(PdnErrorKind::InvalidToken, 1)],
        lenient_games: Some(35),
    },
    // A problem ends with the move number `6.` and no move; the next problem's tags follow.
    // GameMove is `MoveNumber? Move`: a move number must be followed by a move.
    FailCase {
        file: "Cat.C1.pdn",
        kind: PdnErrorKind::MoveNumberWithoutMove,
        line: 579,
        col: 75,
        message: "'6.'",
        all: &[
            (PdnErrorKind::MoveNumberWithoutMove, 1),
            (PdnErrorKind::MissingGameTerminator, 1),
        ],
        lenient_games: None,
    },
    // A game whose moves are unknown is written `1. - - 2. - - ... 25. - -`: `-` is only a
    // separator inside a move; the grammar has no unknown-move token but `...`.
    FailCase {
        file: "abatsiev.pdn",
        kind: PdnErrorKind::MoveNumberWithoutMove,
        line: 595,
        col: 1,
        message: "'1.'",
        all: &[
            (PdnErrorKind::MoveNumberWithoutMove, 25),
            (PdnErrorKind::IncompleteMove, 50),
        ],
        lenient_games: None,
    },
    // Games end with the match scores `4-6` and `1-9` (Mini-WK points) instead of a result.
    // Both read as moves (squares 4 to 6, 1 to 9), so the first game has no terminator before
    // the tags of the second. (The `1-9` at the very end is a valid last move, syntactically.)
    FailCase {
        file: "delfts.pdn",
        kind: PdnErrorKind::MissingGameTerminator,
        line: 28,
        col: 1,
        message: "'4-6'",
        all: &[(PdnErrorKind::MissingGameTerminator, 1)],
        lenient_games: Some(2),
    },
    // Games without moves are written `1. 0-2` (and `1. 1-0`, `1. 2-0`): a move number
    // without a move, which the standard lists among the constructs outside the grammar.
    FailCase {
        file: "mrdrcd07.pdn",
        kind: PdnErrorKind::MoveNumberWithoutMove,
        line: 198,
        col: 1,
        message: "'1.'",
        all: &[(PdnErrorKind::MoveNumberWithoutMove, 3)],
        lenient_games: Some(72),
    },
    // The same `1. 1-0` for a game without moves. Note: this file is byte for byte the
    // czech/ "real archive" MR_Ceska_Dama_Druzstev_2008, which therefore only reads leniently.
    FailCase {
        file: "mrdrcd08.pdn",
        kind: PdnErrorKind::MoveNumberWithoutMove,
        line: 499,
        col: 1,
        message: "'1.'",
        all: &[(PdnErrorKind::MoveNumberWithoutMove, 1)],
        lenient_games: Some(40),
    },
    // `{ nested { comment } }`: a comment is `{[^}]*}`, it ends at the first `}`; the second
    // `}` stands outside any comment. Comments do not nest.
    FailCase {
        file: "nested_comment.pdn",
        kind: PdnErrorKind::UnmatchedBrace,
        line: 1,
        col: 46,
        message: "cannot be nested",
        all: &[(PdnErrorKind::UnmatchedBrace, 1)],
        lenient_games: None,
    },
];

/// Byte offset of a 1-based line and character column, counting lines as the reader does.
fn offset_of(text: &str, line: usize, col: usize) -> usize {
    let (mut l, mut c) = (1, 1);
    let mut chars = text.char_indices().peekable();
    while let Some((i, ch)) = chars.next() {
        if (l, c) == (line, col) {
            return i;
        }
        let newline = ch == '\n' || (ch == '\r' && chars.peek().map(|&(_, n)| n) != Some('\n'));
        if newline {
            (l, c) = (l + 1, 1);
        } else {
            c += 1;
        }
    }
    text.len()
}

/// The smallest edit that removes the violation `e` reports: end the game before the tag, or
/// drop the offending token.
fn repair(text: &mut String, e: &PdnError) {
    let at = offset_of(text, e.line, e.col);
    let rest = &text[at..];
    let len = match e.kind {
        PdnErrorKind::MissingGameTerminator => {
            text.insert_str(at, "*\n");
            return;
        }
        PdnErrorKind::MoveNumberWithoutMove => rest
            .find(|c: char| !(c.is_ascii_digit() || c == '.'))
            .unwrap_or(rest.len()),
        _ => rest.chars().next().map_or(0, char::len_utf8),
    };
    text.replace_range(at..at + len, "");
}

#[test]
#[ignore = "corpus: needs ../shared, run by make corpus"]
fn every_fail_file_is_rejected_for_its_documented_reason() {
    let Some(data) = data_dir() else { return };
    let files = pdn_files(&data.join("pdn_testsuite_wiegerw/fail"));
    let names: Vec<String> = files.iter().map(|p| name(p)).collect();
    let documented: Vec<&str> = FAIL.iter().map(|c| c.file).collect();
    assert_eq!(
        names, documented,
        "every file of fail/ needs a documented reason"
    );

    for case in &FAIL {
        let text = load(&data.join("pdn_testsuite_wiegerw/fail").join(case.file));
        let e = read_games(&text, ReadMode::Strict).expect_err(case.file);
        println!("fail/{}: {e}", case.file);
        assert_eq!(
            (e.kind, e.line, e.col),
            (case.kind, case.line, case.col),
            "{}: {e}",
            case.file
        );
        assert!(e.message.contains(case.message), "{}: {e}", case.file);

        // Repair violation after violation; the file must then read, having had only the
        // documented kinds of violation.
        let mut fixed = text.clone();
        let mut seen: Vec<(PdnErrorKind, usize)> = Vec::new();
        for _ in 0..1000 {
            let Err(e) = read_games(&fixed, ReadMode::Strict) else {
                break;
            };
            match seen.iter_mut().find(|(k, _)| *k == e.kind) {
                Some((_, n)) => *n += 1,
                None => seen.push((e.kind, 1)),
            }
            repair(&mut fixed, &e);
        }
        read_games(&fixed, ReadMode::Strict).expect("repaired file reads");
        assert_eq!(seen, case.all, "{}: violations", case.file);

        let lenient = read_games(&text, ReadMode::Lenient);
        assert_eq!(
            lenient.as_ref().ok().map(Vec::len),
            case.lenient_games,
            "{}",
            case.file
        );
    }
}

/// Games in each real archive (lenient read), how many tolerated deviations it has, and
/// whether it is also valid PDN 3.0 (strict read).
const ARCHIVES: [(&str, usize, usize, bool); 28] = [
    (
        "czech/MR_Ceska_Dama_Druzstev_2008__mig0_Games-Checkers.pdn",
        40,
        1,
        false,
    ),
    (
        "english/ACF__EricCJoyce_Datasets__converted.pdn",
        9377,
        0,
        true,
    ),
    (
        "english/British_Computer_Championship_2002__mig0_Games-Checkers.pdn",
        16,
        61,
        false,
    ),
    (
        "english/german_open_2004__bcorfman_raven-checkers.pdn",
        1,
        0,
        true,
    ),
    ("english/test__mig0_Games-Checkers.pdn", 1, 0, true),
    (
        "international/Cannes_Open_Tournament_2002__mig0_Games-Checkers.pdn",
        50,
        0,
        true,
    ),
    ("international/az2000__mig0_Games-Checkers.pdn", 29, 0, true),
    (
        "international/candidate95__mig0_Games-Checkers.pdn",
        8,
        1,
        false,
    ),
    (
        "international/dutch96h__mig0_Games-Checkers.pdn",
        194,
        1,
        false,
    ),
    (
        "international/nk2003-amsterdam__mig0_Games-Checkers.pdn",
        91,
        1,
        false,
    ),
    ("international/prof2__mig0_Games-Checkers.pdn", 16, 1, false),
    (
        "international/wk2003__mig0_Games-Checkers.pdn",
        190,
        1,
        false,
    ),
    (
        "italian/40champ-1996__mig0_Games-Checkers.pdn",
        302,
        1,
        false,
    ),
    ("italian/ci98-fero__mig0_Games-Checkers.pdn", 17, 0, true),
    ("italian/ci98-perani__mig0_Games-Checkers.pdn", 19, 0, true),
    (
        "misc/11_man_english_ballots__eygilbert_CheckerBoard.pdn",
        2400,
        0,
        true,
    ),
    (
        "misc/11_man_italian_ballots__eygilbert_CheckerBoard.pdn",
        2400,
        0,
        true,
    ),
    (
        "misc/3_vs_1_King_Theory.phn__mig0_Games-Checkers.pdn",
        1,
        0,
        true,
    ),
    (
        "online_lidraughts_playstrategy/american__playstrategy_via_miskibin_py-draughts.pdn",
        30,
        0,
        true,
    ),
    (
        "online_lidraughts_playstrategy/antidraughts__lidraughts_via_miskibin_py-draughts.pdn",
        25,
        0,
        true,
    ),
    (
        "online_lidraughts_playstrategy/breakthrough__lidraughts_via_miskibin_py-draughts.pdn",
        25,
        0,
        true,
    ),
    (
        "online_lidraughts_playstrategy/frisian__lidraughts_via_miskibin_py-draughts.pdn",
        24,
        10,
        true,
    ),
    (
        "online_lidraughts_playstrategy/frysk__lidraughts_via_miskibin_py-draughts.pdn",
        25,
        0,
        true,
    ),
    (
        "online_lidraughts_playstrategy/russian__lidraughts_via_miskibin_py-draughts.pdn",
        22,
        12,
        true,
    ),
    (
        "online_lidraughts_playstrategy/standard__lidraughts_via_miskibin_py-draughts.pdn",
        30,
        33,
        false,
    ),
    (
        "russian/First_Computers_Match_Moscow_1998__mig0_Games-Checkers.pdn",
        6,
        12,
        false,
    ),
    (
        "russian/World_Championship_1998__mig0_Games-Checkers.pdn",
        460,
        929,
        false,
    ),
    ("russian/test__mig0_Games-Checkers.pdn", 3, 4, false),
];

#[test]
#[ignore = "corpus: needs ../shared, run by make corpus"]
fn real_archives_read_completely() {
    let Some(data) = data_dir() else { return };
    let mut listed: Vec<String> = Vec::new();
    for dir in [
        "czech",
        "english",
        "international",
        "italian",
        "misc",
        "online_lidraughts_playstrategy",
        "russian",
    ] {
        for path in pdn_files(&data.join(dir)) {
            listed.push(format!("{dir}/{}", name(&path)));
        }
    }
    let documented: Vec<String> = ARCHIVES.iter().map(|a| a.0.to_string()).collect();
    assert_eq!(
        listed, documented,
        "every archive needs its expected counts"
    );

    for (file, games, warnings, strictly_valid) in ARCHIVES {
        let text = load(&data.join(file));
        let records =
            read_games(&text, ReadMode::Lenient).unwrap_or_else(|e| panic!("{file}: {e}"));
        let moves: usize = records.iter().map(|g| g.moves.len()).sum();
        let seen: usize = records.iter().map(|g| g.warnings.len()).sum();
        println!(
            "{file}: {} games, {moves} moves, {seen} deviations",
            records.len()
        );
        assert_eq!((records.len(), seen), (games, warnings), "{file}");
        // Header-only files (problem positions, ballots) aside, games have moves.
        assert!(moves > 0 || file.contains("ballots"), "{file}");
        let strict = read_games(&text, ReadMode::Strict);
        assert_eq!(strict.is_ok(), strictly_valid, "{file}: {:?}", strict.err());
        // Strict and lenient agree on valid files (the lenient repeated-tag rule aside).
        if let Ok(strict) = strict {
            if warnings == 0 {
                assert_eq!(strict, records, "{file}");
            }
        }
    }
}

fn normalized(comments: &[String]) -> String {
    comments
        .join(" ")
        .replace('}', "")
        .split_whitespace()
        .collect::<Vec<_>>()
        .join(" ")
}

/// Reads every game, writes it, reads it again: same tags, move tokens, comments and result.
fn round_trip(records: &[GameRecord], mode: ReadMode, file: &str) {
    for (i, first) in records.iter().enumerate() {
        let written = write_record(first);
        let again =
            read_games(&written, mode).unwrap_or_else(|e| panic!("{file} #{i}: {e}\n{written}"));
        assert_eq!(again.len(), 1, "{file} #{i}\n{written}");
        let again = &again[0];
        let ctx = || format!("{file} game {i}:\n{written}");
        for (name, value) in &first.tags {
            if name != "Result" && !value.is_empty() {
                assert_eq!(again.tag(name), first.tag(name), "tag {name} of {}", ctx());
            }
        }
        assert_eq!(again.moves.len(), first.moves.len(), "{}", ctx());
        for (a, b) in again.moves.iter().zip(&first.moves) {
            assert_eq!(a.token, b.token, "{}", ctx());
            assert_eq!(a.strength, b.strength, "{}", ctx());
            assert_eq!(a.nags, b.nags, "{}", ctx());
            assert_eq!(
                normalized(&a.comments_after),
                normalized(&b.comments_after),
                "{}",
                ctx()
            );
            assert_eq!(a.setup_before, b.setup_before, "{}", ctx());
        }
        assert_eq!(
            normalized(&again.initial_comments),
            normalized(&first.initial_comments)
        );
        // A game without a result token is written with the result its tag gives, or `*`.
        let expected = first
            .result
            .or_else(|| first.tag("Result").and_then(GameResult::from_token))
            .unwrap_or(GameResult::Unknown);
        assert_eq!(again.result, Some(expected), "{}", ctx());
    }
}

#[test]
#[ignore = "corpus: needs ../shared, run by make corpus"]
fn succeed_files_and_archives_round_trip_through_the_writer() {
    let Some(data) = data_dir() else { return };
    for path in pdn_files(&data.join("pdn_testsuite_wiegerw/succeed")) {
        let records = read_games(&load(&path), ReadMode::Strict).unwrap();
        round_trip(&records, ReadMode::Strict, &name(&path));
    }
    for (file, ..) in ARCHIVES {
        let records = read_games(&load(&data.join(file)), ReadMode::Lenient).unwrap();
        round_trip(&records, ReadMode::Lenient, file);
    }
}

#[test]
#[ignore = "corpus: needs ../shared, run by make corpus"]
fn the_large_english_archive_reads_whole() {
    let Some(data) = data_dir() else { return };
    let text = load(&data.join("english/ACF__EricCJoyce_Datasets__converted.pdn"));
    let mut collector = RecordCollector::new();
    let games = Reader::new(&text).read_all(&mut collector).unwrap();
    assert_eq!(games, 9377);
    assert_eq!(
        collector.games.iter().map(|g| g.moves.len()).sum::<usize>(),
        460_287
    );
}
