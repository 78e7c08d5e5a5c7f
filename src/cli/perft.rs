//! `boardwatch perft`: node counts per depth, as text or JSON lines.

use std::process::ExitCode;
use std::time::Instant;

use anyhow::Context;
use boardwatch::draughts::fen::parse_fen;
use boardwatch::draughts::movegen::Duplicates;
use boardwatch::draughts::perft::perft;
use boardwatch::draughts::{Position, Variant};
use clap::Args;
use serde::Serialize;

#[derive(Args)]
pub struct PerftArgs {
    /// Rule set: pool, brazilian, russian, english, italian, spanish, czech.
    #[arg(long, default_value = "pool")]
    variant: Variant,
    /// Deepest ply to count (every depth from 1 up to it is printed).
    #[arg(long, value_parser = clap::value_parser!(u32).range(1..=20))]
    depth: u32,
    /// Start from this position instead of the initial one (PDN FEN, e.g. `W:W21,K5:B1-12`).
    #[arg(long)]
    fen: Option<String>,
    /// Count capture paths with the same start, end and captured pieces separately.
    #[arg(long)]
    keep_duplicates: bool,
    /// One JSON object per depth: variant, depth, nodes, seconds.
    #[arg(long)]
    json: bool,
}

#[derive(Serialize)]
struct DepthReport {
    variant: Variant,
    depth: u32,
    nodes: u64,
    seconds: f64,
}

pub fn run(args: PerftArgs) -> anyhow::Result<ExitCode> {
    let rules = args.variant.rules();
    let start = match &args.fen {
        Some(fen) => parse_fen(fen, &rules).context("--fen")?,
        None => Position::start(&rules),
    };
    let duplicates = if args.keep_duplicates { Duplicates::Keep } else { Duplicates::Remove };
    for depth in 1..=args.depth {
        let clock = Instant::now();
        let nodes = perft(&start, &rules, depth, duplicates);
        let report = DepthReport { variant: args.variant, depth, nodes, seconds: clock.elapsed().as_secs_f64() };
        if args.json {
            println!("{}", serde_json::to_string(&report)?);
        } else {
            let rate = report.nodes as f64 / report.seconds.max(1e-9) / 1e6;
            println!("{:>2} {:>12}  {:8.3} s  {:7.1} M/s", depth, nodes, report.seconds, rate);
        }
    }
    Ok(ExitCode::SUCCESS)
}
