//! Real games (the ACF archive sample in `tests/data`) and random games of every variant, driven
//! through the tracker as board states: clean, and with what real hands and cameras add: partial
//! states between moves (a lifted piece, a capturing piece on its landings, captured pieces taken
//! off early, late, in any order, a crowning man swapped late), hands over the board (unknown
//! squares), soft readings and single-square misreads given as probabilities, and moves the
//! camera missed. The recorded moves must equal the original game and no error may be raised.

mod common;
mod tracker_common;

use boardwatch::draughts::bitboard::{bit, Square, Squares, DARK};
use boardwatch::draughts::movegen::{generate, legal_moves, Duplicates, Move, MoveList};
use boardwatch::draughts::notation::{move_text, seen_at};
use boardwatch::draughts::rules::PromotionInCapture;
use boardwatch::draughts::{Piece, Position, Rules, Variant};
use boardwatch::tracker::{
    Event, EventKind, KingStyle, Observation, Reading, RecordItem, TrackedMove, SquareClass, Tracker, TrackerConfig,
};
use rand::rngs::StdRng;
use rand::seq::SliceRandom;
use rand::{Rng, SeedableRng};

/// The board as the pieces physically stand, by engine square: grid characters.
#[derive(Clone, Debug, PartialEq)]
struct Physical([char; 64]);

impl Physical {
    fn of(pos: &Position, kings: KingStyle) -> Physical {
        let mut cells = ['.'; 64];
        for sq in Squares(DARK) {
            if let Some(piece) = pos.piece_at(sq) {
                let shown = match (kings, piece) {
                    (KingStyle::Stacked, Piece::King(c)) => Piece::Man(c),
                    _ => piece,
                };
                cells[sq as usize] = shown.grid_char();
            }
        }
        Physical(cells)
    }

    fn obs(&self, rules: &Rules) -> Observation {
        let mut o = Observation::unknown();
        for row in 0..8 {
            for col in 0..8 {
                o.squares[row][col] = Reading::Class(SquareClass::Empty);
            }
        }
        for sq in Squares(DARK) {
            let (row, col) = seen_at(sq, rules);
            let class = SquareClass::from_char(self.0[sq as usize]).expect("grid char");
            o.squares[row as usize][col as usize] = Reading::Class(class);
        }
        o
    }
}

/// The squares strictly between two squares of one diagonal.
fn between(a: Square, b: Square) -> Vec<Square> {
    let (ar, ac, br, bc) = ((a / 8) as i8, (a % 8) as i8, (b / 8) as i8, (b % 8) as i8);
    let (dr, dc) = ((br - ar).signum(), (bc - ac).signum());
    (1..(br - ar).abs()).map(|n| ((ar + n * dr) * 8 + ac + n * dc) as Square).collect()
}

/// How rough the simulated hands and camera are.
#[derive(Clone, Copy, Debug)]
struct Noise {
    /// Chance to show each intermediate state of a move.
    partial: f64,
    /// Chance that a shown state is read badly (hands, soft readings, a misread square).
    dirty: f64,
    /// Chance that the camera misses a plain man's move after seeing it lifted (English only).
    missed: f64,
}

const CLEAN: Noise = Noise { partial: 0.0, dirty: 0.0, missed: 0.0 };
const ROUGH: Noise = Noise { partial: 0.6, dirty: 0.35, missed: 0.1 };

