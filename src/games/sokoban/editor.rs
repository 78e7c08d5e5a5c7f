//! Level editor model: a fixed 30x20 grid of cells edited one at a time, checked on save.
//!
//! Pure state only; the page that draws it and takes clicks comes separately.

use super::level::{xsb_symbol, Level};

pub const EDITOR_WIDTH: usize = 30;
pub const EDITOR_HEIGHT: usize = 20;

/// What can be placed on a cell. Goals combine with a box or the player on the same cell.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Piece {
    /// Empty floor: clears the cell.
    Floor,
    Wall,
    Goal,
    Box,
    Player,
}

#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Cell {
    pub wall: bool,
    pub goal: bool,
    pub boxed: bool,
    pub player: bool,
}

/// Why a level cannot be saved yet.
#[derive(Debug, thiserror::Error, PartialEq, Eq)]
pub enum SaveError {
    #[error("place exactly one player (there are {0})")]
    Players(usize),
    #[error("place at least one box, and as many goals as boxes ({boxes} boxes, {goals} goals)")]
    BoxesAndGoals { boxes: usize, goals: usize },
    #[error("every box is already on a goal")]
    AlreadySolved,
    #[error("the player can walk off the board: close it with walls")]
    NotClosed,
}

/// A level larger than the editor's grid.
#[derive(Debug, thiserror::Error, PartialEq, Eq)]
#[error("the level is {width}x{height}; the editor holds at most {EDITOR_WIDTH}x{EDITOR_HEIGHT}")]
pub struct TooLarge {
    pub width: usize,
    pub height: usize,
}

/// A bad symbol or size in rows given to [`Editor::from_rows`] (1-based row and column).
#[derive(Debug, thiserror::Error, PartialEq, Eq)]
#[error("row {row}, column {column}: {problem}")]
pub struct RowsError {
    pub row: usize,
    pub column: usize,
    pub problem: String,
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Editor {
    pub cells: Vec<Cell>,
}

impl Default for Editor {
    fn default() -> Self {
        Editor { cells: vec![Cell::default(); EDITOR_WIDTH * EDITOR_HEIGHT] }
    }
}

impl Editor {
    fn index(x: usize, y: usize) -> usize {
        y * EDITOR_WIDTH + x
    }

    /// Places `piece` on (x, y); a wall replaces everything, a box or the player keeps a goal.
    /// Placing the player moves it (there is only one).
    pub fn place(&mut self, x: usize, y: usize, piece: Piece) {
        if x >= EDITOR_WIDTH || y >= EDITOR_HEIGHT {
            return;
        }
        if piece == Piece::Player {
            self.cells.iter_mut().for_each(|c| c.player = false);
        }
        let cell = &mut self.cells[Self::index(x, y)];
        match piece {
            Piece::Floor => *cell = Cell::default(),
            Piece::Wall => *cell = Cell { wall: true, ..Cell::default() },
            Piece::Goal => (cell.wall, cell.goal) = (false, true),
            Piece::Box => (cell.wall, cell.player, cell.boxed) = (false, false, true),
            Piece::Player => (cell.wall, cell.boxed, cell.player) = (false, false, true),
        }
    }

    /// Removes what is on (x, y): the box or player first, then the goal or wall.
    pub fn remove(&mut self, x: usize, y: usize) {
        if x >= EDITOR_WIDTH || y >= EDITOR_HEIGHT {
            return;
        }
        let cell = &mut self.cells[Self::index(x, y)];
        if cell.boxed || cell.player {
            (cell.boxed, cell.player) = (false, false);
        } else {
            *cell = Cell::default();
        }
    }

    pub fn clear(&mut self) {
        *self = Editor::default();
    }

    /// Every empty cell becomes a wall (carve the level out of rock).
    pub fn fill_with_walls(&mut self) {
        for cell in &mut self.cells {
            if !cell.goal && !cell.boxed && !cell.player {
                cell.wall = true;
            }
        }
    }

    /// Shifts the whole grid by (dx, dy), wrapping around the edges.
    pub fn shift(&mut self, dx: i32, dy: i32) {
        let mut shifted = vec![Cell::default(); self.cells.len()];
        for y in 0..EDITOR_HEIGHT {
            for x in 0..EDITOR_WIDTH {
                let nx = (x as i32 + dx).rem_euclid(EDITOR_WIDTH as i32) as usize;
                let ny = (y as i32 + dy).rem_euclid(EDITOR_HEIGHT as i32) as usize;
                shifted[Self::index(nx, ny)] = self.cells[Self::index(x, y)];
            }
        }
        self.cells = shifted;
    }

