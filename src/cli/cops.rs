//! `boardwatch cops`: solve a map, play it in the terminal, or run matches between computer
//! players. The engine is `boardwatch::games::cops`; this module only reads files and talks to
//! the terminal.

mod arena;

use std::io::{BufRead, Write};
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::time::Instant;

use anyhow::{bail, Context};
use boardwatch::games::cops::record::{play_match_game, Ai, RecordLine};
use boardwatch::games::cops::solver::{solve, Solution, DEFAULT_MAX_STATES};
use boardwatch::games::cops::{Game, Map, Mode, Piece, Team, MOVE_LIMIT};
use clap::{Args, Subcommand};
use rand::SeedableRng;
use rand_chacha::ChaCha8Rng;
use serde::Serialize;

#[derive(Subcommand)]
pub enum CopsCommand {
    /// Who wins each mode from the start under perfect play, and in how many moves.
    Solve(SolveArgs),
    /// Play a map in the terminal against a computer player.
    Play(PlayArgs),
    /// Games between two computer players, both modes: win rates and mean game length.
    Match(MatchArgs),
    /// The moving-walls arena (the advanced game): a tournament between two planners, both roles.
    Arena(arena::ArenaArgs),
}

#[derive(Args)]
pub struct SolveArgs {
    /// Map file: rows of digits, 0 road, 1 building, 2 policeman 1, 3 thief, 4 policeman 2.
    map: PathBuf,
    /// One JSON object: {"police_mode": {"winner", "moves"}, "thief_mode": {...}, "seconds"}.
    #[arg(long)]
    json: bool,
    /// Refuse maps with more states than this (memory is about 0.42 bytes per state).
    #[arg(long, default_value_t = DEFAULT_MAX_STATES)]
    max_states: u64,
}

#[derive(Args)]
pub struct PlayArgs {
    map: PathBuf,
    /// The team you play: police (you move both policemen) or thief.
    #[arg(long, default_value = "police")]
    mode: Mode,
    /// The computer player: classic (the original program's) or perfect.
    #[arg(long, default_value = "classic")]
    ai: Ai,
    /// Random seed of the classic player's choices.
    #[arg(long, default_value_t = 0)]
    seed: u64,
    /// Write the game as JSON lines to this file.
    #[arg(long)]
    record: Option<PathBuf>,
}

#[derive(Args)]
pub struct MatchArgs {
    map: PathBuf,
    #[arg(long, default_value = "classic")]
    police: Ai,
    #[arg(long, default_value = "perfect")]
    thief: Ai,
    /// Games per mode.
    #[arg(long, default_value_t = 100)]
    games: u32,
    /// Game i of each mode uses seed S + i.
    #[arg(long, default_value_t = 0)]
    seed: u64,
    /// Write every game as JSON lines to this file.
    #[arg(long)]
    records: Option<PathBuf>,
    /// One JSON object per mode instead of text.
    #[arg(long)]
    json: bool,
}

pub fn run(command: CopsCommand) -> anyhow::Result<ExitCode> {
    match command {
        CopsCommand::Solve(args) => run_solve(args),
        CopsCommand::Play(args) => run_play(args),
        CopsCommand::Match(args) => run_match(args),
        CopsCommand::Arena(args) => arena::run(args),
    }
}

fn load_map(path: &Path) -> anyhow::Result<Map> {
    let text = std::fs::read_to_string(path).with_context(|| format!("reading the map {}", path.display()))?;
    Map::parse(&text).with_context(|| format!("map {}", path.display()))
}

fn solve_map(map: &Map, path: &Path, max_states: u64) -> anyhow::Result<Solution> {
    solve(map, max_states).with_context(|| format!("solving the map {}", path.display()))
}

#[derive(Serialize)]
struct ModeAnswer {
    winner: Team,
    moves: Option<u32>,
}

#[derive(Serialize)]
struct SolveReport {
    police_mode: ModeAnswer,
    thief_mode: ModeAnswer,
    seconds: f64,
}

fn run_solve(args: SolveArgs) -> anyhow::Result<ExitCode> {
    let map = load_map(&args.map)?;
    let clock = Instant::now();
    let solution = solve_map(&map, &args.map, args.max_states)?;
    let seconds = clock.elapsed().as_secs_f64();
    let answer = |mode: Mode| {
        let moves = solution.moves_to_capture(&map.start, mode.first_piece()).filter(|&m| m <= MOVE_LIMIT);
        ModeAnswer { winner: if moves.is_some() { Team::Police } else { Team::Thief }, moves }
    };
    let report = SolveReport { police_mode: answer(Mode::Police), thief_mode: answer(Mode::Thief), seconds };
    if args.json {
        println!("{}", serde_json::to_string(&report)?);
    } else {
        for (name, mode) in [("Police Team mode", &report.police_mode), ("Thief Team mode", &report.thief_mode)] {
            match mode.moves {
                Some(moves) => println!("{name}: the police win, capture after {moves} moves"),
                None => println!("{name}: the thief wins (survives {MOVE_LIMIT} moves)"),
            }
        }
        println!("solved {} road squares in {seconds:.3} s", map.road_count());
    }
    Ok(ExitCode::SUCCESS)
}

/// The board as text: `#` building, `.` road, `1`/`2` policemen, `T` thief.
fn draw(map: &Map, game: &Game) -> String {
    let mut text = String::new();
    for row in 0..map.height {
        for col in 0..map.width {
            let square = map.square(row, col);
            text.push(match square {
                s if s == game.positions.thief => 'T',
                s if s == game.positions.police1 => '1',
                s if s == game.positions.police2 => '2',
                s if map.is_road(s) => '.',
                _ => '#',
            });
        }
        text.push('\n');
    }
    text
}