/// The states a hand goes through making `m` (any path of it), ending with the final board.
fn hand_states(
    before: &Physical,
    pos: &Position,
    m: &Move,
    rules: &Rules,
    kings: KingStyle,
    rng: &mut StdRng,
) -> Vec<Physical> {
    let mut paths = MoveList::new();
    generate(pos, rules, Duplicates::Keep, &mut paths);
    let ways: Vec<&Move> = paths.iter().filter(|p| p.same_effect(m)).collect();
    let way = *ways.choose(rng).expect("the move has a path");
    let path = way.path().to_vec();
    let victims = way.captured_in_order();
    let mover = before.0[m.from as usize];
    let king = mover.to_ascii_uppercase();
    // Some players put the king piece down as soon as the man is crowned, even mid-capture
    // (Russian crowns on the last row and captures on as a king).
    let crown_at = match rules.promotion_in_capture {
        PromotionInCapture::CrownAndContinue => path.iter().position(|&sq| sq / 8 == pos.to_move.promotion_row()),
        _ => Some(path.len() - 1),
    };
    let early_swap = m.crowns && kings == KingStyle::Visible && !victims.is_empty() && rng.gen_bool(0.3);
    let shown = |i: usize| if early_swap && crown_at.is_some_and(|c| i >= c) { king } else { mover };
    let mut cur = before.clone();
    let mut states = Vec::new();
    let hop = |cur: &mut Physical, i: usize| {
        cur.0[path[i - 1] as usize] = '.';
        cur.0[path[i] as usize] = shown(i);
    };
    if victims.is_empty() {
        if rng.gen_bool(0.5) {
            cur.0[m.from as usize] = '.';
            states.push(cur.clone());
        }
        if rules.flying_kings && pos.kings & bit(m.from) != 0 && rng.gen_bool(0.5) {
            // A flying king set down short of its square, then slid on: each stop looks like
            // a complete (shorter) move.
            for stop in between(m.from, m.to) {
                let mut paused = before.clone();
                paused.0[m.from as usize] = '.';
                paused.0[stop as usize] = mover;
                states.push(paused);
            }
        }
        hop(&mut cur, 1);
        states.push(cur.clone());
    } else {
        match rng.gen_range(0..3) {
            // The seed's way: each jump takes its piece off at once.
            0 => {
                for i in 1..path.len() {
                    hop(&mut cur, i);
                    cur.0[victims[i - 1] as usize] = '.';
                    states.push(cur.clone());
                }
            }
            // The rules' way: jump along, then clear the captured pieces in any order.
            1 => {
                for i in 1..path.len() {
                    hop(&mut cur, i);
                    states.push(cur.clone());
                }
                let mut order = victims.clone();
                order.shuffle(rng);
                for v in order {
                    cur.0[v as usize] = '.';
                    states.push(cur.clone());
                }
            }
            // Impatient: some pieces off first, the piece lifted, put down, the rest off.
            _ => {
                let mut order = victims.clone();
                order.shuffle(rng);
                let early = rng.gen_range(0..=order.len());
                for &v in &order[..early] {
                    cur.0[v as usize] = '.';
                    states.push(cur.clone());
                }
                cur.0[m.from as usize] = '.';
                states.push(cur.clone());
                cur.0[m.to as usize] = shown(path.len() - 1);
                states.push(cur.clone());
                for &v in &order[early..] {
                    cur.0[v as usize] = '.';
                    states.push(cur.clone());
                }
            }
        }
    }
    if m.crowns && kings == KingStyle::Visible && !early_swap {
        if rng.gen_bool(0.5) {
            // The man stays a moment on the last row; then off, and the king put down.
            if rng.gen_bool(0.5) {
                cur.0[m.to as usize] = '.';
                states.push(cur.clone());
            }
            cur.0[m.to as usize] = king;
            states.push(cur.clone());
        } else {
            states.last_mut().expect("at least the final state").0[m.to as usize] = king;
        }
    }
    states
}

/// A badly read copy of `state`: a hand over a few squares (unknown, or mostly "none of these"),
/// soft readings, or a misread square.
fn dirty(state: &Physical, rules: &Rules, rng: &mut StdRng) -> Observation {
    let mut obs = state.obs(rules);
    let squares: Vec<Square> = Squares(DARK).collect();
    let cell = |obs: &mut Observation, sq: Square, r: Reading| {
        let (row, col) = seen_at(sq, rules);
        obs.squares[row as usize][col as usize] = r;
    };
    let truth = |sq: Square| SquareClass::from_char(state.0[sq as usize]).expect("grid char").index();
    match rng.gen_range(0..4) {
        0 => {
            for _ in 0..rng.gen_range(1..=4) {
                cell(&mut obs, *squares.choose(rng).expect("squares"), Reading::Unknown);
            }
        }
        // A hand as the classifier reports it: most of the probability on "none of these", the
        // little that is left on any class.
        1 => {
            for _ in 0..rng.gen_range(1..=6) {
                let mut p = [0f32; 5];
                p[rng.gen_range(0..5)] = rng.gen_range(0.0..0.1);
                cell(&mut obs, *squares.choose(rng).expect("squares"), Reading::Probabilities(p));
            }
        }
        2 => {
            for &sq in &squares {
                let p_true: f32 = rng.gen_range(0.9..0.99);
                let mut p = [(1.0 - p_true) / 4.0; 5];
                p[truth(sq)] = p_true;
                cell(&mut obs, sq, Reading::Probabilities(p));
            }
        }
        _ => {
            // One square read as the wrong class, but not beyond doubt: the truth keeps >= 20%.
            let sq = *squares.choose(rng).expect("squares");
            let t = truth(sq);
            let wrong = (t + rng.gen_range(1..5)) % 5;
            let w: f32 = rng.gen_range(0.5..0.75);
            let mut p = [0.005f32; 5];
            p[wrong] = w;
            p[t] = 1.0 - w - 0.015;
            cell(&mut obs, sq, Reading::Probabilities(p));
        }
    }
    obs
}