    /// Loads a level into the top-left corner (cut to the grid if it is larger).
    pub fn load(level: &Level) -> Editor {
        let mut editor = Editor::default();
        for y in 0..level.height.min(EDITOR_HEIGHT) {
            for x in 0..level.width.min(EDITOR_WIDTH) {
                let i = y * level.width + x;
                editor.cells[Self::index(x, y)] =
                    Cell { wall: level.walls[i], goal: level.goals[i], boxed: level.boxes[i], player: level.player == i };
            }
        }
        editor
    }

    /// Checks the rules of a playable level and returns it normalised: floor the player cannot
    /// reach is dropped (boxes and goals there too) and the grid trimmed to the walls around it.
    pub fn save(&self, title: &str) -> Result<Level, SaveError> {
        let players = self.cells.iter().filter(|c| c.player).count();
        if players != 1 {
            return Err(SaveError::Players(players));
        }
        let boxes = self.cells.iter().filter(|c| c.boxed).count();
        let goals = self.cells.iter().filter(|c| c.goal).count();
        if boxes != goals || boxes == 0 {
            return Err(SaveError::BoxesAndGoals { boxes, goals });
        }
        if self.cells.iter().all(|c| !c.boxed || c.goal) {
            return Err(SaveError::AlreadySolved);
        }
        let level = self.normalise(title)?;
        let (b, g) = (level.boxes.iter().filter(|&&b| b).count(), level.goals.iter().filter(|&&g| g).count());
        if b != g || b == 0 {
            return Err(SaveError::BoxesAndGoals { boxes: b, goals: g });
        }
        if level.is_solved() {
            return Err(SaveError::AlreadySolved);
        }
        Ok(level)
    }

    /// The level normalised (unreachable floor and what stands on it dropped, trimmed to the
    /// walls around the player's region), without the box and goal checks of [`Editor::save`].
    pub fn normalise(&self, title: &str) -> Result<Level, SaveError> {
        let players: Vec<usize> = (0..self.cells.len()).filter(|&i| self.cells[i].player).collect();
        if players.len() != 1 {
            return Err(SaveError::Players(players.len()));
        }
        let whole = self.as_level(title, 0, 0, EDITOR_WIDTH, EDITOR_HEIGHT, players[0]);
        let inside = whole.reachable(players[0], |c| whole.walls[c]);
        let on_edge = |i: usize| i % EDITOR_WIDTH == 0 || i / EDITOR_WIDTH == 0 || i % EDITOR_WIDTH == EDITOR_WIDTH - 1 || i / EDITOR_WIDTH == EDITOR_HEIGHT - 1;
        if (0..inside.len()).any(|i| inside[i] && on_edge(i)) {
            return Err(SaveError::NotClosed);
        }
        // Keep the reachable region and the walls touching it (8-neighbourhood), nothing else.
        let keep = |i: usize| {
            let (x, y) = ((i % EDITOR_WIDTH) as i32, (i / EDITOR_WIDTH) as i32);
            inside[i]
                || (self.cells[i].wall
                    && (-1..=1).any(|dy| (-1..=1).any(|dx| {
                        let (nx, ny) = (x + dx, y + dy);
                        nx >= 0 && ny >= 0 && (nx as usize) < EDITOR_WIDTH && (ny as usize) < EDITOR_HEIGHT && inside[Self::index(nx as usize, ny as usize)]
                    })))
        };
        let kept: Vec<usize> = (0..self.cells.len()).filter(|&i| keep(i)).collect();
        let (left, right) = (kept.iter().map(|i| i % EDITOR_WIDTH).min().unwrap(), kept.iter().map(|i| i % EDITOR_WIDTH).max().unwrap());
        let (top, bottom) = (kept.iter().map(|i| i / EDITOR_WIDTH).min().unwrap(), kept.iter().map(|i| i / EDITOR_WIDTH).max().unwrap());
        let mut trimmed = Editor::default();
        for &i in &kept {
            trimmed.cells[i] = self.cells[i];
        }
        Ok(trimmed.as_level(title, left, top, right + 1 - left, bottom + 1 - top, players[0]))
    }

    /// Loads a level in the middle of the grid (symmetries and normalising show it there);
    /// refused when it does not fit.
    pub fn load_centred(level: &Level) -> Result<Editor, TooLarge> {
        if level.width > EDITOR_WIDTH || level.height > EDITOR_HEIGHT {
            return Err(TooLarge { width: level.width, height: level.height });
        }
        let mut editor = Editor::load(level);
        editor.shift(((EDITOR_WIDTH - level.width) / 2) as i32, ((EDITOR_HEIGHT - level.height) / 2) as i32);
        Ok(editor)
    }

