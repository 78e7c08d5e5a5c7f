//! External players: a program that speaks JSON lines on its standard input and output, so a
//! player can be written in any language (as chess engines speak UCI). This is the arena's only
//! I/O; the engine sees it as one more [`Player`].
//!
//! The protocol (one JSON object per line; `samples/cops/arena_player.py` is a complete player):
//! - the arena starts the program (`sh -c COMMAND`) and writes
//!   `{"type":"start","role":"thief"|"police","params":{...},"seed":S}`; the program may take
//!   as long as it likes to set up (it is not waiting for an answer);
//! - every k ticks: `{"type":"plan","t":T,"states":[STATE, ...]}`, the last k states oldest
//!   first, a STATE being `{"t","thief":[r,c],"police":[[r,c],...],"gates":[{"start","squares"}],
//!   "walls":[{"at","horizontal","squares"}]}`; the program answers, within the time limit,
//!   `{"t":T,"moves":[[M,...],...]}`: one list of k moves per piece (one list for the thief, one
//!   per policeman in order), each move one of "U", "D", "L", "R", "S" (stay). The thief may
//!   also answer a flat list `["U",...]`.
//! - when the game ends, standard input is closed; the program should exit.
//!
//! An answer for an earlier T is ignored (it came too late). A line that is not such an answer,
//! a program that exits, or one that stays silent costs that plan (the pieces stay k ticks);
//! the game goes on. Standard error is passed through, for the program's own diagnostics.

use std::io::{BufRead, BufReader, Write};
use std::process::{Child, ChildStdin, Command, Stdio};
use std::sync::mpsc;
use std::time::{Duration, Instant};

use serde::{Deserialize, Serialize};
use serde_json::json;

use super::params::Params;
use super::players::{Plan, Player, Role};
use super::rules::{Move, State};

pub struct External {
    command: String,
    role: Role,
    child: Child,
    stdin: Option<ChildStdin>,
    lines: mpsc::Receiver<String>,
}

#[derive(Serialize)]
struct PlanRequest<'a> {
    #[serde(rename = "type")]
    kind: &'static str,
    t: u32,
    states: &'a [State],
}

#[derive(Deserialize)]
struct Answer {
    t: u32,
    moves: Moves,
}

#[derive(Deserialize)]
#[serde(untagged)]
enum Moves {
    PerPiece(Vec<Vec<Move>>),
    Flat(Vec<Move>),
}

impl External {
    /// Starts the program and sends it the parameters.
    pub fn start(command: &str, role: Role, params: &Params, seed: u64) -> std::io::Result<External> {
        let mut child = Command::new("sh").arg("-c").arg(command).stdin(Stdio::piped()).stdout(Stdio::piped()).stderr(Stdio::inherit()).spawn()?;
        let stdout = child.stdout.take().expect("piped");
        let (tx, lines) = mpsc::channel();
        std::thread::Builder::new().name("arena-external-reader".into()).spawn(move || {
            for line in BufReader::new(stdout).lines() {
                let Ok(line) = line else { break };
                if tx.send(line).is_err() {
                    break;
                }
            }
        })?;
        let mut player = External { command: command.to_string(), role, stdin: child.stdin.take(), child, lines };
        // A program that dies at once is noticed at its first plan, not here.
        let _ = player.send(&json!({"type": "start", "role": role, "params": params, "seed": seed}));
        Ok(player)
    }

    fn send(&mut self, message: &impl Serialize) -> Result<(), String> {
        let stdin = self.stdin.as_mut().ok_or("the program's input is closed")?;
        let mut line = serde_json::to_string(message).map_err(|e| e.to_string())?;
        line.push('\n');
        stdin.write_all(line.as_bytes()).and_then(|()| stdin.flush()).map_err(|e| {
            self.stdin = None;
            format!("the program stopped reading ({e})")
        })
    }
}

impl Player for External {
    fn name(&self) -> String {
        format!("ext:{}", self.command)
    }

    fn plan(&mut self, states: &[State], deadline: Instant) -> Result<Plan, String> {
        let t = states.last().map(|s| s.t).ok_or("no state to plan from")?;
        // A struct, not `json!`, so that the fields come in the documented order.
        self.send(&PlanRequest { kind: "plan", t, states })?;
        // Wait a little past the deadline, so that a slow program is counted late, not failed.
        let give_up = deadline + Duration::from_millis(50);
        loop {
            let wait = give_up.saturating_duration_since(Instant::now());
            let line = match self.lines.recv_timeout(wait) {
                Ok(line) => line,
                Err(mpsc::RecvTimeoutError::Timeout) => return Err("no answer in time".into()),
                Err(mpsc::RecvTimeoutError::Disconnected) => return Err("the program has exited".into()),
            };
            if line.trim().is_empty() {
                continue;
            }
            let answer: Answer = serde_json::from_str(&line).map_err(|e| format!("not an answer ({e}): {}", shorten(&line)))?;
            if answer.t < t {
                continue; // the answer to an earlier request, too late
            }
            if answer.t > t {
                return Err(format!("an answer for tick {} when asked for tick {t}", answer.t));
            }
            return Ok(match answer.moves {
                Moves::PerPiece(plan) => plan,
                Moves::Flat(moves) if self.role == Role::Thief => vec![moves],
                Moves::Flat(_) => return Err("the police answer one move list per policeman".into()),
            });
        }
    }
}

fn shorten(line: &str) -> String {
    line.chars().take(80).collect()
}

impl Drop for External {
    fn drop(&mut self) {
        // Closing its input tells the program the game is over; give it a moment, then stop it.
        self.stdin = None;
        let until = Instant::now() + Duration::from_millis(200);
        while Instant::now() < until {
            if let Ok(Some(_)) = self.child.try_wait() {
                return;
            }
            std::thread::sleep(Duration::from_millis(5));
        }
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}