struct Replay {
    events: Vec<Event>,
    /// Moves the camera never saw complete (recorded when the answer was seen).
    missed: usize,
    recorded: Recorded,
    expected: Vec<String>,
}

/// The moves of a tracker's record, each with the other moves the board could not tell from it.
struct Recorded {
    moves: Vec<String>,
    alternatives: Vec<Vec<String>>,
}

impl Recorded {
    fn of(tracker: &Tracker) -> Recorded {
        let items = tracker.record().map(|r| r.items.clone()).unwrap_or_default();
        let moves: Vec<&TrackedMove> =
            items.iter().filter_map(|i| if let RecordItem::Move(m) = i { Some(m) } else { None }).collect();
        Recorded {
            moves: moves.iter().map(|m| m.text.clone()).collect(),
            alternatives: moves.iter().map(|m| m.alternatives.clone()).collect(),
        }
    }

    /// Plies recorded as another move that gives the same board, the true one named beside it.
    fn undecidable(&self, expected: &[String]) -> usize {
        self.moves.iter().zip(expected).filter(|(m, e)| m != e).count()
    }
}

/// The record equals the game, except that a ply the board cannot tell from another (both give
/// the same board after the plies of one reading) may be either, the other named beside it; and
/// no error was raised.
fn assert_faithful(replay: &Replay, what: &str) {
    let errors: Vec<&Event> = replay.events.iter().filter(|e| e.kind == EventKind::Error).collect();
    assert!(errors.is_empty(), "{what}: errors {errors:#?}");
    let rec = &replay.recorded;
    let same = rec.moves.len() == replay.expected.len()
        && rec.moves.iter().zip(&replay.alternatives_ok()).all(|(m, ok)| ok.contains(m));
    assert!(same, "{what}: the record differs from the game\n  record: {:?}\n  game:   {:?}", rec.moves, replay.expected);
}

impl Replay {
    /// For each ply, the texts the record may hold: the true move, or, where the record names the
    /// true move as an alternative, what it recorded.
    fn alternatives_ok(&self) -> Vec<Vec<String>> {
        let rec = &self.recorded;
        self.expected
            .iter()
            .enumerate()
            .map(|(i, e)| {
                let mut ok = vec![e.clone()];
                if rec.alternatives.get(i).is_some_and(|a| a.contains(e)) {
                    ok.push(rec.moves[i].clone());
                }
                ok
            })
            .collect()
    }
}

