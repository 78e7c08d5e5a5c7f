//! Sokoban levels: XSB text in, XSB text out.
//!
//! Accepted symbols: `#` wall, `@` player, `+` player on goal, `$` box, `*` box on goal, `.` goal,
//! space/`-`/`_` floor, and the original program's `O` (box) and `Q` (box on goal). Rows may be
//! run-length encoded (`4#`, `|` separating rows). A collection holds many levels; the text
//! around the boards gives titles (`; 12`, a plain line, or `Title:`), authors and comments.

use thiserror::Error;

/// One level, as a grid of cells (row-major, `width * height`).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Level {
    pub title: String,
    pub author: Option<String>,
    pub comments: Vec<String>,
    pub width: usize,
    pub height: usize,
    pub walls: Vec<bool>,
    pub goals: Vec<bool>,
    pub boxes: Vec<bool>,
    pub player: usize,
}

/// What is wrong with a level; positions are 1-based lines and columns of the collection text.
#[derive(Debug, Error, PartialEq, Eq)]
#[error("line {line}, column {column}: {problem}")]
pub struct LevelError {
    pub line: usize,
    pub column: usize,
    pub problem: String,
}

fn error(line: usize, column: usize, problem: impl Into<String>) -> LevelError {
    LevelError { line, column, problem: problem.into() }
}

const BOARD_SYMBOLS: &str = "#@+$*.-_ OQpPbB|0123456789";

/// A board row: only board symbols and at least one wall (so `; 12` or `12` stay titles), or a
/// row starting with a wall (so a stray character in it is reported, not taken for a comment).
fn is_board_line(line: &str) -> bool {
    let trimmed = line.trim_end();
    trimmed.trim_start().starts_with('#')
        || (trimmed.contains('#') && trimmed.chars().all(|c| BOARD_SYMBOLS.contains(c)))
}

/// One expanded row: the cell symbols and, for each, its 1-based column in the text.
type Row = (usize, Vec<(char, usize)>);

/// Expands run-length counts (`3#` is `###`) and `|` row separators.
fn expand_line(line_number: usize, text: &str) -> Result<Vec<Row>, LevelError> {
    let mut rows = vec![(line_number, Vec::new())];
    let mut count: Option<(usize, usize)> = None;
    for (index, symbol) in text.trim_end().chars().enumerate() {
        let column = index + 1;
        if let Some(digit) = symbol.to_digit(10) {
            let (so_far, _) = count.unwrap_or((0, column));
            let value = so_far * 10 + digit as usize;
            if value > 1000 {
                return Err(error(line_number, column, "run-length count too large"));
            }
            count = Some((value, column));
            continue;
        }
        if symbol == '|' {
            rows.push((line_number, Vec::new()));
            continue;
        }
        let repeat = count.take().map_or(1, |(n, _)| n);
        rows.last_mut().unwrap().1.extend(std::iter::repeat((symbol, column)).take(repeat));
    }
    if let Some((_, column)) = count {
        return Err(error(line_number, column, "run-length count without a symbol after it"));
    }
    Ok(rows)
}

impl Level {
    /// Builds a level from board rows; `rows` carry the source positions for error messages.
    fn from_rows(title: String, rows: &[Row]) -> Result<Level, LevelError> {
        let height = rows.len();
        let width = rows.iter().map(|(_, cells)| cells.len()).max().unwrap_or(0);
        let size = width * height;
        let (mut walls, mut goals, mut boxes) = (vec![false; size], vec![false; size], vec![false; size]);
        let mut player: Option<(usize, usize, usize)> = None;
        let mut positions = vec![(rows[0].0, 1); size];
        for (y, (line, cells)) in rows.iter().enumerate() {
            for x in 0..width {
                positions[y * width + x] = (*line, cells.get(x).map_or(x + 1, |c| c.1));
            }
            for (x, &(symbol, column)) in cells.iter().enumerate() {
                let cell = y * width + x;
                match symbol {
                    '#' => walls[cell] = true,
                    '.' => goals[cell] = true,
                    '$' | 'O' | 'b' => boxes[cell] = true,
                    '*' | 'Q' | 'B' => (boxes[cell], goals[cell]) = (true, true),
                    '@' | '+' | 'p' | 'P' => {
                        if let Some((first_line, first_column, _)) = player {
                            return Err(error(*line, column, format!(
                                "a second player (the first is at line {first_line}, column {first_column})")));
                        }
                        player = Some((*line, column, cell));
                        goals[cell] = symbol == '+' || symbol == 'P';
                    }
                    ' ' | '-' | '_' => {}
                    other => return Err(error(*line, column, format!("unknown character {other:?}"))),
                }
            }
        }
        let Some((_, _, player)) = player else {
            return Err(error(rows[0].0, 1, "no player (@ or +) in this level"));
        };
        let level = Level { title, author: None, comments: Vec::new(), width, height, walls, goals, boxes, player };
        let (box_count, goal_count) = (level.boxes.iter().filter(|&&b| b).count(), level.goals.iter().filter(|&&g| g).count());
        if box_count != goal_count || box_count == 0 {
            return Err(error(rows[0].0, 1, format!("{box_count} boxes but {goal_count} goals")));
        }
        if let Some(open) = level.escape_cell() {
            let (line, column) = positions[open];
            return Err(error(line, column, "the level is not closed by walls here"));
        }
        Ok(level)
    }

