//! PDN writer: tags, numbered movetext with comments, wrapped below 80 columns, and the result.
//!
//! The output follows the PDN 3.0 recommendations: the seven "mandatory" tags first, in the
//! order Event, Site, Date, Round, White, Black, Result (with their unknown values `?`,
//! `????.??.??` and `*` when absent), then the other tags as given (a tag without a value is
//! left out, as the standard asks), a blank line, the movetext, the result token and a blank line.

use super::{GameRecord, GameResult};

/// One move to write: its text as it should appear (`11-15`, `23x14x7`, `32-28!`, a NAG may
/// follow after a space: `32-28 $1`) and an optional comment to put after it.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct WrittenMove {
    pub text: String,
    pub comment: Option<String>,
    /// A setup command (`/FEN "..."/`) to write before the move: the board was set anew.
    pub setup_before: Option<String>,
}

impl WrittenMove {
    /// A move without a comment.
    pub fn new(text: impl Into<String>) -> Self {
        WrittenMove {
            text: text.into(),
            comment: None,
            setup_before: None,
        }
    }

    /// The same move with a comment after it.
    pub fn with_comment(mut self, comment: impl Into<String>) -> Self {
        self.comment = Some(comment.into());
        self
    }
}

/// The seven tags every game gets, in this order, with their unknown values.
const SEVEN_TAGS: [(&str, &str); 7] = [
    ("Event", "?"),
    ("Site", "?"),
    ("Date", "????.??.??"),
    ("Round", "?"),
    ("White", "?"),
    ("Black", "?"),
    ("Result", "*"),
];

/// Lines stay shorter than 80 characters (a single longer word is left whole).
const MAX_LINE: usize = 79;

/// Writes one game.
///
/// - `tags`: any order; the seven standard ones are put first, missing ones get their unknown
///   value. The `Result` tag is set from `result` (its text is kept when it says the same, so
///   `2-0` stays `2-0`; otherwise international results `2-0`/`0-2`/`1-1` are used for the
///   game types 20 and 27, as the standard's `GameType` table says, and `1-0`/`0-1`/`1/2-1/2`
///   for the others).
/// - `first_move_number`: the number of the first move (from the FEN, or 1).
/// - `first_player_second`: the first move is by the second player of a move pair, so the
///   movetext starts with `N...`.
pub fn write_game(
    tags: &[(String, String)],
    moves: &[WrittenMove],
    result: &GameResult,
    first_move_number: u32,
    first_player_second: bool,
) -> String {
    let items: Vec<Item<'_>> = moves
        .iter()
        .map(|m| Item {
            setup: m.setup_before.as_deref(),
            mv: m,
        })
        .collect();
    write(
        tags,
        &[],
        &items,
        None,
        result,
        first_move_number,
        first_player_second,
    )
}

/// Writes a record read by the reader back as PDN: its tags, initial comments, mainline moves
/// with strength marks, NAGs, comments and setups, and its result (`*` when it had none).
pub fn write_record(record: &GameRecord) -> String {
    let moves = written_moves(record);
    let items: Vec<Item<'_>> = record
        .moves
        .iter()
        .zip(&moves)
        .map(|(m, w)| Item {
            setup: m.setup_before.as_deref(),
            mv: w,
        })
        .collect();
    let (number, second) = record
        .moves
        .first()
        .and_then(|m| m.number)
        .map(|n| (n.number, n.black_to_move))
        .unwrap_or((1, false));
    // A game that ran to the end of the input without a result keeps what its tag says.
    let result = record
        .result
        .or_else(|| record.tag("Result").and_then(GameResult::from_token))
        .unwrap_or(GameResult::Unknown);
    let tags = match (&record.result_text, record.tag("Result")) {
        // The movetext result is what the game ended with; let the tag say the same.
        (Some(text), tag) if tag != Some(text.as_str()) => {
            let mut tags = record.tags.clone();
            tags.retain(|(n, _)| n != "Result");
            tags.push(("Result".to_string(), text.clone()));
            tags
        }
        _ => record.tags.clone(),
    };
    write(
        &tags,
        &record.initial_comments,
        &items,
        record.final_setup.as_deref(),
        &result,
        number,
        second,
    )
}