/// Drive a tracker through `moves` played from the start.
fn drive(variant: Variant, kings: KingStyle, moves: &[Move], noise: Noise, seed: u64) -> Replay {
    let rules = variant.rules();
    let mut rng = StdRng::seed_from_u64(seed);
    let mut tracker = Tracker::new(TrackerConfig::new(variant, kings));
    let mut events = tracker.init();
    let mut pos = Position::start(&rules);
    let mut board = Physical::of(&pos, kings);
    let mut expected = Vec::new();
    let mut skip_partials = false;
    let mut missed = 0;
    for (i, m) in moves.iter().enumerate() {
        let legal = legal_moves(&pos, &rules);
        expected.push(move_text(m, &legal, &rules));
        let states = hand_states(&board, &pos, m, &rules, kings, &mut rng);
        let (last, partials) = states.split_last().expect("a final state");
        let plain_man = !m.is_capture() && !m.crowns && pos.kings & bit(m.from) == 0;
        let miss = variant == Variant::English
            && plain_man
            && i + 1 < moves.len()
            && !skip_partials
            && rng.gen_bool(noise.missed);
        if miss {
            // Seen lifted, then nothing until the answer is complete.
            let mut lifted = board.clone();
            lifted.0[m.from as usize] = '.';
            events.extend(tracker.observe(&lifted.obs(&rules)));
        } else {
            if !skip_partials {
                for state in partials {
                    if rng.gen_bool(noise.partial) {
                        let obs =
                            if rng.gen_bool(noise.dirty) { dirty(state, &rules, &mut rng) } else { state.obs(&rules) };
                        events.extend(tracker.observe(&obs));
                    }
                }
                if rng.gen_bool(noise.dirty) {
                    events.extend(tracker.observe(&dirty(last, &rules, &mut rng)));
                }
            }
            events.extend(tracker.observe(&last.obs(&rules)));
        }
        skip_partials = miss;
        missed += miss as usize;
        board = last.clone();
        pos = pos.play(m);
    }
    Replay { events, missed, recorded: Recorded::of(&tracker), expected }
}

/// The 20 ACF archive games bundled in `samples/games`.
fn acf_games() -> Vec<Vec<Move>> {
    tracker_common::pdn_games(&common::repo_file("samples/games/acf_sample.pdn"), Variant::English)
}

/// A game of random legal moves, `plies` long at most.
fn random_game(variant: Variant, plies: usize, seed: u64) -> Vec<Move> {
    let rules = variant.rules();
    let mut rng = StdRng::seed_from_u64(seed);
    let mut pos = Position::start(&rules);
    let mut moves = Vec::new();
    for _ in 0..plies {
        let legal = legal_moves(&pos, &rules);
        let Some(m) = legal.choose(&mut rng).copied() else { break };
        moves.push(m);
        pos = pos.play(&m);
    }
    moves
}

#[test]
fn acf_sample_is_read_and_replays() {
    let games = acf_games();
    assert_eq!(games.len(), 20);
    assert!(games.iter().map(Vec::len).sum::<usize>() > 1000);
}

#[test]
fn clean_replays_record_every_game_exactly() {
    for kings in [KingStyle::Visible, KingStyle::Stacked] {
        for (i, game) in acf_games().iter().enumerate() {
            let replay = drive(Variant::English, kings, game, CLEAN, i as u64);
            assert_faithful(&replay, &format!("game {i} ({kings:?})"));
            // One line per move (and per crowning swap with colour-coded kings), nothing else.
            let moves = replay.events.iter().filter(|e| e.kind == EventKind::Move).count();
            assert_eq!(moves, game.len());
            assert!(replay
                .events
                .iter()
                .all(|e| matches!(e.kind, EventKind::Init | EventKind::Move | EventKind::Crowned)));
        }
    }
}

#[test]
fn rough_replays_of_real_games_record_every_game_exactly() {
    let mut uncertain = 0;
    let mut steps = 0;
    let mut missed = 0;
    for kings in [KingStyle::Visible, KingStyle::Stacked] {
        for (i, game) in acf_games().iter().enumerate() {
            let replay = drive(Variant::English, kings, game, ROUGH, 1000 + i as u64);
            assert_faithful(&replay, &format!("game {i} ({kings:?})"));
            uncertain += replay.events.iter().filter(|e| e.kind == EventKind::Uncertain).count();
            steps += replay.events.iter().filter(|e| e.kind == EventKind::CaptureStep).count();
            missed += replay.missed;
        }
    }
    // The noise is real: the tracker had to wait, and saw captures under way.
    assert!(uncertain > 20, "only {uncertain} uncertain readings");
    assert!(steps > 5, "only {steps} capture steps");
    assert!(missed > 20, "only {missed} moves recorded from the answer");
}

