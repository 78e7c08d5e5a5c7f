//! `boardwatch dots engine` and `boardwatch dots match`: the Dots engine behind the JSON line
//! protocol other Dots programs speak (oppai's command-line player reads the same), and matches
//! of boardwatch's engine against any program that speaks it, at equal time a move.
//!
//! The match is the referee: boardwatch's own board decides legality, captures and the end; the
//! opponent is told every dot with `PutPoint` and asked for its own with `Analyze`. Colours
//! alternate by game number (boardwatch is red, and so moves first, in even games).

use std::io::{BufRead, BufReader, Write};
use std::path::{Path, PathBuf};
use std::process::{Child, ChildStdin, Command, ExitCode, Stdio};
use std::sync::atomic::{AtomicU32, Ordering};
use std::sync::mpsc::{self, Receiver, RecvTimeoutError};
use std::sync::Mutex;
use std::time::{Duration, Instant};

use anyhow::{bail, Context};
use boardwatch::games::dots::board::{Board, Player, Rules};
use boardwatch::games::dots::protocol::{Constraint, Coords, EngineSession, Request, Response};
use boardwatch::games::dots::{mcts, sgf};
use boardwatch::publish::atomic::write_atomically;
use boardwatch::publish::eventlog::EventLog;
use clap::Args;
use rand::SeedableRng;
use rand_chacha::ChaCha8Rng;
use serde::Serialize;

#[derive(Args)]
pub struct EngineArgs {
    /// classic (the original program's rules) or standard (the competitive rules).
    #[arg(long, default_value = "standard")]
    rules: Rules,
}

#[derive(Args)]
pub struct MatchArgs {
    /// Board size, WIDTHxHEIGHT (20x20 and 39x32 are the usual tournament fields).
    #[arg(long, default_value = "20x20")]
    size: String,
    /// Games to play; colours alternate.
    #[arg(long, default_value_t = 2)]
    games: u32,
    /// Number of the first game (even numbers: boardwatch plays red), to continue a match.
    #[arg(long, default_value_t = 0)]
    first: u32,
    /// Thinking time per move for each side, in milliseconds.
    #[arg(long, default_value_t = 1000)]
    millis: u64,
    /// Games played at once (each side of a game thinks in turn, so one core per game).
    #[arg(long, default_value_t = 1)]
    jobs: u32,
    /// Folder for each game's SGF record, `results.jsonl` (one line a game, appended) and the
    /// opponent's diagnostics.
    #[arg(long)]
    records: Option<PathBuf>,
    /// The opponent's command line, after `--`, e.g. `-- oppai --threads-count 1`.
    #[arg(last = true, required = true, value_name = "OPPONENT")]
    opponent: Vec<String>,
}

/// Serve the protocol on stdin/stdout until stdin closes.
pub fn run_engine(args: EngineArgs) -> anyhow::Result<ExitCode> {
    let mut session = EngineSession::new(args.rules);
    let mut out = std::io::stdout().lock();
    let mut rng = ChaCha8Rng::from_entropy();
    for (i, line) in std::io::stdin().lock().lines().enumerate() {
        let line = line.context("reading stdin")?;
        if line.trim().is_empty() {
            continue;
        }
        let request: Request = serde_json::from_str(&line).with_context(|| format!("stdin line {}: not a protocol request", i + 1))?;
        let mut search = |board: &Board, constraint: Constraint| think(board, constraint, &mut rng).map(|c| (c.x, c.y));
        let response = session.handle(request, &mut search).with_context(|| format!("stdin line {}", i + 1))?;
        writeln!(out, "{}", serde_json::to_string(&response)?)?;
        out.flush()?;
    }
    Ok(ExitCode::SUCCESS)
}