/// The mainline of a record as moves to write: the move as written plus its strength mark, then
/// its NAGs, and its comments joined by a space.
pub fn written_moves(record: &GameRecord) -> Vec<WrittenMove> {
    record
        .moves
        .iter()
        .map(|m| {
            let mut text = m.token.text.clone();
            if let Some(s) = &m.strength {
                text.push_str(s);
            }
            for nag in &m.nags {
                text.push_str(&format!(" ${nag}"));
            }
            let comment = (!m.comments_after.is_empty()).then(|| m.comments_after.join(" "));
            WrittenMove {
                text,
                comment,
                setup_before: None,
            }
        })
        .collect()
}

struct Item<'m> {
    setup: Option<&'m str>,
    mv: &'m WrittenMove,
}

/// Accumulates words into lines shorter than [`MAX_LINE`].
struct Wrapper {
    out: String,
    line_len: usize,
}

impl Wrapper {
    fn word(&mut self, word: &str) {
        let len = word.chars().count();
        if self.line_len > 0 {
            if self.line_len + 1 + len > MAX_LINE {
                self.out.push('\n');
                self.line_len = 0;
            } else {
                self.out.push(' ');
                self.line_len += 1;
            }
        }
        self.out.push_str(word);
        self.line_len += len;
    }

    /// A `{...}` comment, wrapped between its words. A `}` would end the comment early (the
    /// grammar has no escape for it), so it is left out.
    fn comment(&mut self, text: &str) {
        let cleaned = text.replace('}', "");
        let words: Vec<&str> = cleaned.split_whitespace().collect();
        match words.as_slice() {
            [] => self.word("{}"),
            [only] => self.word(&format!("{{{only}}}")),
            [first, middle @ .., last] => {
                self.word(&format!("{{{first}"));
                for w in middle {
                    self.word(w);
                }
                self.word(&format!("{last}}}"));
            }
        }
    }
}

fn write(
    tags: &[(String, String)],
    initial_comments: &[String],
    items: &[Item<'_>],
    final_setup: Option<&str>,
    result: &GameResult,
    first_move_number: u32,
    first_player_second: bool,
) -> String {
    let result_text = result_text(tags, result);
    let mut out = String::new();
    for (name, unknown) in SEVEN_TAGS {
        let value = match name {
            "Result" => result_text,
            _ => tags
                .iter()
                .find(|(n, _)| n == name)
                .map_or(unknown, |(_, v)| v.as_str()),
        };
        push_tag(&mut out, name, value);
    }
    for (name, value) in tags {
        if SEVEN_TAGS.iter().any(|(n, _)| n == name) || value.is_empty() {
            continue;
        }
        if let Some(name) = tag_name(name) {
            push_tag(&mut out, &name, value);
        }
    }
    out.push('\n');

    let mut w = Wrapper { out, line_len: 0 };
    for c in initial_comments {
        w.comment(c);
    }
    // Ply 0 is the first player's move of move `first_move_number`.
    let mut restate_number = true;
    for (ply, item) in (u64::from(first_player_second)..).zip(items) {
        let number = u64::from(first_move_number) + ply / 2;
        if let Some(fen) = item.setup {
            w.word(&format!("/FEN \"{}\"/", fen.replace(['"', '/'], "")));
            restate_number = true;
        }
        if ply % 2 == 0 {
            w.word(&format!("{number}."));
        } else if restate_number {
            // After a comment (or at the start) the second player's move gets its number again.
            w.word(&format!("{number}..."));
        }
        for part in item.mv.text.split_whitespace() {
            w.word(part);
        }
        restate_number = false;
        if let Some(c) = &item.mv.comment {
            w.comment(c);
            restate_number = true;
        }
    }
    if let Some(fen) = final_setup {
        w.word(&format!("/FEN \"{}\"/", fen.replace(['"', '/'], "")));
    }
    w.word(result_text);
    w.out.push_str("\n\n");
    w.out
}

/// The token for `result`: the `Result` tag's text when it says the same, otherwise the
/// standard form for the game type.
fn result_text<'t>(tags: &'t [(String, String)], result: &GameResult) -> &'t str {
    let tag = |name: &str| {
        tags.iter()
            .find(|(n, _)| n == name)
            .map(|(_, v)| v.as_str())
    };
    if let Some(text) = tag("Result") {
        let standard = ["1-0", "0-1", "1/2-1/2", "2-0", "0-2", "1-1", "0-0", "*"];
        if standard.contains(&text) && GameResult::from_token(text) == Some(*result) {
            return text;
        }
    }
    let game_type = tag("GameType")
        .and_then(|g| g.split(',').next())
        .map(str::trim);
    let international = matches!(game_type, Some("20") | Some("27"));
    match (result, international) {
        (GameResult::FirstPlayerWin, true) => "2-0",
        (GameResult::SecondPlayerWin, true) => "0-2",
        (GameResult::Draw, true) => "1-1",
        (r, _) => r.as_str(),
    }
}

