//! Replaying PDN records through the rules engine, and writing them back.

mod common;

use boardwatch::draughts::fen::to_fen;
use boardwatch::draughts::game::{replay, Game};
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
