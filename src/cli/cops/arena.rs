//! `boardwatch cops arena`: a tournament in the moving-walls arena between two players, in
//! both roles, over many seeded games on all cores. The engine and players are
//! `boardwatch::games::cops::arena`; this module reads the options, shows progress and prints.

use std::path::PathBuf;
use std::process::ExitCode;
use std::time::{Duration, Instant};

use anyhow::{bail, Context};
use boardwatch::games::cops::arena::tournament::{self, Summary};
use boardwatch::games::cops::arena::{Clock, Params, PlayerSpec};
use clap::Args;
use indicatif::{ProgressBar, ProgressStyle};

#[derive(Args)]
pub struct ArenaArgs {
    /// The thief: astar, strong, stay, random, or ext:COMMAND (a program speaking the
    /// JSON-lines protocol, see samples/cops/arena_player.py).
    #[arg(long, default_value = "strong")]
    thief: PlayerSpec,
    /// The police, named as the thief.
    #[arg(long, default_value = "astar")]
    police: PlayerSpec,
    /// Games per pairing.
    #[arg(long, default_value_t = 100)]
    games: u32,
    /// Game i is played from RNG seed S + i.
    #[arg(long, default_value_t = 0)]
    seed: u64,
    /// A game parameter, name=value (repeatable): n, policemen, gates, gate_width, walls,
    /// wall_length, p_gate_move, p_gate_reverse, p_wall_move, p_wall_turn, k, plan_ms, T.
    #[arg(long = "param", value_name = "NAME=VALUE")]
    params: Vec<String>,
    /// Only the pairing asked for, not also the one with the roles swapped.
    #[arg(long)]
    one_way: bool,
    /// Games played at once (default: the number of cores).
    #[arg(long)]
    threads: Option<usize>,
    /// No time limit: the engine waits for every plan (games repeat exactly, whatever the load).
    #[arg(long)]
    paused: bool,
    /// Write every game's record (JSON, one per line) to this file.
    #[arg(long)]
    records: Option<PathBuf>,
    /// One JSON summary per pairing instead of text.
    #[arg(long)]
    json: bool,
}

pub fn run(args: ArenaArgs) -> anyhow::Result<ExitCode> {
    // An external player that dies must cost its plans, not this process: writing to its closed
    // input must be an error, not the default SIGPIPE (which `main` restores for piped output).
    unsafe {
        libc::signal(libc::SIGPIPE, libc::SIG_IGN);
    }
    let mut params = Params::default();
    for assignment in &args.params {
        params.set_text(assignment).with_context(|| format!("--param {assignment}"))?;
    }
    if args.games == 0 {
        bail!("--games must be at least 1");
    }
    let threads = args.threads.unwrap_or_else(|| std::thread::available_parallelism().map(|n| n.get()).unwrap_or(1)).max(1);
    let clock = if args.paused { Clock::Paused } else { Clock::Limited(Duration::from_millis(params.plan_ms)) };
    let mut pairings = vec![(args.thief.clone(), args.police.clone())];
    if !args.one_way && args.thief != args.police {
        pairings.push((args.police.clone(), args.thief.clone()));
    }
    let mut all_records = Vec::new();
    for (thief, police) in pairings {
        let bar = ProgressBar::new(args.games as u64);
        bar.set_style(
            ProgressStyle::with_template("{msg} [{bar:30}] {pos}/{len} games, {elapsed} (eta {eta})").expect("a valid template").progress_chars("=> "),
        );
        bar.set_message(format!("thief {thief} vs police {police}"));
        let started = Instant::now();
        let records = tournament::run(&params, &thief, &police, args.seed..args.seed.saturating_add(args.games as u64), clock, threads, &|_| bar.inc(1))
            .with_context(|| format!("starting a player (thief {thief}, police {police})"))?;
        bar.finish_and_clear();
        let summary = Summary::from_records(&thief, &police, &records);
        if args.json {
            println!("{}", serde_json::to_string(&summary)?);
        } else {
            print_summary(&summary, &params, started.elapsed());
        }
        if args.records.is_some() {
            all_records.extend(records);
        }
    }
    if let Some(path) = &args.records {
        let mut text = String::new();
        for record in &all_records {
            text.push_str(&serde_json::to_string(record)?);
            text.push('\n');
        }
        std::fs::write(path, text).with_context(|| format!("writing the records {}", path.display()))?;
    }
    Ok(ExitCode::SUCCESS)
}

fn print_summary(s: &Summary, params: &Params, elapsed: Duration) {
    println!(
        "thief {} vs police {}: {} games (T = {}, k = {}, {} ms), {:.1} s",
        s.thief,
        s.police,
        s.games,
        params.t_max,
        params.k,
        params.plan_ms,
        elapsed.as_secs_f64()
    );
    println!("  thief's mean payoff {:.2} ± {:.2} (95% CI; the police get the negative)", s.mean_payoff, s.ci95);
    println!(
        "  caught {:.1}%, escaped {:.1}%, survived {:.1}%; games end at tick {:.1} on average",
        100.0 * s.rate(s.caught),
        100.0 * s.rate(s.escaped),
        100.0 * s.rate(s.survived),
        s.mean_length
    );
    for (role, counts) in [("thief", &s.thief_plans), ("police", &s.police_plans)] {
        println!(
            "  {role} plans: {} late, {} failed of {}; on-time plans took {:.2} ms on average, {:.1} ms at worst",
            counts.late,
            counts.failed,
            counts.plans,
            counts.total_micros as f64 / 1000.0 / (counts.plans - counts.late - counts.failed).max(1) as f64,
            counts.worst_micros as f64 / 1000.0
        );
    }
}
