//! Behaviour beyond the seed's scenarios: corrections, stacked kings, end of game, operator
//! setups, probabilities, the majority rule, answers seen before the move was seen complete.

mod tracker_common;

use boardwatch::draughts::fen::parse_fen;
use boardwatch::draughts::movegen::legal_moves;
use boardwatch::draughts::{Color, Variant};
use boardwatch::tracker::{
    write_pdn, Command, ErrorKind, EventKind, Outcome, KingStyle, Observation, Reading, RecordItem, Tracker,
    TrackerConfig,
};
use tracker_common::{lines, Board};

fn tracker(variant: Variant, kings: KingStyle) -> Tracker {
    Tracker::new(TrackerConfig::new(variant, kings))
}

/// A tracker that calls an unexplained board an error at once (`error_after` 0), for the tests
/// about *what* is an error; `tests/tracker_resync.rs` tests *when*.
fn prompt_referee(variant: Variant, kings: KingStyle) -> Tracker {
    Tracker::new(TrackerConfig { error_after: 0.0, ..TrackerConfig::new(variant, kings) })
}

fn start_at(t: &mut Tracker, board: &Board, to_move: Color) {
    t.observe(&board.obs());
    t.set_start(Some(to_move)).expect("clear board");
}

fn texts(events: &[boardwatch::tracker::Event]) -> Vec<String> {
    events.iter().map(|e| e.text.clone()).collect()
}

#[test]
fn a_king_slid_on_before_the_answer_corrects_the_move() {
    // Pool: the blue king on 1 goes down the long diagonal; the player stops on 10, then slides on to 19.
    let start = Board::picture(
        "
        .B......
        ........
        ........
        ........
        ........
        ........
        ........
        w.......
        ",
    );
    let mut t = prompt_referee(Variant::Pool, KingStyle::Visible);
    start_at(&mut t, &start, Color::Black);
    let mut b = start.clone();
    b.slide((0, 1), (2, 3));
    assert_eq!(texts(&t.observe(&b.obs())), ["OK: Player1- Move Success"]);
    b.slide((2, 3), (4, 5));
    let revised = t.observe(&b.obs());
    assert_eq!(texts(&revised), ["OK: Player1- Move corrected"]);
    assert_eq!(revised[0].kind, EventKind::Revised);
    assert_eq!(revised[0].mv.as_deref(), Some("1-19"));
    assert_eq!(t.record().unwrap().move_texts(), ["1-19"], "replaced, not added");

    // Yellow lifts a man: the move stands. Sliding the king again is now an error.
    let settled = b.clone();
    b.set(7, 0, '.');
    assert!(t.observe(&b.obs()).is_empty());
    let mut slid = settled.clone();
    slid.slide((4, 5), (5, 6));
    let err = t.observe(&slid.obs());
    assert_eq!(texts(&err), ["Error: Player2- Invalid move"]);
}

#[test]
fn stacked_kings_are_crowned_by_the_tracker() {
    let start = Board::picture(
        "
        ........
        ........
        ........
        ........
        ........
        ......w.
        ...b....
        ........
        ",
    );
    let mut t = tracker(Variant::Pool, KingStyle::Stacked);
    start_at(&mut t, &start, Color::Black);
    let mut b = start.clone();
    b.slide((6, 3), (7, 2)); // 26-30: a king now, still looking like a man
    let crowned = t.observe(&b.obs());
    assert_eq!(texts(&crowned), ["OK: Player1- Move Success"]);
    assert_eq!(crowned[0].crowned, Some(true));
    assert!(crowned[0].fen.as_deref().unwrap().contains("K30"));
    b.slide((5, 6), (4, 7));
    assert_eq!(texts(&t.observe(&b.obs())), ["OK: Player2- Move Success"]);
    // The "man" on the last row goes backwards two squares: only a (flying) king can.
    b.slide((7, 2), (5, 0));
    assert_eq!(texts(&t.observe(&b.obs())), ["OK: Player1- Move Success"]);
    assert_eq!(t.record().unwrap().move_texts(), ["26-30", "24-20", "30-21"]);
}

