//! The round as the arbiter sets it on the hall page: event, site, date, round and the pairings
//! (`3. Ann Smith - Bob Jones`, one board a line, typed or pasted once per round). Kept in
//! `{state_dir}/round.json`, replaced atomically, so a restarted hall has them. Every board's
//! game is served with them as PDN tags (the round PDN that broadcast sites poll, each board's
//! `game.pdn`), in the order PDN 3.0 asks: Event, Site, Date, Round, White, Black, Result, then
//! Board and GameType.

use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

use crate::draughts::pdn::{read_archive, write_record, ReadMode};
use crate::publish::atomic::write_atomically;
use crate::publish::records::board_number;

/// File of the round in the hall's state folder.
pub const ROUND_FILE: &str = "round.json";

/// One line of the pairings: who plays on which board.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Pairing {
    /// As typed: a board's id on the hall page (`table3`) or its number (`3`).
    pub board: String,
    pub white: String,
    pub black: String,
}

/// The round's tags and pairings. Empty fields are left as the boards' daemons wrote them.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct Round {
    pub event: String,
    pub site: String,
    /// `YYYY.MM.DD`, as PDN writes dates (`??` for an unknown part).
    pub date: String,
    pub round: String,
    pub pairings: Vec<Pairing>,
}

/// What the page sends: the tags, and the pairings as the text of the textarea.
#[derive(Clone, Debug, Default, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct RoundForm {
    pub event: String,
    pub site: String,
    pub date: String,
    pub round: String,
    pub pairings: String,
}

/// Read the pairings' text: one `board. White - Black` a line (the dot may be left out; blank
/// lines and lines starting with `#` are skipped). Errors name the line.
pub fn parse_pairings(text: &str) -> Result<Vec<Pairing>, String> {
    let mut pairings: Vec<Pairing> = Vec::new();
    for (index, line) in text.lines().enumerate() {
        let number = index + 1;
        let line = line.trim();
        if line.is_empty() || line.starts_with('#') {
            continue;
        }
        let bad = |why: &str| format!("pairings line {number}: {line:?}: {why}; expected `board. White - Black`, e.g. `3. Ann Smith - Bob Jones`");
        let (board, players) = line.split_once(|c: char| c == '.' || c.is_whitespace()).ok_or_else(|| bad("no players"))?;
        let board = board.trim();
        if board.is_empty() || !board.chars().all(|c| c.is_ascii_alphanumeric() || c == '-' || c == '_') {
            return Err(bad("the board is a board's id or number (letters, digits, - and _)"));
        }
        // Names may hold hyphens (Smith-Jones): the players are split at " - ".
        let (white, black) = players.split_once(" - ").ok_or_else(|| bad("the players are written `White - Black`"))?;
        let (white, black) = (white.trim(), black.trim());
        if white.is_empty() || black.is_empty() {
            return Err(bad("a player's name is missing"));
        }
        for name in [white, black] {
            check_text("a player's name", name).map_err(|e| bad(&e))?;
        }
        if let Some(earlier) = pairings.iter().position(|p| p.board == board) {
            return Err(bad(&format!("board {board} is paired already (entry {})", earlier + 1)));
        }
        pairings.push(Pairing { board: board.to_string(), white: white.to_string(), black: black.to_string() });
    }
    Ok(pairings)
}

impl Round {
    /// The round a form describes; errors name the field or the pairings' line.
    pub fn from_form(form: RoundForm) -> Result<Round, String> {
        for (name, value) in [("event", &form.event), ("site", &form.site), ("round", &form.round), ("date", &form.date)] {
            if value.contains('\n') {
                return Err(format!("{name}: one line only"));
            }
            check_text(name, value.trim())?;
        }
        let date = form.date.trim();
        if !date.is_empty() && !valid_date(date) {
            return Err(format!("date: {date:?} is not a PDN date `YYYY.MM.DD` (`??` for an unknown part)"));
        }
        Ok(Round {
            event: form.event.trim().to_string(),
            site: form.site.trim().to_string(),
            date: date.to_string(),
            round: form.round.trim().to_string(),
            pairings: parse_pairings(&form.pairings)?,
        })
    }

    /// The tags a board's daemon is given for its games (sorted by name): Event, Site, Date and
    /// Round when set, White and Black from its pairing, and Board. None for an empty round:
    /// the boards keep their own.
    pub fn tags_for(&self, board: &str) -> Vec<(String, String)> {
        if *self == Round::default() {
            return Vec::new();
        }
        let mut tags: Vec<(String, String)> = [("Event", &self.event), ("Site", &self.site), ("Date", &self.date), ("Round", &self.round)]
            .into_iter()
            .filter(|(_, value)| !value.is_empty())
            .map(|(name, value)| (name.to_string(), value.clone()))
            .collect();
        if let Some(p) = self.pairing_for(board) {
            tags.push(("White".to_string(), p.white.clone()));
            tags.push(("Black".to_string(), p.black.clone()));
        }
        let number = board_number(board).map_or_else(|| board.to_string(), |n| n.to_string());
        tags.push(("Board".to_string(), number));
        tags.sort();
        tags
    }

