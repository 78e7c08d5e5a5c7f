//! Subcommands. Each module parses nothing itself: clap does, from the structs below.

mod calibrate;
mod cops;
mod detect;
mod dots;
mod dots_match;
mod overlay_video;
mod pdn;
mod replay;
mod perft;
mod play;
mod run;
mod render;
mod render_table;
mod sokoban;
mod track;
mod hall;
mod touch;

use std::process::ExitCode;

use clap::{Parser, Subcommand};

#[derive(Parser)]
#[command(name = "boardwatch", version, about = "Watch a checkers board through a camera and write down the game")]
pub struct Cli {
    /// More diagnostics on stderr (-v info, -vv debug, -vvv trace); RUST_LOG overrides.
    #[arg(short, long, global = true, action = clap::ArgAction::Count)]
    pub verbose: u8,
    #[command(subcommand)]
    pub command: Command,
}

#[derive(Subcommand)]
pub enum Command {
    /// Count the leaves of the legal move tree (checks and times the rules engine).
    Perft(perft::PerftArgs),
    /// Read the board in still images: corners, squares, orientation.
    Detect(detect::DetectArgs),
    /// Learn corners, orientation and colours from the start position; write a calibration file.
    Calibrate(calibrate::CalibrateArgs),
    /// Replay a recorded game from video into a PDN record and an event log.
    Replay(replay::ReplayArgs),
    /// Read, check and print PDN game records.
    #[command(subcommand)]
    Pdn(pdn::PdnCommand),
    /// Follow a game from observed board states (JSON lines): validated moves out, as the original program's
    /// referee logic would log them, and the game as PDN.
    Track(track::TrackArgs),
    /// The daemon: watch the configured boards, record their games, serve them over HTTP.
    Run(run::RunArgs),
    /// Draw synthetic camera frames of a position or a whole game (test material for the vision).
    Render(Box<render::RenderArgs>),
    /// Draw synthetic camera frames of a grid game projected onto a table, with a hand tapping
    /// cells by pointing (test material for the projected board's touch input).
    RenderTable(Box<render_table::RenderTableArgs>),
    /// Sokoban levels: solve them, benchmark the solver.
    #[command(subcommand)]
    Sokoban(sokoban::SokobanCommand),
    /// Cops and Robbers (classic): solve a map, play it in the terminal, run matches.
    #[command(subcommand)]
    Cops(cops::CopsCommand),
    /// Dots (Kropki): replay games for differential tests, read SGF records, computer moves.
    #[command(subcommand)]
    Dots(dots::DotsCommand),
    /// Serve the grid games' pages (Cops and Robbers) for play on a screen or a projected board.
    Play(play::PlayArgs),
    /// The camera over a projected board, without the pages: find the calibration pattern in a
    /// picture, follow a recording's taps.
    #[command(subcommand)]
    Touch(touch::TouchCommand),
    /// A tournament hall: follow every board of the hall's daemons through an MQTT broker and
    /// serve them in one place (overview page, each game's PDN, the round's PDN, all events).
    Hall(hall::HallArgs),
}

impl Command {
    /// Commands whose output is typically piped into other tools (not the daemon, whose
    /// sockets rely on EPIPE errors).
    pub fn writes_to_a_pipe(&self) -> bool {
        !matches!(self, Command::Run(_) | Command::Play(_) | Command::Hall(_))
    }
}

/// `daemon`: the daemon logs what it does (info) by default; the other commands only problems.
pub fn init_tracing(verbose: u8, daemon: bool) {
    use tracing_subscriber::EnvFilter;
    let default = match verbose {
        0 if daemon => "info",
        0 => "warn",
        1 => "info",
        2 => "debug",
        _ => "trace",
    };
    let filter = EnvFilter::try_from_default_env().unwrap_or_else(|_| EnvFilter::new(default));
    // Colours only for a person at a terminal, not for journald or a log file.
    let colour = std::io::IsTerminal::is_terminal(&std::io::stderr());
    tracing_subscriber::fmt().with_env_filter(filter).with_writer(std::io::stderr).with_ansi(colour).init();
}

pub fn run(command: Command) -> anyhow::Result<ExitCode> {
    match command {
        Command::Perft(args) => perft::run(args),
        Command::Pdn(command) => pdn::run(command),
        Command::Replay(args) => replay::run(args),
        Command::Detect(args) => detect::run(args),
        Command::Track(args) => track::run(args),
        Command::Calibrate(args) => calibrate::run(args),
        Command::Run(args) => run::run(args),
        Command::Render(args) => render::run(*args),
        Command::RenderTable(args) => render_table::run(*args),
        Command::Sokoban(command) => sokoban::run(command),
        Command::Cops(command) => cops::run(command),
        Command::Dots(command) => dots::run(command),
        Command::Play(args) => play::run(args),
        Command::Hall(args) => hall::run(args),
        Command::Touch(command) => touch::run(command),
    }
}
