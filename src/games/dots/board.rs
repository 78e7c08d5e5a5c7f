//! The board: dots, enclosures, captured points, scores and undo, under either rule set.
//!
//! Points live in a grid padded by one ring of "outside" cells, so a flood fill knows it has
//! reached the edge (and the region is open) without bounds checks. Every cell change goes
//! through [`Board::set`], which logs the old value, so [`Board::undo`] is exact and cheap.
//!
//! Capture checks start only from the new dot's neighbourhood (and, under the classic rules,
//! from the enemy dots placed since the mover's last move): a flood stops as soon as it reaches
//! the edge, so a move costs the size of the enclosures it closes, not the size of the board.

use serde::{Deserialize, Serialize};

/// The two players; red moves first.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Player {
    Red,
    Black,
}

impl Player {
    pub fn other(self) -> Player {
        match self {
            Player::Red => Player::Black,
            Player::Black => Player::Red,
        }
    }
    /// 0 for red, 1 for black (the replay interface's numbering).
    pub fn index(self) -> usize {
        self as usize
    }
    pub fn from_index(index: u64) -> Option<Player> {
        match index {
            0 => Some(Player::Red),
            1 => Some(Player::Black),
            _ => None,
        }
    }
}

/// Which rules the board applies.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize, Default)]
#[serde(rename_all = "lowercase")]
pub enum Rules {
    /// The original program: the group of enemy dots that cannot reach the edge through points
    /// not held by the mover is captured with everything in its region (territory); only the
    /// mover captures, so a dot played into an empty house lives until the house's owner moves
    /// again; whoever captures places another dot.
    Classic,
    /// The competitive rules (zagram, oppai): players alternate; an enclosure closed around no
    /// enemy dot captures nothing and stays open to both (an "empty house"); a dot played into an
    /// enemy house is captured at once unless it closes a chain that captures enemy dots; dots on
    /// the edge are never captured; a game ends when no point is free (house points are free: a
    /// dot may still go there), a player grounds, or resigns.
    #[default]
    Standard,
}

impl std::str::FromStr for Rules {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        match s {
            "classic" => Ok(Rules::Classic),
            "standard" => Ok(Rules::Standard),
            _ => Err(format!("unknown rules {s:?}: expected classic or standard")),
        }
    }
}

pub const MIN_SIDE: usize = 5;
pub const MAX_SIDE: usize = 64;
pub const DEFAULT_WIDTH: usize = 20;
pub const DEFAULT_HEIGHT: usize = 15;

// Cell bits. A dot keeps the colour of who placed it; "captured by" marks a point out of play
// (a captured dot, or an empty point inside an enclosure: territory).
const DOT: [u8; 2] = [1, 2];
const CAPTURED_BY: [u8; 2] = [4, 8];
/// Standard rules: inside an empty enclosure of this player.
const HOUSE_OF: [u8; 2] = [16, 32];
const OUTSIDE: u8 = 64;
const ANY_DOT: u8 = 1 | 2;
const ANY_CAPTURE: u8 = 4 | 8;
const ANY_HOUSE: u8 = 16 | 32;

/// What one point of the board shows.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Point {
    Empty,
    /// An empty point inside an empty enclosure of this player (standard rules).
    House(Player),
    Dot(Player),
    /// A dot of `owner` captured by the other player.
    CapturedDot(Player),
    /// An empty point inside an enclosure of this player, out of play.
    Territory(Player),
}

/// Why a dot cannot be placed.
#[derive(Clone, Copy, Debug, PartialEq, Eq, thiserror::Error)]
pub enum IllegalMove {
    #[error("({0}, {1}) is off the board")]
    OffBoard(i64, i64),
    #[error("({0}, {1}) is taken")]
    Taken(usize, usize),
    #[error("({0}, {1}) is inside an enclosure: out of play")]
    OutOfPlay(usize, usize),
    #[error("the game is over")]
    GameOver,
    #[error("it is {0:?}'s turn")]
    NotYourTurn(Player),
}

/// A drawn enclosure: the capturer's chain as segments between neighbouring dots (which may step
/// diagonally), and the move that closed it.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Enclosure {
    pub player: Player,
    /// Index into [`Board::history`] of the move that closed it.
    pub move_index: usize,
    pub segments: Vec<[(u8, u8); 2]>,
}