    /// The pairings as the page's textarea shows them.
    pub fn pairings_text(&self) -> String {
        self.pairings.iter().map(|p| format!("{}. {} - {}\n", p.board, p.white, p.black)).collect()
    }

    /// The pairing of a board: by its id, else by its number.
    pub fn pairing_for(&self, board: &str) -> Option<&Pairing> {
        self.pairings.iter().find(|p| p.board == board).or_else(|| {
            let number = board_number(board)?;
            self.pairings.iter().find(|p| p.board.parse::<u32>().ok() == Some(number))
        })
    }

    /// A board's game (PDN, as its daemon published it) with the round's tags: Event, Site,
    /// Date and Round when the round sets them, White and Black from the board's pairing, and
    /// Board (its number, else its id). The moves, the result and GameType are the game's.
    /// A text that is not one readable game is returned as it came.
    pub fn tag_game(&self, board: &str, pdn: &str) -> String {
        let read = read_archive(pdn, ReadMode::Lenient);
        let [record] = read.games.as_slice() else { return pdn.to_string() };
        if !read.defects.is_empty() {
            return pdn.to_string();
        }
        let pairing = self.pairing_for(board);
        let mut tags = record.tags.clone();
        let mut set = |name: &str, value: &str| {
            if value.is_empty() {
                return;
            }
            match tags.iter_mut().find(|(n, _)| n == name) {
                Some(tag) => tag.1 = value.to_string(),
                None => tags.push((name.to_string(), value.to_string())),
            }
        };
        set("Event", &self.event);
        set("Site", &self.site);
        set("Date", &self.date);
        set("Round", &self.round);
        if let Some(p) = pairing {
            set("White", &p.white);
            set("Black", &p.black);
        }
        let number = board_number(board).map_or_else(|| board.to_string(), |n| n.to_string());
        set("Board", &number);
        // After the seven standard tags (the writer puts those first): Board, then GameType.
        let rank = |name: &str| match name {
            "Board" => 0,
            "GameType" => 1,
            _ => 2,
        };
        tags.sort_by_key(|(n, _)| rank(n));
        let mut record = record.clone();
        record.tags = tags;
        write_record(&record)
    }

    /// The round saved in `dir`, or an empty one (`round` from the configuration) when none is.
    pub fn load(dir: &Path, configured: Option<&str>) -> anyhow::Result<Round> {
        let path = dir.join(ROUND_FILE);
        match std::fs::read(&path) {
            Ok(bytes) => serde_json::from_slice(&bytes).map_err(|e| anyhow::anyhow!("{}: {e}", path.display())),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
                Ok(Round { round: configured.unwrap_or_default().to_string(), ..Round::default() })
            }
            Err(e) => Err(anyhow::anyhow!("{}: {e}", path.display())),
        }
    }

    /// Save in `dir`, replacing the file atomically.
    pub fn save(&self, dir: &Path) -> std::io::Result<PathBuf> {
        let path = dir.join(ROUND_FILE);
        let text = serde_json::to_vec_pretty(self).map_err(std::io::Error::other)?;
        write_atomically(&path, &text)?;
        Ok(path)
    }
}

/// Longest text of a tag the boards' daemons take.
const MAX_TAG_TEXT: usize = 200;

/// A tag's text as the boards take it: no control characters (a tab), not too long.
fn check_text(name: &str, text: &str) -> Result<(), String> {
    if text.chars().any(char::is_control) {
        return Err(format!("{name}: no tabs or other control characters"));
    }
    if text.chars().count() > MAX_TAG_TEXT {
        return Err(format!("{name}: at most {MAX_TAG_TEXT} characters"));
    }
    Ok(())
}