/// boardwatch's move under a protocol constraint: a time in ms, or a share of level 4's iterations.
fn think(board: &Board, constraint: Constraint, rng: &mut ChaCha8Rng) -> Option<mcts::Choice> {
    let clock = Instant::now();
    match constraint {
        Constraint::Time(ms) => {
            let limit = thinking_time(ms);
            mcts::choose_move(board, u32::MAX, rng, &mut || clock.elapsed() >= limit)
        }
        Constraint::Complexity(c) => {
            let most = mcts::LEVELS[mcts::LEVELS.len() - 1].iterations as f64;
            mcts::choose_move(board, (most * c.clamp(0.0, 1.0)).max(1.0) as u32, rng, &mut || false)
        }
    }
}

/// Search for 95% of the time a move may take: the rest covers setting up and answering.
fn thinking_time(ms: u64) -> Duration {
    Duration::from_millis(ms * 95 / 100)
}

fn parse_size(size: &str) -> anyhow::Result<(u32, u32)> {
    let parsed = size.split_once(['x', 'X']).and_then(|(w, h)| Some((w.trim().parse().ok()?, h.trim().parse().ok()?)));
    let Some((w, h)) = parsed else { bail!("--size {size:?}: expected WIDTHxHEIGHT, e.g. 20x20") };
    Board::new(w as usize, h as usize, Rules::Standard).map_err(|e| anyhow::anyhow!("--size {size}: {e}"))?;
    Ok((w, h))
}

/// One game's outcome, as `results.jsonl` keeps it.
#[derive(Serialize, Clone)]
struct GameResult {
    game: u32,
    width: u32,
    height: u32,
    boardwatch: &'static str,
    /// win, draw or loss for boardwatch; `aborted` when the game could not be finished.
    result: &'static str,
    moves: usize,
    captured_by_boardwatch: u32,
    captured_by_opponent: u32,
    /// How the game ended: the board full, or why it stopped early.
    ended: String,
    mean_iterations: u64,
    seconds: f64,
}

pub fn run_match(args: MatchArgs) -> anyhow::Result<ExitCode> {
    let (width, height) = parse_size(&args.size)?;
    if args.games == 0 {
        bail!("--games 0: nothing to play");
    }
    if args.millis == 0 {
        bail!("--millis 0: each side needs some time a move");
    }
    if args.jobs == 0 {
        bail!("--jobs 0: at least one game at a time");
    }
    // One line a game, appended and synced; lines of an earlier run (`--first`) are kept.
    let results_log = match &args.records {
        Some(dir) => Some(Mutex::new(EventLog::open::<serde_json::Value>(&dir.join("results.jsonl")).map(|(log, _)| log)?)),
        None => None,
    };
    // Fail before the first game if the opponent cannot even start.
    let mut probe = Opponent::start(&args.opponent, None)?;
    probe.ask(&Request::Init { width, height }, Duration::from_secs(30)).context("the opponent did not answer Init")?;
    drop(probe);

    let progress = indicatif::ProgressBar::new(args.games as u64);
    progress.set_style(
        indicatif::ProgressStyle::with_template("{bar:30} {pos}/{len} games  {msg}  [{elapsed_precise}, about {eta} left]")
            .expect("template"),
    );
    let next = AtomicU32::new(0);
    let results: Mutex<Vec<GameResult>> = Mutex::new(Vec::new());
    let failure: Mutex<Option<anyhow::Error>> = Mutex::new(None);
    std::thread::scope(|scope| {
        for _ in 0..args.jobs.min(args.games) {
            scope.spawn(|| loop {
                let i = next.fetch_add(1, Ordering::SeqCst);
                if i >= args.games || failure.lock().expect("lock").is_some() {
                    break;
                }
                match play_game(&args, args.first + i, width, height) {
                    Ok(result) => {
                        let line = serde_json::to_string(&result).expect("serialisable");
                        // stdout is the match's report; the bar is on stderr and hides when not a terminal.
                        progress.suspend(|| println!("{line}"));
                        if let Some(log) = &results_log {
                            if let Err(e) = log.lock().expect("lock").append(&result) {
                                *failure.lock().expect("lock") = Some(e.into());
                            }
                        }
                        let mut all = results.lock().expect("lock");
                        all.push(result);
                        progress.set_message(tally(&all).line());
                        progress.inc(1);
                    }
                    Err(e) => *failure.lock().expect("lock") = Some(e.context(format!("game {}", args.first + i))),
                }
            });
        }
    });
    progress.finish_and_clear();
    if let Some(e) = failure.into_inner().expect("lock") {
        return Err(e);
    }
    let all = results.into_inner().expect("lock");
    let t = tally(&all);
    println!("{}x{} at {} ms a move against {}: {}", width, height, args.millis, args.opponent.join(" "), t.line());
    Ok(ExitCode::SUCCESS)
}

