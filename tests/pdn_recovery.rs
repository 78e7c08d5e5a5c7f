//! Archives with defective games: every other game is read, and each defect is reported with
//! its game number and position. The archives are made defective on purpose here, from the
//! bundled sample (always run) and from the archives of the shared data folder (corpus tests,
//! `#[ignore]`d, run by `make corpus`).

mod common;

use std::path::{Path, PathBuf};
use std::process::Command;

use boardwatch::draughts::game::replay;
use boardwatch::draughts::pdn::{read_archive, read_games, ArchiveRead, GameRecord, PdnErrorKind, ReadMode};
use boardwatch::draughts::Variant;

/// 1-based line and character column of byte `at`, counted as the reader counts them.
fn position_of(text: &str, at: usize) -> (usize, usize) {
    let before = &text[..at];
    let line = 1 + before.matches('\n').count();
    let line_start = before.rfind('\n').map_or(0, |i| i + 1);
    (line, text[line_start..at].chars().count() + 1)
}

/// Byte offset of a 1-based line and character column (as the reader reports them).
fn offset_of(text: &str, line: usize, col: usize) -> usize {
    let line_start = if line == 1 {
        0
    } else {
        text.match_indices('\n').nth(line - 2).map(|(i, _)| i + 1).expect("line in the text")
    };
    line_start + text[line_start..].chars().take(col - 1).map(char::len_utf8).sum::<usize>()
}

/// What was done to an archive, and where the reader must find it.
#[derive(Debug)]
struct Damage {
    game: usize,
    what: &'static str,
    line: usize,
    col: Option<usize>,
}

/// Edits made on an archive's text, applied from the end so that earlier offsets stay true.
struct Edits(Vec<(usize, usize, String)>);

impl Edits {
    fn apply(mut self, text: &str) -> String {
        self.0.sort_by_key(|e| std::cmp::Reverse(e.0));
        let mut out = text.to_string();
        for (at, len, with) in self.0 {
            out.replace_range(at..at + len, &with);
        }
        out
    }
}

