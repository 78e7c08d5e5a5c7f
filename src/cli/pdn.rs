//! `boardwatch pdn check|show`: replay PDN records through the rules engine.
//!
//! Archives are read game by game: a game with a syntax error is left out and reported (game
//! number, line, column, reason) and every other game is read; `check --strict` reads to the
//! letter of PDN 3.0 and fails a file at its first error.

use std::path::{Path, PathBuf};
use std::process::ExitCode;

use anyhow::{bail, Context};
use boardwatch::draughts::fen::to_fen;
use boardwatch::draughts::game::{replay_choosing, Game, ReadAs, VariantSource};
use boardwatch::draughts::pdn::{read_archive, read_games, ArchiveRead, PdnErrorKind, ReadMode};
use boardwatch::draughts::{Position, Variant};
use clap::{Args, Subcommand};
use serde::Serialize;

#[derive(Subcommand)]
pub enum PdnCommand {
    /// Replay every game of each file and report the games that are not fully legal.
    Check(CheckArgs),
    /// Print one game move by move with the position after each move.
    Show(ShowArgs),
}

#[derive(Args)]
pub struct CheckArgs {
    /// PDN files to check.
    #[arg(required = true)]
    files: Vec<PathBuf>,
    /// Read games without a GameType tag under these rules (pool, brazilian, russian, english,
    /// italian, spanish, czech). By default each is read under the rules it replays legally
    /// under, English checkers first, and the report says which.
    #[arg(long)]
    variant: Option<Variant>,
    /// Follow the PDN 3.0 grammar to the letter instead of accepting real archives' habits, and
    /// fail a file at its first error instead of leaving out the defective games.
    #[arg(long)]
    strict: bool,
    /// One JSON object per file: file, games, read, legal, defective, skipped, defects,
    /// repaired, failures.
    #[arg(long)]
    json: bool,
}

#[derive(Args)]
pub struct ShowArgs {
    file: PathBuf,
    /// Which game of the file (1 = the first).
    #[arg(long, default_value_t = 1, value_parser = clap::value_parser!(u32).range(1..))]
    game: u32,
    /// Read a game without a GameType tag under these rules; by default under the rules it
    /// replays legally under (English checkers first), and the output says which.
    #[arg(long)]
    variant: Option<Variant>,
    /// Draw the board after every move, not only at the end.
    #[arg(long)]
    boards: bool,
}

pub fn run(command: PdnCommand) -> anyhow::Result<ExitCode> {
    match command {
        PdnCommand::Check(args) => check(args),
        PdnCommand::Show(args) => show(args),
    }
}

/// The text of a PDN file of real-world encoding (Latin-1 archives exist).
fn load(path: &Path) -> anyhow::Result<String> {
    let bytes = std::fs::read(path).with_context(|| format!("reading {}", path.display()))?;
    Ok(String::from_utf8_lossy(&bytes).into_owned())
}

/// Reads a PDN file leniently, game by game: a defective game is left out (and reported
/// through `defects`), the others are read.
pub fn read_file(path: &Path) -> anyhow::Result<ArchiveRead> {
    Ok(read_archive(&load(path)?, ReadMode::Lenient))
}

/// Reads a PDN file as [`read_file`] does and says on stderr which games were left out and
/// which defects were repaired, for the commands that use the games.
pub fn read_file_reporting(path: &Path) -> anyhow::Result<ArchiveRead> {
    let read = read_file(path)?;
    for d in &read.defects {
        eprintln!("warning: {}: game {} left out: {}", path.display(), d.game, d.error);
    }
    for g in &read.games {
        for w in g.warnings.iter().filter(|w| w.kind == PdnErrorKind::Repaired) {
            eprintln!("warning: {}: game {}: {w}", path.display(), g.number);
        }
    }
    Ok(read)
}

/// A game left out for a syntax error, or a defect repaired in a game that was read.
#[derive(Serialize)]
struct Defect {
    game: usize,
    line: usize,
    column: usize,
    reason: String,
}

#[derive(Serialize)]
struct Failure {
    game: usize,
    line: usize,
    ply: usize,
    #[serde(rename = "move")]
    written: String,
    reason: String,
}

