//! `boardwatch run`: the board-tracking daemon, laid out like its data:
//!
//! ```text
//! sources (camera, video, stream | observation file)        supervisor: reopen after failures
//!    -> runner: frames through pipeline::BoardPipeline (vision::Watcher -> observation)
//!    -> board: publish::Recorder (tracker, synced log, PDN files) -> copies for the API, hub
//!    -> api: HTTP, SSE, WebSocket, the live page
//! ```
//!
//! - [`config`]: the TOML configuration, checked whole, errors naming their key;
//! - [`sources`]: where frames and board states come from, one module per kind;
//! - [`supervisor`]: reopens a failed source after a growing pause and reports it;
//! - [`runner`]: a board's thread: its source, the pipeline, pictures for the live page;
//! - [`board`]: a board's records and the state the API shows;
//! - [`api`]: the HTTP API on tokio; it depends on the boards, never the other way round;
//! - [`stop`]: the stop signal; [`notify`]: systemd readiness and watchdog.
//!
//! Capture and vision block, so they run on plain threads; the async runtime (two workers) only
//! serves HTTP and event streams.

pub mod api;
pub mod board;
pub mod config;
pub mod notify;
pub mod runner;
pub mod screens;
pub mod sources;
pub mod stop;
pub mod supervisor;

use std::sync::Arc;
use std::time::{Duration, Instant};

use anyhow::Context;
use tokio::sync::watch;

use crate::publish::hub::Hub;
use api::{router, AppState};
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
    // Each board's vision runs on its own thread; the same frames read as in `replay`.
    crate::vision::opencv_on_calling_threads().context("OpenCV threads")?;
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
        hub.register(board.clone());
    }
    let threads: Vec<_> = boards.iter().map(|board| runner::start(board, config.retry)).collect();

    let (shutdown_sender, shutdown) = watch::channel(false);
    let mqtt_hub = hub.clone();
    let app = Arc::new(AppState {
        boards: boards.clone(),
        hub,
        token: config.http.token.clone(),
        recent_events: config.http.recent_events,
        shutdown: shutdown.clone(),
        started: Instant::now(),
    });
    let mut server_shutdown = shutdown.clone();
    // The grid games' pages beside the boards, as `boardwatch play` serves them alone; their
    // user maps and finished games' records are kept in the state folder.
    let games = open_games(&config.state_dir)?;
    let touch = games.touch.clone();
    let screens_stop = stop::StopSignal::new();
    let mut screen_threads = Vec::new();
    for screen in &config.screens {
        let Some((source, _, _)) = sources::vision::frame_source(&screen.source) else { continue };
        let dwell = crate::touch::dwell::DwellSettings::for_dwell(screen.dwell);
        let camera = screens::ScreenCamera { screen: screen.name.clone(), source, describe: sources::describe_config(&screen.source), dwell };
        screen_threads.push(screens::start(camera, touch.clone(), config.retry, screens_stop.clone()).context("starting a screen's camera thread")?);
    }
    let games_routes = axum::Router::new()
        .route("/games", axum::routing::get(|| async { axum::response::Redirect::permanent("/games/") }))
        .nest("/games/", crate::web::games::router(games));
    let server = axum::serve(listener, router(app, games_routes)).with_graceful_shutdown(async move {
        let _ = server_shutdown.wait_for(|stopping| *stopping).await;
    });
    let server = tokio::spawn(async move { server.await });
    tracing::info!("listening on http://{address}/ ({} boards)", boards.len());
    notify::ready(&format!("{} boards, API on {address}", boards.len()));

    if let Some(interval) = notify::watchdog_interval() {
        tokio::spawn(watchdog(boards.clone(), interval, shutdown.clone()));
    }
    tokio::spawn(catch_up(boards.clone(), shutdown.clone()));
    let mqtt_publisher = config.mqtt.clone().map(|mqtt| {
        let (hub, dir, token) = (mqtt_hub, config.state_dir.clone(), config.http.token.clone());
        tokio::spawn(crate::mqtt::publisher::run(mqtt, hub, dir, token, shutdown.clone()))
    });

    let signal = wait_for_signal().await?;
    tracing::info!("{signal}: shutting down");
    notify::stopping();
    let _ = shutdown_sender.send(true);
    touch.stop();
    screens_stop.stop();

    let stopping = boards.clone();
    let joined = tokio::task::spawn_blocking(move || {
        for board in &stopping {
            board.stop.stop();
        }
        let deadline = Instant::now() + SHUTDOWN_GRACE;
        for (board, thread) in stopping.iter().zip(threads) {
            if let Some(thread) = thread {
                join(board.id(), thread, deadline);
            }
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
    if let Some(publisher) = mqtt_publisher {
        // It sends what the broker has not acknowledged yet, for a moment.
        let _ = tokio::time::timeout(SHUTDOWN_GRACE, publisher).await;
    }
    tracing::info!("stopped");
    Ok(())
}

/// Wait until `deadline` for a board's thread; it is left running if stuck (in a driver call).
fn join(board: &str, thread: std::thread::JoinHandle<()>, deadline: Instant) {
    while !thread.is_finished() {
        if Instant::now() >= deadline {
            tracing::warn!(board, "the source did not stop in time; leaving it");
            return;
        }
        std::thread::sleep(Duration::from_millis(10));
    }
    let _ = thread.join();
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
/// PDN files that could not be written (a full disk) are written again every few seconds, so
/// that they catch up even when no new step comes.
async fn catch_up(boards: Vec<Arc<Board>>, mut shutdown: watch::Receiver<bool>) {
    let mut ticks = tokio::time::interval(Duration::from_secs(2));
    loop {
        tokio::select! {
            _ = ticks.tick() => {}
            _ = shutdown.wait_for(|stopping| *stopping) => return,
        }
        let boards = boards.clone();
        let _ = tokio::task::spawn_blocking(move || boards.iter().for_each(|b| b.catch_up())).await;
    }
}

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

/// The grid games of the daemon: Cops and Robbers maps saved from the editor in
/// `state_dir/games/cops-maps`, finished games' records in `state_dir/games/records`, Sokoban
/// levels saved from the editor in `state_dir/games/sokoban-levels`.
fn open_games(state_dir: &std::path::Path) -> anyhow::Result<Arc<crate::web::games::Games>> {
    let dir = state_dir.join("games");
    let maps = dir.join("cops-maps");
    let records = dir.join("records");
    for folder in [&maps, &records] {
        std::fs::create_dir_all(folder).with_context(|| format!("state_dir: cannot create {}", folder.display()))?;
    }
    let sokoban_levels = Some(dir.join("sokoban-levels"));
    let touch_maps = Some(dir.join("touch-maps.json"));
    crate::web::games::Games::new(crate::web::games::GamesConfig { cops_maps: Some(maps), records: Some(records), sokoban_levels, touch_maps })
}