    /// The grid as rows of XSB symbols (`#`, `@`, `+`, `$`, `*`, `.`, space), every row full width.
    pub fn to_rows(&self) -> Vec<String> {
        self.cells
            .chunks(EDITOR_WIDTH)
            .map(|row| {
                row.iter()
                    .map(|c| xsb_symbol(c.wall, c.player, c.boxed, c.goal, ' '))
                    .collect()
            })
            .collect()
    }

    /// Reads rows written by [`Editor::to_rows`] (shorter rows and fewer rows are padded with
    /// floor; `-`/`_` are floor too). Unlike a level, the grid may hold any number of players.
    pub fn from_rows(rows: &[String]) -> Result<Editor, RowsError> {
        if rows.len() > EDITOR_HEIGHT {
            return Err(RowsError { row: rows.len(), column: 0, problem: format!("the grid has {EDITOR_HEIGHT} rows") });
        }
        let mut editor = Editor::default();
        for (y, row) in rows.iter().enumerate() {
            for (x, symbol) in row.chars().enumerate() {
                let bad = |problem: String| RowsError { row: y + 1, column: x + 1, problem };
                if x >= EDITOR_WIDTH {
                    return Err(bad(format!("the grid has {EDITOR_WIDTH} columns")));
                }
                let (wall, player, boxed, goal) = match symbol {
                    '#' => (true, false, false, false),
                    '@' => (false, true, false, false),
                    '+' => (false, true, false, true),
                    '$' => (false, false, true, false),
                    '*' => (false, false, true, true),
                    '.' => (false, false, false, true),
                    ' ' | '-' | '_' => (false, false, false, false),
                    other => return Err(bad(format!("unknown symbol {other:?} (one of # @ + $ * . and space)"))),
                };
                editor.cells[Self::index(x, y)] = Cell { wall, goal, boxed, player };
            }
        }
        Ok(editor)
    }

