//! Mutation tests of the three readers of text that users hand over: the PDN reader, the
//! observation reader (`track`'s JSON lines) and the daemon's configuration reader. Valid inputs
//! are damaged the way files get damaged (a byte flipped, a line cut or lost, a brace removed,
//! the file truncated) with a fixed seed, a few hundred cases each, so that a regression to a
//! panic or a hang fails the suite. Each reader must return values or an error naming where the
//! trouble is; a hang fails the test after a generous time limit instead of stalling the suite.

mod common;

use std::path::Path;
use std::sync::mpsc;
use std::time::Duration;

use boardwatch::draughts::game::replay;
use boardwatch::draughts::pdn::{read_archive, read_games, ReadMode};
use boardwatch::draughts::Variant;
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;

/// Runs `work` on a thread of its own and fails if it panics or takes longer than `limit`.
fn without_hang(name: &str, limit: Duration, work: impl FnOnce() + Send + 'static) {
    let (done, finished) = mpsc::channel();
    let worker = std::thread::spawn(move || {
        work();
        let _ = done.send(());
    });
    match finished.recv_timeout(limit) {
        Ok(()) => worker.join().unwrap(),
        Err(mpsc::RecvTimeoutError::Disconnected) => {
            // The worker ended without sending: it panicked; show its panic.
            if let Err(panic) = worker.join() {
                std::panic::resume_unwind(panic);
            }
        }
        Err(mpsc::RecvTimeoutError::Timeout) => panic!("{name}: no answer after {limit:?}: a hang"),
    }
}

/// One to three damages of the kinds files suffer, chosen by `rng`.
fn mutate(text: &str, rng: &mut ChaCha8Rng) -> String {
    let mut bytes = text.as_bytes().to_vec();
    for _ in 0..rng.gen_range(1..=3) {
        if bytes.is_empty() {
            break;
        }
        let at = rng.gen_range(0..bytes.len());
        match rng.gen_range(0..8) {
            // A bit flipped.
            0 => bytes[at] ^= 1 << rng.gen_range(0..8),
            // A byte replaced by one that means something to the readers.
            1 => bytes[at] = b"{}[]()\"-x:.*/\\=,\n#0123456789"[rng.gen_range(0..27)],
            // The file truncated.
            2 => bytes.truncate(at),
            // A brace, bracket, quote or parenthesis removed.
            3 => {
                if let Some(i) = (at..bytes.len()).find(|&i| b"{}[]()\"".contains(&bytes[i])) {
                    bytes.remove(i);
                }
            }
            // A line cut short: the rest of the line lost.
            4 => {
                let end = (at..bytes.len()).find(|&i| bytes[i] == b'\n').unwrap_or(bytes.len());
                bytes.drain(at..end);
            }
            // A whole line lost.
            5 => {
                let start = bytes[..at].iter().rposition(|&c| c == b'\n').map_or(0, |i| i + 1);
                let end = (at..bytes.len()).find(|&i| bytes[i] == b'\n').map_or(bytes.len(), |i| i + 1);
                bytes.drain(start..end);
            }
            // A line written twice.
            6 => {
                let start = bytes[..at].iter().rposition(|&c| c == b'\n').map_or(0, |i| i + 1);
                let end = (at..bytes.len()).find(|&i| bytes[i] == b'\n').map_or(bytes.len(), |i| i + 1);
                let line = bytes[start..end].to_vec();
                bytes.splice(start..start, line);
            }
            // A run of bytes lost.
            _ => {
                let end = (at + rng.gen_range(1..40)).min(bytes.len());
                bytes.drain(at..end);
            }
        }
    }
    String::from_utf8_lossy(&bytes).into_owned()
}

/// Lines as the PDN reader counts them (`\n`, `\r\n` and a lone `\r` each end one).
fn line_count(text: &str) -> usize {
    1 + text.matches('\n').count() + text.matches('\r').count()
}

