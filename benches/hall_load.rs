//! Hall load: a broker (mosquitto on a free loopback port), daemons following many boards from
//! observation files (sample games one after another), and `boardwatch hall`. The bench listens
//! to the hall's SSE stream, stamps every event as it arrives, and afterwards matches each with
//! the time its daemon wrote it to its synced log (`at` of the log record): the latency from a
//! daemon's synced log to the hall's SSE stream, and the events per second the hall took in.
//! It checks that the hall got every event once.
//!
//! `cargo bench --bench hall_load -- --boards 200 --daemons 2 --pace-ms 250 --seconds 60`
//!
//! With `--synthetic N` no daemon runs: the bench itself publishes N events per board to the
//! broker as fast as the broker takes them (QoS 1, boards interleaved), each stamped with the
//! time it was handed over: the most the hall takes in, and the latency from publish to SSE.
//!
//! With `--tls 1` the broker speaks only TLS (a throwaway authority made with `openssl`) and the
//! daemons, the hall and the flood connect over `mqtts://`.

#[path = "../tests/daemon_common/mod.rs"]
mod daemon_common;
#[path = "../tests/mqtt_common/mod.rs"]
mod mqtt_common;

use std::collections::HashMap;
use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use daemon_common::{sample_game, temp_dir, Daemon, TOKEN};
use serde_json::Value;

fn arg(name: &str, default: u64) -> u64 {
    let args: Vec<String> = std::env::args().collect();
    args.iter()
        .position(|a| a == name)
        .and_then(|i| args.get(i + 1))
        .and_then(|v| v.parse().ok())
        .unwrap_or(default)
}

fn now() -> f64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .unwrap()
        .as_secs_f64()
}

fn percentile(sorted: &[f64], p: f64) -> f64 {
    sorted[((sorted.len() - 1) as f64 * p).round() as usize]
}