/// Damages an archive read into `games`: the `]` of game `bracket`'s first tag removed, a move
/// of game `dash` replaced by `-`, and the text cut inside the last game's last move. Returns the
/// damaged text and, for each damage, the position it has in the damaged text.
fn damage(text: &str, games: &[GameRecord], bracket: usize, dash: usize) -> (String, Vec<Damage>) {
    let mut edits = Edits(Vec::new());
    let mut marks: Vec<(usize, &'static str, usize)> = Vec::new();

    // A tag on a line of its own loses its `]`.
    let g = &games[bracket - 1];
    let tag_line = text[offset_of(text, g.start_line, 1)..]
        .lines()
        .position(|l| l.trim_start().starts_with('[') && l.trim_end().ends_with("\"]") && l.matches('[').count() == 1)
        .expect("a tag on its own line")
        + g.start_line;
    let line_at = offset_of(text, tag_line, 1);
    let close = line_at + text[line_at..].find("\"]").unwrap() + 1;
    edits.0.push((close, 1, String::new()));
    marks.push((bracket, "a tag's ']' removed", close));

    // A move that is not right after a move number becomes `-`.
    let g = &games[dash - 1];
    let m = g.moves.iter().skip(1).find(|m| m.number.is_none()).expect("a move without a number");
    let at = offset_of(text, m.line, m.col);
    edits.0.push((at, m.token.text.len(), "-".to_string()));
    marks.push((dash, "a move replaced by '-'", at));

    // The file ends inside the last game's last move written with a separator: right after
    // the separator (a move cut short there cannot be read as a complete one).
    let g = games.last().unwrap();
    let m = g.moves.iter().rev().find(|m| m.token.text.contains(['-', 'x', ':'])).expect("a move with a separator");
    let at = offset_of(text, m.line, m.col);
    let sep = at + text[at..].find(['-', 'x', ':']).unwrap() + 1;
    edits.0.push((sep, text.len() - sep, String::new()));
    marks.push((g.number, "the file truncated mid-move", sep - 1));

    // Offsets shift only for edits before them; all three are in different games, in order.
    let damaged = edits.apply(text);
    let mut shift: isize = 0;
    let mut damages = Vec::new();
    let mut sorted = marks.clone();
    sorted.sort_by_key(|m| m.2);
    for (game, what, at) in sorted {
        let at = (at as isize + shift) as usize;
        let (line, col) = position_of(&damaged, at);
        damages.push(Damage { game, what, line, col: Some(col) });
        if what == "a tag's ']' removed" {
            shift -= 1;
        } else if what == "a move replaced by '-'" {
            shift += 1 - m_len(games, game) as isize;
        }
    }
    (damaged, damages)
}

/// The length of the move that `damage` replaced in game `game`.
fn m_len(games: &[GameRecord], game: usize) -> usize {
    let g = &games[game - 1];
    g.moves.iter().skip(1).find(|m| m.number.is_none()).unwrap().token.text.len()
}

/// The damaged archive reads every other game as before, and reports each damage with its game
/// number and line (and column, where the damage has one).
fn check_recovery(name: &str, original: &ArchiveRead, damaged: &str, damages: &[Damage]) -> ArchiveRead {
    let read = read_archive(damaged, ReadMode::Lenient);
    let defective: Vec<usize> = read.defects.iter().map(|d| d.game).collect();
    let expected: Vec<usize> = damages.iter().map(|d| d.game).collect();
    assert_eq!(defective, expected, "{name}: defects {:#?}", read.defects);
    for (d, want) in read.defects.iter().zip(damages) {
        assert_eq!(d.error.line, want.line, "{name}: {} in game {}: {d}", want.what, want.game);
        if let Some(col) = want.col {
            assert_eq!(d.error.col, col, "{name}: {} in game {}: {d}", want.what, want.game);
        }
    }
    assert_eq!(read.games_in_text(), original.games.len(), "{name}");
    let damaged_games: Vec<usize> = damages.iter().map(|d| d.game).collect();
    let kept: Vec<&GameRecord> = original.games.iter().filter(|g| !damaged_games.contains(&g.number)).collect();
    assert_eq!(read.games.len(), kept.len(), "{name}");
    for (a, b) in read.games.iter().zip(kept) {
        assert_eq!(a.number, b.number, "{name}");
        assert_eq!(a.tags, b.tags, "{name} game {}", a.number);
        let moves = |g: &GameRecord| g.moves.iter().map(|m| m.token.clone()).collect::<Vec<_>>();
        assert_eq!(moves(a), moves(b), "{name} game {}", a.number);
        assert_eq!(a.result, b.result, "{name} game {}", a.number);
    }
    read
}

#[test]
fn a_damaged_sample_archive_reads_every_other_game_and_names_each_defect() {
    let path = common::repo_file("samples/games/acf_sample.pdn");
    let text = common::load_lossy(&path);
    let original = read_archive(&text, ReadMode::Lenient);
    assert_eq!((original.games.len(), original.defects.len()), (20, 0));

    let (damaged, damages) = damage(&text, &original.games, 4, 9);
    assert_eq!(damages.iter().map(|d| d.game).collect::<Vec<_>>(), [4, 9, 20]);
    // Stopping at the first error, as before, reads nothing.
    assert!(read_games(&damaged, ReadMode::Lenient).is_err());
    let read = check_recovery("acf_sample.pdn", &original, &damaged, &damages);
    assert_eq!(read.games.len(), 17);
    for g in &read.games {
        replay(g, Variant::English).unwrap_or_else(|e| panic!("game {}: {e:?}", g.number));
    }
}

/// The sample with the two real defects of issue 18 written into it: a comment without braces
/// after the last move of game 6, and the moves of game 12 given as `- -` placeholders; and a
/// comment in game 15 that lost its `}`.
fn sample_with_real_defects() -> (String, Vec<(usize, usize)>) {
    let text = common::load_lossy(&common::repo_file("samples/games/acf_sample.pdn"));
    let games = read_archive(&text, ReadMode::Lenient).games;
    let mut edits = Edits(Vec::new());
    let last = games[5].moves.last().unwrap();
    let at = offset_of(&text, last.line, last.col) + last.token.text.len();
    edits.0.push((at, 0, "Redoversteppedthetimecontrolonthismove.".into()));
    let (first, last) = (&games[11].moves[0], games[11].moves.last().unwrap());
    let from = offset_of(&text, first.line, first.col) - "1. ".len();
    let to = offset_of(&text, last.line, last.col) + last.token.text.len();
    edits.0.push((from, to - from, "1. - - 2. - - 3. - - 4. - -".into()));
    let m = &games[14].moves[2];
    let at = offset_of(&text, m.line, m.col);
    edits.0.push((at, 0, "{Red thinks for 40 minutes ".into()));
    let damaged = edits.apply(&text);
    // Where the comment brace now stands.
    let brace = damaged.find("{Red thinks").unwrap();
    let (line, col) = position_of(&damaged, brace);
    (damaged, vec![(15, line), (15, col)])
}

#[test]
fn real_defects_are_read_where_their_meaning_is_clear() {
    let (text, brace) = sample_with_real_defects();
    let read = read_archive(&text, ReadMode::Lenient);
    assert_eq!(read.games_in_text(), 20);
    assert_eq!(read.games.len(), 19, "{:#?}", read.defects);
    let d = &read.defects[0];
    assert_eq!((d.game, d.error.kind, d.error.line, d.error.col), (15, PdnErrorKind::Unterminated, brace[0].1, brace[1].1));

    let g6 = read.games.iter().find(|g| g.number == 6).unwrap();
    assert_eq!(g6.moves.last().unwrap().comments_after, ["Redoversteppedthetimecontrolonthismove."]);
    assert!(g6.warnings.iter().any(|w| w.kind == PdnErrorKind::Repaired && w.message.contains("without braces")));
    replay(g6, Variant::English).expect("the moves before the comment are legal");

    let g12 = read.games.iter().find(|g| g.number == 12).unwrap();
    assert!(g12.moves.is_empty());
    assert!(g12.result.is_some());
    assert!(g12.warnings.iter().any(|w| w.kind == PdnErrorKind::Repaired && w.message.contains("placeholders")));
}

fn boardwatch(args: &[&str]) -> (bool, String, String) {
    let out = Command::new(env!("CARGO_BIN_EXE_boardwatch")).args(args).current_dir(env!("CARGO_MANIFEST_DIR")).output().unwrap();
    (out.status.success(), String::from_utf8_lossy(&out.stdout).into_owned(), String::from_utf8_lossy(&out.stderr).into_owned())
}

#[test]
fn pdn_check_counts_read_legal_and_defective_games_and_strict_keeps_the_first_error() {
    let text = common::load_lossy(&common::repo_file("samples/games/acf_sample.pdn"));
    let original = read_archive(&text, ReadMode::Lenient);
    let (damaged, damages) = damage(&text, &original.games, 4, 9);
    let tmp = tempfile::Builder::new().prefix("boardwatch-damaged-").tempdir().unwrap();
    let file = tmp.path().join("damaged.pdn");
    std::fs::write(&file, &damaged).unwrap();
    let name = file.to_str().unwrap();

    let (ok, out, err) = boardwatch(&["pdn", "check", name, "--variant", "english"]);
    assert!(!ok, "defects make the check fail: {out}{err}");
    assert!(out.contains("20 games: 17 read, 17 fully legal, 3 defective"), "{out}");
    for d in &damages {
        assert!(out.contains(&format!("game {} (line {}, ", d.game, d.line)), "{d:?} in {out}");
    }

    let (ok, out, _) = boardwatch(&["pdn", "check", name, "--variant", "english", "--json"]);
    assert!(!ok);
    let report: serde_json::Value = serde_json::from_str(out.trim()).unwrap();
    assert_eq!((report["games"].as_u64(), report["read"].as_u64(), report["defective"].as_u64()), (Some(20), Some(17), Some(3)));
    assert_eq!(report["defects"][1]["game"].as_u64(), Some(9));

    let (ok, out, _) = boardwatch(&["pdn", "check", name, "--variant", "english", "--strict"]);
    assert!(!ok);
    assert!(out.contains("0 games") && out.contains(&format!("line {}", damages[0].line)), "{out}");

    // `pdn show` says which games were left out, and shows the others by their number.
    let (ok, out, err) = boardwatch(&["pdn", "show", name, "--game", "10", "--variant", "english"]);
    assert!(ok, "{err}");
    assert!(out.contains("game 10"), "{out}");
    assert!(err.contains("game 4 left out") && err.contains("game 9 left out"), "{err}");
    let (ok, _, err) = boardwatch(&["pdn", "show", name, "--game", "9", "--variant", "english"]);
    assert!(!ok && err.contains("game 9 is defective"), "{err}");
}

// ---------------------------------------------------------------------------------------------
// Corpus: the archives of the shared data folder
// ---------------------------------------------------------------------------------------------

fn pdn_files_under(dir: &Path) -> Vec<PathBuf> {
    let mut files = Vec::new();
    let mut dirs = vec![dir.to_path_buf()];
    while let Some(d) = dirs.pop() {
        for entry in std::fs::read_dir(&d).unwrap_or_else(|e| panic!("{}: {e}", d.display())) {
            let path = entry.unwrap().path();
            if path.is_dir() {
                dirs.push(path);
            } else if path.extension().is_some_and(|e| e == "pdn") {
                files.push(path);
            }
        }
    }
    files.sort();
    files
}

#[test]
#[ignore = "corpus: needs ../shared, run by make corpus"]
fn damaged_real_archives_read_every_other_game() {
    let Some(data) = common::shared_data() else { return };
    let root = data.join("draughts");
    let mut checked = 0;
    for path in pdn_files_under(&root) {
        let name = path.strip_prefix(&root).unwrap().display().to_string();
        if name.starts_with("pdn_testsuite_wiegerw/fail") {
            continue;
        }
        let text = common::load_lossy(&path);
        let original = read_archive(&text, ReadMode::Lenient);
        assert!(original.defects.is_empty(), "{name}: {:?}", original.defects);
        // A valid archive reads the same whether defective games would be skipped or not.
        assert_eq!(Ok(&original.games), read_games(&text, ReadMode::Lenient).as_ref(), "{name}");
        let n = original.games.len();
        let usable = |g: &GameRecord| g.moves.iter().skip(1).any(|m| m.number.is_none());
        let separated = |g: &GameRecord| g.moves.iter().any(|m| m.token.text.contains(['-', 'x', ':']));
        if n < 8 || !original.games.last().is_some_and(separated) {
            println!("{name}: {n} games, too few, or no move with a separator in the last: not damaged");
            continue;
        }
        let bracket = (n / 4).max(1);
        let tagged_alone = |g: &GameRecord| {
            text[offset_of(&text, g.start_line, 1)..].lines().take_while(|l| l.trim_start().starts_with('[')).any(|l| {
                l.trim_start().starts_with('[') && l.trim_end().ends_with("\"]") && l.matches('[').count() == 1
            })
        };
        let Some(bracket) = (bracket..n / 2).find(|&k| tagged_alone(&original.games[k - 1])) else {
            println!("{name}: no game with a tag on its own line: not damaged");
            continue;
        };
        let Some(dash) = (n / 2 + 1..n).find(|&k| usable(&original.games[k - 1])) else {
            println!("{name}: no game to put a '-' in: not damaged");
            continue;
        };
        let (damaged, damages) = damage(&text, &original.games, bracket, dash);
        let read = check_recovery(&name, &original, &damaged, &damages);
        println!(
            "{name}: {n} games; damaged games {bracket}, {dash}, {n}: {} read, defects {}",
            read.games.len(),
            read.defects.iter().map(|d| d.to_string()).collect::<Vec<_>>().join("; ")
        );
        checked += 1;
    }
    assert!(checked >= 10, "only {checked} archives damaged");
}

/// The PDN test suite's `fail/` files are real archives with real defects: read game by game,
/// each loses only its defective games. abatsiev.pdn has the placeholder game of issue 18
/// (`1. - - 2. - - ... 25. - -`), which is read as a game without moves.
#[test]
#[ignore = "corpus: needs ../shared, run by make corpus"]
fn the_real_defects_of_the_fail_files_cost_only_their_games() {
    let Some(data) = common::shared_data() else { return };
    let fail = data.join("draughts/pdn_testsuite_wiegerw/fail");
    for path in pdn_files_under(&fail) {
        let text = common::load_lossy(&path);
        let read = read_archive(&text, ReadMode::Lenient);
        let strict = read_archive(&text, ReadMode::Strict);
        let tags = text.lines().filter(|l| l.trim_start().starts_with("[Event")).count();
        let repaired: usize =
            read.games.iter().map(|g| g.warnings.iter().filter(|w| w.kind == PdnErrorKind::Repaired).count()).sum();
        println!(
            "{}: {} games with an Event tag; lenient: {} read, {} defective, {repaired} repaired; strict: {} read, {} defective",
            path.file_name().unwrap().to_string_lossy(),
            tags,
            read.games.len(),
            read.defects.len(),
            strict.games.len(),
            strict.defects.len()
        );
        for d in &read.defects {
            println!("  {d}");
        }
        // Every file of fail/ has a violation that the strict read reports, with its position,
        // and reads its other games.
        assert!(!strict.defects.is_empty());
        assert!(strict.games.len() + 3 >= tags.min(strict.games_in_text()), "{}", path.display());
        // Leniently, at most the games with a real defect are lost.
        assert!(read.defects.len() <= 3, "{}: {:?}", path.display(), read.defects);
    }
    let abatsiev = read_archive(&common::load_lossy(&fail.join("abatsiev.pdn")), ReadMode::Lenient);
    assert_eq!((abatsiev.games.len(), abatsiev.defects.len()), (56, 0));
    let unknown: Vec<&GameRecord> = abatsiev
        .games
        .iter()
        .filter(|g| g.warnings.iter().any(|w| w.kind == PdnErrorKind::Repaired && w.message.contains("25 moves")))
        .collect();
    assert_eq!(unknown.len(), 1);
    assert!(unknown[0].moves.is_empty() && unknown[0].result.is_some());
}

/// Issue 18 names two archives: 724 English games whose game 623 ends with a comment without
/// braces, and 198 Russian games whose game 36 gives its moves as `- -` placeholders. When the
/// shared folder holds them (found by their game counts), both defects must be read as such.
#[test]
#[ignore = "corpus: needs ../shared, run by make corpus"]
fn the_archives_named_in_issue_18_read_whole_if_present() {
    let Some(data) = common::shared_data() else { return };
    let mut found = 0;
    for path in pdn_files_under(&data.join("draughts")) {
        let text = common::load_lossy(&path);
        let tags = text.lines().filter(|l| l.trim_start().starts_with("[Event")).count();
        let (count, game, what) = match tags {
            724 => (724, 623, "without braces"),
            198 => (198, 36, "placeholders"),
            _ => continue,
        };
        found += 1;
        let read = read_archive(&text, ReadMode::Lenient);
        println!("{}: {} read, defects {:?}", path.display(), read.games.len(), read.defects);
        assert_eq!(read.games_in_text(), count, "{}", path.display());
        let g = read.games.iter().find(|g| g.number == game).unwrap_or_else(|| panic!("{}: game {game}", path.display()));
        assert!(g.warnings.iter().any(|w| w.kind == PdnErrorKind::Repaired && w.message.contains(what)), "{:?}", g.warnings);
    }
    if found == 0 {
        eprintln!("note: the 724-game and 198-game archives of issue 18 are not in the shared folder");
    }
}