/// How a game ended.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "kind", content = "player", rename_all = "snake_case")]
pub enum End {
    /// No point is left to play: every point holds a dot or is out of play. Under the standard
    /// rules the points of empty houses are still free (a dot may go there), so they keep the game
    /// going; the classic rules mark no houses, so the same holds for them.
    Full,
    /// This player stopped: its dots not connected to the edge went to the other player.
    Grounded(Player),
    Resigned(Player),
}

/// One entry of the history: a dot, or an end of the game declared by a player.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum Action {
    Dot { x: u8, y: u8, player: Player },
    Ground { player: Player },
    Resign { player: Player },
}

#[derive(Clone, Debug)]
struct Entry {
    action: Action,
    /// Start of this entry's cell changes in `Board::changes`.
    changes_from: usize,
    captured_before: [u32; 2],
    to_move_before: Player,
    end_before: Option<End>,
    enclosures_before: usize,
}

/// What a move did.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct MoveOutcome {
    /// The captured counts changed.
    pub captured: bool,
    /// Enclosures closed by this move (either player's: a dot played into a house closes the
    /// house's owner's).
    pub enclosures: usize,
}

#[derive(Clone, Debug)]
pub struct Board {
    width: usize,
    height: usize,
    stride: usize,
    rules: Rules,
    cells: Vec<u8>,
    /// Enemy dots each player holds captured (red, black).
    captured: [u32; 2],
    to_move: Player,
    end: Option<End>,
    history: Vec<Entry>,
    changes: Vec<(u32, u8)>,
    enclosures: Vec<Enclosure>,
    /// Whether to trace chains for drawing (the AI's playouts switch it off).
    pub record_enclosures: bool,
    // Scratch space for floods: a cell is visited when its stamp equals `generation`.
    stamp: Vec<u32>,
    generation: u32,
    queue: Vec<usize>,
    region: Vec<usize>,
    /// First flood generation of the current capture check (see [`Board::flood_enclosed`]).
    check_base: u32,
    /// Regions captured during the current move (scratch, reset by every move).
    regions_taken: usize,
}

impl Board {
    pub fn new(width: usize, height: usize, rules: Rules) -> Result<Board, String> {
        if !(MIN_SIDE..=MAX_SIDE).contains(&width) || !(MIN_SIDE..=MAX_SIDE).contains(&height) {
            return Err(format!(
                "board size {width}x{height}: each side must be {MIN_SIDE} to {MAX_SIDE}"
            ));
        }
        let stride = width + 2;
        let mut cells = vec![0u8; stride * (height + 2)];
        for (i, cell) in cells.iter_mut().enumerate() {
            let (x, y) = (i % stride, i / stride);
            if x == 0 || y == 0 || x == width + 1 || y == height + 1 {
                *cell = OUTSIDE;
            }
        }
        let len = cells.len();
        Ok(Board {
            width,
            height,
            stride,
            rules,
            cells,
            captured: [0, 0],
            to_move: Player::Red,
            end: None,
            history: Vec::new(),
            changes: Vec::new(),
            enclosures: Vec::new(),
            record_enclosures: true,
            stamp: vec![0; len],
            generation: 0,
            queue: Vec::new(),
            region: Vec::new(),
            regions_taken: 0,
            check_base: 1,
        })
    }