#[test]
fn capturing_the_last_piece_ends_the_game() {
    let start = Board::picture(
        "
        ........
        ........
        ...b....
        ....w...
        ........
        ........
        ........
        ........
        ",
    );
    let mut t = tracker(Variant::Pool, KingStyle::Visible);
    start_at(&mut t, &start, Color::Black);
    let mut b = start.clone();
    b.slide((2, 3), (4, 5)).set(3, 4, '.');
    let events = t.observe(&b.obs());
    assert_eq!(texts(&events), ["OK: Player1- Capture success", "Game over: Player1 wins"]);
    assert_eq!(events[1].result.as_deref(), Some("1-0"));
    assert_eq!(events[1].detail.as_deref(), Some("Player2 has no pieces left"));
    assert_eq!(t.record().unwrap().result, Some(Outcome::Win(Color::Black)));
    b.set(0, 1, 'w');
    assert!(t.observe(&b.obs()).is_empty(), "after the end, boards are not judged");
    assert!(write_pdn(&t.games()).contains("1. 10x19 1-0"));
}

#[test]
fn draws_and_resignations_come_from_the_operator() {
    let mut t = tracker(Variant::Russian, KingStyle::Visible);
    t.init();
    let draw = t.command(&Command::Draw).unwrap();
    assert_eq!(draw[0].kind, EventKind::GameOver);
    assert_eq!(draw[0].result.as_deref(), Some("1/2-1/2"));
    t.init();
    let resign = t.command(&Command::Resign { side: Color::Black }).unwrap();
    assert_eq!(resign[0].text, "Game over: Player2 wins");
    assert_eq!(resign[0].result.as_deref(), Some("1-0"), "White first in Russian records");
    assert_eq!(t.games().len(), 2);
}

#[test]
fn an_unexplained_board_can_be_set_as_the_new_start_and_the_game_goes_on() {
    let mut t = prompt_referee(Variant::Pool, KingStyle::Visible);
    t.init();
    let mut b = Board::start();
    b.slide((2, 1), (3, 0));
    t.observe(&b.obs());
    // Someone knocked a man off the board: no legal move explains it.
    b.set(6, 1, '.');
    let err = t.observe(&b.obs());
    assert_eq!(err[0].error, Some(ErrorKind::InvalidMove));
    assert_eq!(err[0].changed, ["[6][1]"]);
    let init = t.command(&Command::SetStart { to_move: Some(Color::White), fen: None }).unwrap();
    assert_eq!(lines(&init), ["1: Init Ready"]);
    assert!(!t.is_holding());
    b.slide((5, 2), (4, 3));
    assert_eq!(lines(&t.observe(&b.obs())), ["2: OK: Player2- Move Success"]);
    let record = t.record().unwrap();
    assert!(matches!(&record.items[1], RecordItem::Setup { fen } if fen.starts_with("W:")));
    let pdn = write_pdn(&t.games());
    assert!(pdn.contains("1. 9-13 /FEN \"W:W21-24,26-32:B1-8,10-13\"/ 1... 22-18 *"), "{pdn}");
}

#[test]
fn set_start_refuses_an_unclear_board() {
    let mut t = tracker(Variant::Pool, KingStyle::Visible);
    let mut b = Board::start();
    b.set(5, 0, '?');
    t.observe(&b.obs());
    let err = t.set_start(None).unwrap_err();
    assert!(err.to_string().contains("[5][0]"), "{err}");
    let fen = t.command(&Command::SetStart { to_move: None, fen: Some("B:W18:B14".into()) }).unwrap();
    assert_eq!(fen[0].fen.as_deref(), Some("B:W18:B14"));
    assert_eq!(t.record().unwrap().setup_fen.as_deref(), Some("B:W18:B14"));
}