#[derive(Serialize)]
struct FileReport {
    file: String,
    /// Games in the file, defective ones included.
    games: usize,
    /// Games that read (all but the defective ones).
    read: usize,
    legal: usize,
    /// Games left out for a syntax error, each listed in `defects`.
    defective: usize,
    /// Games of other games types (10x10, Frisian...), not replayed.
    skipped: usize,
    defects: Vec<Defect>,
    /// Defects read in a way whose meaning is clear (moves unknown, a comment without braces).
    repaired: Vec<Defect>,
    failures: Vec<Failure>,
    /// Games without a GameType tag, by the rules they were read under and why.
    untagged: Vec<Untagged>,
}

/// Games without a `GameType` tag read under one variant for one reason.
#[derive(Serialize)]
struct Untagged {
    variant: Variant,
    /// `detected` (they replay legally under it), `given` (`--variant`) or `unresolved` (they
    /// replay legally under no 8x8 rules; this is where they went furthest).
    how: &'static str,
    games: Vec<usize>,
}

fn how(source: VariantSource) -> &'static str {
    match source {
        VariantSource::Tagged => "tagged",
        VariantSource::Given => "given",
        VariantSource::Detected => "detected",
        VariantSource::Unresolved => "unresolved",
    }
}

/// Why a game was read under its variant, for people: `None` when its GameType tag says so.
fn reason(variant: Variant, how: &str) -> Option<String> {
    let why = match how {
        "given" => format!("--variant {variant}"),
        "detected" => "replays legally".to_string(),
        "unresolved" => "legal under no 8x8 rules, furthest under these".to_string(),
        _ => return None,
    };
    Some(format!("read as {} (no GameType tag; {why})", variant.full_name()))
}

/// What `show` and `render --game` say about a game read without a GameType tag.
pub fn read_as_note(read: &ReadAs) -> Option<String> {
    reason(read.variant, how(read.source))
}

/// `games 1, 4, 7`, or `12 games` when there are many.
fn games_list(games: &[usize]) -> String {
    match games {
        [one] => format!("game {one}"),
        few if few.len() <= 8 => format!("games {}", few.iter().map(usize::to_string).collect::<Vec<_>>().join(", ")),
        many => format!("{} games", many.len()),
    }
}

/// `--strict`: the PDN 3.0 grammar, and the first error fails the file.
fn read_strictly(path: &Path) -> anyhow::Result<ArchiveRead> {
    let games = read_games(&load(path)?, ReadMode::Strict).with_context(|| format!("{}", path.display()))?;
    Ok(ArchiveRead { games, defects: Vec::new() })
}

fn check_file(path: &Path, args: &CheckArgs) -> FileReport {
    let mut report = FileReport {
        file: path.display().to_string(),
        games: 0,
        read: 0,
        legal: 0,
        defective: 0,
        skipped: 0,
        defects: vec![],
        repaired: vec![],
        failures: vec![],
        untagged: vec![],
    };
    let read = if args.strict { read_strictly(path) } else { read_file(path) };
    let read = match read {
        Ok(read) => read,
        Err(err) => {
            report.failures.push(Failure { game: 0, line: 0, ply: 0, written: String::new(), reason: format!("{err:#}") });
            return report;
        }
    };
    report.games = read.games_in_text();
    report.read = read.games.len();
    report.defective = read.defects.len();
    report.defects = read
        .defects
        .iter()
        .map(|d| Defect {
            game: d.game,
            line: d.error.line,
            column: d.error.col,
            reason: format!("{} (skipped to line {})", d.error.message, d.resumed_at_line),
        })
        .collect();
    for record in &read.games {
        for w in record.warnings.iter().filter(|w| w.kind == PdnErrorKind::Repaired) {
            report.repaired.push(Defect { game: record.number, line: w.line, column: w.col, reason: w.message.clone() });
        }
        let Ok(read_as) = replay_choosing(record, args.variant) else {
            report.skipped += 1;
            continue;
        };
        if read_as.source != VariantSource::Tagged {
            let how = how(read_as.source);
            match report.untagged.iter_mut().find(|u| u.variant == read_as.variant && u.how == how) {
                Some(group) => group.games.push(record.number),
                None => report.untagged.push(Untagged { variant: read_as.variant, how, games: vec![record.number] }),
            }
        }
        match read_as.replay {
            Ok(_) => report.legal += 1,
            Err(e) => report.failures.push(Failure { game: record.number, line: e.line, ply: e.ply, written: e.written, reason: e.reason }),
        }
    }
    report
}

