//! Tests of the reading stack (lexer, reader, collector) through its public entry points.

use super::*;

fn strict(text: &str) -> Vec<GameRecord> {
    read_games(text, ReadMode::Strict).unwrap_or_else(|e| panic!("{e}\n{text}"))
}

fn lenient(text: &str) -> Vec<GameRecord> {
    read_games(text, ReadMode::Lenient).unwrap_or_else(|e| panic!("{e}\n{text}"))
}

fn strict_err(text: &str) -> PdnError {
    match read_games(text, ReadMode::Strict) {
        Ok(games) => panic!("accepted: {text:?} -> {games:?}"),
        Err(e) => e,
    }
}

fn lenient_err(text: &str) -> PdnError {
    match read_games(text, ReadMode::Lenient) {
        Ok(games) => panic!("accepted leniently: {text:?} -> {games:?}"),
        Err(e) => e,
    }
}

fn texts(game: &GameRecord) -> Vec<&str> {
    game.moves.iter().map(|m| m.token.text.as_str()).collect()
}

/// Records every call, to check the order of events.
#[derive(Default)]
struct Log(Vec<String>);
impl Visitor for Log {
    fn begin_game(&mut self, line: usize) {
        self.0.push(format!("begin@{line}"));
    }
    fn tag(&mut self, name: &str, value: &str) {
        self.0.push(format!("tag {name}={value}"));
    }
    fn begin_movetext(&mut self) {
        self.0.push("movetext".into());
    }
    fn move_number(&mut self, number: u32, black: bool) {
        self.0
            .push(format!("#{number}{}", if black { "..." } else { "." }));
    }
    fn mv(&mut self, token: &MoveToken, line: usize, col: usize) {
        self.0.push(format!("mv {}@{line}:{col}", token.text));
    }
    fn ellipsis(&mut self, _: usize, _: usize) {
        self.0.push("...".into());
    }
    fn strength(&mut self, mark: &str) {
        self.0.push(format!("strength {mark}"));
    }
    fn nag(&mut self, nag: u16) {
        self.0.push(format!("${nag}"));
    }
    fn comment(&mut self, text: &str) {
        self.0.push(format!("{{{text}}}"));
    }
    fn begin_variation(&mut self) {
        self.0.push("(".into());
    }
    fn end_variation(&mut self) {
        self.0.push(")".into());
    }
    fn setup(&mut self, fen: &str) {
        self.0.push(format!("setup {fen}"));
    }
    fn result(&mut self, result: GameResult, text: &str) {
        self.0.push(format!("result {result:?} {text}"));
    }
    fn end_game(&mut self) {
        self.0.push("end".into());
    }
    fn warning(&mut self, w: &PdnError) {
        self.0.push(format!("warning {}", w.message));
    }
}

fn log(text: &str, mode: ReadMode) -> Vec<String> {
    let mut log = Log::default();
    Reader::with_mode(text, mode).read_all(&mut log).unwrap();
    log.0
}

#[test]
fn reads_a_simple_game_into_a_record() {
    let text = "[Event \"Test\"]\n[Result \"1-0\"]\n\n1. 11-15 23-19 2. 8-11 22-17 1-0\n";
    let games = strict(text);
    assert_eq!(games.len(), 1);
    let g = &games[0];
    assert_eq!(g.tag("Event"), Some("Test"));
    assert_eq!(g.start_line, 1);
    assert_eq!(texts(g), ["11-15", "23-19", "8-11", "22-17"]);
    assert_eq!(
        g.moves[0].token.squares,
        [SquareToken::Num(11), SquareToken::Num(15)]
    );
    assert!(!g.moves[0].token.capture);
    assert_eq!(
        g.moves[0].number,
        Some(MoveNumber {
            number: 1,
            black_to_move: false
        })
    );
    assert_eq!(g.moves[1].number, None);
    assert_eq!((g.moves[2].line, g.moves[2].col), (4, 19));
    assert_eq!(g.result, Some(GameResult::FirstPlayerWin));
    assert_eq!(g.result_text.as_deref(), Some("1-0"));
}

#[test]
fn visitor_sees_events_in_order() {
    let text = "[White \"A\"]\n1. 32-28! $1 {good} (1. 33-29 {also}) 19-23 /FEN \"W:W31:B1\"/ 2-0";
    let expected = [
        "begin@1",
        "tag White=A",
        "movetext",
        "#1.",
        "mv 32-28@2:4",
        "strength !",
        "$1",
        "{good}",
        "(",
        "#1.",
        "mv 33-29@2:25",
        "{also}",
        ")",
        "mv 19-23@2:39",
        "setup W:W31:B1",
        "result FirstPlayerWin 2-0",
        "end",
    ];
    assert_eq!(log(text, ReadMode::Strict), expected);
}