fn with_probs(board: &Board, row: usize, col: usize, p: [f32; 5]) -> Observation {
    let mut obs = board.obs();
    obs.squares[row][col] = Reading::Probabilities(p);
    obs
}

#[test]
fn probabilities_decide_only_when_one_state_clearly_wins() {
    let mut t = tracker(Variant::Pool, KingStyle::Visible);
    t.init();
    let mut b = Board::start();
    b.slide((2, 1), (3, 0));
    // [3][0]: 60% a red man, 40% empty: the move or the piece still in the hand?
    let unsure = t.observe(&with_probs(&b, 3, 0, [0.4, 0.6, 0.0, 0.0, 0.0]).with_time(1.0));
    assert_eq!(unsure.len(), 1);
    assert_eq!(unsure[0].kind, EventKind::Uncertain);
    assert_eq!(unsure[0].text, "Wait: Player1- Board unclear");
    assert_eq!(unsure[0].t, Some(1.0));
    assert!(t.record().unwrap().move_texts().is_empty());
    // Still unsure: not reported again.
    assert!(t.observe(&with_probs(&b, 3, 0, [0.45, 0.55, 0.0, 0.0, 0.0])).is_empty());
    let sure = t.observe(&with_probs(&b, 3, 0, [0.02, 0.97, 0.0, 0.01, 0.0]).with_time(2.0));
    assert_eq!(texts(&sure), ["OK: Player1- Move Success"]);
    assert_eq!(sure[0].t, Some(2.0));
}

#[test]
fn the_operator_confirms_or_rejects_an_unclear_board() {
    let mut t = tracker(Variant::Pool, KingStyle::Visible);
    t.init();
    assert_eq!(t.command(&Command::Confirm).unwrap_err().to_string(), "no unclear board is waiting for a decision");
    let mut b = Board::start();
    b.slide((2, 1), (3, 0));
    let unsure = with_probs(&b, 3, 0, [0.4, 0.6, 0.0, 0.0, 0.0]);
    assert_eq!(t.observe(&unsure)[0].kind, EventKind::Uncertain);
    let rejected = t.command(&Command::Reject).unwrap();
    assert_eq!(texts(&rejected), ["Wait: Player1- Reading rejected"]);
    assert!(t.command(&Command::Reject).is_err(), "decided already");
    // The same board again says nothing new; a new unclear one can be confirmed.
    assert!(t.observe(&unsure).is_empty());
    let unsure = with_probs(&b, 3, 0, [0.45, 0.55, 0.0, 0.0, 0.0]).with_time(3.0);
    assert_eq!(t.observe(&unsure)[0].kind, EventKind::Uncertain);
    let confirmed = t.command(&Command::Confirm).unwrap();
    assert_eq!(texts(&confirmed), ["OK: Player1- Reading confirmed", "OK: Player1- Move Success"]);
    assert_eq!(confirmed[1].mv.as_deref(), Some("9-13"));
    assert_eq!(confirmed[1].t, Some(3.0));
    assert_eq!(t.record().unwrap().move_texts(), ["9-13"]);
}

#[test]
fn the_operator_enters_a_result() {
    let mut t = tracker(Variant::English, KingStyle::Visible);
    assert!(t.command(&Command::Result { pdn: "1-0".into() }).is_err(), "no game yet");
    t.init();
    assert!(t.command(&Command::Result { pdn: "3-1".into() }).unwrap_err().to_string().contains("3-1"));
    let over = t.command(&Command::Result { pdn: "1-0".into() }).unwrap();
    assert_eq!(over[0].text, "Game over: Player1 wins", "Black first in English: 1-0 is a Black win");
    assert_eq!(t.record().unwrap().result, Some(Outcome::Win(Color::Black)));
}