fn run_play(args: PlayArgs) -> anyhow::Result<ExitCode> {
    let map = load_map(&args.map)?;
    let solution = match args.ai {
        Ai::Perfect => Some(solve_map(&map, &args.map, DEFAULT_MAX_STATES)?),
        Ai::Classic => None,
    };
    let human = match args.mode {
        Mode::Police => Team::Police,
        Mode::Thief => Team::Thief,
    };
    let mut rng = ChaCha8Rng::seed_from_u64(args.seed);
    let mut game = Game::new(&map, args.mode);
    let ai_name = format!("{:?}", args.ai).to_lowercase();
    let (police, thief) = if human == Team::Police { ("human", ai_name.as_str()) } else { (ai_name.as_str(), "human") };
    let mut record = vec![RecordLine::start(&map, args.mode, police, thief, args.seed)];
    let stdin = std::io::stdin();
    let mut lines = stdin.lock().lines();
    while game.outcome.is_none() {
        let piece = game.to_move;
        let from = game.positions.of(piece);
        let step = if piece.team() == human {
            print!("{}move {} of {MOVE_LIMIT}; {} to move (w up, s down, a left, d right, . stay): ", draw(&map, &game), game.moves + 1, piece_name(piece));
            std::io::stdout().flush()?;
            let Some(line) = lines.next() else { bail!("input ended before the game did") };
            match read_step(&map, &game, line?.trim()) {
                Ok(step) => step,
                Err(message) => {
                    println!("{message}");
                    continue;
                }
            }
        } else {
            args.ai.choose(&map, solution.as_ref(), &game.positions, piece, &mut rng)
        };
        if let Err(e) = game.play(&map, step) {
            println!("{e}");
            continue;
        }
        record.push(RecordLine::moved(&map, &game, piece, from));
    }
    let outcome = game.outcome.expect("the loop ends with an outcome");
    record.push(RecordLine::end(&outcome));
    print!("{}", draw(&map, &game));
    match outcome.winner {
        Team::Police => println!("The police win: the thief is caught after {} moves.", outcome.moves),
        Team::Thief => println!("The thief wins: {MOVE_LIMIT} moves without a capture."),
    }
    if let Some(path) = &args.record {
        write_records(path, &record)?;
    }
    Ok(ExitCode::SUCCESS)
}

fn piece_name(piece: Piece) -> &'static str {
    match piece {
        Piece::Police1 => "policeman 1",
        Piece::Police2 => "policeman 2",
        Piece::Thief => "the thief",
    }
}

/// A typed direction as a step of the piece to move (`None`: stay).
fn read_step(map: &Map, game: &Game, typed: &str) -> Result<Option<u16>, String> {
    let (row, col) = map.row_column(game.positions.of(game.to_move));
    let target = match typed {
        "w" | "up" if row > 0 => (row - 1, col),
        "s" | "down" if row + 1 < map.height => (row + 1, col),
        "a" | "left" if col > 0 => (row, col - 1),
        "d" | "right" if col + 1 < map.width => (row, col + 1),
        "." | "stay" => return Ok(None),
        "w" | "up" | "s" | "down" | "a" | "left" | "d" | "right" => return Err("that is the edge of the map".into()),
        other => return Err(format!("{other:?}: type w, a, s, d or .")),
    };
    Ok(Some(map.square(target.0, target.1)))
}

fn write_records(path: &Path, lines: &[RecordLine]) -> anyhow::Result<()> {
    let mut text = String::new();
    for line in lines {
        text.push_str(&serde_json::to_string(line)?);
        text.push('\n');
    }
    std::fs::write(path, text).with_context(|| format!("writing the record {}", path.display()))
}

#[derive(Serialize)]
struct MatchReport {
    mode: Mode,
    police: Ai,
    thief: Ai,
    games: u32,
    police_wins: u32,
    thief_wins: u32,
    mean_moves: f64,
}

fn run_match(args: MatchArgs) -> anyhow::Result<ExitCode> {
    if args.games == 0 {
        bail!("--games must be at least 1");
    }
    let map = load_map(&args.map)?;
    let solution = if args.police == Ai::Perfect || args.thief == Ai::Perfect {
        Some(solve_map(&map, &args.map, DEFAULT_MAX_STATES)?)
    } else {
        None
    };
    let mut all_records = Vec::new();
    for mode in [Mode::Police, Mode::Thief] {
        let mut report = MatchReport { mode, police: args.police, thief: args.thief, games: args.games, police_wins: 0, thief_wins: 0, mean_moves: 0.0 };
        let mut total_moves = 0u64;
        for i in 0..args.games {
            let (outcome, record) = play_match_game(&map, solution.as_ref(), mode, args.police, args.thief, args.seed + i as u64);
            match outcome.winner {
                Team::Police => report.police_wins += 1,
                Team::Thief => report.thief_wins += 1,
            }
            total_moves += outcome.moves as u64;
            if args.records.is_some() {
                all_records.extend(record);
            }
        }
        report.mean_moves = total_moves as f64 / args.games as f64;
        if args.json {
            println!("{}", serde_json::to_string(&report)?);
        } else {
            println!(
                "{mode:?} Team mode, police {:?} vs thief {:?}: police win {}/{} ({:.1}%), thief {} ({:.1}%), mean {:.1} moves",
                args.police, args.thief, report.police_wins, args.games, 100.0 * report.police_wins as f64 / args.games as f64,
                report.thief_wins, 100.0 * report.thief_wins as f64 / args.games as f64, report.mean_moves
            );
        }
    }
    if let Some(path) = &args.records {
        write_records(path, &all_records)?;
    }
    Ok(ExitCode::SUCCESS)
}