#[test]
fn black_move_numbers_and_ellipsis() {
    let g = &strict("12... 20-25 13. 33-28 *")[0];
    assert_eq!(
        g.moves[0].number,
        Some(MoveNumber {
            number: 12,
            black_to_move: true
        })
    );
    assert_eq!(
        g.moves[1].number,
        Some(MoveNumber {
            number: 13,
            black_to_move: false
        })
    );
    assert_eq!(g.result, Some(GameResult::Unknown));
    // `1. ... 7-12` is the older way of writing `1... 7-12`.
    let g = &strict("1. ... 7-12 2. 32-28 *")[0];
    assert_eq!(g.ellipses, [0]);
    assert_eq!(
        g.moves[0].number,
        Some(MoveNumber {
            number: 1,
            black_to_move: true
        })
    );
    assert_eq!(texts(g), ["7-12", "32-28"]);
}

#[test]
fn captures_with_and_without_path() {
    let g = &strict("23x14x7 15x22 a3:c5:e7 c3xe5 *")[0];
    assert_eq!(texts(g), ["23x14x7", "15x22", "a3:c5:e7", "c3xe5"]);
    let path: Vec<_> = [23, 14, 7].map(SquareToken::Num).into();
    assert_eq!(g.moves[0].token.squares, path);
    assert!(g.moves.iter().all(|m| m.token.capture));
    assert_eq!(
        g.moves[2].token.squares,
        [
            SquareToken::Alg { file: 0, rank: 3 },
            SquareToken::Alg { file: 2, rank: 5 },
            SquareToken::Alg { file: 4, rank: 7 }
        ]
    );
}

#[test]
fn alphanumeric_moves_without_separator() {
    // The official suite's alphanumeric.pdn.
    let g = &strict("1.a3b4\n")[0];
    assert_eq!(texts(g), ["a3b4"]);
    let sq = &g.moves[0].token.squares;
    assert_eq!(
        sq,
        &[
            SquareToken::Alg { file: 0, rank: 3 },
            SquareToken::Alg { file: 1, rank: 4 }
        ]
    );
    assert_eq!(g.moves[0].token.compact_from_file, None);
}

#[test]
fn strength_marks_including_the_parenthesised_form() {
    // The official suite's movestrength.pdn: `(!?!!!)` is a mark, not a variation.
    let g = &strict("1.32-28!? 19-23(!?!!!) 2.28x19 *")[0];
    let marks: Vec<_> = g.moves.iter().map(|m| m.strength.as_deref()).collect();
    assert_eq!(marks, [Some("!?"), Some("(!?!!!)"), None]);
    assert_eq!(strict_err("{x} !").kind, PdnErrorKind::UnexpectedToken);
}

#[test]
fn nags_attach_to_the_move_before() {
    let g = &strict("32-28 $12 $1 19-23 *")[0];
    assert_eq!(g.moves[0].nags, [12, 1]);
    assert_eq!(strict_err("32-28 $ *").kind, PdnErrorKind::InvalidToken);
    assert_eq!(
        strict_err("32-28 $99999 *").kind,
        PdnErrorKind::NumberOutOfRange
    );
}

#[test]
fn comments_span_lines_and_keep_positions_right() {
    let text = "{ a comment\nover two lines } 32-28 {after}\n  19-23 % a line comment 40-50\n*";
    let g = &strict(text)[0];
    assert_eq!(g.initial_comments, [" a comment\nover two lines "]);
    assert_eq!(g.moves[0].comments_after, ["after"]);
    assert_eq!((g.moves[0].line, g.moves[0].col), (2, 18));
    assert_eq!((g.moves[1].line, g.moves[1].col), (3, 3));
    assert_eq!(texts(g), ["32-28", "19-23"]);
}

#[test]
fn variations_are_checked_but_not_recorded() {
    // The official suite's variation.pdn.
    let text = "32-28 19-23 (18-23 38-32 (37-32? 23-29! { Black wins }) 12-18) 28x19 14x23";
    let g = &strict(text)[0];
    assert_eq!(texts(g), ["32-28", "19-23", "28x19", "14x23"]);
    assert!(g.moves[1].comments_after.is_empty());
    assert_eq!(strict_err("32-28 () 19-23").kind, PdnErrorKind::Empty);
    assert_eq!(
        strict_err("32-28 (19-23").kind,
        PdnErrorKind::UnbalancedVariation
    );
    assert_eq!(
        strict_err("32-28 19-23)").kind,
        PdnErrorKind::UnbalancedVariation
    );
    assert_eq!(
        strict_err("32-28 (19-23 1-0)").kind,
        PdnErrorKind::UnbalancedVariation
    );
}

