//! `boardwatch run`: the board-tracking daemon.
//!
//! Built like a small data pipeline, one module per part:
//! - [`config`]: the TOML configuration, checked whole, errors naming their key;
//! - [`source`]: where board states come from (the trait, an observation-file source) and
//!   [`vision_source`] (cameras, video files, streams through the vision pipeline, capture on a
//!   thread of its own), each on its board's own thread;
//! - [`supervisor`]: reopens a failed source after a growing pause and reports it;
//! - [`board`]: one board's pipeline: tracker, durable records (`publish::records`), and the
//!   live hub (`publish::hub`), with the state the API shows;
//! - `publish::http`: the HTTP API, SSE, WebSocket and the live page, on tokio;
//! - [`notify`]: systemd readiness and watchdog.
//!
//! Capture and vision block, so they run on plain threads; the async runtime (two workers) only
//! serves HTTP and event streams.

pub mod board;
pub mod config;
pub mod notify;
pub mod source;
pub mod supervisor;
pub mod vision_source;

use std::sync::Arc;
use std::time::{Duration, Instant};

use anyhow::Context;
use tokio::sync::watch;

use crate::publish::http::{router, AppState};
use crate::publish::hub::Hub;
use board::Board;
pub use config::Config;

/// Messages a slow live listener may fall behind before it catches up from the history.
const HUB_CAPACITY: usize = 1024;
/// How long shutdown waits for the board threads and open connections.
const SHUTDOWN_GRACE: Duration = Duration::from_secs(5);

/// Run the daemon until SIGTERM or SIGINT.
pub fn run(config: Config) -> anyhow::Result<()> {
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .thread_name("boardwatch-http")
        .enable_all()
        .build()
        .context("starting the async runtime")?;
    runtime.block_on(serve(config))
}

async fn serve(config: Config) -> anyhow::Result<()> {
    std::fs::create_dir_all(&config.state_dir)
        .with_context(|| format!("state_dir: cannot create {}", config.state_dir.display()))?;
    // Listen first: a port in use is a reason not to start at all (systemd restarts us).
    let listener = tokio::net::TcpListener::bind(config.http.listen)
        .await
        .with_context(|| format!("http.listen: cannot listen on {}", config.http.listen))?;
    let address = listener.local_addr().context("reading the bound address")?;

    let hub = Hub::new(HUB_CAPACITY);
    let state_dir = config.state_dir.clone();
    let board_configs = config.boards.clone();
    let opener_hub = hub.clone();
    // Opening a board replays its log: blocking work.
    let boards: Vec<Arc<Board>> = tokio::task::spawn_blocking(move || {
        board_configs.into_iter().map(|b| Board::open(b, &state_dir, opener_hub.clone())).collect()
    })
    .await
    .context("opening the boards")?;
    for board in &boards {
        board.start(config.retry);
    }

    let (shutdown_sender, shutdown) = watch::channel(false);
    let app = Arc::new(AppState {
        boards: boards.clone(),
        hub,
        token: config.http.token.clone(),
        recent_events: config.http.recent_events,
        shutdown: shutdown.clone(),
        started: Instant::now(),
    });
    let mut server_shutdown = shutdown.clone();
    let server = axum::serve(listener, router(app)).with_graceful_shutdown(async move {
        let _ = server_shutdown.wait_for(|stopping| *stopping).await;
    });
    let server = tokio::spawn(async move { server.await });
    tracing::info!("listening on http://{address}/ ({} boards)", boards.len());
    notify::ready(&format!("{} boards, API on {address}", boards.len()));

    if let Some(interval) = notify::watchdog_interval() {
        tokio::spawn(watchdog(boards.clone(), interval, shutdown.clone()));
    }

    let signal = wait_for_signal().await?;
    tracing::info!("{signal}: shutting down");
    notify::stopping();
    let _ = shutdown_sender.send(true);

    let stopping = boards.clone();
    let joined = tokio::task::spawn_blocking(move || {
        for board in &stopping {
            board.request_stop();
        }
        let deadline = Instant::now() + SHUTDOWN_GRACE;
        for board in &stopping {
            board.join(deadline.saturating_duration_since(Instant::now()));
            board.flush();
        }
    });
    let _ = joined.await;
    match tokio::time::timeout(SHUTDOWN_GRACE, server).await {
        Ok(Ok(Ok(()))) => {}
        Ok(Ok(Err(e))) => tracing::warn!("HTTP server: {e}"),
        Ok(Err(e)) => tracing::warn!("HTTP server task: {e}"),
        Err(_) => tracing::warn!("open connections did not close in time"),
    }
    tracing::info!("stopped");
    Ok(())
}

async fn wait_for_signal() -> anyhow::Result<&'static str> {
    use tokio::signal::unix::{signal, SignalKind};
    let mut terminate = signal(SignalKind::terminate()).context("listening for SIGTERM")?;
    let mut interrupt = signal(SignalKind::interrupt()).context("listening for SIGINT")?;
    Ok(tokio::select! {
        _ = terminate.recv() => "SIGTERM",
        _ = interrupt.recv() => "SIGINT",
    })
}

/// Tell systemd all is well while it is: the runtime answers (this task runs) and no board has
/// been stuck in one step of its records (a hung disk) for a whole interval. A camera stuck in its
/// driver does not count: its board reports it, and the others must not be restarted with it.
async fn watchdog(boards: Vec<Arc<Board>>, interval: Duration, mut shutdown: watch::Receiver<bool>) {
    let mut ticks = tokio::time::interval(interval);
    loop {
        tokio::select! {
            _ = ticks.tick() => {}
            _ = shutdown.wait_for(|stopping| *stopping) => return,
        }
        if boards.iter().all(|b| b.responsive(interval)) {
            notify::watchdog();
        } else {
            tracing::error!("a board has been recording one step for too long; not telling the watchdog all is well");
        }
    }
}