struct Tally {
    wins: u32,
    draws: u32,
    losses: u32,
    aborted: u32,
}

impl Tally {
    fn line(&self) -> String {
        let played = self.wins + self.draws + self.losses;
        let share = if played > 0 { (self.wins as f64 + 0.5 * self.draws as f64) / played as f64 * 100.0 } else { 0.0 };
        let aborted = if self.aborted > 0 { format!(", {} aborted", self.aborted) } else { String::new() };
        format!("boardwatch {} wins, {} draws, {} losses ({share:.1}%){aborted}", self.wins, self.draws, self.losses)
    }
}

fn tally(results: &[GameResult]) -> Tally {
    let count = |r: &str| results.iter().filter(|g| g.result == r).count() as u32;
    Tally { wins: count("win"), draws: count("draw"), losses: count("loss"), aborted: count("aborted") }
}

fn play_game(args: &MatchArgs, game: u32, width: u32, height: u32) -> anyhow::Result<GameResult> {
    let ours = if game % 2 == 0 { Player::Red } else { Player::Black };
    let stderr_log = args.records.as_ref().map(|dir| dir.join(format!("game-{game:04}.opponent.log")));
    let mut opponent = Opponent::start(&args.opponent, stderr_log.as_deref())?;
    let mut board = Board::new(width as usize, height as usize, Rules::Standard).map_err(anyhow::Error::msg)?;
    let clock = Instant::now();
    let mut thinking = Thinking { iterations: 0, moves: 0 };
    let outcome = referee(args, &mut opponent, &mut board, ours, &mut thinking);
    // The record is kept whatever happened, so a failed game can be looked at.
    save_record(args, game, &board, ours)?;
    let (result, ended) = outcome?;
    Ok(GameResult {
        game,
        width,
        height,
        boardwatch: if ours == Player::Red { "red" } else { "black" },
        result,
        moves: board.move_count(),
        captured_by_boardwatch: board.captured(ours),
        captured_by_opponent: board.captured(ours.other()),
        ended,
        mean_iterations: thinking.iterations / thinking.moves.max(1),
        seconds: clock.elapsed().as_secs_f64(),
    })
}

struct Thinking {
    iterations: u64,
    moves: u64,
}

/// Play one game to its end on `board`; boardwatch's result and how the game ended.
fn referee(
    args: &MatchArgs,
    opponent: &mut Opponent,
    board: &mut Board,
    ours: Player,
    thinking: &mut Thinking,
) -> anyhow::Result<(&'static str, String)> {
    // An answer later than this is a hung opponent, not a slow one.
    let patience = Duration::from_millis(args.millis * 5) + Duration::from_secs(10);
    let (width, height) = (board.width() as u32, board.height() as u32);
    match opponent.ask(&Request::Init { width, height }, patience)? {
        Response::Init => {}
        other => bail!("the opponent answered Init with {other:?}"),
    }
    let mut rng = ChaCha8Rng::from_entropy();
    let ended = loop {
        if let Some(end) = board.end() {
            break format!("{end:?}");
        }
        let mover = board.to_move();
        let (x, y) = if mover == ours {
            let Some(choice) = think(board, Constraint::Time(args.millis), &mut rng) else {
                break "boardwatch had no move".to_string();
            };
            thinking.iterations += choice.iterations as u64;
            thinking.moves += 1;
            (choice.x, choice.y)
        } else {
            let request = Request::Analyze { player: mover.into(), constraint: Constraint::Time(args.millis) };
            match opponent.ask(&request, patience)?.best_move() {
                Some(Coords { x, y }) => (x as usize, y as usize),
                None => break "the opponent had no move".to_string(),
            }
        };
        if let Err(e) = board.play_as(x, y, mover) {
            if mover == ours {
                bail!("boardwatch chose an illegal point ({x}, {y}): {e}");
            }
            return Ok(("win", format!("the opponent played ({x}, {y}): {e}; it forfeits")));
        }
        // The opponent hears every dot, its own too: the protocol's engines keep no turn.
        let put = Request::PutPoint { coords: Coords { x: x as u32, y: y as u32 }, player: mover.into() };
        match opponent.ask(&put, patience)? {
            Response::PutPoint { put: true } => {}
            Response::PutPoint { put: false } => {
                return Ok(("aborted", format!("the opponent refused ({x}, {y}) for {mover:?}, which boardwatch's rules allow")));
            }
            other => bail!("the opponent answered PutPoint with {other:?}"),
        }
    };
    let result = match board.leader() {
        Some(leader) if leader == ours => "win",
        Some(_) => "loss",
        None => "draw",
    };
    Ok((result, ended))
}