    pub fn width(&self) -> usize {
        self.width
    }
    pub fn height(&self) -> usize {
        self.height
    }
    pub fn rules(&self) -> Rules {
        self.rules
    }
    pub fn to_move(&self) -> Player {
        self.to_move
    }
    pub fn end(&self) -> Option<End> {
        self.end
    }
    /// Enemy dots `player` holds captured (after a grounding: plus the grounded player's loose dots).
    pub fn captured(&self, player: Player) -> u32 {
        self.captured[player.index()]
    }
    pub fn enclosures(&self) -> &[Enclosure] {
        &self.enclosures
    }
    pub fn history(&self) -> impl DoubleEndedIterator<Item = Action> + ExactSizeIterator + '_ {
        self.history.iter().map(|entry| entry.action)
    }
    pub fn move_count(&self) -> usize {
        self.history.len()
    }

    /// Index of point (x, y) in the padded grid.
    #[inline]
    pub fn pos(&self, x: usize, y: usize) -> usize {
        (y + 1) * self.stride + x + 1
    }
    #[inline]
    pub fn xy(&self, pos: usize) -> (usize, usize) {
        (pos % self.stride - 1, pos / self.stride - 1)
    }
    /// Number of cells of the padded grid (positions range below it).
    pub fn padded_len(&self) -> usize {
        self.cells.len()
    }
    #[inline]
    fn neighbours4(&self, pos: usize) -> [usize; 4] {
        [pos - self.stride, pos + 1, pos + self.stride, pos - 1]
    }
    /// The eight neighbours in circular order: N, NE, E, SE, S, SW, W, NW.
    #[inline]
    pub fn neighbours8(&self, pos: usize) -> [usize; 8] {
        let s = self.stride;
        [
            pos - s,
            pos - s + 1,
            pos + 1,
            pos + s + 1,
            pos + s,
            pos + s - 1,
            pos - 1,
            pos - s - 1,
        ]
    }

    pub fn point(&self, x: usize, y: usize) -> Point {
        let c = self.cells[self.pos(x, y)];
        let dot = dot_of(c);
        match (dot, captured_by(c)) {
            (Some(p), None) => Point::Dot(p),
            (Some(p), Some(_)) => Point::CapturedDot(p),
            (None, Some(p)) => Point::Territory(p),
            (None, None) => match house_of(c) {
                Some(p) => Point::House(p),
                None => Point::Empty,
            },
        }
    }

    /// A dot may go here: on the board, no dot, not out of play (houses are playable).
    #[inline]
    pub fn is_free(&self, pos: usize) -> bool {
        self.cells[pos] & (ANY_DOT | ANY_CAPTURE | OUTSIDE) == 0
    }
    /// The house owner if `pos` is inside an empty enclosure (standard rules).
    #[inline]
    pub fn house_at(&self, pos: usize) -> Option<Player> {
        house_of(self.cells[pos])
    }
    #[inline]
    pub fn is_outside(&self, pos: usize) -> bool {
        self.cells[pos] & OUTSIDE != 0
    }
    /// A dot of `player` still in play.
    #[inline]
    pub fn is_live_dot(&self, pos: usize, player: Player) -> bool {
        self.cells[pos] & (ANY_DOT | ANY_CAPTURE) == DOT[player.index()]
    }
    #[inline]
    pub fn has_dot(&self, pos: usize) -> bool {
        self.cells[pos] & ANY_DOT != 0
    }

    /// Whether `pos` blocks a region of `player`'s enemy: under the classic rules every dot the
    /// player holds (its own and the ones it captured), under the standard rules only its dots
    /// in play.
    #[inline]
    fn is_wall(&self, pos: usize, player: Player) -> bool {
        let c = self.cells[pos];
        match self.rules {
            Rules::Standard => c & (ANY_DOT | ANY_CAPTURE) == DOT[player.index()],
            Rules::Classic => c & ANY_DOT != 0 && controller(c) == Some(player),
        }
    }

    /// Enemy dots a capture by `player` would take in this cell.
    #[inline]
    fn is_prey(&self, pos: usize, player: Player) -> bool {
        let c = self.cells[pos];
        match self.rules {
            Rules::Standard => c & (ANY_DOT | ANY_CAPTURE) == DOT[player.other().index()],
            Rules::Classic => c & ANY_DOT != 0 && controller(c) == Some(player.other()),
        }
    }

    fn set(&mut self, pos: usize, value: u8) {
        self.changes.push((pos as u32, self.cells[pos]));
        self.cells[pos] = value;
    }

    fn begin(&mut self, action: Action) {
        self.history.push(Entry {
            action,
            changes_from: self.changes.len(),
            captured_before: self.captured,
            to_move_before: self.to_move,
            end_before: self.end,
            enclosures_before: self.enclosures.len(),
        });
    }

    /// Place a dot of whoever's turn it is.
    pub fn play(&mut self, x: usize, y: usize) -> Result<MoveOutcome, IllegalMove> {
        self.play_as(x, y, self.to_move)
    }

    /// Place a dot of `player`, whoever's turn it is (record replays, differential tests).
    pub fn play_as(
        &mut self,
        x: usize,
        y: usize,
        player: Player,
    ) -> Result<MoveOutcome, IllegalMove> {
        if x >= self.width || y >= self.height {
            return Err(IllegalMove::OffBoard(x as i64, y as i64));
        }
        if self.end.is_some() {
            return Err(IllegalMove::GameOver);
        }
        let pos = self.pos(x, y);
        let c = self.cells[pos];
        if c & ANY_CAPTURE != 0 {
            return Err(IllegalMove::OutOfPlay(x, y));
        }
        if c & ANY_DOT != 0 {
            return Err(IllegalMove::Taken(x, y));
        }
        Ok(self.play_pos(pos, player))
    }

    /// Place a dot on a free point (the caller checked [`Board::is_free`]).
    pub fn play_pos(&mut self, pos: usize, player: Player) -> MoveOutcome {
        debug_assert!(self.is_free(pos) && self.end.is_none());
        let (x, y) = self.xy(pos);
        self.begin(Action::Dot {
            x: x as u8,
            y: y as u8,
            player,
        });
        let captured_before = self.captured;
        self.regions_taken = 0;
        let house = house_of(self.cells[pos]);
        self.set(pos, (self.cells[pos] & !ANY_HOUSE) | DOT[player.index()]);
        match self.rules {
            Rules::Classic => {
                self.capture_classic(pos, player);
                // The original program's rule: whoever captures places another dot.
                self.to_move = if self.regions_taken > 0 {
                    player
                } else {
                    player.other()
                };
            }
            Rules::Standard => {
                // Nothing of the enemy's is inside one's own house.
                if house != Some(player) {
                    self.capture_standard(pos, player);
                }
                if house == Some(player.other()) {
                    // The dot survives in the enemy house only if its own chain captured (that
                    // takes dots of the house's wall, so the house mark is stale); otherwise the
                    // house's owner takes the house with the dot in it, at once.
                    if self.regions_taken > 0 {
                        self.clear_house(pos, player.other());
                    } else {
                        self.capture_from_inside(pos, player.other());
                    }
                }
                self.to_move = player.other();
            }
        }
        // Standard rules: the game goes on while a house point is left, even if nothing else is
        // (a dot there is captured at once, or fills the mover's own house). Classic rules: a
        // dot in an empty enclosure is taken only when the owner next moves, so a dot played on
        // the last empty point, inside an enclosure, ends the game uncaptured; that is the
        // original program's behaviour and is kept.
        if !self.any_free_point() {
            self.end = Some(End::Full);
        }
        MoveOutcome {
            captured: self.captured != captured_before,
            enclosures: self.regions_taken,
        }
    }

    /// Whether a dot may still go somewhere ([`Board::is_free`]: houses included).
    fn any_free_point(&self) -> bool {
        (0..self.cells.len()).any(|pos| self.is_free(pos))
    }

    /// Standard rules: `player` has just played at `pos`. Find every region the new dot closed;
    /// capture the ones holding enemy dots, make the others houses. Returns the number of regions
    /// closed.
    fn capture_standard(&mut self, pos: usize, player: Player) -> usize {
        if self.input_points(pos, player) < 2 {
            return 0;
        }
        let mut closed = 0;
        self.begin_check();
        for start in self.neighbours4(pos) {
            if self.is_wall(start, player) || self.visited_in_check(start) {
                continue;
            }
            if !self.flood_enclosed(start, player) {
                continue;
            }
            closed += 1;
            let prey = self.region.iter().any(|&p| self.is_prey(p, player));
            let region = std::mem::take(&mut self.region);
            if prey {
                self.take_region(&region, player);
            } else {
                let house = HOUSE_OF[player.index()];
                for &p in &region {
                    let c = self.cells[p];
                    if c & (ANY_DOT | ANY_CAPTURE) == 0 && c & house == 0 {
                        self.set(p, (c & !ANY_HOUSE) | house);
                    }
                }
            }
            self.region = region;
        }
        closed
    }

    /// Classic rules: `player` has just played at `pos`. Any group of enemy dots that can no
    /// longer reach the edge is captured: the ones cut off by the new dot, and enemy dots placed
    /// since the player's previous move (which may sit in one of its empty houses).
    fn capture_classic(&mut self, pos: usize, player: Player) -> usize {
        let mut starts: Vec<usize> = Vec::new();
        if self.input_points(pos, player) >= 2 {
            starts.extend(self.neighbours4(pos));
        }
        for entry in self.history.iter().rev().skip(1) {
            match entry.action {
                Action::Dot { x, y, player: p } if p != player => {
                    starts.push(self.pos(x as usize, y as usize))
                }
                _ => break,
            }
        }
        let mut closed = 0;
        self.begin_check();
        for start in starts {
            if self.is_wall(start, player) || self.visited_in_check(start) {
                continue;
            }
            if !self.flood_enclosed(start, player) {
                continue;
            }
            if self.region.iter().any(|&p| self.is_prey(p, player)) {
                closed += 1;
                let region = std::mem::take(&mut self.region);
                self.take_region(&region, player);
                self.region = region;
            }
        }
        closed
    }

    /// Standard rules: a dot of the enemy of `owner` was played into `owner`'s house without
    /// closing a chain of its own: the house's owner captures the house with the dot in it.
    fn capture_from_inside(&mut self, pos: usize, owner: Player) {
        self.begin_check();
        if self.flood_enclosed(pos, owner) {
            let region = std::mem::take(&mut self.region);
            self.take_region(&region, owner);
            self.region = region;
        } else {
            // A house always has a closed wall; if it was broken the mark is stale: drop it.
            self.clear_house(pos, owner);
        }
    }

    /// Remove `owner`'s house marks connected to `pos`.
    fn clear_house(&mut self, pos: usize, owner: Player) {
        let mark = HOUSE_OF[owner.index()];
        let mut queue = vec![pos];
        let mut seen = vec![pos];
        while let Some(p) = queue.pop() {
            for n in self.neighbours4(p) {
                if self.cells[n] & mark != 0 && !seen.contains(&n) {
                    seen.push(n);
                    queue.push(n);
                }
            }
        }
        for p in seen {
            let c = self.cells[p];
            if c & mark != 0 {
                self.set(p, c & !mark);
            }
        }
    }

    fn next_generation(&mut self) {
        self.generation += 1;
    }

    /// Start a capture check: its floods get generations from here on.
    fn begin_check(&mut self) {
        // Near the end of the u32 range start the stamps afresh (a check uses far fewer).
        if self.generation > u32::MAX - 1_000_000 {
            self.stamp.iter_mut().for_each(|s| *s = 0);
            self.generation = 0;
        }
        self.next_generation();
        self.check_base = self.generation;
    }

    fn visited_in_check(&self, pos: usize) -> bool {
        self.stamp[pos] >= self.check_base
    }

    /// Flood from `start` through points that are not `player`'s walls. Returns whether the
    /// region is closed (never reaches the edge); then `self.region` holds its points.
    ///
    /// Closed regions of one check are disjoint, so meeting a point an earlier flood of the same
    /// check visited means joining a region already found open: this one is open too.
    fn flood_enclosed(&mut self, start: usize, player: Player) -> bool {
        self.next_generation();
        self.region.clear();
        self.queue.clear();
        self.stamp[start] = self.generation;
        self.queue.push(start);
        while let Some(p) = self.queue.pop() {
            if self.cells[p] & OUTSIDE != 0 {
                return false;
            }
            self.region.push(p);
            for n in self.neighbours4(p) {
                if self.stamp[n] == self.generation || self.is_wall(n, player) {
                    continue;
                }
                if self.stamp[n] >= self.check_base {
                    return false;
                }
                self.stamp[n] = self.generation;
                self.queue.push(n);
            }
        }
        true
    }

    /// False when a dot of `player` at `pos` surely captures nothing, known without playing it:
    /// under the standard rules a dot captures only by closing a chain, which needs two openings
    /// around it. (Under the classic rules any dot may capture enemy dots sitting in its
    /// enclosures, so the answer is always true.)
    pub fn may_capture_at(&self, pos: usize, player: Player) -> bool {
        match self.rules {
            Rules::Standard => self.input_points(pos, player) >= 2,
            Rules::Classic => true,
        }
    }

    /// How many separate openings the walls of `player` around `pos` leave (oppai's "input
    /// points"): fewer than two and the new dot cannot have closed anything.
    fn input_points(&self, pos: usize, player: Player) -> usize {
        let n = self.neighbours8(pos);
        // For each side (N, E, S, W) open, whether a wall precedes it going round clockwise.
        [0usize, 2, 4, 6]
            .iter()
            .filter(|&&i| {
                !self.is_wall(n[i], player)
                    && (self.is_wall(n[(i + 7) % 8], player)
                        || self.is_wall(n[(i + 6) % 8], player))
            })
            .count()
    }

    /// `player` captures a closed region: enemy dots become captured, its own dots captured
    /// earlier are freed, empty points become its territory.
    fn take_region(&mut self, region: &[usize], player: Player) {
        let (me, them) = (player.index(), player.other().index());
        for &p in region {
            let c = self.cells[p];
            let new = if c & ANY_DOT == 0 {
                (c & !(ANY_CAPTURE | ANY_HOUSE)) | CAPTURED_BY[me]
            } else if c & DOT[me] != 0 {
                if c & CAPTURED_BY[them] != 0 {
                    self.captured[them] -= 1;
                    c & !ANY_CAPTURE
                } else {
                    c
                }
            } else if c & CAPTURED_BY[me] == 0 {
                self.captured[me] += 1;
                (c & !ANY_CAPTURE) | CAPTURED_BY[me]
            } else {
                c
            };
            if new != c {
                self.set(p, new);
            }
        }
        self.regions_taken += 1;
        if self.record_enclosures {
            let segments = self.chain_segments(region, player);
            self.enclosures.push(Enclosure {
                player,
                move_index: self.history.len() - 1,
                segments,
            });
        }
    }

    /// The enclosing chain around a captured region, as segments between neighbouring wall dots
    /// (diagonal steps allowed) that have the region on exactly one side.
    fn chain_segments(&self, region: &[usize], player: Player) -> Vec<[(u8, u8); 2]> {
        // The cells of the region are captured by now, so walls are the player's dots outside it.
        // (Not the flood stamps: the capture loop that called us still relies on them.)
        let mut sorted = region.to_vec();
        sorted.sort_unstable();
        let in_region = |_: &Board, p: usize| sorted.binary_search(&p).is_ok();
        let wall = |b: &Board, p: usize| {
            !in_region(b, p) && b.cells[p] & ANY_DOT != 0 && controller(b.cells[p]) == Some(player)
        };
        let mut bounds: Vec<usize> = Vec::new();
        for &p in region {
            for n in self.neighbours4(p) {
                if wall(self, n) && !bounds.contains(&n) {
                    bounds.push(n);
                }
            }
        }
        let s = self.stride;
        let mut segments = Vec::new();
        for &a in &bounds {
            // Each pair once: look E, SE, S and SW.
            for b in [a + 1, a + s + 1, a + s, a + s - 1] {
                if !bounds.contains(&b) {
                    continue;
                }
                let (ax, ay) = (a % s, a / s);
                let (bx, by) = (b % s, b / s);
                let draw = if ax == bx || ay == by {
                    // Orthogonal: the two points on each side of the segment.
                    let (side1, side2) = if ay == by {
                        ([a - s, b - s], [a + s, b + s])
                    } else {
                        ([a - 1, b - 1], [a + 1, b + 1])
                    };
                    let one = side1.iter().any(|&p| in_region(self, p));
                    let two = side2.iter().any(|&p| in_region(self, p));
                    one != two
                } else {
                    // Diagonal: the two corner points it cuts between.
                    let c1 = by * s + ax;
                    let c2 = ay * s + bx;
                    let (r1, r2) = (in_region(self, c1), in_region(self, c2));
                    (r1 && !r2 && !wall(self, c2)) || (r2 && !r1 && !wall(self, c1))
                };
                if draw {
                    let (ax, ay) = self.xy(a);
                    let (bx, by) = self.xy(b);
                    segments.push([(ax as u8, ay as u8), (bx as u8, by as u8)]);
                }
            }
        }
        segments
    }

    /// `player` stops (standard rules): its dots not connected to the edge through its own
    /// points go to the other player, and the game ends.
    pub fn ground(&mut self, player: Player) -> Result<u32, IllegalMove> {
        if self.end.is_some() {
            return Err(IllegalMove::GameOver);
        }
        let loose = self.ungrounded_dots(player);
        self.begin(Action::Ground { player });
        self.captured[player.other().index()] += loose;
        self.end = Some(End::Grounded(player));
        Ok(loose)
    }

    pub fn resign(&mut self, player: Player) -> Result<(), IllegalMove> {
        if self.end.is_some() {
            return Err(IllegalMove::GameOver);
        }
        self.begin(Action::Resign { player });
        self.end = Some(End::Resigned(player));
        Ok(())
    }

    /// Dots of `player` in play whose group (connected through the points it holds) does not
    /// touch the edge of the board.
    pub fn ungrounded_dots(&mut self, player: Player) -> u32 {
        let holds = |c: u8| controller(c) == Some(player);
        self.next_generation();
        let mut loose = 0;
        for start in 0..self.cells.len() {
            if self.stamp[start] == self.generation || !self.is_live_dot(start, player) {
                continue;
            }
            let (mut dots, mut grounded) = (0, false);
            self.queue.clear();
            self.queue.push(start);
            self.stamp[start] = self.generation;
            while let Some(p) = self.queue.pop() {
                dots += self.is_live_dot(p, player) as u32;
                for n in self.neighbours4(p) {
                    if self.cells[n] & OUTSIDE != 0 {
                        grounded = true;
                    } else if self.stamp[n] != self.generation && holds(self.cells[n]) {
                        self.stamp[n] = self.generation;
                        self.queue.push(n);
                    }
                }
            }
            if !grounded {
                loose += dots;
            }
        }
        loose
    }

    /// Take back the last action. Returns it, or None at the start.
    pub fn undo(&mut self) -> Option<Action> {
        let entry = self.history.pop()?;
        while self.changes.len() > entry.changes_from {
            let (pos, old) = self.changes.pop().expect("change logged");
            self.cells[pos as usize] = old;
        }
        self.captured = entry.captured_before;
        self.to_move = entry.to_move_before;
        self.end = entry.end_before;
        self.enclosures.truncate(entry.enclosures_before);
        Some(entry.action)
    }

    /// Red's captured count minus black's: positive when red leads.
    pub fn score_margin(&self) -> i64 {
        self.captured[0] as i64 - self.captured[1] as i64
    }

    /// The leader by captured dots, or None on a draw.
    pub fn leader(&self) -> Option<Player> {
        match self.score_margin() {
            m if m > 0 => Some(Player::Red),
            m if m < 0 => Some(Player::Black),
            _ => None,
        }
    }

    /// Every point a dot may go on now, row by row.
    pub fn free_points(&self) -> Vec<(usize, usize)> {
        let mut out = Vec::new();
        for y in 0..self.height {
            for x in 0..self.width {
                if self.is_free(self.pos(x, y)) {
                    out.push((x, y));
                }
            }
        }
        out
    }
}

#[inline]
fn dot_of(c: u8) -> Option<Player> {
    match c & ANY_DOT {
        1 => Some(Player::Red),
        2 => Some(Player::Black),
        _ => None,
    }
}

#[inline]
fn captured_by(c: u8) -> Option<Player> {
    match c & ANY_CAPTURE {
        4 => Some(Player::Red),
        8 => Some(Player::Black),
        _ => None,
    }
}

#[inline]
fn house_of(c: u8) -> Option<Player> {
    match c & ANY_HOUSE {
        16 => Some(Player::Red),
        32 => Some(Player::Black),
        _ => None,
    }
}

/// Who holds a point: its capturer, else the owner of the dot on it.
#[inline]
fn controller(c: u8) -> Option<Player> {
    captured_by(c).or_else(|| dot_of(c))
}