    fn as_level(&self, title: &str, left: usize, top: usize, width: usize, height: usize, player: usize) -> Level {
        let cell = |i: usize| self.cells[Self::index(left + i % width, top + i / width)];
        let size = width * height;
        Level {
            title: title.to_string(),
            author: None,
            comments: Vec::new(),
            width,
            height,
            walls: (0..size).map(|i| cell(i).wall).collect(),
            goals: (0..size).map(|i| cell(i).goal).collect(),
            boxes: (0..size).map(|i| cell(i).boxed).collect(),
            player: (player / EDITOR_WIDTH - top) * width + (player % EDITOR_WIDTH - left),
        }
    }
}

/// The 8 symmetries of a level (identity, rotations, mirror images); `index` 0..8:
/// bit 0 mirrors left-right, bit 1 flips top-bottom, bit 2 transposes first. So 3 turns the
/// level half round, 5 turns it clockwise, 6 anticlockwise, 4 and 7 mirror it on a diagonal.
pub fn symmetry(level: &Level, index: usize) -> Level {
    let transpose = index & 4 != 0;
    let (width, height) = if transpose { (level.height, level.width) } else { (level.width, level.height) };
    let source = |x: usize, y: usize| {
        let x = if index & 1 != 0 { width - 1 - x } else { x };
        let y = if index & 2 != 0 { height - 1 - y } else { y };
        if transpose { x * level.width + y } else { y * level.width + x }
    };
    let map: Vec<usize> = (0..width * height).map(|i| source(i % width, i / width)).collect();
    Level {
        title: level.title.clone(),
        author: level.author.clone(),
        comments: level.comments.clone(),
        width,
        height,
        walls: map.iter().map(|&s| level.walls[s]).collect(),
        goals: map.iter().map(|&s| level.goals[s]).collect(),
        boxes: map.iter().map(|&s| level.boxes[s]).collect(),
        player: map.iter().position(|&s| s == level.player).unwrap(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::games::sokoban::level::parse_collection;

    #[test]
    fn save_checks_and_normalises() {
        let mut editor = Editor::default();
        assert_eq!(editor.save("t"), Err(SaveError::Players(0)));
        editor.place(3, 3, Piece::Player);
        editor.place(4, 3, Piece::Box);
        assert_eq!(editor.save("t"), Err(SaveError::BoxesAndGoals { boxes: 1, goals: 0 }));
        editor.place(4, 3, Piece::Goal);
        assert_eq!(editor.save("t"), Err(SaveError::AlreadySolved), "box and goal combine");
        editor.remove(4, 3);
        assert!(editor.cells[Editor::index(4, 3)].goal, "removing takes the box first");
        editor.remove(4, 3);
        editor.place(5, 3, Piece::Box);
        editor.place(3, 3, Piece::Goal);
        assert!(editor.cells[Editor::index(3, 3)].player, "player and goal combine");
        assert_eq!(editor.save("t"), Err(SaveError::NotClosed));
        editor.fill_with_walls();
        for x in 3..=7 {
            editor.remove(x, 3);
        }
        editor.place(3, 3, Piece::Player);
        editor.place(3, 3, Piece::Goal);
        editor.place(5, 3, Piece::Box);
        // A box and a goal walled in where the player cannot go: dropped on save.
        editor.place(10, 10, Piece::Box);
        editor.place(12, 12, Piece::Goal);
        let level = editor.save("t").unwrap();
        assert_eq!(level.to_xsb(), "#######\n#+ $  #\n#######\n");
        editor.clear();
        assert_eq!(editor, Editor::default());
    }

    #[test]
    fn shift_wraps_and_symmetries_round_trip() {
        let mut editor = Editor::default();
        editor.place(0, 0, Piece::Wall);
        editor.shift(-1, -1);
        assert!(editor.cells[Editor::index(EDITOR_WIDTH - 1, EDITOR_HEIGHT - 1)].wall);
        let level = parse_collection("#####\n#@$.#\n#   #\n#####\n").unwrap().remove(0);
        let rotated = symmetry(&level, 5);
        assert_eq!((rotated.width, rotated.height), (4, 5));
        assert_eq!(rotated.to_xsb(), "####\n# @#\n# $#\n# .#\n####\n", "5 turns clockwise");
        assert_eq!(symmetry(&level, 6).to_xsb(), "####\n#. #\n#$ #\n#@ #\n####\n", "6 turns anticlockwise");
        let all: std::collections::HashSet<String> = (0..8).map(|i| symmetry(&level, i).to_xsb()).collect();
        assert_eq!(all.len(), 8);
        assert_eq!(symmetry(&symmetry(&level, 1), 1), level);
        let saved = Editor::load(&level).save("x").unwrap();
        assert_eq!(saved.to_xsb(), level.to_xsb());
        // Centred, then read back from its rows, it saves to the same level.
        let centred = Editor::load_centred(&rotated).unwrap();
        assert!(!centred.cells[0].wall, "not in the corner");
        let rows = centred.to_rows();
        assert_eq!(rows.len(), EDITOR_HEIGHT);
        assert_eq!(Editor::from_rows(&rows).unwrap(), centred);
        assert_eq!(Editor::from_rows(&rows).unwrap().save("x").unwrap().to_xsb(), rotated.to_xsb());
        let wide = Level { width: 31, ..level.clone() };
        assert_eq!(Editor::load_centred(&wide), Err(TooLarge { width: 31, height: 4 }));
        let bad = Editor::from_rows(&["#x".to_string()]).unwrap_err();
        assert_eq!((bad.row, bad.column), (1, 2));
        assert!(Editor::from_rows(&["#".repeat(31)]).is_err());
    }

    #[test]
    fn a_level_solved_after_normalising_is_refused() {
        // The stray box off a goal is walled off: what remains is already solved.
        let mut editor = Editor::default();
        for (y, row) in ["#####", "#@*.#", "#####", "", "#####", "#$###", "#####"].iter().enumerate() {
            for (x, symbol) in row.chars().enumerate() {
                match symbol {
                    '#' => editor.place(x, y, Piece::Wall),
                    '@' => editor.place(x, y, Piece::Player),
                    '*' => { editor.place(x, y, Piece::Box); editor.place(x, y, Piece::Goal) }
                    '.' => editor.place(x, y, Piece::Goal),
                    '$' => editor.place(x, y, Piece::Box),
                    _ => {}
                }
            }
        }
        assert_eq!(editor.save("t"), Err(SaveError::BoxesAndGoals { boxes: 1, goals: 2 }));
        editor.remove(3, 1);
        editor.place(2, 5, Piece::Goal);
        assert_eq!(editor.save("t"), Err(SaveError::AlreadySolved));
        assert_eq!(editor.normalise("t").unwrap().to_xsb(), "#####\n#@* #\n#####\n");
    }
}