#[test]
fn rough_replays_of_random_games_in_every_variant() {
    let mut corrected = 0;
    for variant in Variant::ALL {
        for kings in [KingStyle::Visible, KingStyle::Stacked] {
            for seed in 0..6 {
                let game = random_game(variant, 160, seed);
                let replay = drive(variant, kings, &game, ROUGH, 77 + seed);
                assert_faithful(&replay, &format!("{variant} {kings:?} seed {seed}"));
                corrected += replay.events.iter().filter(|e| e.kind == EventKind::Revised).count();
            }
        }
    }
    // Flying kings set down short and slid on were recorded as corrections.
    assert!(corrected > 5, "only {corrected} corrections");
}

#[test]
fn misread_squares_never_record_a_rival_move() {
    // After each move, the board is read as if another legal move had been made: one square
    // 19:1 against the truth, the other differing squares 50:50. The tracker may wait; it must
    // never record the rival, and the clean board that follows records the true move.
    let rules = Variant::English.rules();
    let game = &acf_games()[1];
    let mut tracker = Tracker::new(TrackerConfig::new(Variant::English, KingStyle::Visible));
    tracker.init();
    let mut pos = Position::start(&rules);
    let mut wrong_tries = 0;
    for m in game {
        let after = Physical::of(&pos.play(m), KingStyle::Visible);
        for rival in legal_moves(&pos, &rules).iter().filter(|r| !r.same_effect(m)) {
            let rival_board = Physical::of(&pos.play(rival), KingStyle::Visible);
            let differ: Vec<Square> =
                Squares(DARK).filter(|&sq| after.0[sq as usize] != rival_board.0[sq as usize]).collect();
            // Misread every differing square but one, confidently; the last at 19:1.
            let mut obs = after.obs(&rules);
            for (k, &sq) in differ.iter().enumerate() {
                let (row, col) = seen_at(sq, &rules);
                let t = SquareClass::from_char(after.0[sq as usize]).unwrap().index();
                let w = SquareClass::from_char(rival_board.0[sq as usize]).unwrap().index();
                let mut p = [0.0f32; 5];
                if k + 1 == differ.len() {
                    p[w] = 0.95;
                    p[t] = 0.05;
                } else {
                    p[t] = 0.5;
                    p[w] = 0.5;
                }
                obs.squares[row as usize][col as usize] = Reading::Probabilities(p);
            }
            wrong_tries += 1;
            let events = tracker.observe(&obs);
            assert!(
                events.iter().all(|e| e.kind != EventKind::Move
                    || e.mv.as_deref() != Some(&move_text(rival, &legal_moves(&pos, &rules), &rules))),
                "recorded the rival {rival:?} instead of {m:?}"
            );
            if events.iter().any(|e| e.kind == EventKind::Move) {
                break; // it read the true move despite the noise
            }
        }
        tracker.observe(&after.obs(&rules));
        pos = pos.play(m);
    }
    assert!(wrong_tries > 50);
    let expected: Vec<String> = {
        let mut p = Position::start(&rules);
        game.iter()
            .map(|m| {
                let t = move_text(m, &legal_moves(&p, &rules), &rules);
                p = p.play(m);
                t
            })
            .collect()
    };
    assert_eq!(tracker.record().unwrap().move_texts(), expected);
}

#[test]
#[ignore = "corpus: replays the whole ACF archive of ../shared (about 9,400 games) roughly; `make corpus`"]
fn whole_acf_archive_replays_roughly() {
    let Some(data) = common::shared_data() else { return };
    let games = tracker_common::pdn_games(
        &data.join("draughts/english/ACF__EricCJoyce_Datasets__converted.pdn"),
        Variant::English,
    );
    assert!(games.len() > 9000);
    for (i, moves) in games.iter().enumerate() {
        let replay = drive(Variant::English, KingStyle::Visible, moves, ROUGH, i as u64);
        assert_faithful(&replay, &format!("archive game {i}"));
    }
}

