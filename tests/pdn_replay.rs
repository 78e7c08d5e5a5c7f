//! Replaying PDN records through the rules engine, and writing them back.

mod common;

use boardwatch::draughts::fen::to_fen;
use boardwatch::draughts::game::{replay, replay_choosing, Game, VariantSource};
use boardwatch::draughts::pdn::{read_games, GameResult, ReadMode};
use boardwatch::draughts::Variant;

fn replay_text(text: &str, variant: Variant) -> Vec<Result<Game, String>> {
    read_games(text, ReadMode::Lenient)
        .expect("reads")
        .iter()
        .map(|r| replay(r, variant).map_err(|e| e.to_string()))
        .collect()
}

/// Write a game back, read it strictly, replay it: the same moves and positions.
fn assert_round_trip(game: &Game) {
    let text = game.to_pdn();
    let records = read_games(&text, ReadMode::Strict).unwrap_or_else(|e| panic!("{e}\n{text}"));
    assert_eq!(records.len(), 1, "{text}");
    let again = replay(&records[0], Variant::Pool).unwrap_or_else(|e| panic!("{e}\n{text}"));
    assert_eq!(again.variant, game.variant);
    assert_eq!(again.start, game.start);
    assert_eq!(again.plies.len(), game.plies.len());
    for (a, b) in game.plies.iter().zip(&again.plies) {
        assert!(a.mv.same_effect(&b.mv), "{} vs {}", a.text, b.text);
        assert_eq!(a.after, b.after);
    }
    assert_eq!(again.result, game.result);
}

#[test]
fn bundled_sample_games_replay_and_round_trip() {
    let text = common::load_lossy(&common::repo_file("samples/games/acf_sample.pdn"));
    let games = replay_text(&text, Variant::Pool);
    assert_eq!(games.len(), 20);
    for game in &games {
        let game = game.as_ref().expect("every sample game is legal");
        assert_eq!(game.variant, Variant::English, "from the GameType tag");
        assert!(game.plies.len() > 10);
        assert_round_trip(game);
    }
}

#[test]
fn an_illegal_move_is_reported_with_ply_and_line() {
    let text = "[GameType \"21\"]\n\n1. 11-15 23-19 2. 15-20 *\n";
    let games = replay_text(text, Variant::Pool);
    let err = games[0].as_ref().unwrap_err();
    assert!(err.contains("ply 3") && err.contains("15-20") && err.contains("line 3"), "{err}");
    // Compulsory capture: after 11-15 22-18, Black must take 15x22, so 9-13 is illegal.
    let text = "[GameType \"21\"]\n\n1. 11-15 22-18 2. 9-13 *\n";
    let err = replay_text(text, Variant::Pool)[0].as_ref().unwrap_err().clone();
    assert!(err.contains("no legal move"), "{err}");
}

#[test]
fn captures_written_leg_by_leg_are_joined() {
    // An online export writes White's double jump e5xc3xa1 as two "moves".
    let text = "1. c3-d4 d6-e5 2. b2-c3 c7-d6 3. a1-b2 b6-a5 4. e3-f4 a5-b4 5. a3xc5 d6xb4 \
                6. c3xa5 e5xc3 7. c3xa1 c1-b2 0-1\n";
    let game = replay_text(text, Variant::English).remove(0).expect("replays");
    let joined = &game.plies[11];
    assert_eq!(joined.mv.capture_count(), 2);
    assert_eq!(joined.written, "e5xc3 c3xa1");
    assert!(joined.mv.crowns);
    assert_eq!(game.plies.len(), 13);
    assert_round_trip(&game);
}

#[test]
fn setup_tags_and_commands_start_from_the_given_position() {
    let text = "[GameType \"21\"]\n[SetUp \"1\"]\n[FEN \"W:W18,K5:B1,14\"]\n\n1. 18x9 /FEN \"B:W21:B1\"/ 1-5 1-0\n";
    let game = replay_text(text, Variant::Pool).remove(0).expect("replays");
    assert_eq!(to_fen(&game.start, &game.rules), "W:WK5,18:B1,14");
    assert_eq!(game.plies[0].mv.capture_count(), 1);
    assert_eq!(game.plies[1].setup_before.as_deref(), Some("B:W21:B1"));
    assert_eq!(to_fen(&game.final_position(), &game.rules), "W:W21:B5");
    assert_eq!(game.result, GameResult::FirstPlayerWin);
    let written = game.to_pdn();
    assert!(written.contains("/FEN \"B:W21:B1\"/"), "{written}");
    assert_round_trip(&game);
}