    /// A cell the player could reach on the edge of the grid, if the walls leave a gap.
    fn escape_cell(&self) -> Option<usize> {
        let inside = self.reachable(self.player, |cell| self.walls[cell]);
        (0..self.width * self.height).find(|&cell| {
            let (x, y) = (cell % self.width, cell / self.width);
            inside[cell] && (x == 0 || y == 0 || x + 1 == self.width || y + 1 == self.height)
        })
    }

    /// Cells reachable from `start` through cells for which `blocked` is false.
    pub fn reachable(&self, start: usize, blocked: impl Fn(usize) -> bool) -> Vec<bool> {
        let mut seen = vec![false; self.width * self.height];
        let mut stack = vec![start];
        seen[start] = true;
        while let Some(cell) = stack.pop() {
            for direction in 0..4 {
                if let Some(next) = self.neighbour(cell, direction) {
                    if !seen[next] && !blocked(next) {
                        seen[next] = true;
                        stack.push(next);
                    }
                }
            }
        }
        seen
    }

    /// The cell one step from `cell` in `direction` (an index into [`super::DIRECTIONS`]).
    pub fn neighbour(&self, cell: usize, direction: usize) -> Option<usize> {
        let (dx, dy) = super::DIRECTIONS[direction];
        let x = (cell % self.width) as i32 + dx;
        let y = (cell / self.width) as i32 + dy;
        (x >= 0 && y >= 0 && (x as usize) < self.width && (y as usize) < self.height)
            .then(|| y as usize * self.width + x as usize)
    }

    /// True when every box stands on a goal.
    pub fn is_solved(&self) -> bool {
        self.boxes.iter().zip(&self.goals).all(|(&b, &g)| b == g || !b)
    }

    /// The board as XSB rows (trailing spaces trimmed), without title.
    pub fn to_xsb(&self) -> String {
        let mut text = String::new();
        for y in 0..self.height {
            let row: String = (0..self.width)
                .map(|x| {
                    let cell = y * self.width + x;
                    xsb_symbol(self.walls[cell], cell == self.player, self.boxes[cell], self.goals[cell], ' ')
                })
                .collect();
            text.push_str(row.trim_end());
            text.push('\n');
        }
        text
    }
}

/// Reads a collection: every board in `text`, with titles, authors and comments.
/// A level without a title is called by its number in the collection.
pub fn parse_collection(text: &str) -> Result<Vec<Level>, LevelError> {
    let mut levels: Vec<Level> = Vec::new();
    let mut preamble: Vec<String> = Vec::new();
    let mut pending_author: Option<String> = None;
    let mut pending_title: Option<String> = None;
    let mut board: Vec<Row> = Vec::new();
    let mut metadata_after_board = false;
    let lines: Vec<&str> = text.lines().collect();
    for index in 0..=lines.len() {
        let line = lines.get(index).copied();
        if let Some(line) = line.filter(|l| is_board_line(l)) {
            board.extend(expand_line(index + 1, line)?);
            continue;
        }
        if !board.is_empty() {
            let comment_title = preamble.iter().rev().map(|l| l.trim_start_matches(';').trim()).find(|l| !l.is_empty());
            let title = pending_title.take().or(comment_title.map(str::to_string)).unwrap_or_else(|| format!("{}", levels.len() + 1));
            let mut level = Level::from_rows(title, &board)?;
            level.author = pending_author.take();
            level.comments = std::mem::take(&mut preamble).into_iter().filter(|l| !l.trim().is_empty()).collect();
            levels.push(level);
            board.clear();
            metadata_after_board = true;
        }
        let Some(line) = line else { break };
        let trimmed = line.trim();
        let (key, value) = trimmed.split_once(':').map_or(("", ""), |(k, v)| (k.trim(), v.trim()));
        let is_title = key.eq_ignore_ascii_case("title");
        let is_author = key.eq_ignore_ascii_case("author");
        if (is_title || is_author) && metadata_after_board {
            // `.sok` style: metadata follows the board it describes.
            let previous = levels.last_mut().unwrap();
            if is_title { previous.title = value.to_string() } else { previous.author = Some(value.to_string()) }
        } else if is_title {
            pending_title = Some(value.to_string());
        } else if is_author {
            pending_author = Some(value.to_string());
        } else if trimmed.is_empty() {
            metadata_after_board = false;
        } else {
            metadata_after_board = false;
            preamble.push(line.to_string());
        }
    }
    Ok(levels)
}