/// Drive a tracker through `moves`, showing only final states, but leaving out the final state
/// of about `skip` of the plies (never two in a row, never the last): the next board then shows
/// two plies at once, as when the next hand comes in before the board was still. Returns the
/// replay and how many plies were never seen.
fn drive_skipping(variant: Variant, kings: KingStyle, moves: &[Move], skip: f64, seed: u64) -> (Replay, usize) {
    let rules = variant.rules();
    let mut rng = StdRng::seed_from_u64(seed);
    let mut tracker = Tracker::new(TrackerConfig::new(variant, kings));
    let mut events = tracker.init();
    let mut pos = Position::start(&rules);
    let mut expected = Vec::new();
    let (mut skipped, mut last_skipped) = (0, false);
    for (i, m) in moves.iter().enumerate() {
        expected.push(move_text(m, &legal_moves(&pos, &rules), &rules));
        pos = pos.play(m);
        if !last_skipped && i + 1 < moves.len() && rng.gen_bool(skip) {
            skipped += 1;
            last_skipped = true;
            continue;
        }
        last_skipped = false;
        events.extend(tracker.observe(&Physical::of(&pos, kings).obs(&rules)));
    }
    (Replay { events, missed: skipped, recorded: Recorded::of(&tracker), expected }, skipped)
}

#[test]
fn two_plies_in_one_reading_are_both_recorded_and_the_unseen_one_marked() {
    let mut inferred = 0;
    let mut skipped = 0;
    let mut games: Vec<(Variant, Vec<Move>)> = acf_games().into_iter().map(|g| (Variant::English, g)).collect();
    for variant in Variant::ALL {
        for seed in 0..4 {
            games.push((variant, random_game(variant, 120, 500 + seed)));
        }
    }
    for kings in [KingStyle::Visible, KingStyle::Stacked] {
        for (i, (variant, game)) in games.iter().enumerate() {
            let (replay, n) = drive_skipping(*variant, kings, game, 0.15, 9000 + i as u64);
            assert_faithful(&replay, &format!("{variant} game {i} ({kings:?})"));
            let marked = replay.events.iter().filter(|e| e.kind == EventKind::Move && e.inferred == Some(true)).count();
            assert_eq!(marked, n, "{variant} game {i} ({kings:?}): every unseen ply, and only those, marked inferred");
            inferred += marked;
            skipped += n;
        }
    }
    assert!(skipped > 200, "only {skipped} plies left unseen: the test would prove little");
    assert_eq!(inferred, skipped);
}

#[test]
fn an_inferred_ply_says_so_in_the_pdn_record() {
    let rules = Variant::English.rules();
    let game = &acf_games()[0];
    let mut tracker = Tracker::new(TrackerConfig::new(Variant::English, KingStyle::Visible));
    tracker.init();
    let mut pos = Position::start(&rules);
    for (i, m) in game.iter().take(6).enumerate() {
        pos = pos.play(m);
        if i != 2 {
            tracker.observe(&Physical::of(&pos, KingStyle::Visible).obs(&rules));
        }
    }
    let pdn = boardwatch::tracker::write_pdn(std::slice::from_ref(tracker.record().expect("a game")));
    assert_eq!(pdn.matches("inferred: not seen on the board").count(), 1, "{pdn}");
    let third = move_text(&game[2], &legal_moves(&Position::start(&rules).play(&game[0]).play(&game[1]), &rules), &rules);
    let at = pdn.find(&third).expect("the third ply is in the record");
    assert!(pdn[at..].trim_start_matches(&third).trim_start().starts_with("{inferred"), "{pdn}");
}

/// The faults a camera adds to a game, as `drive_faulty` injects them.
#[derive(Clone, Copy, Debug, Default)]
struct Faults {
    /// Plies whose finished state was never seen (the next reading shows two plies).
    unseen: usize,
    /// Plies whose finished state had one square confidently misread for three readings.
    misread: usize,
    /// Plies whose finished state had 3 to 6 squares misread for two readings.
    bursts: usize,
}

/// A reading of `state` with `squares` read confidently (hard characters) as something they
/// are not; with stacked kings, as something that also looks different.
fn misread(state: &Physical, squares: &[Square], kings: KingStyle, rules: &Rules, rng: &mut StdRng) -> Observation {
    let mut obs = state.obs(rules);
    let looks: &[char] = if kings == KingStyle::Stacked { &['.', 'b', 'w'] } else { &['.', 'b', 'w', 'B', 'W'] };
    for &sq in squares {
        let truth = state.0[sq as usize];
        let truth_look = if kings == KingStyle::Stacked { truth.to_ascii_lowercase() } else { truth };
        let wrong = *looks.iter().filter(|&&c| c != truth_look).collect::<Vec<_>>().choose(rng).expect("another look");
        let (row, col) = seen_at(sq, rules);
        obs.squares[row as usize][col as usize] = Reading::Class(SquareClass::from_char(*wrong).expect("grid char"));
    }
    obs
}