/// A valid tag name (`[A-Z][A-Za-z0-9_]*`) made from `name`, or `None` if nothing is left.
fn tag_name(name: &str) -> Option<String> {
    let mut out: String = name
        .chars()
        .filter(|c| !c.is_whitespace())
        .map(|c| {
            if c.is_ascii_alphanumeric() || c == '_' {
                c
            } else {
                '_'
            }
        })
        .collect();
    let first = out.chars().next()?;
    if first.is_ascii_lowercase() {
        out.replace_range(..1, &first.to_ascii_uppercase().to_string());
    } else if !first.is_ascii_uppercase() {
        out.insert(0, 'X');
    }
    Some(out)
}

fn push_tag(out: &mut String, name: &str, value: &str) {
    out.push('[');
    out.push_str(name);
    out.push_str(" \"");
    for c in value.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            '\n' | '\r' | '\t' => out.push(' '),
            c => out.push(c),
        }
    }
    out.push_str("\"]\n");
}

/// A clock command for a comment, in the `h:mm:ss` format of the PDN 3.0 `clock` command:
/// `[%clock 0:01:23]`. Fractions of a second are dropped, as a clock display does; negative or
/// non-finite times give zero.
pub fn clock_comment(seconds: f64) -> String {
    let tenths = to_tenths(seconds);
    format!("[%clock {}]", hms(tenths / 10))
}

/// The same with tenths of a second, `[%clock 0:01:23.4]`, as chess tools write `%clk`; not in
/// the PDN 3.0 pattern, but [`parse_clock`] and common tools read it.
pub fn clock_comment_tenths(seconds: f64) -> String {
    let tenths = to_tenths(seconds);
    format!("[%clock {}.{}]", hms(tenths / 10), tenths % 10)
}

fn to_tenths(seconds: f64) -> u64 {
    if !seconds.is_finite() || seconds <= 0.0 {
        return 0;
    }
    // The small epsilon keeps 83.4 (stored as 83.39999...) at 834 tenths.
    (seconds * 10.0 + 1e-6).floor().min(u64::MAX as f64 / 2.0) as u64
}

fn hms(seconds: u64) -> String {
    format!(
        "{}:{:02}:{:02}",
        seconds / 3600,
        seconds / 60 % 60,
        seconds % 60
    )
}

/// The time of the first `[%clock ...]` or `[%clk ...]` command in a comment, in seconds:
/// `h:mm:ss` or `h:mm:ss.d`, optionally preceded by a side letter (`w`, `B`...).
pub fn parse_clock(comment: &str) -> Option<f64> {
    let start = comment
        .find("[%clock")
        .map(|i| i + 7)
        .or_else(|| comment.find("[%clk").map(|i| i + 5))?;
    let rest = comment[start..].trim_start();
    let rest = rest.strip_prefix(['w', 'W', 'b', 'B']).unwrap_or(rest);
    let end = rest
        .find(|c: char| !(c.is_ascii_digit() || c == ':' || c == '.'))
        .unwrap_or(rest.len());
    let mut parts = rest[..end].split(':');
    let (h, m, s) = (parts.next()?, parts.next()?, parts.next()?);
    if parts.next().is_some() || m.len() != 2 || h.is_empty() || h.len() > 6 {
        return None;
    }
    let (h, m): (u64, u64) = (h.parse().ok()?, m.parse().ok()?);
    let (whole, frac) = s.split_once('.').unwrap_or((s, ""));
    if whole.len() != 2 || m >= 60 {
        return None;
    }
    let secs: u64 = whole.parse().ok()?;
    let frac: f64 = match frac {
        "" => 0.0,
        f if f.bytes().all(|c| c.is_ascii_digit()) => format!("0.{f}").parse().ok()?,
        _ => return None,
    };
    if secs >= 60 {
        return None;
    }
    Some((h * 3600 + m * 60 + secs) as f64 + frac)
}

