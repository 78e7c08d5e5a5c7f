//! Corpus-wide checks over `../shared/data/sokoban` (run by `make corpus`; `#[ignore]`d
//! otherwise): every level of every collection reads, has as many boxes as goals, and survives
//! a round trip through the XSB writer.

mod common;

use boardwatch::games::sokoban::level::{parse_collection, write_collection};

#[test]
#[ignore = "needs the shared data; run by `make corpus`"]
fn every_collection_reads_and_round_trips() {
    let Some(data) = common::shared_data() else { return };
    let expected = [
        ("microban_155.xsb", 155),
        ("microban_ii_135.xsb", 135),
        ("microban_iii_101.xsb", 101),
        ("microban_iv_102.xsb", 102),
        ("xsokoban_90.xsb", 90),
    ];
    for (name, count) in expected {
        let path = data.join("sokoban").join(name);
        let text = common::load_lossy(&path);
        let levels = parse_collection(&text).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
        assert_eq!(levels.len(), count, "{name}");
        let again = parse_collection(&write_collection(&levels)).unwrap();
        for (a, b) in levels.iter().zip(&again) {
            assert_eq!((a.title.as_str(), a.to_xsb()), (b.title.as_str(), b.to_xsb()), "{name}");
        }
    }
}

/// Every solution the solver reports on the shared collections is replayed and solves its level
/// (a second or so a level: this is a check of answers, not a benchmark).
#[test]
#[ignore = "needs the shared data; run by `make corpus`"]
fn every_reported_solution_solves_its_level() {
    use boardwatch::games::sokoban::solver::{solve, verify, Outcome};
    let Some(data) = common::shared_data() else { return };
    let mut solved = 0;
    for name in ["microban_ii_135.xsb", "xsokoban_90.xsb"] {
        let path = data.join("sokoban").join(name);
        let levels = parse_collection(&common::load_lossy(&path)).unwrap();
        for level in levels.iter().take(40) {
            let deadline = std::time::Instant::now() + std::time::Duration::from_millis(1000);
            match solve(level, Some(deadline), &std::sync::atomic::AtomicBool::new(false)) {
                Outcome::Solved { lurd, moves, pushes } => {
                    assert!(verify(level, &lurd), "{name} {}: the reported solution does not solve it", level.title);
                    assert_eq!((lurd.len(), lurd.chars().filter(char::is_ascii_uppercase).count()), (moves, pushes), "{name} {}", level.title);
                    solved += 1;
                }
                Outcome::Unsolvable => panic!("{name} {}: called unsolvable, but every level of these collections has a solution", level.title),
                Outcome::OutOfTime => {}
            }
        }
    }
    assert!(solved >= 20, "only {solved} levels solved: the check saw too few solutions");
}