/// Drive a tracker through `moves` as a camera that hands on each still board about every half
/// second: every finished state is read once (again while the tracker waits to see whether a
/// board stays), but about `rate` of the plies carry one fault
/// (issue 12's three kinds, chosen at random): the finished state never seen, one square
/// confidently misread for three readings then right, or 3 to 6 squares misread for two readings
/// then right.
fn drive_faulty(variant: Variant, kings: KingStyle, moves: &[Move], rate: f64, seed: u64) -> (Replay, Faults) {
    let rules = variant.rules();
    let mut rng = StdRng::seed_from_u64(seed);
    let mut tracker = Tracker::new(TrackerConfig::new(variant, kings));
    let mut events = tracker.init();
    let mut pos = Position::start(&rules);
    let mut expected = Vec::new();
    let mut faults = Faults::default();
    let mut t = 0.0;
    let mut last_unseen = false;
    let squares: Vec<Square> = Squares(DARK).collect();
    let mut read = |tracker: &mut Tracker, mut obs: Observation, events: &mut Vec<Event>| {
        t += 0.5;
        obs.t = Some(t);
        events.extend(tracker.observe(&obs));
    };
    for (i, m) in moves.iter().enumerate() {
        expected.push(move_text(m, &legal_moves(&pos, &rules), &rules));
        pos = pos.play(m);
        let state = Physical::of(&pos, kings);
        let fault = if rng.gen_bool(rate) { rng.gen_range(0..3) } else { 3 };
        match fault {
            0 if !last_unseen && i + 1 < moves.len() => {
                faults.unseen += 1;
                last_unseen = true;
                continue;
            }
            1 => {
                faults.misread += 1;
                let sq = *squares.choose(&mut rng).expect("squares");
                let wrong = misread(&state, &[sq], kings, &rules, &mut rng);
                for _ in 0..3 {
                    read(&mut tracker, wrong.clone(), &mut events);
                }
            }
            2 => {
                faults.bursts += 1;
                let n = rng.gen_range(3..=6);
                for _ in 0..2 {
                    let burst: Vec<Square> = squares.choose_multiple(&mut rng, n).copied().collect();
                    let wrong = misread(&state, &burst, kings, &rules, &mut rng);
                    read(&mut tracker, wrong, &mut events);
                }
            }
            _ => {}
        }
        last_unseen = false;
        read(&mut tracker, state.obs(&rules), &mut events);
        // The board stays until the next hand; a camera hands it on again while the tracker
        // waits to see whether it stays (as `pipeline::BoardPipeline` does).
        for _ in 0..8 {
            if !tracker.is_suspecting() {
                break;
            }
            read(&mut tracker, state.obs(&rules), &mut events);
        }
    }
    (Replay { events, missed: faults.unseen, recorded: Recorded::of(&tracker), expected }, faults)
}

/// Real games of every variant the bundled archive and the random games give, with both king
/// styles, read with 15% of plies faulty: every record equals its game, no error is raised, no
/// move is ever recorded and then corrected (no fault made a wrong move), and exactly the unseen
/// plies are marked inferred.
#[test]
fn faulty_readings_never_derail_the_record() {
    let mut games: Vec<(Variant, Vec<Move>)> = acf_games().into_iter().map(|g| (Variant::English, g)).collect();
    for variant in Variant::ALL {
        for seed in 0..3 {
            games.push((variant, random_game(variant, 120, 700 + seed)));
        }
    }
    let mut total = Faults::default();
    let mut exact = 0;
    for kings in [KingStyle::Visible, KingStyle::Stacked] {
        for (i, (variant, game)) in games.iter().enumerate() {
            let (replay, faults) = drive_faulty(*variant, kings, game, 0.15, 31_000 + i as u64);
            let what = format!("{variant} game {i} ({kings:?})");
            assert_faithful(&replay, &what);
            let revised: Vec<&Event> = replay.events.iter().filter(|e| e.kind == EventKind::Revised).collect();
            assert!(revised.is_empty(), "{what}: a fault made a wrong move: {revised:#?}");
            let marked = replay.events.iter().filter(|e| e.kind == EventKind::Move && e.inferred == Some(true)).count();
            assert_eq!(marked, faults.unseen, "{what}: the unseen plies, and only those, are marked inferred");
            exact += 1;
            total.unseen += faults.unseen;
            total.misread += faults.misread;
            total.bursts += faults.bursts;
        }
    }
    assert_eq!(exact, games.len() * 2);
    // Enough of each fault for the test to mean something.
    eprintln!("faults injected: {total:?} over {exact} games");
    assert!(total.unseen > 100 && total.misread > 100 && total.bursts > 100, "{total:?}");
}