#[test]
fn a_result_entered_by_the_operator_is_not_rewritten_by_later_readings() {
    // The king stops on 10 and the operator enters the result at once; the king sliding on to
    // 19 afterwards (a correction before the result) changes neither the move nor the result.
    let start = Board::picture(
        "
        .B......
        ........
        ........
        ........
        ........
        ........
        ........
        w.......
        ",
    );
    let mut t = prompt_referee(Variant::Pool, KingStyle::Visible);
    start_at(&mut t, &start, Color::Black);
    let mut b = start.clone();
    b.slide((0, 1), (2, 3));
    assert_eq!(texts(&t.observe(&b.obs())), ["OK: Player1- Move Success"]);
    let over = t.command(&Command::Result { pdn: "1/2-1/2".into() }).unwrap();
    assert_eq!(over[0].result.as_deref(), Some("1/2-1/2"));
    b.slide((2, 3), (4, 5));
    let late = t.observe(&b.obs());
    assert!(late.is_empty(), "no correction after the result: {:?}", texts(&late));
    b.set(7, 0, '.');
    assert!(t.observe(&b.obs()).is_empty(), "nor any other reading");
    let record = t.record().unwrap();
    assert_eq!(record.result, Some(Outcome::Draw));
    assert_eq!(record.move_texts(), ["1-10"]);
    assert!(write_pdn(&t.games()).contains("1. 1-10 1/2-1/2"));
}

#[test]
fn a_misread_square_without_a_move_is_no_error_when_soft() {
    let mut t = prompt_referee(Variant::Pool, KingStyle::Visible);
    t.init();
    // An empty square read as 70% yellow man: no legal state has one there, and the board as it
    // stands explains the reading well enough: nothing to say.
    let events = t.observe(&with_probs(&Board::start(), 4, 3, [0.3, 0.0, 0.7, 0.0, 0.0]));
    assert!(events.is_empty(), "{events:?}");
    assert!(!t.is_holding());
    // 24:1 is too much to explain away, too little to call an error: wait.
    let events = t.observe(&with_probs(&Board::start(), 4, 3, [0.04, 0.0, 0.96, 0.0, 0.0]));
    assert_eq!(events.iter().map(|e| e.kind).collect::<Vec<_>>(), [EventKind::Uncertain]);
    // Read beyond doubt, it is an error, as in the seed.
    let events = t.observe(&with_probs(&Board::start(), 4, 3, [0.001, 0.0, 0.999, 0.0, 0.0]));
    assert_eq!(events[0].error, Some(ErrorKind::InvalidMove));
}

#[test]
fn pieces_on_light_squares_are_ignored() {
    let mut t = tracker(Variant::Pool, KingStyle::Visible);
    t.init();
    let mut b = Board::start();
    b.set(3, 3, 'w'); // a light square: not part of the game
    assert!(t.observe(&b.obs()).is_empty());
}

#[test]
fn majority_rule_refuses_the_shorter_capture() {
    // Brazilian: Black (to move, as set) can take one piece with 14 or two with 10.
    let rules = Variant::Brazilian.rules();
    let pos = parse_fen("B:Wd4,d6,f4:Bc5,c7", &rules).unwrap();
    let legal = legal_moves(&pos, &rules);
    assert!(legal.iter().all(|m| m.capture_count() == 2), "{legal:?}");
    let mut t = prompt_referee(Variant::Brazilian, KingStyle::Visible);
    t.set_start_position(pos);
    // Any single capture that is not the start of the double one: an obligatory-capture error.
    let all = legal_moves(&pos, &Variant::Pool.rules());
    let single = all
        .iter()
        .find(|m| m.capture_count() == 1 && !legal.iter().any(|l| l.path()[1] == m.path()[1] && l.from == m.from));
    let Some(single) = single else { panic!("no single capture in {all:?}") };
    let after = pos.play(single);
    let err = t.observe(&Observation::of_position(&after, 0, &rules));
    assert_eq!(texts(&err), ["Error: Player1- Obligatory Capture"]);
    t.observe(&Observation::of_position(&pos, 0, &rules));
    let full = pos.play(&legal[0]);
    let done = t.observe(&Observation::of_position(&full, 0, &rules));
    assert_eq!(texts(&done), ["OK: Player1- Capture success"]);
}

