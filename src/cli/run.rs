//! `boardwatch run`: the daemon. Everything comes from the configuration file; the flags here
//! override single settings (handy for tests and one-off runs).

use std::net::SocketAddr;
use std::path::PathBuf;
use std::process::ExitCode;

use anyhow::Context;
use boardwatch::daemon::{self, Config};
use clap::Args;

#[derive(Args)]
pub struct RunArgs {
    /// The configuration (TOML; `systemd/boardwatch.toml` is a commented example).
    #[arg(long, short, default_value = "boardwatch.toml", value_name = "FILE")]
    config: PathBuf,
    /// Listen on this address instead of `http.listen` (port 0: any free port; the address is
    /// logged as "listening on http://...").
    #[arg(long, value_name = "ADDR:PORT")]
    listen: Option<SocketAddr>,
    /// Keep the boards' records here instead of `state_dir`.
    #[arg(long, value_name = "DIR")]
    state_dir: Option<PathBuf>,
    /// Read the operator token from this file instead of `http.token`/`http.token_file`.
    #[arg(long, value_name = "FILE")]
    token_file: Option<PathBuf>,
    /// Check the configuration, print what it sets up, and exit.
    #[arg(long)]
    check: bool,
}

pub fn run(args: RunArgs) -> anyhow::Result<ExitCode> {
    let mut config = Config::load(&args.config)?;
    if let Some(listen) = args.listen {
        config.http.listen = listen;
    }
    if let Some(dir) = args.state_dir {
        config.state_dir = dir;
    }
    if let Some(path) = args.token_file {
        let token = std::fs::read_to_string(&path).with_context(|| format!("--token-file {}", path.display()))?;
        anyhow::ensure!(!token.trim().is_empty(), "--token-file {}: the file is empty", path.display());
        config.http.token = Some(token.trim().to_string());
    }
    if args.check {
        println!("{}: ok", args.config.display());
        println!("state_dir {}", config.state_dir.display());
        println!("listen {} (operator actions {})", config.http.listen, if config.http.token.is_some() { "on" } else { "off" });
        for b in &config.boards {
            println!("board {} ({}): {}, {}", b.id, b.name, b.variant.name(), daemon::sources::describe_config(&b.source));
        }
        return Ok(ExitCode::SUCCESS);
    }
    daemon::run(config)?;
    Ok(ExitCode::SUCCESS)
}