#[test]
fn russian_compact_moves_resolve_by_the_rest_of_the_game() {
    let text = "[GameType \"25\"]\n\n1. cd4 fg5 2. gf4 gh4 3. fe5 df4 4. eg5 1:0\n";
    let game = replay_text(text, Variant::Pool).remove(0).expect("replays");
    assert_eq!(game.variant, Variant::Russian);
    let texts: Vec<&str> = game.plies.iter().map(|p| p.text.as_str()).collect();
    assert_eq!(texts, ["c3-d4", "f6-g5", "g3-f4", "g5-h4", "f4-e5", "d6:f4", "e3:g5"]);
    // `ce5` fits both c3:e5 and c7:e5; only one of them lets Black's reply be legal.
    let setup = "[GameType \"25\"]\n[FEN \"W:Wc3,c7:Bd4,d6\"]\n\n";
    let game = replay_text(&format!("{setup}1. ce5 db2 *\n"), Variant::Pool).remove(0).expect("replays");
    assert_eq!(game.plies[0].text, "c7:e5");
    let game = replay_text(&format!("{setup}1. ce5 df4 *\n"), Variant::Pool).remove(0).expect("replays");
    assert_eq!(game.plies[0].text, "c3:e5");
    let err = replay_text(&format!("{setup}1. ce5 *\n"), Variant::Pool).remove(0).unwrap_err();
    assert!(err.contains("ambiguous"), "{err}");
}

fn records_of(relative: &str) -> Vec<boardwatch::draughts::pdn::GameRecord> {
    read_games(&common::load_lossy(&common::repo_file(relative)), ReadMode::Lenient).expect("reads")
}

#[test]
fn a_game_without_a_game_type_is_read_under_the_rules_it_replays_legally_under() {
    let records = records_of("tests/data/variants_without_gametype.pdn");
    let chosen: Vec<(Variant, VariantSource)> = records
        .iter()
        .map(|r| {
            let read = replay_choosing(r, None).expect("8x8");
            (read.variant, read.source)
        })
        .collect();
    assert_eq!(
        chosen,
        [
            (Variant::English, VariantSource::Detected),
            (Variant::Pool, VariantSource::Detected),
            (Variant::Russian, VariantSource::Detected),
            (Variant::Italian, VariantSource::Detected),
            (Variant::English, VariantSource::Unresolved),
        ]
    );
    // The opening is legal under pool too: English checkers is tried first.
    assert!(replay(&records[0], Variant::Pool).is_ok());
    // The others are not English games, and the Russian one also replays as pool checkers:
    // its algebraic squares are what put the Russian game first.
    for record in &records[1..4] {
        assert!(replay(record, Variant::English).is_err(), "{:?}", record.tag("Event"));
    }
    assert!(replay(&records[2], Variant::Pool).is_ok());
    // Legal under no rules: the error of the variant where it went furthest.
    let unresolved = replay_choosing(&records[4], None).unwrap().replay.unwrap_err();
    assert_eq!((unresolved.ply, unresolved.written.as_str()), (2, "11-15"));

    // A variant given is used as given; a GameType tag still wins over it.
    let given = replay_choosing(&records[0], Some(Variant::Pool)).unwrap();
    assert_eq!((given.variant, given.source), (Variant::Pool, VariantSource::Given));
    let tagged = read_games("[GameType \"25\"]\n\n1. c3-d4 *\n", ReadMode::Lenient).unwrap();
    let read = replay_choosing(&tagged[0], Some(Variant::Pool)).unwrap();
    assert_eq!((read.variant, read.source), (Variant::Russian, VariantSource::Tagged));
    let other = read_games("[GameType \"20\"]\n\n1. 32-28 *\n", ReadMode::Lenient).unwrap();
    assert!(replay_choosing(&other[0], None).unwrap_err().contains("not an 8x8 variant"));
}

#[test]
fn an_english_archive_without_game_type_tags_reads_as_english_checkers() {
    let records = records_of("tests/data/english_without_gametype.pdn");
    assert_eq!(records.len(), 6);
    for record in &records {
        assert_eq!(record.tag("GameType"), None);
        let read = replay_choosing(record, None).unwrap();
        assert_eq!((read.variant, read.source), (Variant::English, VariantSource::Detected));
        read.replay.expect("legal");
    }
    // Read as pool checkers, as before, most of them are not legal.
    let legal_as_pool = records.iter().filter(|r| replay(r, Variant::Pool).is_ok()).count();
    assert!(legal_as_pool < records.len() / 2, "{legal_as_pool} of {}", records.len());
}