#[test]
fn deep_nesting_does_not_overflow_the_stack() {
    let text = format!(
        "32-28 {}19-23{} *",
        "(".repeat(100_000),
        ")".repeat(100_000)
    );
    assert_eq!(strict(&text)[0].moves.len(), 1);
    let text = format!("32-28 {} *", "(".repeat(100_000));
    assert_eq!(strict_err(&text).kind, PdnErrorKind::UnbalancedVariation);
    assert_eq!(lenient_err(&text).kind, PdnErrorKind::UnbalancedVariation);
}

#[test]
fn setup_commands() {
    let g = &strict("1.31-26 17-21 /FEN \"B:B1-16,18-21:W26,28,33-50\"/ 2. 32-28 *")[0];
    assert_eq!(
        g.moves[2].setup_before.as_deref(),
        Some("B:B1-16,18-21:W26,28,33-50")
    );
    let g = &strict("32-28 /FEN \"B::\"/ *")[0];
    assert_eq!(g.final_setup.as_deref(), Some("B::"));
    assert_eq!(
        strict_err("32-28 /W:W31:B1/ *").kind,
        PdnErrorKind::InvalidSetup
    );
    assert_eq!(
        strict_err("32-28 /FEN \"W").kind,
        PdnErrorKind::Unterminated
    );
}

#[test]
fn all_standard_results() {
    let cases = [
        ("1-0", GameResult::FirstPlayerWin),
        ("2-0", GameResult::FirstPlayerWin),
        ("0-1", GameResult::SecondPlayerWin),
        ("0-2", GameResult::SecondPlayerWin),
        ("1/2-1/2", GameResult::Draw),
        ("1-1", GameResult::Draw),
        ("0-0", GameResult::DoubleForfeit),
        ("*", GameResult::Unknown),
    ];
    for (text, result) in cases {
        let g = &strict(&format!("32-28 {text}"))[0];
        assert_eq!(
            (g.result, g.result_text.as_deref()),
            (Some(result), Some(text))
        );
    }
    // `1-10` is a move, `1-1` before something else a result.
    let g = &strict("1-10 1-1")[0];
    assert_eq!(texts(g), ["1-10"]);
    assert_eq!(g.result, Some(GameResult::Draw));
    // Results are game separators.
    let games = strict("32-28 1-0 33-28 0-2 [Event \"x\"] *");
    assert_eq!(games.len(), 3);
    assert_eq!(games[2].tag("Event"), Some("x"));
    assert_eq!(strict_err("32-28 1-0 1-0").kind, PdnErrorKind::Empty);
}

#[test]
fn russian_results_only_when_lenient() {
    let e = strict_err("cb4 fg5 1:0");
    assert_eq!(e.kind, PdnErrorKind::InvalidToken);
    let e = strict_err("c3-b4 f6-g5 1/2:1/2");
    assert!(e.message.contains("not a PDN 3.0 result"), "{e}");
    let g = &lenient("c3-b4 f6-g5 1/2:1/2")[0];
    assert_eq!(
        (g.result, g.result_text.as_deref()),
        (Some(GameResult::Draw), Some("1/2:1/2"))
    );
    assert_eq!(g.warnings.len(), 1);
    // Strictly, `1:1` is a (nonsensical) capture from 1 to 1, as far as syntax goes.
    assert_eq!(texts(&strict("1:1 *")[0]), ["1:1"]);
}

#[test]
fn tags_with_escapes_on_one_line_and_without_movetext() {
    // The official suite's string.pdn, and a game ending at the end of the input.
    let text = "[White \"This is a string with an escaped character \\\"\"] 32-28";
    let g = &strict(text)[0];
    assert_eq!(
        g.tag("White"),
        Some("This is a string with an escaped character \"")
    );
    assert_eq!(g.result, None);
    let g = &strict("[A \"back\\\\slash \\n kept\"][B \"x\"]")[0];
    assert_eq!(
        g.tags,
        [
            ("A".into(), "back\\slash \\n kept".into()),
            ("B".into(), "x".into())
        ]
    );
    assert!(g.moves.is_empty());
    let games = strict("[FEN \"W:W31-50:B1-20\"]\r\n*\r\n\r\n[FEN \"?:W29:B22\"]\r\n*\r\n");
    assert_eq!(games.len(), 2);
    assert_eq!(games[1].start_line, 4);
    assert_eq!(strict_err("[event \"x\"]").kind, PdnErrorKind::InvalidTag);
    assert_eq!(strict_err("[Event x]").kind, PdnErrorKind::InvalidTag);
    assert_eq!(strict_err("[Event \"x\"").kind, PdnErrorKind::InvalidTag);
    assert_eq!(strict_err("[Event \"x]\n").kind, PdnErrorKind::Unterminated);
}

