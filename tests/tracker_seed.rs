//! The scenarios of the seed's section 2.2.2 (and the log window of 2.1.2), each with the exact log
//! lines the seed shows. The boards are edited square by square, as the seed's test application
//! does, and handed to the tracker in pool rules (the seed's game) with colour-coded kings.
//!
//! One deliberate difference: the seed's screenshot of a triple capture numbers its three lines
//! `1:`, `2:`, `3:` under `1: Init Ready`, which no log window can produce (every other screenshot
//! counts up from `1: Init Ready`). The tracker numbers them 2, 3, 4; the text is the seed's.

mod tracker_common;

use boardwatch::draughts::movegen::legal_moves;
use boardwatch::draughts::{Color, Variant};
use boardwatch::tracker::{ErrorKind, Event, EventKind, KingStyle, Tracker, TrackerConfig};
use tracker_common::{lines, Board};

fn seed_tracker() -> Tracker {
    Tracker::new(TrackerConfig::new(Variant::Pool, KingStyle::Visible).strict())
}

/// Feed boards one after another (as pressing `move` after each edit), collecting all events.
fn play(tracker: &mut Tracker, boards: &[Board]) -> Vec<Event> {
    boards.iter().flat_map(|b| tracker.observe(&b.obs())).collect()
}

/// "Set as Init": put the board up, then accept it as the start.
fn set_as_init(tracker: &mut Tracker, board: &Board) -> Vec<Event> {
    assert!(tracker.observe(&board.obs()).is_empty(), "no game yet: nothing to say");
    tracker.set_start(None).expect("the test board is clear")
}

#[test]
fn move_success() {
    // "2: OK: Player1- Move Success / 1: Init Ready"
    let mut t = seed_tracker();
    let mut events = t.init();
    let mut b = Board::start();
    b.slide((2, 1), (3, 0));
    events.extend(play(&mut t, &[b]));
    assert_eq!(lines(&events), ["1: Init Ready", "2: OK: Player1- Move Success"]);
    let e = &events[1];
    assert_eq!(e.kind, EventKind::Move);
    assert_eq!(e.player, Some(1));
    assert_eq!(e.mv.as_deref(), Some("9-13"));
    assert_eq!(e.fen.as_deref(), Some("W:W21-32:B1-8,10-13"));
    assert_eq!(e.current_player, Some(2));
    assert_eq!(t.record().unwrap().move_texts(), ["9-13"]);
}

#[test]
fn invalid_move() {
    // "3: Error: Player2- Invalid move / 2: OK: Player1- Move Success / 1: Init Ready"
    let mut t = seed_tracker();
    let mut events = t.init();
    let mut b = Board::start();
    b.slide((2, 1), (3, 0));
    let after_black = b.clone();
    // Yellow's man leaps two squares over nothing.
    b.slide((5, 2), (3, 4));
    events.extend(play(&mut t, &[after_black.clone(), b.clone()]));
    assert_eq!(lines(&events), ["1: Init Ready", "2: OK: Player1- Move Success", "3: Error: Player2- Invalid move"]);
    let err = &events[2];
    assert_eq!(err.error, Some(ErrorKind::InvalidMove));
    assert_eq!(err.changed, ["[3][4]", "[5][2]"]);
    assert!(t.is_holding());

    // Held: another wrong board says nothing; the last valid board says "Now is OK".
    let mut other = after_black.clone();
    other.slide((5, 4), (3, 2));
    assert!(t.observe(&other.obs()).is_empty());
    let back = t.observe(&after_black.obs());
    assert_eq!(lines(&back), ["4: Now is OK"]);
    let mut reply = after_black.clone();
    reply.slide((5, 2), (4, 3));
    assert_eq!(lines(&t.observe(&reply.obs())), ["5: OK: Player2- Move Success"]);
    assert_eq!(t.record().unwrap().move_texts(), ["9-13", "22-18"]);
}

#[test]
fn invalid_move_diagnostics_list_changed_squares_and_current_player() {
    // The seed's console: Current player 1, 2, 1, 2; "Invalid move", [2][3], [3][4]; Current player: 2.
    let mut t = seed_tracker();
    let mut events = t.init();
    let mut b = Board::start();
    let mut boards = Vec::new();
    for (from, to) in [((2, 1), (3, 0)), ((5, 2), (4, 3)), ((2, 7), (3, 6))] {
        b.slide(from, to);
        boards.push(b.clone());
    }
    // Yellow moves a red man: [2][3] -> [3][4].
    b.slide((2, 3), (3, 4));
    boards.push(b.clone());
    events.extend(play(&mut t, &boards));
    let current: Vec<Option<u8>> = events.iter().map(|e| e.current_player).collect();
    assert_eq!(current, [Some(1), Some(2), Some(1), Some(2), Some(2)]);
    let err = events.last().unwrap();
    assert_eq!(err.text, "Error: Player2- Invalid move");
    assert_eq!(err.changed, ["[2][3]", "[3][4]"]);
}