#[test]
fn a_half_seen_capture_is_recorded_when_the_answer_shows_it() {
    // The red man jumps and is seen on its landing with the yellow man still there; the camera then
    // sees only the finished answer.
    let start = Board::picture(
        "
        ........
        ........
        ...b....
        ....w...
        ........
        ........
        .....w..
        ........
        ",
    );
    let mut t = tracker(Variant::Pool, KingStyle::Visible);
    start_at(&mut t, &start, Color::Black);
    let mut b = start.clone();
    b.slide((2, 3), (4, 5));
    assert!(t.observe(&b.obs()).is_empty(), "a partial state: no error, no record");
    b.set(3, 4, '.').slide((6, 5), (5, 6));
    let events = t.observe(&b.obs());
    assert_eq!(texts(&events), ["OK: Player1- Capture success", "OK: Player2- Move Success"]);
    assert_eq!(t.record().unwrap().move_texts(), ["10x19", "27-24"]);
}

#[test]
fn back_during_an_error_judges_the_next_board_afresh() {
    let mut t = prompt_referee(Variant::Pool, KingStyle::Visible);
    t.init();
    let mut b = Board::start();
    b.slide((2, 1), (4, 3)); // two squares: invalid
    assert_eq!(t.observe(&b.obs())[0].error, Some(ErrorKind::InvalidMove));
    let back = t.back();
    assert_eq!(back[0].text, "Back: Player1 to move");
    assert!(!t.is_holding());
    // The same wrong board, judged again, is an error again.
    assert_eq!(t.observe(&b.obs())[0].error, Some(ErrorKind::InvalidMove));
}

#[test]
fn russian_man_crowned_mid_capture_may_be_swapped_at_once() {
    // White's man on b6 takes c7, is crowned on d8 and takes f6 on as a king. The player puts the
    // king piece down on d8 straight away.
    let rules = Variant::Russian.rules();
    let pos = parse_fen("W:Wb6:Bc7,f6,h8", &rules).unwrap();
    let legal = legal_moves(&pos, &rules);
    assert!(legal.iter().all(|m| m.capture_count() == 2 && m.crowns), "{legal:?}");
    let mut t = tracker(Variant::Russian, KingStyle::Visible);
    t.set_start_position(pos);
    let start = Board::picture(
        "
        .......b
        ..b.....
        .w...b..
        ........
        ........
        ........
        ........
        ........
        ",
    );
    let mut b = start.clone();
    b.slide((2, 1), (0, 3)).set(0, 3, 'W');
    let step = t.observe(&b.obs());
    assert_eq!(texts(&step), ["OK: Player2- Capture success"]);
    assert_eq!(step[0].kind, EventKind::CaptureStep);
    b.slide((0, 3), (3, 6));
    assert!(t.observe(&b.obs()).is_empty());
    b.set(1, 2, '.').set(2, 5, '.');
    let done = t.observe(&b.obs());
    assert_eq!(texts(&done), ["OK: Player2- Capture success", "OK: Player2- Changed pawn to dame"]);
    assert_eq!(done[0].mv.as_deref(), Some("b6:g5"));
}