#[test]
fn real_world_layout() {
    // BOM, CRLF, blank lines, no tags, moves split over lines and with spaces inside.
    let text = "\u{feff}\r\n\r\n1. 32-\r\n28 19 -23\r\n 2. 1- 7 01-06 *\r\n\r\n\r\n33-28 *";
    let games = strict(text);
    assert_eq!(games.len(), 2);
    assert_eq!(texts(&games[0]), ["32-28", "19-23", "1-7", "01-06"]);
    assert_eq!(
        games[0].moves[3].token.squares,
        [SquareToken::Num(1), SquareToken::Num(6)]
    );
    assert_eq!((games[0].moves[0].line, games[0].moves[0].col), (3, 4));
    assert_eq!(games[1].start_line, 8);
}

#[test]
fn reader_returns_none_at_the_end_and_after_an_error() {
    let mut reader = Reader::new("32-28 * 33-28 *");
    let mut c = RecordCollector::new();
    assert_eq!(reader.read_game(&mut c), Ok(Some(())));
    assert_eq!(reader.read_game(&mut c), Ok(Some(())));
    assert_eq!(reader.read_game(&mut c), Ok(None));
    assert_eq!(c.games.len(), 2);
    let mut reader = Reader::new("32-28 } 33-28 *");
    assert!(reader.read_game(&mut c).is_err());
    assert_eq!(reader.read_game(&mut c), Ok(None));
    assert_eq!(Reader::new("").read_all(&mut c), Ok(0));
    assert_eq!(
        Reader::new(" \n% only a comment line\n").read_all(&mut c),
        Ok(0)
    );
}

#[test]
fn errors_name_line_and_character_column() {
    let e = strict_err("[White \"Ñandú\"] {é} 32-28 . 19-23");
    assert_eq!((e.line, e.col, e.kind), (1, 27, PdnErrorKind::InvalidToken));
    assert_eq!(e.to_string(), "line 1, column 27: stray '.'");
}

#[test]
fn what_the_standard_forbids() {
    let cases = [
        (
            "1. 33-29 19-23 2. 35-30 { nested { comment } }",
            PdnErrorKind::UnmatchedBrace,
        ),
        ("1. 32-28 - - 2. 33-28", PdnErrorKind::IncompleteMove),
        ("1. - - 2. - -", PdnErrorKind::MoveNumberWithoutMove),
        ("1. 1-0", PdnErrorKind::MoveNumberWithoutMove),
        ("1. 32-28 2.", PdnErrorKind::MoveNumberWithoutMove),
        (
            "32-28 19-23 [Event \"next\"]",
            PdnErrorKind::MissingGameTerminator,
        ),
        ("32 28", PdnErrorKind::IncompleteMove),
        ("32-", PdnErrorKind::IncompleteMove),
        ("32-28x", PdnErrorKind::IncompleteMove),
        ("x 32", PdnErrorKind::IncompleteMove),
        ("123-28", PdnErrorKind::InvalidToken),
        ("00-28", PdnErrorKind::InvalidToken),
        // Longest match, as in the grammar's lexer: `0-2` is a result, so this is an empty
        // game followed by `8`.
        ("0-28", PdnErrorKind::Empty),
        ("i3-b4", PdnErrorKind::InvalidToken),
        ("a9-b4", PdnErrorKind::InvalidToken),
        ("ed4 fe5", PdnErrorKind::InvalidToken),
        ("E3-D4", PdnErrorKind::InvalidToken),
        ("32-28 ; PGN comment", PdnErrorKind::InvalidToken),
        ("32-28 {open", PdnErrorKind::Unterminated),
        ("32-28 ]", PdnErrorKind::UnexpectedToken),
        ("32-28 \"string\"", PdnErrorKind::InvalidToken),
        ("99999999999. 32-28", PdnErrorKind::NumberOutOfRange),
    ];
    for (text, kind) in cases {
        assert_eq!(strict_err(text).kind, kind, "{text}");
    }
    let e = strict_err("64. 38-32 13-19 4-6\n\n[Event \"next\"]");
    assert_eq!((e.line, e.col), (3, 1));
    assert!(e.message.contains("'4-6'"), "{e}");
}

