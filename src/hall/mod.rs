//! `boardwatch hall`: one place where arbiters and broadcasters follow every board of a
//! tournament hall, whatever machine records it. It subscribes to the hall's topics on the
//! broker (see [`crate::mqtt`]), keeps its own durable copy ([`store`]) and serves it
//! ([`api`]): an overview page, each game's PDN, the round as one PDN file, SSE of all events,
//! and operator actions passed on to the right board's daemon.

pub mod api;
pub mod config;
pub mod round;
pub mod store;
pub mod tagging;

use std::sync::Arc;
use std::time::Duration;

use anyhow::Context;
use rumqttc::{AsyncClient, Event, Incoming, QoS};
use serde_json::json;
use tokio::sync::watch;

use crate::mqtt::{parse_topic, topic};
pub use config::HallConfig;
use store::{Message, Store};

/// Run the hall until SIGTERM or SIGINT.
pub fn run(config: HallConfig) -> anyhow::Result<()> {
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .thread_name("boardwatch-hall")
        .enable_all()
        .build()
        .context("starting the async runtime")?;
    runtime.block_on(serve(config))
}

async fn serve(config: HallConfig) -> anyhow::Result<()> {
    let store = Arc::new(Store::open(&config.state_dir)?);
    let listener = tokio::net::TcpListener::bind(config.listen)
        .await
        .with_context(|| format!("http.listen: cannot listen on {}", config.listen))?;
    let address = listener.local_addr()?;
    let (client, eventloop) = AsyncClient::new(
        config
            .mqtt
            .options(&format!("boardwatch-hall-{}", config.mqtt.hall)),
        1024,
    );
    let (shutdown_sender, shutdown) = watch::channel(false);
    tokio::spawn(follow(
        config.mqtt.hall.clone(),
        client.clone(),
        eventloop,
        store.clone(),
    ));
    tokio::spawn(write_files(store.clone(), shutdown.clone()));

    let round = round::Round::load(&config.state_dir, config.round.as_deref())?;
    let app = Arc::new(api::HallState {
        store: store.clone(),
        client,
        hall: config.mqtt.hall.clone(),
        round: std::sync::Mutex::new(round),
        state_dir: config.state_dir.clone(),
        token: config.token.clone(),
        shutdown: shutdown.clone(),
        round_saved: tokio::sync::Notify::new(),
    });
    tokio::spawn(tagging::run(app.clone()));
    let mut server_shutdown = shutdown.clone();
    let server = axum::serve(listener, api::router(app)).with_graceful_shutdown(async move {
        let _ = server_shutdown.wait_for(|stopping| *stopping).await;
    });
    let server = tokio::spawn(async move { server.await });
    tracing::info!(
        "listening on http://{address}/ (hall {}, broker {}:{})",
        config.mqtt.hall,
        config.mqtt.host,
        config.mqtt.port
    );

    use tokio::signal::unix::{signal, SignalKind};
    let mut terminate = signal(SignalKind::terminate())?;
    let mut interrupt = signal(SignalKind::interrupt())?;
    tokio::select! {
        _ = terminate.recv() => {}
        _ = interrupt.recv() => {}
    }
    tracing::info!("shutting down");
    let _ = shutdown_sender.send(true);
    let _ = tokio::time::timeout(Duration::from_secs(5), server).await;
    store.write_files();
    Ok(())
}

/// Messages stored together, at most (one sync per board for all of them).
const BATCH: usize = 512;

/// Follow the broker: subscribe at every connection, store what comes (in batches: what
/// arrived while the last batch was being synced), ask for what is missing.
async fn follow(
    hall: String,
    client: AsyncClient,
    mut eventloop: rumqttc::EventLoop,
    store: Arc<Store>,
) {
    let (messages_in, mut messages) = tokio::sync::mpsc::unbounded_channel::<Message>();
    let storing = {
        let (hall, client) = (hall.clone(), client.clone());
        tokio::spawn(async move {
            let mut batch = Vec::new();
            while messages.recv_many(&mut batch, BATCH).await > 0 {
                let store = store.clone();
                let taken = std::mem::take(&mut batch);
                let Ok(received) = tokio::task::spawn_blocking(move || store.receive(&taken)).await
                else {
                    continue;
                };
                for error in &received.errors {
                    tracing::warn!("MQTT: {error}");
                }
                for (board, after) in received.resend {
                    let request = json!({ "after": after }).to_string();
                    let _ = client.try_publish(
                        topic(&hall, &board, "resend"),
                        QoS::AtLeastOnce,
                        false,
                        request,
                    );
                }
            }
        })
    };
    let mut pause = Duration::from_millis(250);
    loop {
        match eventloop.poll().await {
            Ok(Event::Incoming(Incoming::ConnAck(_))) => {
                tracing::info!("MQTT: connected; following hall {hall}");
                pause = Duration::from_millis(250);
                for channel in ["events", "state", "pdn"] {
                    let _ = client
                        .subscribe(topic(&hall, "+", channel), QoS::AtLeastOnce)
                        .await;
                }
            }
            Ok(Event::Incoming(Incoming::Publish(message))) => {
                let Some((board, channel)) = parse_topic(&hall, &message.topic) else {
                    continue;
                };
                if !crate::mqtt::config::valid_topic_level(board) {
                    continue;
                }
                let message = Message {
                    board: board.to_string(),
                    channel: channel.to_string(),
                    payload: message.payload.to_vec(),
                };
                if messages_in.send(message).is_err() {
                    break;
                }
            }
            Ok(_) => {}
            Err(e) => {
                tracing::warn!("MQTT: {e}; connecting again in {} ms", pause.as_millis());
                tokio::time::sleep(pause).await;
                pause = (pause * 2).min(Duration::from_secs(5));
            }
        }
    }
    storing.abort();
}

async fn write_files(store: Arc<Store>, mut shutdown: watch::Receiver<bool>) {
    let mut ticks = tokio::time::interval(Duration::from_secs(1));
    loop {
        tokio::select! {
            _ = ticks.tick() => {}
            _ = shutdown.wait_for(|stopping| *stopping) => return,
        }
        let store = store.clone();
        let _ = tokio::task::spawn_blocking(move || store.write_files()).await;
    }
}