#[test]
fn a_game_ending_stop_can_still_be_corrected() {
    // The blue king stops on [5][6], leaving yellow without a move; then slides on to [4][7].
    let start = Board::picture(
        "
        ........
        ........
        ........
        ........
        .....b..
        ..b.....
        .b.....w
        w...B...
        ",
    );
    let mut t = tracker(Variant::Pool, KingStyle::Visible);
    start_at(&mut t, &start, Color::Black);
    let mut b = start.clone();
    b.slide((7, 4), (5, 6));
    assert_eq!(texts(&t.observe(&b.obs())), ["OK: Player1- Move Success", "Game over: Player1 wins"]);
    let stopped = b.clone();
    b.slide((5, 6), (4, 7));
    assert_eq!(texts(&t.observe(&b.obs())), ["OK: Player1- Move corrected"]);
    assert_eq!(t.record().unwrap().result, None);
    b.slide((6, 7), (5, 6));
    assert_eq!(texts(&t.observe(&b.obs())), ["OK: Player2- Move Success"]);
    assert_eq!(t.record().unwrap().move_texts(), ["31-20", "28-24"]);

    // Once the board shows anything else than the correction (pieces taken off), the result
    // stands: a later reading never rewrites it.
    let mut t = tracker(Variant::Pool, KingStyle::Visible);
    start_at(&mut t, &start, Color::Black);
    assert_eq!(texts(&t.observe(&stopped.obs())), ["OK: Player1- Move Success", "Game over: Player1 wins"]);
    let mut cleared = stopped.clone();
    cleared.set(4, 5, '.');
    assert!(t.observe(&cleared.obs()).is_empty(), "after the end only a correction counts");
    let mut slid = stopped.clone();
    slid.slide((5, 6), (4, 7));
    assert!(t.observe(&slid.obs()).is_empty(), "too late for a correction");
    assert_eq!(t.record().unwrap().result, Some(Outcome::Win(Color::Black)));
    assert_eq!(t.record().unwrap().move_texts(), ["31-24"]);
    assert!(write_pdn(&t.games()).contains("1. 31-24 1-0"));
}

/// Quick play: three plies shown at once that could have been made in two orders (`9-13 22-18
/// 10-14` or `10-14 22-18 9-13`, the same board). The boards seen on the way, even glimpses of
/// boards never still, put them in order; with none, the ambiguity is declared.
#[test]
fn plies_shown_at_once_follow_the_order_of_the_boards_seen_on_the_way() {
    use boardwatch::draughts::position::Position;
    use tracker_common::by_moves;
    let play = |pos: &Position, text: &str| by_moves::play(pos, &[text]);
    let start = by_moves::after(&[]);
    let seen = |pos: &Position, t: f64| by_moves::seen(pos, t, &[]);
    let recorded = |glimpsed_first: Option<&str>| {
        let mut tracker = tracker(Variant::English, KingStyle::Visible);
        tracker.init();
        tracker.observe(&seen(&start, 0.0));
        if let Some(first) = glimpsed_first {
            // The first ply's board, read once while the next hand was already coming in.
            let glimpse = by_moves::glimpsed(&play(&start, first), 0.8, &[]);
            assert!(tracker.observe(&glimpse).is_empty(), "nothing is decided from a glimpse");
        }
        let end = play(&play(&play(&start, "9-13"), "22-18"), "10-14");
        assert_eq!(end, play(&play(&play(&start, "10-14"), "22-18"), "9-13"), "the same board either way");
        tracker.observe(&seen(&end, 1.6));
        tracker.observe(&seen(&end, 3.0));
        let moves: Vec<(String, bool, Vec<String>)> = tracker
            .record()
            .expect("a game")
            .items
            .iter()
            .filter_map(|i| match i {
                RecordItem::Move(m) => Some((m.text.clone(), m.inferred, m.alternatives.clone())),
                _ => None,
            })
            .collect();
        moves
    };
    for (first, last) in [("9-13", "10-14"), ("10-14", "9-13")] {
        let moves = recorded(Some(first));
        let texts: Vec<&str> = moves.iter().map(|m| m.0.as_str()).collect();
        assert_eq!(texts, [first, "22-18", last], "the order the glimpse showed");
        assert_eq!(moves.iter().map(|m| m.1).collect::<Vec<_>>(), [true, true, false], "unseen plies are inferred");
        assert!(moves.iter().all(|m| m.2.is_empty()), "the boards seen decided the order: {moves:?}");
    }
    // No board on the way: either order, and the record says the other one was possible.
    let moves = recorded(None);
    assert_eq!(moves.len(), 3);
    assert!(!moves[0].2.is_empty() && !moves[2].2.is_empty(), "the ambiguity is declared: {moves:?}");
}