#[test]
fn the_pdn_reader_survives_damaged_archives() {
    let sample = common::load_lossy(&common::repo_file("samples/games/acf_sample.pdn"));
    // The sample's first games, and one with what the sample lacks: comments, a variation, a
    // setup, marks and NAGs.
    let mut base: String = sample.split("\n\n[Event").take(6).collect::<Vec<_>>().join("\n\n[Event");
    base.push_str(
        "\n\n[Event \"annotated\"]\n[GameType \"21\"]\n{ before } 1. 11-15 {good} (1. 9-14 22-18 $2) \
         23-19! 2. 8-11 /FEN \"W:W19,22,23:B8,11,15\"/ 22-17 ; a PGN comment\n1/2-1/2\n",
    );
    assert!(read_games(&base, ReadMode::Strict).is_err(), "the base has a lenient-only `;` comment");
    assert_eq!(read_archive(&base, ReadMode::Lenient).games.len(), 7);

    without_hang("PDN reader", Duration::from_secs(120), move || {
        let mut rng = ChaCha8Rng::seed_from_u64(0x5EED_0018);
        let (mut defects, mut games_read) = (0usize, 0usize);
        for case in 0..400 {
            let text = mutate(&base, &mut rng);
            let lines = line_count(&text);
            for mode in [ReadMode::Strict, ReadMode::Lenient] {
                if let Err(e) = read_games(&text, mode) {
                    assert!((1..=lines).contains(&e.line) && e.col >= 1, "case {case}: {e}\n{text}");
                }
                let read = read_archive(&text, mode);
                let mut numbers: Vec<usize> =
                    read.games.iter().map(|g| g.number).chain(read.defects.iter().map(|d| d.game)).collect();
                numbers.sort_unstable();
                assert_eq!(numbers, (1..=numbers.len()).collect::<Vec<_>>(), "case {case}\n{text}");
                for d in &read.defects {
                    assert!((1..=lines).contains(&d.error.line) && d.error.col >= 1, "case {case}: {d}\n{text}");
                    assert!(!d.error.message.is_empty(), "case {case}");
                }
                for g in &read.games {
                    // The moves of a damaged game may be illegal: an error naming a line.
                    if let Err(e) = replay(g, Variant::English) {
                        assert!(!e.reason.is_empty() && e.line >= 1, "case {case}: game {}", g.number);
                    }
                }
                defects += read.defects.len();
                games_read += read.games.len();
            }
        }
        // The damage was real, and most games survived it.
        assert!(defects > 100, "{defects} defects");
        assert!(games_read > 400 * 2 * 4, "{games_read} games read");
    });
}

#[test]
fn the_observation_reader_survives_damaged_lines() {
    let sample = std::fs::read_to_string(common::repo_file("tests/data/track_sample.jsonl")).unwrap();
    let mut lines: Vec<String> = sample.lines().map(str::to_string).collect();
    lines.extend(
        [r#"{"op": "set_start", "to_move": 2}"#, r#"{"op": "resign", "player": "black"}"#, r#"{"op": "back"}"#]
            .map(String::from),
    );
    for line in &lines {
        boardwatch::tracker::parse_input_line(line).unwrap_or_else(|e| panic!("{e}: {line}"));
    }

    without_hang("observation reader", Duration::from_secs(120), move || {
        let mut rng = ChaCha8Rng::seed_from_u64(0x5EED_0019);
        let mut errors = 0;
        for case in 0..600 {
            let line = mutate(&lines[rng.gen_range(0..lines.len())], &mut rng);
            if let Err(e) = boardwatch::tracker::parse_input_line(&line) {
                let said = e.to_string();
                // Where: a column of the JSON, a grid row or square, the field at fault, or the
                // line as a whole (not a JSON object); the caller adds the line's number.
                let names_a_place = ["column", "row", "grid", "probs", "op", "`", "player", "result", "to_move", "JSON object"]
                    .iter()
                    .any(|w| said.contains(w));
                assert!(names_a_place, "case {case}: {said:?} for {line:?}");
                errors += 1;
            }
        }
        assert!(errors > 300, "{errors} errors");
    });
}

#[test]
fn the_config_reader_survives_damaged_files() {
    let example = std::fs::read_to_string(common::repo_file("systemd/boardwatch.toml")).unwrap();
    // The token file is made at installation: a token in the text keeps the test off the disk.
    let base = example.replace("token_file = \"/etc/boardwatch/token\"", "token = \"s3cret\"");
    let parse = |text: &str| boardwatch::daemon::Config::parse(text, "boardwatch.toml", Path::new("/etc/boardwatch"));
    parse(&base).unwrap_or_else(|e| panic!("{e}"));

    without_hang("config reader", Duration::from_secs(120), move || {
        let mut rng = ChaCha8Rng::seed_from_u64(0x5EED_001A);
        let mut errors = 0;
        for case in 0..300 {
            let text = mutate(&base, &mut rng);
            let Err(errs) = parse(&text) else { continue };
            errors += 1;
            assert!(!errs.0.is_empty(), "case {case}");
            for e in &errs.0 {
                assert_eq!(e.file, "boardwatch.toml");
                // A syntax error gives the line; any other error names the key.
                let placed = if e.key == "(syntax)" { e.message.contains("line") } else { !e.key.is_empty() };
                assert!(placed, "case {case}: {e}\n{text}");
            }
        }
        assert!(errors > 100, "{errors} errors");
    });
}
