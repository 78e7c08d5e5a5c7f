//! `boardwatch track`: observed board states in (JSON lines), validated moves out (JSON lines),
//! and the game record as PDN.

use std::fs::File;
use std::io::{BufRead, BufReader, BufWriter, Write};
use std::path::PathBuf;
use std::process::ExitCode;

use anyhow::Context;
use boardwatch::draughts::fen::parse_fen;
use boardwatch::draughts::Variant;
use boardwatch::tracker::{parse_input_line, write_pdn, Event, Input, KingStyle, Tracker, TrackerConfig};
use clap::Args;

const FORMAT_HELP: &str = "\
INPUT (one JSON object per line; blank lines are skipped):
  {\"grid\": [\".b.b.b.b\", \"b.b.b.b.\", ..., \"w.w.w.w.\"], \"t\": 12.5}
    grid: 8 rows of 8 characters in board coordinates, row 0 at the edge where Black's men
      start, column 0 on the left (a diagram with White at the bottom), as `boardwatch detect`
      writes them: `.` empty, `b`/`B` Black man/king (dark wood, or the original program's red/blue),
      `w`/`W` White man/king (light wood, or yellow/green), `?` unknown. Light squares are ignored.
    t: seconds (optional), copied into the events.
    probs (optional): 8 rows of 8 entries; each `null` (use the grid character), an array of 5
      probabilities in the order [\".\", \"b\", \"w\", \"B\", \"W\"] (the classifier's order; a
      sixth number, or whatever the five leave below 1, is the share for \"none of these\", e.g.
      a hand), or an object like {\".\": 0.1, \"b\": 0.85, \"?\": 0.05}. Probabilities override
      the grid; with them `grid` may be left out.
  Operator commands: {\"op\": \"init\"} (standard start), {\"op\": \"init_and_valid\"} (standard
  start, checked against the last board), {\"op\": \"set_start\", \"to_move\": 1|2} (the last
  board as the start; or \"fen\": \"...\"), {\"op\": \"back\"}, {\"op\": \"clear\"}, {\"op\": \"draw\"},
  {\"op\": \"resign\", \"player\": 1|2}, {\"op\": \"result\", \"result\": \"1-0\"}, and after an unclear
  board {\"op\": \"confirm\"} (take the likeliest reading) or {\"op\": \"reject\"};
  {\"op\": \"referee\", \"strict\": true|false} switches the referee (see ERRORS).

OUTPUT: one JSON event per line: seq, t, kind (init, init_and_valid, move, capture_step,
  crowned, revised, error, recovered, resynchronised, uncertain, game_over, back, cleared,
  confirmed, rejected, referee),
  line (the original program's numbered log line, e.g. \"2: OK: Player1- Move Success\"), text, player
  (1 = Black, 2 = White), move, path, captured, crowned, fen, changed ([row][col] squares of an
  error), error, current_player, result, inferred (a move never seen finished, shown by a later
  board), valid, detail.

ERRORS: a board no legal move explains is first `uncertain` (taken for a misread); if it stays
  --error-after seconds it is an `error` with the original program's line, and the tracker holds
  until the board shows the last valid position (`recovered`, \"Now is OK\") or a position
  clearly reached from it by up to four legal moves (`resynchronised`, the moves recorded after
  it). --strict: errors at once and only the last valid position ends them.

The game starts at the standard start position (or --fen) with `Init Ready`.";

#[derive(Args)]
#[command(after_long_help = FORMAT_HELP)]
pub struct TrackArgs {
    /// Rule set: pool, brazilian, russian, english, italian, spanish, czech. Black moves first in
    /// pool and english (as the original program's red), White in the others.
    #[arg(long, default_value = "pool")]
    variant: Variant,
    /// `visible`: kings have their own colour (the original program's blue and green); `stacked`: kings are
    /// two stacked men and look like men (`B`/`W` in the input then count as `b`/`w`).
    #[arg(long, default_value = "visible")]
    kings: KingStyle,
    /// The original program's strict referee (for teaching): a board no legal move explains is
    /// an error at once, several plies in one reading are not inferred, and only the last valid
    /// position ends an error. Without it, such a board is an error only once it has stayed
    /// --error-after seconds, and after an error the record resynchronises on a position clearly
    /// reached from the last valid one.
    #[arg(long)]
    strict: bool,
    /// Seconds a board no legal move explains must stay before it is an error (tolerant mode;
    /// observations without `t` count as one second apart).
    #[arg(long, value_name = "SECONDS", default_value_t = boardwatch::tracker::DEFAULT_ERROR_AFTER, value_parser = parse_seconds)]
    error_after: f64,
    /// Start from this position (PDN FEN, e.g. `B:W18,K5:B14`) instead of the standard start.
    #[arg(long)]
    fen: Option<String>,
    /// Write the games as PDN to this file at the end (also after an input error).
    #[arg(long, value_name = "OUT.pdn")]
    pdn: Option<PathBuf>,
    /// Observations as JSON lines; `-` or nothing reads standard input.
    #[arg(value_name = "FILE")]
    input: Option<PathBuf>,
}

/// A duration in seconds: finite and not negative.
pub fn parse_seconds(text: &str) -> Result<f64, String> {
    match text.trim().parse::<f64>() {
        Ok(v) if v.is_finite() && v >= 0.0 => Ok(v),
        _ => Err(format!("`{text}` is not a number of seconds (0 or more)")),
    }
}

fn emit(out: &mut impl Write, events: &[Event]) -> anyhow::Result<()> {
    for e in events {
        serde_json::to_writer(&mut *out, e)?;
        out.write_all(b"\n")?;
    }
    // Events are wanted as they happen (a live camera feeds this), not at the end.
    out.flush()?;
    Ok(())
}

pub fn run(args: TrackArgs) -> anyhow::Result<ExitCode> {
    let config = TrackerConfig { strict: args.strict, error_after: args.error_after, ..TrackerConfig::new(args.variant, args.kings) };
    let mut tracker = Tracker::new(config);
    let stdout = std::io::stdout();
    let mut out = BufWriter::new(stdout.lock());
    let start = match &args.fen {
        Some(fen) => tracker.set_start_position(parse_fen(fen, tracker.rules()).context("--fen")?),
        None => tracker.init(),
    };
    emit(&mut out, &start)?;

    let result = follow(&args, &mut tracker, &mut out);
    if let Some(path) = &args.pdn {
        std::fs::write(path, write_pdn(&tracker.games())).with_context(|| format!("writing {}", path.display()))?;
    }
    result.map(|()| ExitCode::SUCCESS)
}

fn follow(args: &TrackArgs, tracker: &mut Tracker, out: &mut impl Write) -> anyhow::Result<()> {
    let (name, reader): (String, Box<dyn BufRead>) = match &args.input {
        Some(path) if path.as_os_str() != "-" => {
            let file = File::open(path).with_context(|| format!("opening {}", path.display()))?;
            (path.display().to_string(), Box::new(BufReader::new(file)))
        }
        _ => ("<stdin>".to_string(), Box::new(std::io::stdin().lock())),
    };
    for (index, line) in reader.lines().enumerate() {
        let number = index + 1;
        let line = line.with_context(|| format!("{name}: reading line {number}"))?;
        if line.trim().is_empty() {
            continue;
        }
        let input = parse_input_line(&line).with_context(|| format!("{name}: line {number}"))?;
        let events = match input {
            Input::Observation(obs) => tracker.observe(&obs),
            Input::Command(command) => match tracker.command(&command) {
                Ok(events) => events,
                // A refused operator command is part of a session, not a broken input file.
                Err(err) => {
                    tracing::warn!("{name}: line {number}: {err}");
                    eprintln!("warning: {name}: line {number}: {err}");
                    Vec::new()
                }
            },
        };
        emit(out, &events)?;
    }
    Ok(())
}