#[test]
fn log_window_of_the_test_application() {
    // 2.1.2: four moves, then red skips a capture.
    let mut t = seed_tracker();
    let mut events = t.init();
    let mut b = Board::start();
    let mut boards = Vec::new();
    // 9-13, 24-20, 10-14, 22-17: now 13x22 is due.
    for (from, to) in [((2, 1), (3, 0)), ((5, 6), (4, 7)), ((2, 3), (3, 2)), ((5, 2), (4, 1))] {
        b.slide(from, to);
        boards.push(b.clone());
    }
    b.slide((2, 5), (3, 4)); // 11-15 instead
    boards.push(b);
    events.extend(play(&mut t, &boards));
    assert_eq!(
        lines(&events),
        [
            "1: Init Ready",
            "2: OK: Player1- Move Success",
            "3: OK: Player2- Move Success",
            "4: OK: Player1- Move Success",
            "5: OK: Player2- Move Success",
            "6: Error: Player1- Obligatory Capture",
        ]
    );
    let pos = t.position().unwrap();
    assert!(legal_moves(pos, t.rules()).iter().all(|m| m.is_capture()));
    assert_eq!(events[5].changed, ["[2][5]", "[3][4]"]);
}

/// Red man on [2][3] next to a yellow man on [3][4], [4][5] free behind it.
fn capture_board() -> Board {
    Board::picture(
        "
        .b......
        ........
        ...b....
        ....w...
        ........
        ........
        ........
        w.......
        ",
    )
}

#[test]
fn capture_success() {
    // "2: OK: Player1- Capture success / 1: Init Ready"
    let mut t = seed_tracker();
    let mut events = set_as_init(&mut t, &capture_board());
    let mut b = capture_board();
    b.slide((2, 3), (4, 5)).set(3, 4, '.');
    events.extend(play(&mut t, &[b]));
    assert_eq!(lines(&events), ["1: Init Ready", "2: OK: Player1- Capture success"]);
    let e = &events[1];
    assert_eq!(e.mv.as_deref(), Some("10x19"));
    assert_eq!(e.captured, ["15"]);
    assert_eq!(e.current_player, Some(2));
}

#[test]
fn skipped_capture_is_an_error_until_the_board_is_restored() {
    // "2: Error: Player1- Obligatory Capture / 1: Init Ready"
    let mut t = seed_tracker();
    let mut events = set_as_init(&mut t, &capture_board());
    let mut b = capture_board();
    b.slide((0, 1), (1, 2)); // a plain move while 10x19 is due
    events.extend(play(&mut t, &[b]));
    assert_eq!(lines(&events), ["1: Init Ready", "2: Error: Player1- Obligatory Capture"]);
    assert_eq!(events[1].changed, ["[0][1]", "[1][2]"]);

    let mut capture = capture_board();
    capture.slide((2, 3), (4, 5)).set(3, 4, '.');
    assert!(t.observe(&capture.obs()).is_empty(), "held until the board is restored");
    let more = play(&mut t, &[capture_board(), capture]);
    assert_eq!(lines(&more), ["3: Now is OK", "4: OK: Player1- Capture success"]);
}

#[test]
fn multiple_captures_are_logged_once_per_jump_and_the_turn_stays() {
    // Three jumps by the same red man; each is logged, and the player does not change until the end.
    let start = Board::picture(
        "
        .b......
        ..w.....
        ........
        ....w...
        ........
        ......w.
        ........
        w.......
        ",
    );
    let mut t = seed_tracker();
    let mut events = set_as_init(&mut t, &start);
    let mut b = start.clone();
    let mut boards = Vec::new();
    for ((from, to), victim) in [(((0, 1), (2, 3)), (1, 2)), (((2, 3), (4, 5)), (3, 4)), (((4, 5), (6, 7)), (5, 6))] {
        b.slide(from, to).set(victim.0, victim.1, '.');
        boards.push(b.clone());
    }
    events.extend(play(&mut t, &boards));
    assert_eq!(
        lines(&events),
        [
            "1: Init Ready",
            "2: OK: Player1- Capture success",
            "3: OK: Player1- Capture success",
            "4: OK: Player1- Capture success",
        ]
    );
    let kinds: Vec<EventKind> = events.iter().map(|e| e.kind).collect();
    assert_eq!(kinds, [EventKind::Init, EventKind::CaptureStep, EventKind::CaptureStep, EventKind::Move]);
    let players: Vec<Option<u8>> = events.iter().map(|e| e.current_player).collect();
    assert_eq!(players, [Some(1), Some(1), Some(1), Some(2)]);
    assert_eq!(events[2].path.as_deref(), Some("1x10x19"));
    assert_eq!(events[3].path.as_deref(), Some("1x10x19x28"));
    assert_eq!(events[3].captured, ["6", "15", "24"]);
    assert_eq!(t.record().unwrap().move_texts(), ["1x28"], "one move in the record");
}