#[cfg(test)]
mod tests {
    use super::super::{read_games, ReadMode};
    use super::*;

    fn tags(pairs: &[(&str, &str)]) -> Vec<(String, String)> {
        pairs
            .iter()
            .map(|(n, v)| (n.to_string(), v.to_string()))
            .collect()
    }

    fn moves(texts: &[&str]) -> Vec<WrittenMove> {
        texts.iter().map(|t| WrittenMove::new(*t)).collect()
    }

    #[test]
    fn seven_tags_first_with_defaults_then_the_others() {
        let t = tags(&[
            ("GameType", "21"),
            ("White", "Tinsley"),
            ("Opening", ""),
            ("FEN", "B:W:B"),
        ]);
        let out = write_game(&t, &moves(&["11-15"]), &GameResult::Unknown, 1, false);
        let expected = "[Event \"?\"]\n[Site \"?\"]\n[Date \"????.??.??\"]\n[Round \"?\"]\n\
            [White \"Tinsley\"]\n[Black \"?\"]\n[Result \"*\"]\n[GameType \"21\"]\n[FEN \"B:W:B\"]\n\
            \n1. 11-15 *\n\n";
        assert_eq!(out, expected);
    }

    #[test]
    fn tag_values_are_escaped_and_names_made_valid() {
        let t = tags(&[
            ("Annotator", "say \"hi\" C:\\x\nnext"),
            ("my tag", "v"),
            ("1st", "w"),
        ]);
        let out = write_game(&t, &[], &GameResult::Unknown, 1, false);
        assert!(
            out.contains("[Annotator \"say \\\"hi\\\" C:\\\\x next\"]\n"),
            "{out}"
        );
        assert!(out.contains("[Mytag \"v\"]\n"), "{out}");
        assert!(out.contains("[X1st \"w\"]\n"), "{out}");
        let g = &read_games(&out, ReadMode::Strict).unwrap()[0];
        assert_eq!(g.tag("Annotator"), Some("say \"hi\" C:\\x next"));
    }

    #[test]
    fn move_numbers_for_either_first_player() {
        let m = moves(&["11-15", "23-19", "8-11", "22-17", "4-8"]);
        let out = write_game(&[], &m, &GameResult::Draw, 1, false);
        assert!(
            out.ends_with("\n1. 11-15 23-19 2. 8-11 22-17 3. 4-8 1/2-1/2\n\n"),
            "{out}"
        );
        let out = write_game(&[], &m, &GameResult::Draw, 7, true);
        assert!(
            out.ends_with("\n7... 11-15 8. 23-19 8-11 9. 22-17 4-8 1/2-1/2\n\n"),
            "{out}"
        );
    }

    #[test]
    fn comments_follow_their_move_and_the_number_is_restated() {
        let mut m = moves(&["11-15", "23-19", "8-11"]);
        m[0].comment = Some("the {Old} Faithful}".into());
        let out = write_game(&[], &m, &GameResult::FirstPlayerWin, 1, false);
        assert!(
            out.ends_with("\n1. 11-15 {the {Old Faithful} 1... 23-19 2. 8-11 1-0\n\n"),
            "{out}"
        );
        let g = &read_games(&out, ReadMode::Strict).unwrap()[0];
        assert_eq!(g.moves[0].comments_after, ["the {Old Faithful"]);
    }

    #[test]
    fn long_games_wrap_below_80_columns() {
        let texts: Vec<String> = (0..120)
            .map(|i| format!("{}x{}x{}", 10 + i % 40, 20, 31))
            .collect();
        let mut m: Vec<WrittenMove> = texts.iter().map(|t| WrittenMove::new(t.as_str())).collect();
        m[5].comment = Some("a long comment ".repeat(20));
        let out = write_game(&[], &m, &GameResult::SecondPlayerWin, 1, false);
        assert!(out.lines().all(|l| l.chars().count() < 80), "{out}");
        assert!(out.lines().count() > 10);
        let g = &read_games(&out, ReadMode::Strict).unwrap()[0];
        assert_eq!(g.moves.len(), 120);
        assert_eq!(g.moves[5].comments_after[0].split_whitespace().count(), 60);
    }