fn main() {
    let boards = arg("--boards", 200) as usize;
    let daemons = arg("--daemons", 2) as usize;
    let pace_ms = arg("--pace-ms", 250);
    let seconds = arg("--seconds", 60);
    let tls = arg("--tls", 0) == 1;
    let Some(mosquitto) = mqtt_common::mosquitto() else {
        eprintln!("hall_load: mosquitto is not installed (`make deps` installs it)");
        std::process::exit(1);
    };
    let dir = temp_dir("hall-load");
    let port = mqtt_common::free_port();
    let (listener, mqtt) = if tls {
        mqtt_common::make_certificates(&dir);
        (
            mqtt_common::tls_listener(&dir, port, false),
            format!(
                "[mqtt]\nurl = \"mqtts://127.0.0.1:{port}\"\nhall = \"load\"\nca_file = \"{}\"\n",
                dir.join("ca.pem").display()
            ),
        )
    } else {
        (
            format!("listener {port} 127.0.0.1\n"),
            format!("[mqtt]\nurl = \"mqtt://127.0.0.1:{port}\"\nhall = \"load\"\n"),
        )
    };
    let mut broker = mqtt_common::Broker::start_with(
        &mosquitto,
        &dir,
        port,
        &format!("allow_anonymous true\nmax_queued_messages 0\n{listener}"),
    );
    std::fs::write(
        dir.join("hall.toml"),
        format!("state_dir = \"hall-state\"\n[http]\ntoken = \"{TOKEN}\"\n{mqtt}"),
    )
    .unwrap();
    let mut command = Command::new(env!("CARGO_BIN_EXE_boardwatch"));
    command
        .args(["hall", "--listen", "127.0.0.1:0", "--config"])
        .arg(dir.join("hall.toml"))
        .env("RUST_LOG", "boardwatch=warn,boardwatch::hall=info");
    command
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::piped());
    let hall = Daemon::spawn(command);

    // Stamp every event as the hall's SSE stream delivers it.
    let arrivals: Arc<Mutex<HashMap<(String, u64), f64>>> = Arc::default();
    let sink = arrivals.clone();
    let url = hall.url("/events/stream");
    std::thread::spawn(move || {
        let response = reqwest::blocking::Client::builder()
            .timeout(None)
            .build()
            .unwrap()
            .get(&url)
            .send()
            .unwrap();
        for line in BufReader::new(response).lines() {
            let Ok(line) = line else { return };
            if let Some(data) = line.strip_prefix("data:") {
                let at = now();
                if let Ok(v) = serde_json::from_str::<Value>(data.trim()) {
                    if let (Some(board), Some(seq)) = (v["board"].as_str(), v["seq"].as_u64()) {
                        sink.lock().unwrap().insert((board.to_string(), seq), at);
                    }
                }
            }
        }
    });
    std::thread::sleep(Duration::from_millis(300));

    let synthetic = arg("--synthetic", 0);
    if synthetic > 0 {
        let raw: boardwatch::mqtt::config::RawMqtt = toml::from_str::<toml::Table>(&mqtt).unwrap()
            ["mqtt"]
            .clone()
            .try_into()
            .unwrap();
        let config = boardwatch::mqtt::MqttConfig::check(raw, &|p| p).unwrap();
        flood(
            config.options("hall-load-flood"),
            boards,
            synthetic,
            &arrivals,
        );
        broker.kill();
        return;
    }

    // The daemons: boards split among them, each playing sample games one after another.
    let games: Vec<(Vec<String>, Vec<String>)> = (0..20).map(sample_game).collect();
    let mut running = Vec::new();
    let mut board_dirs: Vec<(String, PathBuf)> = Vec::new();
    for d in 0..daemons {
        let folder = dir.join(format!("daemon{d}"));
        std::fs::create_dir_all(&folder).unwrap();
        let mut toml = format!("state_dir = \"state\"\n{mqtt}");
        for b in (0..boards).filter(|b| b % daemons == d) {
            let id = format!("b{b:03}");
            let mut text = String::new();
            for g in 0..(seconds * 1000 / pace_ms / 100 + 2) as usize {
                if g > 0 {
                    text.push_str("{\"op\":\"init\"}\n");
                }
                text.push_str(&(games[(b + g) % games.len()].0.join("\n") + "\n"));
            }
            std::fs::write(folder.join(format!("{id}.jsonl")), text).unwrap();
            toml.push_str(&format!(
                "[[boards]]\nid = \"{id}\"\nvariant = \"english\"\nsource = {{ kind = \"observations\", path = \"{id}.jsonl\", pace_ms = {pace_ms} }}\n"
            ));
            board_dirs.push((id, folder.join("state")));
        }
        let config = folder.join("boardwatch.toml");
        std::fs::write(&config, toml).unwrap();
        running.push(Daemon::start_with(&config, |c| {
            c.env("RUST_LOG", "boardwatch=warn,boardwatch::daemon=info,boardwatch::daemon::board=warn,boardwatch::daemon::supervisor=warn");
        }));
    }
    eprintln!("hall_load: {boards} boards on {daemons} daemons, a board state every {pace_ms} ms per board, {seconds} s");
    let started = Instant::now();
    // Latency is measured from here: the boards' first events (logged while the daemons open
    // them, before they reach the broker) are warm-up.
    let warm_until = now() + 5.0;
    let mut last_count = 0;
    while started.elapsed() < Duration::from_secs(seconds) {
        std::thread::sleep(Duration::from_secs(10));
        let count = arrivals.lock().unwrap().len();
        eprintln!(
            "  {:>4.0} s: {count} events at the hall ({:.0}/s)",
            started.elapsed().as_secs_f64(),
            (count - last_count) as f64 / 10.0
        );
        last_count = count;
    }
    for daemon in &mut running {
        daemon.terminate();
        for line in daemon
            .log
            .lock()
            .unwrap()
            .lines()
            .filter(|l| l.contains("not acknowledged"))
        {
            eprintln!("daemon: {line}");
        }
    }
    std::thread::sleep(Duration::from_secs(3));

    // Match every logged event with its arrival.
    let arrivals = arrivals.lock().unwrap().clone();
    let mut latencies = Vec::new();
    let (mut logged, mut missing, mut received) = (0usize, 0usize, 0usize);
    let (mut first_at, mut last_at) = (f64::MAX, 0f64);
    for (id, state) in &board_dirs {
        let log = std::fs::read_to_string(Path::new(state).join(id).join("events.jsonl")).unwrap();
        for line in log.lines() {
            let record: Value = serde_json::from_str(line).unwrap();
            let at = record["at"].as_f64().unwrap();
            for event in record["events"].as_array().unwrap() {
                logged += 1;
                match arrivals.get(&(id.clone(), event["seq"].as_u64().unwrap())) {
                    Some(arrived) => {
                        if at >= warm_until {
                            latencies.push((arrived - at) * 1000.0);
                        }
                        received += 1;
                        first_at = first_at.min(*arrived);
                        last_at = last_at.max(*arrived);
                    }
                    None => missing += 1,
                }
            }
        }
    }
    latencies.sort_by(f64::total_cmp);
    let span = (last_at - first_at).max(1e-9);
    println!("events logged by the daemons {logged}, received by the hall's SSE {received} ({missing} missing)");
    println!(
        "hall intake {:.0} events/s over {:.0} s",
        received as f64 / span,
        span
    );
    println!(
        "latency over the {} events logged after the first 5 s:",
        latencies.len()
    );
    if !latencies.is_empty() {
        println!(
            "latency synced log -> hall SSE: p50 {:.1} ms, p90 {:.1} ms, p99 {:.1} ms, max {:.1} ms",
            percentile(&latencies, 0.5),
            percentile(&latencies, 0.9),
            percentile(&latencies, 0.99),
            latencies.last().unwrap()
        );
    }
    broker.kill();
    drop(hall);
    if missing > 0 {
        eprintln!("hall_load: {missing} events did not reach the hall's stream");
        std::process::exit(1);
    }
}