#[test]
fn changed_pawn_to_dame() {
    // "9: OK: Player1- Changed pawn to dame / 8: OK: Player1- Move Success /
    //  7: OK: Player2- Move Success / 6: OK: Player1- Move Success"
    let start = Board::picture(
        "
        ........
        ........
        ........
        b.......
        ........
        ........
        ........
        ......w.
        ",
    );
    let mut t = seed_tracker();
    let mut events = set_as_init(&mut t, &start);
    let mut b = start.clone();
    let mut boards = Vec::new();
    let plies = [
        ((3, 0), (4, 1)),
        ((7, 6), (6, 7)),
        ((4, 1), (5, 0)),
        ((6, 7), (5, 6)),
        ((5, 0), (6, 1)),
        ((5, 6), (4, 7)),
        ((6, 1), (7, 0)),
    ];
    for (from, to) in plies {
        b.slide(from, to);
        boards.push(b.clone());
    }
    b.set(7, 0, 'B'); // the red man swapped for a blue king
    boards.push(b);
    events.extend(play(&mut t, &boards));
    assert_eq!(
        &lines(&events)[5..],
        [
            "6: OK: Player1- Move Success",
            "7: OK: Player2- Move Success",
            "8: OK: Player1- Move Success",
            "9: OK: Player1- Changed pawn to dame",
        ]
    );
    assert_eq!(events[8].kind, EventKind::Crowned);
    assert_eq!(events[7].crowned, Some(true), "the move itself crowns");
    assert_eq!(t.position().unwrap().to_move, Color::White);
}

#[test]
fn failed_change_pawn_to_dame() {
    // "3: Error: Player1- Failed Change pawn to dame / 2: OK: Player1- Move Success / 1: Init Ready"
    let start = Board::picture(
        "
        ........
        ........
        ........
        ........
        ........
        ......w.
        .b......
        ........
        ",
    );
    let mut t = seed_tracker();
    let mut events = set_as_init(&mut t, &start);
    let mut b = start.clone();
    b.slide((6, 1), (7, 0));
    let arrived = b.clone();
    b.slide((5, 6), (4, 5)); // yellow moves, the red man is still a man
    events.extend(play(&mut t, &[arrived.clone(), b.clone()]));
    assert_eq!(
        lines(&events),
        ["1: Init Ready", "2: OK: Player1- Move Success", "3: Error: Player1- Failed Change pawn to dame"]
    );
    assert_eq!(events[2].error, Some(ErrorKind::FailedCrowning));
    assert_eq!(events[2].changed, ["[4][5]", "[5][6]"]);

    // Put back, crown, and play on.
    let mut crowned = arrived.clone();
    crowned.set(7, 0, 'B');
    let mut reply = crowned.clone();
    reply.slide((5, 6), (4, 5));
    let more = play(&mut t, &[arrived, crowned, reply]);
    assert_eq!(lines(&more), ["4: Now is OK", "5: OK: Player1- Changed pawn to dame", "6: OK: Player2- Move Success"]);
    assert_eq!(t.record().unwrap().move_texts(), ["25-29", "24-19"]);
}

#[test]
fn init_and_valid_checks_the_board() {
    let mut t = seed_tracker();
    let mut wrong = Board::start();
    wrong.set(0, 1, '.');
    t.observe(&wrong.obs());
    let failed = t.init_and_valid();
    assert_eq!(lines(&failed), ["1: InitAndValid Failed"]);
    assert_eq!(failed[0].changed, ["[0][1]"]);
    assert!(t.position().is_none());

    t.observe(&Board::start().obs());
    let ok = t.init_and_valid();
    assert_eq!(lines(&ok), ["1: Init Ready", "2: InitAndValid Success"]);
    assert!(t.position().is_some());
}

#[test]
fn back_undoes_the_last_accepted_state_and_clear_drops_the_game() {
    let mut t = seed_tracker();
    t.init();
    let mut b = Board::start();
    b.slide((2, 1), (3, 0));
    t.observe(&b.obs());
    assert_eq!(t.record().unwrap().move_texts(), ["9-13"]);
    let back = t.back();
    assert_eq!(back[0].kind, EventKind::Back);
    assert_eq!(back[0].text, "Back: Player1 to move");
    assert!(t.record().unwrap().move_texts().is_empty());
    // The board still shows 9-13: seen again, it is the same legal move again.
    assert_eq!(lines(&t.observe(&b.obs())), ["4: OK: Player1- Move Success"]);

    let cleared = t.clear();
    assert_eq!(cleared[0].text, "Clear");
    assert!(t.position().is_none());
    assert!(t.observe(&Board::start().obs()).is_empty(), "no game: nothing is tracked");
    assert_eq!(t.games().len(), 1, "the cleared game is kept");
}

#[test]
fn seed_rules_boards_with_unknown_squares_wait() {
    // Hands over the move: nothing is claimed, nothing is refused.
    let mut t = seed_tracker();
    t.init();
    let mut b = Board::start();
    b.set(2, 1, '.').set(3, 0, '?');
    assert!(t.observe(&b.obs()).iter().all(|e| e.kind == EventKind::Uncertain));
    b.set(3, 0, 'b');
    assert_eq!(lines(&t.observe(&b.obs())).last().unwrap(), "3: OK: Player1- Move Success");
}