/// The same over real archives of every variant in `../shared` (`make corpus`).
#[test]
#[ignore = "corpus: real archives of every variant in ../shared with faulty readings; `make corpus`"]
fn faulty_readings_over_real_archives_of_every_variant() {
    let Some(data) = common::shared_data() else { return };
    // Every game of each archive that starts from the standard position.
    let archives = [
        (Variant::English, "draughts/english/ACF__EricCJoyce_Datasets__converted.pdn"),
        (Variant::Russian, "draughts/russian/World_Championship_1998__mig0_Games-Checkers.pdn"),
        (Variant::Pool, "draughts/online_lidraughts_playstrategy/american__playstrategy_via_miskibin_py-draughts.pdn"),
        (Variant::Italian, "draughts/italian/40champ-1996__mig0_Games-Checkers.pdn"),
        (Variant::Czech, "draughts/czech/MR_Ceska_Dama_Druzstev_2008__mig0_Games-Checkers.pdn"),
    ];
    let (mut plies, mut undecidable, mut unmarked) = (0, 0, 0);
    for (variant, file) in archives {
        let games = standard_start_games(&data.join(file), variant);
        assert!(games.len() >= 5, "{file}: only {} games read", games.len());
        eprintln!("{file}: {} games", games.len());
        for kings in [KingStyle::Visible, KingStyle::Stacked] {
            for (i, moves) in games.iter().enumerate() {
                let (replay, faults) = drive_faulty(variant, kings, moves, 0.15, i as u64);
                let what = format!("{file} game {i} ({kings:?})");
                assert_faithful(&replay, &what);
                assert!(replay.events.iter().all(|e| e.kind != EventKind::Revised), "{what}: a wrong move was made");
                // A ply is marked inferred only if it was not seen; rarely an unseen ply is
                // recorded with the answer to a move seen under way (a misread taken for a lifted
                // piece), unmarked, as any move recorded from its answer.
                let marked = replay.events.iter().filter(|e| e.inferred == Some(true)).count();
                assert!(marked <= faults.unseen, "{what}: {marked} marked, {} unseen", faults.unseen);
                unmarked += faults.unseen - marked;
                undecidable += replay.recorded.undecidable(&replay.expected);
                plies += moves.len();
            }
        }
    }
    // Two captures that end alike, answered by the same recapture, give one board: the record
    // names both. That must stay rare.
    eprintln!("{plies} plies, {undecidable} recorded as an equivalent move with the true one named, {unmarked} unseen plies recorded from the answer");
    assert!(undecidable * 1000 < plies, "{undecidable} of {plies}");
}

/// The games of an archive that replay from the variant's standard start without a setup on the
/// way (the drive starts every game from the start position); defective games are skipped.
fn standard_start_games(path: &std::path::Path, variant: Variant) -> Vec<Vec<Move>> {
    use boardwatch::draughts::game::replay;
    use boardwatch::draughts::pdn::{read_games, ReadMode};
    let text = String::from_utf8_lossy(&std::fs::read(path).expect("archive")).into_owned();
    let start = Position::start(&variant.rules());
    read_games(&text, ReadMode::Lenient)
        .unwrap_or_else(|e| panic!("{}: {e}", path.display()))
        .iter()
        .filter_map(|record| replay(record, variant).ok())
        .filter(|game| game.variant == variant && game.start == start && !game.plies.is_empty())
        .filter(|game| game.plies.windows(2).all(|w| w[0].after == w[1].before))
        .map(|game| game.plies.into_iter().map(|p| p.mv).collect())
        .collect()
}