fn check(args: CheckArgs) -> anyhow::Result<ExitCode> {
    let mut all_legal = true;
    for path in &args.files {
        let report = check_file(path, &args);
        all_legal &= report.failures.is_empty() && report.defects.is_empty();
        if args.json {
            println!("{}", serde_json::to_string(&report)?);
            continue;
        }
        let skipped = if report.skipped > 0 { format!(", {} skipped (not an 8x8 variant)", report.skipped) } else { String::new() };
        if report.defective > 0 {
            println!(
                "{}: {} games: {} read, {} fully legal, {} defective (left out){skipped}",
                report.file, report.games, report.read, report.legal, report.defective
            );
        } else {
            println!("{}: {} games, {} fully legal{skipped}", report.file, report.games, report.legal);
        }
        for group in &report.untagged {
            if let Some(reason) = reason(group.variant, group.how) {
                println!("  {reason}: {}", games_list(&group.games));
            }
        }
        for d in &report.defects {
            println!("  game {} (line {}, column {}): defective, left out: {}", d.game, d.line, d.column, d.reason);
        }
        for d in &report.repaired {
            println!("  game {} (line {}, column {}): warning: {}", d.game, d.line, d.column, d.reason);
        }
        for f in &report.failures {
            if f.game == 0 {
                println!("  {}", f.reason);
            } else {
                println!("  game {} (line {}): ply {} `{}`: {}", f.game, f.line, f.ply, f.written, f.reason);
            }
        }
    }
    Ok(if all_legal { ExitCode::SUCCESS } else { ExitCode::FAILURE })
}

/// The board as a diagram: Black's edge at the top, `.` light squares blank.
pub fn diagram(pos: &Position) -> String {
    let mut out = String::new();
    for (row, line) in pos.to_grid().iter().enumerate() {
        out.push_str("   ");
        for (col, ch) in line.chars().enumerate() {
            let shown = if (row + col) % 2 == 0 { ' ' } else if ch == '.' { '·' } else { ch };
            out.push(shown);
            out.push(' ');
        }
        out.push('\n');
    }
    out
}

fn show(args: ShowArgs) -> anyhow::Result<ExitCode> {
    let read = read_file_reporting(&args.file)?;
    let number = args.game as usize;
    if let Some(d) = read.defects.iter().find(|d| d.game == number) {
        bail!("{}: game {number} is defective and cannot be shown: {}", args.file.display(), d.error);
    }
    let Some(record) = read.games.iter().find(|g| g.number == number) else {
        bail!("{}: has {} games, there is no game {}", args.file.display(), read.games_in_text(), args.game);
    };
    let read_as = replay_choosing(record, args.variant).map_err(|e| anyhow::anyhow!("{} game {}: {e}", args.file.display(), args.game))?;
    let note = read_as_note(&read_as);
    let game = read_as.replay.with_context(|| match &note {
        Some(note) => format!("{} game {} ({note})", args.file.display(), args.game),
        None => format!("{} game {}", args.file.display(), args.game),
    })?;
    print_game(&game, &args, note.as_deref());
    Ok(ExitCode::SUCCESS)
}

fn print_game(game: &Game, args: &ShowArgs, note: Option<&str>) {
    println!("{} game {} ({}, GameType {})", args.file.display(), args.game, game.variant.full_name(), game.variant.game_type());
    if let Some(note) = note {
        println!("{note}");
    }
    for (name, value) in &game.tags {
        println!("  {name}: {value}");
    }
    println!("start: {}", to_fen(&game.start, &game.rules));
    if args.boards {
        print!("{}", diagram(&game.start));
    }
    for (i, ply) in game.plies.iter().enumerate() {
        let captured = ply.mv.capture_count();
        let note = match (captured, ply.mv.crowns) {
            (0, false) => String::new(),
            (n, crown) => format!("  takes {n}{}", if crown { ", crowned" } else { "" }),
        };
        let note = if captured == 0 && ply.mv.crowns { "  crowned".to_string() } else { note };
        println!("{:>3}. {:<6} {:<14}{note:<18} {}", i + 1, ply.before.to_move.name(), ply.text, to_fen(&ply.after, &game.rules));
        if args.boards {
            print!("{}", diagram(&ply.after));
        }
    }
    let last = game.final_position();
    if !args.boards {
        print!("{}", diagram(&last));
    }
    let ending = match game.decided_winner() {
        Some(winner) => format!("{} has no move left: {} wins", last.to_move.name(), winner.name()),
        None => format!("{} to move", last.to_move.name()),
    };
    println!("result {} ({ending})", game.result);
}