#[test]
fn lenient_deviations_are_accepted_with_warnings() {
    // Russian compact and uppercase notation.
    let g = &lenient("1. ed4 gg7 2. E3-D4 F6:H4 *")[0];
    assert_eq!(texts(g), ["ed4", "gg7", "E3-D4", "F6:H4"]);
    assert_eq!(g.moves[0].token.compact_from_file, Some(4));
    assert_eq!(
        g.moves[0].token.squares,
        [SquareToken::Alg { file: 3, rank: 4 }]
    );
    assert_eq!(g.moves[1].token.compact_from_file, Some(6));
    assert_eq!(
        g.moves[2].token.squares[0],
        SquareToken::Alg { file: 4, rank: 3 }
    );
    assert!(g.moves[3].token.capture);
    assert_eq!(
        g.warnings.len(),
        2,
        "one per kind and game: {:?}",
        g.warnings
    );
    assert!(g.warnings.iter().all(|w| w.kind == PdnErrorKind::Deviation));

    // Tags: no quotes, lowercase name, a missing closing quote.
    let g = &lenient("[Round 17]\n[Game # 612]\n[event \"e\"]\n[Date \"1.1]\n32-28 *")[0];
    let tags: Vec<_> = g
        .tags
        .iter()
        .map(|(n, v)| (n.as_str(), v.as_str()))
        .collect();
    assert_eq!(
        tags,
        [
            ("Round", "17"),
            ("Game", "# 612"),
            ("event", "e"),
            ("Date", "1.1")
        ]
    );
    assert_eq!(g.warnings.len(), 4);

    // A comment above the tags, one between number and move, a `;` comment.
    let games = lenient("{ file comment }\n[Event \"a\"]\n1. {lost} 10-14 ; rest of line\n*");
    assert_eq!(games.len(), 1);
    assert_eq!(games[0].initial_comments, [" file comment ", "lost"]);
    assert_eq!(games[0].moves[0].comments_after, [" rest of line"]);

    // `1. 1-0` as an empty game; a missing result before the next tags; repeated headers.
    let games =
        lenient("[Event \"a\"]\n1. 1-0\n[Event \"b\"]\n32-28\n[Event \"c\"]\n[Event \"d\"]\n*");
    let events: Vec<_> = games.iter().map(|g| g.tag("Event").unwrap()).collect();
    assert_eq!(events, ["a", "b", "c", "d"]);
    assert_eq!(
        (games[0].moves.len(), games[0].result),
        (0, Some(GameResult::FirstPlayerWin))
    );
    assert_eq!(games[1].result, None);
    assert_eq!(games[3].start_line, 6);

    // Free text in parentheses, next to a real variation.
    let g = &lenient("9-13 22-18 (Roberto's first choice, 1.) 11-16 (11-15 23-19) 18-14 *")[0];
    assert_eq!(texts(g), ["9-13", "22-18", "11-16", "18-14"]);
    assert_eq!(g.moves[1].comments_after, ["Roberto's first choice, 1."]);
    assert_eq!(g.warnings.len(), 1);

    // JSON-escaped line breaks between tags, and a garbled move number.
    let g = &lenient("[Event \"a\"]\\n[Site \"b\"]\\n\n8. 37-31 26x37\n9n 32x41 19-23 *")[0];
    assert_eq!(g.tag("Site"), Some("b"));
    assert_eq!(texts(g), ["37-31", "26x37", "32x41", "19-23"]);
    assert!(
        g.warnings.iter().any(|w| w.message.contains("'9n'")),
        "{:?}",
        g.warnings
    );
}

#[test]
fn lenient_mode_still_rejects_what_no_archive_needs() {
    assert_eq!(
        lenient_err("1. 33-29 { nested { comment } }").kind,
        PdnErrorKind::UnmatchedBrace
    );
    assert_eq!(
        lenient_err("1. - - 2. - - 1-0").kind,
        PdnErrorKind::MoveNumberWithoutMove
    );
    assert_eq!(
        lenient_err("5. 41-37 48x31 6.\n\n[Event \"x\"]").kind,
        PdnErrorKind::MoveNumberWithoutMove
    );
    assert_eq!(
        lenient_err("32-28 (19-23").kind,
        PdnErrorKind::UnbalancedVariation
    );
    assert_eq!(lenient_err("32-28 {open").kind, PdnErrorKind::Unterminated);
}

#[test]
fn warnings_reach_the_visitor_within_their_game() {
    let events = log("{top}\n[Event \"a\"]\n1. ed4 *", ReadMode::Lenient);
    assert_eq!(events[0], "begin@1");
    assert!(
        events[1].starts_with("warning comment before the tags"),
        "{events:?}"
    );
    assert_eq!(events[2], "{top}");
    assert_eq!(events[3], "tag Event=a");
    assert!(events
        .iter()
        .any(|e| e.starts_with("warning Russian compact")));
}

