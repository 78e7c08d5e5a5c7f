//! `boardwatch play`: the grid games' pages alone, with no camera and no configuration. The
//! pages and their API are `boardwatch::web::games`; this module only listens and stops.

use std::net::SocketAddr;
use std::path::PathBuf;
use std::process::ExitCode;

use anyhow::Context;
use boardwatch::daemon::config::RetryConfig;
use boardwatch::daemon::screens::{self, ScreenCamera};
use boardwatch::daemon::stop::StopSignal;
use boardwatch::touch::dwell::DwellSettings;
use boardwatch::vision::source::SourceSpec;
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
    /// A camera over the projected table, as the games' controller: a finger dwelling on a
    /// projected cell taps it. A camera (`camera:0`, `camera:NAME`), a stream URL, or a
    /// recording (played at its own pace, as a camera would show it).
    #[arg(long, value_name = "SOURCE")]
    camera: Option<String>,
    /// The screen the camera serves; pages in projector mode use `table` unless opened with
    /// `?screen=NAME`.
    #[arg(long, value_name = "NAME", default_value = "table", requires = "camera")]
    screen: String,
    /// Seconds a fingertip dwells on a cell to tap it (then it leaves or lifts).
    #[arg(long, value_name = "SECONDS", default_value_t = 0.6, requires = "camera")]
    dwell: f64,
    /// Keep the camera's calibrations (one per game) in this JSON file, so that a restart
    /// needs none.
    #[arg(long, value_name = "FILE")]
    touch_maps: Option<PathBuf>,
}

pub fn run(args: PlayArgs) -> anyhow::Result<ExitCode> {
    if let Some(dir) = &args.maps {
        anyhow::ensure!(dir.is_dir(), "--maps {}: no such folder", dir.display());
    }
    let camera = match &args.camera {
        Some(text) => {
            let source = SourceSpec::parse(text).map_err(|e| anyhow::anyhow!("--camera {text}: {e}"))?;
            let dwell = DwellSettings::for_dwell(args.dwell);
            dwell.validate().map_err(|e| anyhow::anyhow!("--dwell: {e}"))?;
            if !boardwatch::touch::is_screen_name(&args.screen) {
                anyhow::bail!("--screen {:?}: 1 to 64 letters, digits, '-' and '_'", args.screen);
            }
            Some(ScreenCamera { screen: args.screen.clone(), source, describe: text.clone(), dwell })
        }
        None => None,
    };
    let games = Games::new(GamesConfig {
        cops_maps: args.maps,
        records: args.records,
        sokoban_levels: args.sokoban_levels,
        touch_maps: args.touch_maps,
    })?;
    let stop = StopSignal::new();
    let camera_thread = match camera {
        Some(camera) => {
            boardwatch::vision::opencv_on_calling_threads().context("OpenCV threads")?;
            Some(screens::start(camera, games.touch.clone(), RetryConfig::default(), stop.clone()).context("starting the camera thread")?)
        }
        None => None,
    };
    let touch = games.touch.clone();
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
        axum::serve(listener, games::router(games))
            .with_graceful_shutdown(async move {
                stop_signal().await;
                // Event streams end, so that the server can.
                touch.stop();
            })
            .await
            .context("serving HTTP")
    })?;
    stop.stop();
    if let Some(thread) = camera_thread {
        let _ = thread.join();
    }
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