/// Writes levels as an XSB collection (`; title` before each board) that [`parse_collection`] reads back.
pub fn write_collection(levels: &[Level]) -> String {
    let mut text = String::new();
    for level in levels {
        text.push_str(&format!("; {}\n", level.title));
        if let Some(author) = &level.author {
            text.push_str(&format!("Author: {author}\n"));
        }
        text.push_str(&level.to_xsb());
        text.push('\n');
    }
    text
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_titles_symbols_and_writes_back() {
        let text = "; A collection\n\n; 1\n####\n# .#\n#  ###\n#*@  #\n#  $ #\n#  ###\n####\n\nsecond\n#####\n#@OQ.#\n#####\nTitle: Two\nAuthor: Someone\n";
        let levels = parse_collection(text).unwrap();
        assert_eq!(levels.len(), 2);
        assert_eq!(levels[0].title, "1");
        assert_eq!(levels[1].title, "Two");
        assert_eq!(levels[1].author.as_deref(), Some("Someone"));
        assert_eq!(levels[1].to_xsb(), "#####\n#@$*.#\n#####\n");
        let again = parse_collection(&write_collection(&levels)).unwrap();
        assert_eq!(again[0].to_xsb(), levels[0].to_xsb());
        assert_eq!(again[1].boxes, levels[1].boxes);
    }

    #[test]
    fn run_length_rows_expand() {
        let levels = parse_collection("5#|#@$.#|5#\n").unwrap();
        assert_eq!(levels[0].to_xsb(), "#####\n#@$.#\n#####\n");
        let dashes = parse_collection("######\n#@-$.#\n#_####\n##\n").unwrap();
        assert_eq!(dashes[0].to_xsb(), "######\n#@ $.#\n# ####\n##\n");
    }

    #[test]
    fn errors_name_line_and_column() {
        let cases = [
            ("#####\n#$ .#\n#####\n", 1, "no player"),
            ("######\n#@$.@#\n######\n", 2, "second player"),
            ("######\n#@$$.#\n######\n", 1, "2 boxes but 1 goals"),
            ("#####\n#@$. \n#####\n", 2, "not closed"),
            ("#####\n#@$.x#\n#####\n", 2, "unknown character"),
        ];
        for (text, line, problem) in cases {
            let found = parse_collection(text).unwrap_err();
            assert_eq!(found.line, line, "{found}");
            assert!(found.problem.contains(problem), "{found}");
        }
        let second = parse_collection("######\n#@$.@#\n######\n").unwrap_err();
        assert_eq!(second.column, 5);
        let stray = parse_collection("; title\n######\n#@$.x#\n######\n").unwrap_err();
        assert_eq!((stray.line, stray.column), (3, 5), "{stray}");
    }
}

/// The XSB symbol of one cell: a wall, the player or a box (on a goal or not), a goal, or
/// `floor` (a space, or `-` where the floor must show).
pub fn xsb_symbol(wall: bool, player: bool, boxed: bool, goal: bool, floor: char) -> char {
    match (wall, player, boxed, goal) {
        (true, ..) => '#',
        (_, true, _, true) => '+',
        (_, true, _, false) => '@',
        (_, _, true, true) => '*',
        (_, _, true, false) => '$',
        (_, _, _, true) => '.',
        _ => floor,
    }
}
