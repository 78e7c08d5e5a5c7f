//! `boardwatch hall`: follow every board of a tournament hall through its MQTT broker and serve
//! them in one place (see `boardwatch::hall`).

use std::net::SocketAddr;
use std::path::PathBuf;
use std::process::ExitCode;

use boardwatch::hall::{self, HallConfig};
use clap::Args;

#[derive(Args)]
pub struct HallArgs {
    /// The hall's configuration (TOML: state_dir, round, [http], [mqtt]).
    #[arg(long, short, default_value = "hall.toml", value_name = "FILE")]
    config: PathBuf,
    /// Listen on this address instead of `http.listen` (port 0: any free port; the address is
    /// logged as "listening on http://...").
    #[arg(long, value_name = "ADDR:PORT")]
    listen: Option<SocketAddr>,
    /// Keep the hall's copy here instead of `state_dir`.
    #[arg(long, value_name = "DIR")]
    state_dir: Option<PathBuf>,
}

pub fn run(args: HallArgs) -> anyhow::Result<ExitCode> {
    let mut config = HallConfig::load(&args.config)?;
    if let Some(listen) = args.listen {
        config.listen = listen;
    }
    if let Some(dir) = args.state_dir {
        config.state_dir = dir;
    }
    hall::run(config)?;
    Ok(ExitCode::SUCCESS)
}