/// A small deterministic generator, so that the fuzz tests need no dependency.
struct XorShift(u64);
impl XorShift {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0
    }
    fn below(&mut self, n: usize) -> usize {
        (self.next() % n as u64) as usize
    }
}

/// Reads `text` in both modes with a visitor that records everything; all that matters is
/// that it returns.
fn read_both(text: &str) {
    for mode in [ReadMode::Strict, ReadMode::Lenient] {
        let mut c = RecordCollector::new();
        let _ = Reader::with_mode(text, mode).read_all(&mut c);
        let _ = Reader::with_mode(text, mode).read_all(&mut Log::default());
        check_archive_read(text, mode);
    }
}

/// A read skipping defective games returns, and accounts for every game: the numbers of the
/// games read and of the defects are 1, 2, 3... without gap or repeat, and every defect names a
/// position in the text.
fn check_archive_read(text: &str, mode: ReadMode) {
    let read = read_archive(text, mode);
    let mut numbers: Vec<usize> = read.games.iter().map(|g| g.number).collect();
    numbers.extend(read.defects.iter().map(|d| d.game));
    numbers.sort_unstable();
    let expected: Vec<usize> = (1..=numbers.len()).collect();
    assert_eq!(numbers, expected, "{text:?}");
    let lines = 1 + text.matches('\n').count() + text.matches('\r').count();
    for d in &read.defects {
        assert!(
            d.error.line >= 1 && d.error.line <= lines,
            "{d} in {text:?}"
        );
        assert!(
            d.error.col >= 1 && d.resumed_at_line >= d.error.line.min(lines),
            "{d}"
        );
    }
}

const SAMPLE: &str = "\u{feff}% header line\r\n{ Ünïcode comment }\n[Event \"E \\\"q\\\" \\\\\"]\n\
    [Round 3]\n[FEN \"W:W31-50:B1-20\"]\n1. 32-28! 19-23 (18-23 38-32 (37-32? 23-29!) 12-18)\n\
    2. 28x19 14x23 $4 3. a3b4 ed4 4. E3:G5 1- 7 /FEN \"B:W1:B2\"/ 5... 23x14x7(?) ; x\n\
    (Prose, here.) 6. ... 12-18 1/2:1/2\n\n[Event \"2\"]\n1. 1-0 [Event \"3\"] 32-28 \\n 9n *";

#[test]
fn fuzz_random_bytes_never_panic() {
    let mut rng = XorShift(0x9E37_79B9_7F4A_7C15);
    let alphabet = b"0123456789-x:./!?()[]{}\"$*%;\\ \n\rabcdefghEFGHWB#\xc3\xa9\xff";
    for _ in 0..20_000 {
        let len = rng.below(160);
        let bytes: Vec<u8> = if rng.below(2) == 0 {
            (0..len)
                .map(|_| alphabet[rng.below(alphabet.len())])
                .collect()
        } else {
            (0..len).map(|_| rng.next() as u8).collect()
        };
        read_both(&String::from_utf8_lossy(&bytes));
    }
}

#[test]
fn fuzz_truncations_and_mutations_of_real_text_never_panic() {
    for (i, _) in SAMPLE.char_indices() {
        read_both(&SAMPLE[..i]);
        read_both(&SAMPLE[i..]);
    }
    let mut rng = XorShift(12345);
    let pieces = [
        "(", ")", "{", "}", "\"", "[", "]", "/", "1.", "...", "x", "-", "1-0", "\n",
    ];
    for _ in 0..5000 {
        let mut text = SAMPLE.to_string();
        for _ in 0..1 + rng.below(4) {
            let mut at = rng.below(text.len() + 1);
            while !text.is_char_boundary(at) {
                at -= 1;
            }
            if rng.below(2) == 0 {
                text.insert_str(at, pieces[rng.below(pieces.len())]);
            } else {
                let mut end = (at + 1 + rng.below(6)).min(text.len());
                while !text.is_char_boundary(end) {
                    end += 1;
                }
                text.replace_range(at..end, "");
            }
        }
        read_both(&text);
    }
}

#[test]
fn sample_reads_leniently_as_intended() {
    let games = lenient(SAMPLE);
    assert_eq!(games.len(), 3);
    assert_eq!(games[0].tag("Event"), Some("E \"q\" \\"));
    assert_eq!(games[0].moves.len(), 10);
    assert_eq!(games[0].result_text.as_deref(), Some("1/2:1/2"));
    assert_eq!(games[1].moves.len(), 0);
    assert_eq!(texts(&games[2]), ["32-28"]);
}