    #[test]
    fn result_text_follows_the_tag_or_the_game_type() {
        let m = moves(&["32-28"]);
        let intl = tags(&[("GameType", "20")]);
        let out = write_game(&intl, &m, &GameResult::Draw, 1, false);
        assert!(
            out.contains("[Result \"1-1\"]") && out.ends_with(" 1-1\n\n"),
            "{out}"
        );
        let kept = tags(&[("Result", "0-2")]);
        let out = write_game(&kept, &m, &GameResult::SecondPlayerWin, 1, false);
        assert!(
            out.contains("[Result \"0-2\"]") && out.ends_with(" 0-2\n\n"),
            "{out}"
        );
        // A tag that disagrees with the result (or is no result at all) is replaced.
        let wrong = tags(&[("Result", "4-6"), ("GameType", "21")]);
        let out = write_game(&wrong, &m, &GameResult::FirstPlayerWin, 1, false);
        assert!(
            out.contains("[Result \"1-0\"]") && out.ends_with(" 1-0\n\n"),
            "{out}"
        );
        let out = write_game(&[], &m, &GameResult::DoubleForfeit, 1, false);
        assert!(out.ends_with(" 0-0\n\n"), "{out}");
    }

    #[test]
    fn clock_comments() {
        assert_eq!(clock_comment(83.4), "[%clock 0:01:23]");
        assert_eq!(clock_comment_tenths(83.4), "[%clock 0:01:23.4]");
        assert_eq!(clock_comment(3723.0), "[%clock 1:02:03]");
        assert_eq!(clock_comment(-5.0), "[%clock 0:00:00]");
        assert_eq!(clock_comment(f64::NAN), "[%clock 0:00:00]");
        assert_eq!(parse_clock("[%clock 0:01:23]"), Some(83.0));
        assert_eq!(parse_clock(&clock_comment_tenths(83.4)), Some(83.4));
        assert_eq!(
            parse_clock("Optional text [%clock 0:49:11] more"),
            Some(2951.0)
        );
        assert_eq!(parse_clock("[%clk w0:00:10 B0:00:03]"), Some(10.0));
        assert_eq!(parse_clock("[%clk 1:55:21]"), Some(6921.0));
        assert_eq!(parse_clock("[%clock 0:1:23]"), None);
        assert_eq!(parse_clock("[%clock 0:01:73]"), None);
        assert_eq!(parse_clock("no clock"), None);
        assert_eq!(parse_clock("[%clock 99999999999999:00:00]"), None);
    }

    #[test]
    fn a_record_round_trips() {
        let text = "[Event \"Round trip\"]\n[GameType \"20\"]\n[Result \"2-0\"]\n\
            {before} 1. 32-28! {first} 19-23 $3 2. 28x19 14x23 /FEN \"W:W33:B12\"/ 3. 33-28 \
            {two} {comments} (3. 34-29 23x34) 23x32 2-0";
        let first = &read_games(text, ReadMode::Strict).unwrap()[0];
        let written = write_record(first);
        let again = &read_games(&written, ReadMode::Strict).unwrap()[0];
        assert_eq!(again.tag("Event"), Some("Round trip"));
        assert_eq!(again.tag("GameType"), Some("20"));
        assert_eq!(again.tag("Result"), Some("2-0"));
        let tokens = |g: &GameRecord| g.moves.iter().map(|m| m.token.clone()).collect::<Vec<_>>();
        assert_eq!(tokens(again), tokens(first));
        assert_eq!(again.initial_comments, ["before"]);
        assert_eq!(again.moves[0].strength.as_deref(), Some("!"));
        assert_eq!(again.moves[0].comments_after, ["first"]);
        assert_eq!(again.moves[1].nags, [3]);
        assert_eq!(again.moves[4].setup_before.as_deref(), Some("W:W33:B12"));
        assert_eq!(again.moves[4].comments_after, ["two comments"]);
        assert_eq!(
            (again.result, again.result_text.as_deref()),
            (Some(GameResult::FirstPlayerWin), Some("2-0"))
        );
        assert_eq!(write_record(again), written, "writing is stable");
    }
}