fn save_record(args: &MatchArgs, game: u32, board: &Board, ours: Player) -> anyhow::Result<()> {
    let Some(dir) = &args.records else { return Ok(()) };
    let opponent = args.opponent.first().map(|p| Path::new(p).file_name().map_or(p.clone(), |n| n.to_string_lossy().into_owned()));
    let opponent = opponent.unwrap_or_default();
    let (red, black) = if ours == Player::Red { ("boardwatch", opponent.as_str()) } else { (opponent.as_str(), "boardwatch") };
    let path = dir.join(format!("game-{game:04}.sgf"));
    write_atomically(&path, sgf::write(board, red, black).as_bytes()).with_context(|| path.display().to_string())
}

/// An engine process spoken to line by line; its answers come through a reader thread, so a
/// hung engine is a timeout, not a hung match.
struct Opponent {
    child: Child,
    stdin: ChildStdin,
    answers: Receiver<std::io::Result<String>>,
    command: String,
}

impl Opponent {
    fn start(command: &[String], stderr_log: Option<&Path>) -> anyhow::Result<Opponent> {
        let (program, args) = command.split_first().context("no opponent command after --")?;
        let stderr = match stderr_log {
            Some(path) => Stdio::from(std::fs::File::create(path).with_context(|| path.display().to_string())?),
            None => Stdio::null(),
        };
        let mut child = Command::new(program)
            .args(args)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(stderr)
            .spawn()
            .with_context(|| format!("starting the opponent {program:?}"))?;
        let stdin = child.stdin.take().expect("piped");
        let stdout = child.stdout.take().expect("piped");
        let (send, answers) = mpsc::channel();
        std::thread::spawn(move || {
            for line in BufReader::new(stdout).lines() {
                if send.send(line).is_err() {
                    break;
                }
            }
        });
        Ok(Opponent { child, stdin, answers, command: command.join(" ") })
    }

    fn ask(&mut self, request: &Request, patience: Duration) -> anyhow::Result<Response> {
        let text = serde_json::to_string(request).expect("serialisable");
        writeln!(self.stdin, "{text}")
            .and_then(|_| self.stdin.flush())
            .with_context(|| format!("{}: could not send {text} (has it stopped?)", self.command))?;
        let line = match self.answers.recv_timeout(patience) {
            Ok(line) => line.with_context(|| format!("{}: reading its answer to {text}", self.command))?,
            Err(RecvTimeoutError::Timeout) => bail!("{}: no answer to {text} within {:.0} s", self.command, patience.as_secs_f64()),
            Err(RecvTimeoutError::Disconnected) => bail!("{}: it stopped without answering {text}", self.command),
        };
        serde_json::from_str(&line).with_context(|| format!("{}: its answer to {text} is not a protocol response: {line:?}", self.command))
    }
}

impl Drop for Opponent {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}