fn boardwatch(args: &[&str]) -> (bool, String, String) {
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_boardwatch"))
        .args(args)
        .current_dir(env!("CARGO_MANIFEST_DIR"))
        .output()
        .unwrap();
    (out.status.success(), String::from_utf8_lossy(&out.stdout).into_owned(), String::from_utf8_lossy(&out.stderr).into_owned())
}

#[test]
fn pdn_check_and_show_say_which_rules_a_game_without_game_type_was_read_under() {
    let english = "tests/data/english_without_gametype.pdn";
    let (ok, out, err) = boardwatch(&["pdn", "check", english]);
    assert!(ok, "{out}{err}");
    assert!(out.contains("6 games, 6 fully legal"), "{out}");
    assert!(out.contains("read as English checkers (no GameType tag; replays legally): games 1, 2, 3, 4, 5, 6"), "{out}");
    // --variant still forces the rules of untagged games.
    let (ok, out, _) = boardwatch(&["pdn", "check", english, "--variant", "pool"]);
    assert!(!ok && out.contains("read as pool checkers (no GameType tag; --variant pool)"), "{out}");
    let (_, out, _) = boardwatch(&["pdn", "check", english, "--json"]);
    let report: serde_json::Value = serde_json::from_str(out.trim()).unwrap();
    assert_eq!(report["untagged"][0]["variant"], "english");
    assert_eq!(report["untagged"][0]["how"], "detected");
    assert_eq!(report["untagged"][0]["games"].as_array().map(Vec::len), Some(6));

    let mixed = "tests/data/variants_without_gametype.pdn";
    let (ok, out, _) = boardwatch(&["pdn", "check", mixed]);
    assert!(!ok, "one game is legal under no rules: {out}");
    assert!(out.contains("5 games, 4 fully legal"), "{out}");
    for line in [
        "read as English checkers (no GameType tag; replays legally): game 1",
        "read as pool checkers (no GameType tag; replays legally): game 2",
        "read as Russian draughts (no GameType tag; replays legally): game 3",
        "read as Italian draughts (no GameType tag; replays legally): game 4",
        "read as English checkers (no GameType tag; legal under no 8x8 rules",
        "game 5 (line 25): ply 2 `11-15`",
    ] {
        assert!(out.contains(line), "{line} in {out}");
    }

    let (ok, out, err) = boardwatch(&["pdn", "show", mixed, "--game", "3"]);
    assert!(ok, "{err}");
    assert!(out.contains("(Russian draughts, GameType 25)") && out.contains("read as Russian draughts (no GameType tag; replays legally)"), "{out}");
    let (ok, out, err) = boardwatch(&["pdn", "show", mixed, "--game", "2", "--variant", "english"]);
    assert!(!ok && err.contains("--variant english") && err.contains("ply 4"), "{out}{err}");

    // `render --game` renders under the rules chosen, and says which.
    let tmp = tempfile::Builder::new().prefix("bw-render-untagged-").tempdir().unwrap();
    let dir = tmp.path().join("out");
    let render = |index: &str, variant: Option<&str>| {
        let dir = dir.display().to_string();
        let mut args = vec!["render", "--game", mixed, "--game-index", index, "--max-plies", "1", "--width", "160", "--height", "120", "--out-dir", &dir];
        if let Some(v) = variant {
            args.extend(["--variant", v]);
        }
        let result = boardwatch(&args);
        let truth: serde_json::Value = serde_json::from_slice(&std::fs::read(std::path::Path::new(&dir).join("truth.json")).unwrap_or_default()).unwrap_or_default();
        (result, truth["variant"].as_str().map(str::to_string))
    };
    let ((ok, _, err), variant) = render("2", None);
    assert!(ok && err.contains("read as Russian draughts (no GameType tag; replays legally)"), "{err}");
    assert_eq!(variant.as_deref(), Some("russian"));
    let ((ok, _, err), variant) = render("3", Some("italian"));
    assert!(ok && !err.contains("read as"), "{err}");
    assert_eq!(variant.as_deref(), Some("italian"));
}
