//! The machine interface for differential tests against other engines: one game per line,
//! `{"width": W, "height": H, "moves": [[x, y, p], ...]}` (p = 0 red / 1 black; a move `[x, y]`
//! without p is played by whoever's turn it is after the last legal move, red first), answered
//! by one line `{"results": [{"legal", "player", "red", "black", "captured"}, ...]}`.

use serde::{Deserialize, Serialize};
use serde_json::Value;

use super::board::{Board, Player, Rules};

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct GameLine {
    width: usize,
    height: usize,
    moves: Vec<Vec<Value>>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub struct MoveResult {
    /// The dot was allowed (an illegal one changes nothing).
    pub legal: bool,
    /// Who played it: 0 red, 1 black.
    pub player: u8,
    /// Enemy dots red holds captured after it.
    pub red: u32,
    pub black: u32,
    /// The move changed those counts.
    pub captured: bool,
}

#[derive(Debug, Serialize)]
pub struct GameResults {
    pub results: Vec<MoveResult>,
}

/// Replay one line. The error says what is wrong with the line (the caller adds its number).
pub fn replay_line(line: &str, rules: Rules) -> Result<GameResults, String> {
    let game: GameLine =
        serde_json::from_str(line).map_err(|e| format!("not a game object: {e}"))?;
    let mut board = Board::new(game.width, game.height, rules)?;
    board.record_enclosures = false;
    let mut results = Vec::with_capacity(game.moves.len());
    for (i, mv) in game.moves.iter().enumerate() {
        let int = |v: &Value, what: &str| {
            v.as_i64()
                .ok_or_else(|| format!("move {i}: {what} {v} is not an integer"))
        };
        let (x, y) = match mv.as_slice() {
            [x, y] | [x, y, _] => (int(x, "x")?, int(y, "y")?),
            _ => {
                return Err(format!(
                    "move {i}: expected [x, y] or [x, y, p], got {} numbers",
                    mv.len()
                ))
            }
        };
        let player = match mv.get(2) {
            None => board.to_move(),
            Some(p) => {
                let p = int(p, "p")?;
                Player::from_index(p as u64)
                    .filter(|_| p >= 0)
                    .ok_or_else(|| format!("move {i}: player {p} is not 0 (red) or 1 (black)"))?
            }
        };
        let before = [board.captured(Player::Red), board.captured(Player::Black)];
        let legal = x >= 0 && y >= 0 && board.play_as(x as usize, y as usize, player).is_ok();
        let (red, black) = (board.captured(Player::Red), board.captured(Player::Black));
        results.push(MoveResult {
            legal,
            player: player.index() as u8,
            red,
            black,
            captured: [red, black] != before,
        });
    }
    Ok(GameResults { results })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_capture_and_its_counts() {
        let line = r#"{"width":7,"height":7,"moves":[[2,2,1],[2,1,0],[1,2,0],[3,2,0],[2,3,0],[2,2,1],[9,9]]}"#;
        let out = replay_line(line, Rules::Standard).unwrap();
        let r = &out.results;
        assert_eq!(r.len(), 7);
        assert!(r[..4].iter().all(|m| m.legal && !m.captured && m.red == 0));
        assert!(
            r[4].legal && r[4].captured && r[4].red == 1 && r[4].black == 0 && r[4].player == 0
        );
        assert!(
            !r[5].legal && !r[5].captured && r[5].red == 1,
            "a captured point is out of play"
        );
        // [9,9] without p: off the board, played by the player after red's last legal move.
        assert!(!r[6].legal && r[6].player == 1);
        let json = serde_json::to_string(&out).unwrap();
        assert!(
            json.starts_with(
                r#"{"results":[{"legal":true,"player":1,"red":0,"black":0,"captured":false}"#
            ),
            "{json}"
        );
    }

    #[test]
    fn default_player_follows_the_rules_turn() {
        // Classic: the capturer places again, so the move after a capture is red's again.
        let line =
            r#"{"width":7,"height":7,"moves":[[2,2,1],[2,1,0],[1,2,0],[3,2,0],[2,3,0],[5,5]]}"#;
        assert_eq!(
            replay_line(line, Rules::Classic).unwrap().results[5].player,
            0
        );
        assert_eq!(
            replay_line(line, Rules::Standard).unwrap().results[5].player,
            1
        );
    }

    #[test]
    fn malformed_lines_are_explained() {
        assert!(replay_line("{", Rules::Standard)
            .unwrap_err()
            .contains("not a game object"));
        assert!(
            replay_line(r#"{"width":3,"height":7,"moves":[]}"#, Rules::Standard)
                .unwrap_err()
                .contains("5 to 64")
        );
        assert!(
            replay_line(r#"{"width":7,"height":7,"moves":[[1]]}"#, Rules::Standard)
                .unwrap_err()
                .contains("move 0")
        );
        assert!(replay_line(
            r#"{"width":7,"height":7,"moves":[[1,1,2]]}"#,
            Rules::Standard
        )
        .unwrap_err()
        .contains("player 2"));
        assert!(replay_line(
            r#"{"width":7,"height":7,"moves":[[1,"a"]]}"#,
            Rules::Standard
        )
        .unwrap_err()
        .contains("not an integer"));
    }
}