// ---------------------------------------------------------------------------------------------
// Reads that skip defective games
// ---------------------------------------------------------------------------------------------

fn numbers(read: &ArchiveRead) -> (Vec<usize>, Vec<usize>) {
    (
        read.games.iter().map(|g| g.number).collect(),
        read.defects.iter().map(|d| d.game).collect(),
    )
}

#[test]
fn a_defective_game_costs_that_game_only() {
    let text = "[Event \"1\"]\n1. 32-28 19-23 *\n\n\
                [Event \"2\"]\n1. 33-28 } 18-23 *\n\n\
                [Event \"3\"]\n1. 32-28 19-\n\n\
                [Event \"4\"]\n1. 31-27 *\n";
    for mode in [ReadMode::Strict, ReadMode::Lenient] {
        let read = read_archive(text, mode);
        assert_eq!(numbers(&read), (vec![1, 4], vec![2, 3]), "{mode:?}");
        assert_eq!(read.games[1].tag("Event"), Some("4"));
        assert_eq!(texts(&read.games[1]), ["31-27"]);
        let d = &read.defects[0];
        assert_eq!(
            (d.error.kind, d.error.line, d.error.col),
            (PdnErrorKind::UnmatchedBrace, 5, 10)
        );
        // The `*` after the stray brace ends the defective game; reading goes on after it.
        assert_eq!(d.resumed_at_line, 5);
        let d = &read.defects[1];
        assert_eq!(
            (d.error.kind, d.error.line),
            (PdnErrorKind::IncompleteMove, 8)
        );
        assert_eq!(d.resumed_at_line, 10);
        assert!(
            d.to_string().starts_with("game 3, line 8, column 12: "),
            "{d}"
        );
        assert_eq!(read.games_in_text(), 4);
    }
    // The reads that stop at the first error are unchanged.
    assert_eq!(strict_err(text).kind, PdnErrorKind::UnmatchedBrace);
    let mut reader = Reader::new(text).skipping_defective_games();
    assert_eq!(reader.read_all(&mut NullVisitor), Ok(4));
}

#[test]
fn games_separated_by_results_only_resume_after_the_result() {
    let read = read_archive("32-28 1-0 33-28 ] 19-23 0-1 31-27 2-0", ReadMode::Strict);
    assert_eq!(numbers(&read), (vec![1, 3], vec![2]));
    assert_eq!(texts(&read.games[1]), ["31-27"]);
    // A result inside a comment does not end the skip; `1-10` is a move, not a result.
    let read = read_archive("32-28 19 {1-0} 1-10 0-1 31-27 *", ReadMode::Strict);
    assert_eq!(numbers(&read), (vec![2], vec![1]));
    assert_eq!(texts(&read.games[0]), ["31-27"]);
}

#[test]
fn a_comment_that_lost_its_closing_brace_is_not_allowed_to_swallow_the_next_game() {
    let text = "[Event \"a\"]\n1. 32-28 {lost brace 19-23 *\n\n[Event \"b\"]\n1. 33-28 {ok} *\n";
    let read = read_archive(text, ReadMode::Lenient);
    assert_eq!(numbers(&read), (vec![2], vec![1]));
    let e = &read.defects[0].error;
    assert_eq!((e.kind, e.line, e.col), (PdnErrorKind::Unterminated, 2, 10));
    assert!(e.message.contains("tags at line 4"), "{e}");
    assert_eq!(read.games[0].moves[0].comments_after, ["ok"]);
    // Without skipping, today's reading stands: the comment runs to the next `}`.
    assert_eq!(lenient(text).len(), 1);
}

#[test]
fn placeholder_moves_are_read_as_a_game_without_moves() {
    let text = "[Event \"a\"]\n[Result \"1/2-1/2\"]\n\n1. - - 2. - - 3. - -\n4. - -\n\n1/2-1/2\n\n\
                [Event \"b\"]\n1. 32-28 *";
    let read = read_archive(text, ReadMode::Lenient);
    assert_eq!(numbers(&read), (vec![1, 2], vec![]));
    let g = &read.games[0];
    assert!(g.moves.is_empty());
    assert_eq!(g.result, Some(GameResult::Draw));
    let repaired: Vec<_> = g
        .warnings
        .iter()
        .filter(|w| w.kind == PdnErrorKind::Repaired)
        .collect();
    assert_eq!(repaired.len(), 1, "{:?}", g.warnings);
    assert_eq!((repaired[0].line, repaired[0].col), (4, 1));
    assert!(repaired[0].message.contains("4 moves"), "{}", repaired[0]);
    assert_eq!(texts(&read.games[1]), ["32-28"]);
    // Strictly, the placeholders stay a defect; the next game is still read.
    let read = read_archive(text, ReadMode::Strict);
    assert_eq!(numbers(&read), (vec![2], vec![1]));
    assert_eq!(
        read.defects[0].error.kind,
        PdnErrorKind::MoveNumberWithoutMove
    );
    // Placeholders followed by real moves do not have a clear meaning: a defect.
    let read = read_archive(
        "1. - - 2. 32-28 19-23 *\n[Event \"b\"]\n*",
        ReadMode::Lenient,
    );
    assert_eq!(numbers(&read), (vec![2], vec![1]));
}