fn valid_date(date: &str) -> bool {
    let parts: Vec<&str> = date.split('.').collect();
    let part = |text: &str, len: usize, max: u32| {
        text.len() == len
            && (text.chars().all(|c| c == '?') || text.parse::<u32>().is_ok_and(|n| (len == 4 || n >= 1) && n <= max))
    };
    matches!(parts.as_slice(), [y, m, d] if part(y, 4, 9999) && part(m, 2, 12) && part(d, 2, 31))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::draughts::game::replay;
    use crate::draughts::pdn::read_games;
    use crate::draughts::Variant;

    const DAEMON_GAME: &str = "[Event \"?\"]\n[Site \"?\"]\n[Date \"????.??.??\"]\n[Round \"?\"]\n[White \"?\"]\n[Black \"?\"]\n[Result \"1-0\"]\n[GameType \"21\"]\n\n1. 11-15 23-19 2. 8-11 22-17 1-0\n\n";

    #[test]
    fn pairings_are_read_line_by_line_and_errors_name_the_line() {
        let pairings = parse_pairings("1. Ann Smith - Bob Jones\n\n# board 2 later\ntable3 Carla Smith-Jones - Dan\n").unwrap();
        assert_eq!(pairings.len(), 2);
        assert_eq!((pairings[0].board.as_str(), pairings[0].white.as_str(), pairings[0].black.as_str()), ("1", "Ann Smith", "Bob Jones"));
        assert_eq!((pairings[1].board.as_str(), pairings[1].white.as_str()), ("table3", "Carla Smith-Jones"));
        let err = parse_pairings("1. A - B\n2. Ann versus Bob\n").unwrap_err();
        assert!(err.starts_with("pairings line 2: \"2. Ann versus Bob\""), "{err}");
        assert!(parse_pairings("1. A - B\n1. C - D").unwrap_err().contains("line 2"));
        assert!(parse_pairings("1.  - B\n").unwrap_err().contains("missing"));
        // Quotes are escaped by the PDN writer.
        assert_eq!(parse_pairings("1. Ann \"Tiger\" Lee - B\n").unwrap()[0].white, "Ann \"Tiger\" Lee");
    }

    #[test]
    fn forms_are_checked_field_by_field() {
        let form = |date: &str| RoundForm { date: date.into(), pairings: "1. A - B".into(), ..RoundForm::default() };
        assert!(Round::from_form(form("2026.11.28")).is_ok());
        assert!(Round::from_form(form("2026.??.??")).is_ok());
        assert!(Round::from_form(form("28/11/2026")).unwrap_err().starts_with("date:"));
        assert!(Round::from_form(form("2026.13.01")).is_err());
        let two_lines = RoundForm { event: "Spring\nOpen".into(), ..RoundForm::default() };
        assert!(Round::from_form(two_lines).unwrap_err().starts_with("event:"));
    }

    #[test]
    fn a_game_gets_the_round_s_tags_in_the_standard_order_and_keeps_its_moves_and_result() {
        let round = Round {
            event: "Spring Open".into(),
            site: "Leeds".into(),
            date: "2026.11.28".into(),
            round: "3".into(),
            pairings: parse_pairings("2. Ann Smith - Bob Jones").unwrap(),
        };
        let tagged = round.tag_game("table2", DAEMON_GAME);
        let records = read_games(&tagged, ReadMode::Strict).unwrap_or_else(|e| panic!("{e}\n{tagged}"));
        let names: Vec<&str> = records[0].tags.iter().map(|(n, _)| n.as_str()).collect();
        assert_eq!(names, ["Event", "Site", "Date", "Round", "White", "Black", "Result", "Board", "GameType"], "{tagged}");
        let tag = |name| records[0].tag(name).unwrap().to_string();
        assert_eq!(
            [tag("Event"), tag("Site"), tag("Date"), tag("Round"), tag("White"), tag("Black"), tag("Result"), tag("Board")],
            ["Spring Open", "Leeds", "2026.11.28", "3", "Ann Smith", "Bob Jones", "1-0", "2"]
        );
        let game = replay(&records[0], Variant::Pool).unwrap();
        assert_eq!((game.variant, game.plies.len()), (Variant::English, 4));
        // A board without a pairing keeps its daemon's players; an empty round changes nothing
        // but the board number.
        let other = round.tag_game("table7", DAEMON_GAME);
        assert!(other.contains("[White \"?\"]") && other.contains("[Board \"7\"]"), "{other}");
        let plain = Round::default().tag_game("hall-a", DAEMON_GAME);
        assert!(plain.contains("[Event \"?\"]") && plain.contains("[Board \"hall-a\"]"), "{plain}");
        // Not one readable game: passed on as it came.
        assert_eq!(round.tag_game("2", "garbage {"), "garbage {");
    }

    #[test]
    fn a_round_is_saved_atomically_and_read_back() {
        let tmp = tempfile::Builder::new().prefix("bw-round-").tempdir().unwrap();
        let dir = tmp.path();
        assert_eq!(Round::load(&dir, Some("Round 1")).unwrap().round, "Round 1");
        let round = Round { event: "Open".into(), pairings: parse_pairings("1. A - B").unwrap(), ..Round::default() };
        round.save(&dir).unwrap();
        assert_eq!(Round::load(&dir, Some("Round 1")).unwrap(), round);
        std::fs::write(dir.join(ROUND_FILE), "{").unwrap();
        assert!(Round::load(&dir, None).unwrap_err().to_string().contains(ROUND_FILE));
    }
}