/// Publish `per_board` events for each of `boards` boards as fast as the broker takes them, then
/// report what reached the hall's SSE stream and how long it took.
fn flood(
    options: rumqttc::MqttOptions,
    boards: usize,
    per_board: u64,
    arrivals: &Arc<Mutex<HashMap<(String, u64), f64>>>,
) {
    let (client, mut connection) = rumqttc::Client::new(options, 1000);
    std::thread::spawn(move || for _ in connection.iter() {});
    let total = boards as u64 * per_board;
    eprintln!(
        "hall_load: publishing {per_board} events for each of {boards} boards ({total} events)"
    );
    let mut sent_at: HashMap<(String, u64), f64> = HashMap::new();
    let started = now();
    for seq in 1..=per_board {
        for b in 0..boards {
            let id = format!("b{b:03}");
            let at = now();
            let event = serde_json::json!({"board": id, "seq": seq, "kind": "move", "line": format!("{seq}: OK: synthetic"), "sent": at});
            client
                .publish(
                    format!("boardwatch/load/{id}/events"),
                    rumqttc::QoS::AtLeastOnce,
                    false,
                    event.to_string(),
                )
                .unwrap();
            sent_at.insert((id, seq), at);
        }
    }
    let published = now() - started;
    let deadline = Instant::now() + Duration::from_secs(120);
    while arrivals.lock().unwrap().len() < total as usize && Instant::now() < deadline {
        std::thread::sleep(Duration::from_millis(100));
    }
    let arrivals = arrivals.lock().unwrap().clone();
    let mut latencies: Vec<f64> = sent_at
        .iter()
        .filter_map(|(key, at)| arrivals.get(key).map(|arrived| (arrived - at) * 1000.0))
        .collect();
    latencies.sort_by(f64::total_cmp);
    let last = arrivals.values().fold(0f64, |a, b| a.max(*b));
    println!(
        "published {total} events in {published:.1} s ({:.0}/s); the hall's SSE delivered {}",
        total as f64 / published,
        latencies.len()
    );
    println!(
        "hall intake {:.0} events/s (first publish to last arrival)",
        latencies.len() as f64 / (last - started)
    );
    if !latencies.is_empty() {
        println!(
            "latency publish -> hall SSE: p50 {:.1} ms, p90 {:.1} ms, p99 {:.1} ms, max {:.1} ms",
            percentile(&latencies, 0.5),
            percentile(&latencies, 0.9),
            percentile(&latencies, 0.99),
            latencies.last().unwrap()
        );
    }
}
