//! `boardwatch play`: the grid games' pages alone, with no camera and no configuration. The
//! pages and their API are `boardwatch::web::games`; this module only listens and stops.

use std::net::SocketAddr;
use std::path::PathBuf;
use std::process::ExitCode;

use anyhow::Context;
use boardwatch::web::games::{self, Games, GamesConfig};
use clap::Args;

#[derive(Args)]
pub struct PlayArgs {
    /// Listen on this address (port 0: any free port; the address is printed as "listening on
    /// http://..."). Loopback by default, as the daemon: give 0.0.0.0:8090 for other machines.
    #[arg(long, value_name = "ADDR:PORT", default_value = "127.0.0.1:8090")]
    listen: SocketAddr,
    /// Cops and Robbers maps (`NAME.txt`, rows of digits) to offer beside the classic one; maps
    /// saved in the page's editor are written here (without it they last until the server stops).
    #[arg(long, value_name = "DIR")]
    maps: Option<PathBuf>,
    /// Write every finished game's record here (`cops-ID.jsonl`, JSON lines).
    #[arg(long, value_name = "DIR")]
    records: Option<PathBuf>,
    /// Sokoban levels (`*.xsb`, `*.sok`, `*.txt`, one level or a collection a file) offered as
    /// "My levels" beside Microban; levels saved in the page's editor are written here.
    #[arg(long, value_name = "DIR")]
    sokoban_levels: Option<PathBuf>,
}

pub fn run(args: PlayArgs) -> anyhow::Result<ExitCode> {
    if let Some(dir) = &args.maps {
        anyhow::ensure!(dir.is_dir(), "--maps {}: no such folder", dir.display());
    }
    let games = Games::new(GamesConfig { cops_maps: args.maps, records: args.records, sokoban_levels: args.sokoban_levels })?;
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .thread_name("boardwatch-play")
        .enable_all()
        .build()
        .context("starting the async runtime")?;
    runtime.block_on(async move {
        let listener = tokio::net::TcpListener::bind(args.listen)
            .await
            .with_context(|| format!("--listen: cannot listen on {}", args.listen))?;
        let address = listener.local_addr().context("reading the bound address")?;
        eprintln!("boardwatch play: listening on http://{address}/ (Ctrl-C stops)");
        axum::serve(listener, games::router(games)).with_graceful_shutdown(stop_signal()).await.context("serving HTTP")
    })?;
    Ok(ExitCode::SUCCESS)
}

/// SIGTERM or SIGINT.
async fn stop_signal() {
    use tokio::signal::unix::{signal, SignalKind};
    let (Ok(mut terminate), Ok(mut interrupt)) = (signal(SignalKind::terminate()), signal(SignalKind::interrupt())) else {
        return std::future::pending().await;
    };
    tokio::select! {
        _ = terminate.recv() => {}
        _ = interrupt.recv() => {}
    }
}