#[test]
fn a_comment_without_braces_after_the_last_move_is_read_as_a_comment() {
    let text =
        "[Event \"a\"]\n1. 11-15 23-19 2. 8-11Redoversteppedthetimecontrolonthismove.\n0-1\n\n\
                [Event \"b\"]\n1. 11-15 23-18 2. 8-11Red resigned. 1-0\n[Event \"c\"]\n1. 9-14 *";
    let read = read_archive(text, ReadMode::Lenient);
    assert_eq!(numbers(&read), (vec![1, 2, 3], vec![]));
    let g = &read.games[0];
    assert_eq!(texts(g), ["11-15", "23-19", "8-11"]);
    assert_eq!(
        g.moves[2].comments_after,
        ["Redoversteppedthetimecontrolonthismove."]
    );
    assert_eq!(g.result, Some(GameResult::SecondPlayerWin));
    let w = &g.warnings[0];
    assert_eq!((w.kind, w.line, w.col), (PdnErrorKind::Repaired, 2, 23));
    let g = &read.games[1];
    assert_eq!(texts(g), ["11-15", "23-18", "8-11"]);
    assert_eq!(g.moves[2].comments_after, ["Red resigned."]);
    assert_eq!(g.result, Some(GameResult::FirstPlayerWin));
    // Glued text before more moves is no comment whose meaning is clear: a defect.
    let read = read_archive(
        "1. 11-15 23-19Red 2. 8-11 *\n[Event \"b\"]\n*",
        ReadMode::Lenient,
    );
    assert_eq!(numbers(&read), (vec![2], vec![1]));
    // Reads that stop at the first error do not repair.
    assert!(read_games(text, ReadMode::Lenient).is_err());
}

#[test]
fn a_truncated_text_costs_only_its_last_game() {
    let text =
        "[Event \"a\"]\n1. 32-28 19-23 *\n[Event \"b\"]\n1. 33-28 {a comment} 18-23 2. 28x19 *\n";
    for cut in 0..text.len() {
        let read = read_archive(&text[..cut], ReadMode::Lenient);
        let whole_first = cut >= text.find('*').unwrap() + 1;
        if whole_first {
            assert_eq!(read.games[0].tag("Event"), Some("a"), "cut at {cut}");
            assert_eq!(texts(&read.games[0]), ["32-28", "19-23"], "cut at {cut}");
        }
        assert!(read.games_in_text() <= 2, "cut at {cut}");
    }
}

#[test]
fn reads_skipping_defective_games_agree_with_reads_that_stop_on_valid_text() {
    let lenient_read = read_archive(SAMPLE, ReadMode::Lenient);
    assert!(
        lenient_read.defects.is_empty(),
        "{:?}",
        lenient_read.defects
    );
    assert_eq!(lenient_read.games, lenient(SAMPLE));
    let text = "[Event \"1\"]\n1. 32-28 {c} 19-23 (18-23 38-32) 2-0\n[Event \"2\"]\n12... 20-25 *";
    assert_eq!(read_archive(text, ReadMode::Strict).games, strict(text));
    assert_eq!(strict(text)[1].number, 2);
}

#[test]
fn an_error_in_the_tags_skips_the_rest_of_that_game_not_the_next() {
    let text = "[Event \"1\"]\n[Result \"1-0\"\n[Round \"2\"]\n\n1. 32-28 19-23 1-0\n\n\
                [Event \"2\"]\n[Round \"2\"]\n1. 33-28 *\n\n[3vent \"3\"]\n[Round \"3\"]\n1. 31-27 *";
    let read = read_archive(text, ReadMode::Lenient);
    assert_eq!(numbers(&read), (vec![2], vec![1, 3]));
    assert_eq!(read.games[0].tag("Event"), Some("2"));
    // Reported where the `]` is missing: after the value, on the tag's own line.
    let e = &read.defects[0].error;
    assert_eq!((e.kind, e.line, e.col), (PdnErrorKind::InvalidTag, 2, 14));
    assert_eq!(read.defects[1].error.line, 11);
}
