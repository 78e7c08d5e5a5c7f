//! Soak: the daemon follows 8 boards for a long time (10 minutes by default) from looping
//! observation files: sample games played one after another, each new game started by an
//! operator command in the file, faster than real time. Over time it samples the daemon's
//! memory (RSS), threads, open file descriptors and published events, prints them as a table,
//! and checks that memory stays flat, nothing leaks, and every published event is in the logs.
//!
//! `cargo bench --bench soak -- --seconds 600 --pace-ms 40 --boards 8`
//! (`BW_SOAK_SECONDS` also sets the duration). Exits non-zero when a check fails.

#[path = "../tests/daemon_common/mod.rs"]
mod daemon_common;

use std::io::Write;
use std::path::Path;
use std::time::{Duration, Instant};

use daemon_common::{moves_of, sample_game, temp_dir, write_config, Daemon};
use serde_json::Value;

struct Options {
    seconds: u64,
    pace_ms: u64,
    boards: usize,
}

fn options() -> Options {
    let mut o = Options {
        seconds: std::env::var("BW_SOAK_SECONDS").ok().and_then(|s| s.parse().ok()).unwrap_or(600),
        pace_ms: 40,
        boards: 8,
    };
    let args: Vec<String> = std::env::args().collect();
    let mut i = 1;
    while i < args.len() {
        let value = || args.get(i + 1).and_then(|v| v.parse::<u64>().ok()).unwrap_or_else(|| panic!("{} needs a number", args[i]));
        match args[i].as_str() {
            "--seconds" => o.seconds = value(),
            "--pace-ms" => o.pace_ms = value(),
            "--boards" => o.boards = value() as usize,
            _ => {} // `--bench` from cargo
        }
        i += if args[i].starts_with("--") && args[i] != "--bench" { 2 } else { 1 };
    }
    o
}

#[derive(Clone, Debug)]
struct Sample {
    at_s: f64,
    rss_kb: u64,
    threads: u64,
    fds: usize,
    cpu_s: f64,
    events: u64,
    states: u64,
    load1: f64,
}

fn status_field(pid: u32, name: &str) -> u64 {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).unwrap();
    let line = status.lines().find(|l| l.starts_with(name)).unwrap_or_else(|| panic!("{name} not in /proc/{pid}/status"));
    line.split_whitespace().nth(1).unwrap().parse().unwrap()
}

/// User + system CPU seconds of the process.
fn cpu_seconds(pid: u32) -> f64 {
    daemon_common::cpu_seconds(pid).unwrap_or_else(|| panic!("/proc/{pid}/stat cannot be read"))
}

fn load1() -> f64 {
    std::fs::read_to_string("/proc/loadavg").unwrap().split_whitespace().next().unwrap().parse().unwrap()
}

/// One board's looping source: games appended to its file as the daemon reads it.
struct Feed {
    path: std::path::PathBuf,
    lines: u64,
    next_game: usize,
    moves: Vec<String>,
}

impl Feed {
    fn append_game(&mut self, games: &[(Vec<String>, Vec<String>)], first: bool) {
        let (lines, moves) = &games[self.next_game % games.len()];
        self.next_game += 1;
        let mut text = String::new();
        if !first {
            // A new game, as an operator starts one, then the board set up again.
            text.push_str("{\"op\":\"init\"}\n");
            self.lines += 1;
        }
        for line in lines {
            text.push_str(line);
            text.push('\n');
        }
        self.lines += lines.len() as u64;
        self.moves.extend(moves.iter().cloned());
        let mut file = std::fs::OpenOptions::new().create(true).append(true).open(&self.path).unwrap();
        file.write_all(text.as_bytes()).unwrap();
    }
}

fn mean(xs: &[f64]) -> f64 {
    xs.iter().sum::<f64>() / xs.len().max(1) as f64
}

fn main() {
    let o = options();
    let dir = temp_dir("soak");
    let games: Vec<(Vec<String>, Vec<String>)> = (0..20).map(sample_game).collect();
    let mut boards_toml = String::new();
    let mut feeds = Vec::new();
    for b in 0..o.boards {
        let path = dir.join(format!("board{b}.jsonl"));
        let mut feed = Feed { path, lines: 0, next_game: b * 3, moves: Vec::new() };
        feed.append_game(&games, true);
        feeds.push(feed);
        boards_toml.push_str(&format!(
            "[[boards]]\nid = \"b{b}\"\nvariant = \"english\"\nsource = {{ kind = \"observations\", path = \"board{b}.jsonl\", pace_ms = {}, follow = true }}\n",
            o.pace_ms
        ));
    }
    let config = write_config(&dir, &boards_toml);
    let mut daemon = Daemon::start_with(&config, |c| {
        // "listening on" is info; every event's line is too, and would only fill the pipe.
        c.env("RUST_LOG", "warn,boardwatch::daemon=info,boardwatch::daemon::board=warn");
    });
    let pid = daemon.child.id();
    eprintln!(
        "soak: {} boards, a board state every {} ms, {} s, daemon pid {pid}, state in {}",
        o.boards,
        o.pace_ms,
        o.seconds,
        dir.display()
    );

    let started = Instant::now();
    let duration = Duration::from_secs(o.seconds);
    let interval = Duration::from_secs((o.seconds / 40).clamp(1, 15));
    let mut samples: Vec<Sample> = Vec::new();
    let mut next_sample = started;
    println!("{:>7} {:>9} {:>7} {:>5} {:>8} {:>8} {:>8} {:>5}", "t (s)", "RSS (kB)", "threads", "fds", "CPU (s)", "events", "inputs", "load");
    while started.elapsed() < duration {
        let boards = daemon.get_json("/boards");
        // Keep every file a game ahead of the reader: the source never runs dry.
        for (feed, board) in feeds.iter_mut().zip(boards.as_array().unwrap()) {
            if board["source"]["frames"].as_u64().unwrap_or(0) + 150 > feed.lines {
                feed.append_game(&games, false);
            }
        }
        if Instant::now() >= next_sample {
            next_sample += interval;
            let events: u64 = boards.as_array().unwrap().iter().map(|b| b["last_seq"].as_u64().unwrap_or(0)).sum();
            let states: u64 = boards.as_array().unwrap().iter().map(|b| b["source"]["frames"].as_u64().unwrap_or(0)).sum();
            let s = Sample {
                at_s: started.elapsed().as_secs_f64(),
                rss_kb: status_field(pid, "VmRSS:"),
                threads: status_field(pid, "Threads:"),
                fds: std::fs::read_dir(format!("/proc/{pid}/fd")).unwrap().count(),
                cpu_s: cpu_seconds(pid),
                events,
                states,
                load1: load1(),
            };
            println!(
                "{:>7.0} {:>9} {:>7} {:>5} {:>8.1} {:>8} {:>8} {:>5.2}",
                s.at_s, s.rss_kb, s.threads, s.fds, s.cpu_s, s.events, s.states, s.load1
            );
            samples.push(s);
        }
        std::thread::sleep(Duration::from_millis(200));
    }

    // Let every board read its file to the end, then compare the published events with the logs.
    let drain_deadline = Instant::now() + Duration::from_secs(120);
    loop {
        let boards = daemon.get_json("/boards");
        let behind = feeds
            .iter()
            .zip(boards.as_array().unwrap())
            .any(|(f, b)| b["source"]["frames"].as_u64().unwrap_or(0) < f.lines);
        if !behind {
            break;
        }
        assert!(Instant::now() < drain_deadline, "the boards did not read their files to the end in time");
        std::thread::sleep(Duration::from_millis(200));
    }
    std::thread::sleep(Duration::from_millis(500));
    let mut failures = Vec::new();
    let mut total_events = 0;
    let mut total_moves = 0;
    for (b, feed) in feeds.iter().enumerate() {
        let published = daemon.get_json(&format!("/boards/b{b}/events"));
        let published = published.as_array().unwrap();
        let logged = logged_events(&dir.join(format!("state/b{b}/events.jsonl")));
        total_events += published.len();
        let published_as_logged: Vec<Value> = published
            .iter()
            .map(|e| {
                let mut e = e.clone();
                e.as_object_mut().unwrap().retain(|k, _| k != "board" && k != "grid");
                e
            })
            .collect();
        if logged != published_as_logged {
            failures.push(format!("board b{b}: {} events published, {} in the log, not the same", published.len(), logged.len()));
        }
        let moves = moves_of(published);
        total_moves += moves.len();
        if moves != feed.moves {
            let first = moves.iter().zip(&feed.moves).position(|(a, b)| a != b).unwrap_or(moves.len().min(feed.moves.len()));
            failures.push(format!("board b{b}: {} moves recorded, {} played; first difference at move {first}", moves.len(), feed.moves.len()));
        }
    }
    let final_rss = status_field(pid, "VmRSS:");
    daemon.terminate();

    // Flat: the last third of the run against the middle third (the first is the warm-up).
    let n = samples.len();
    let third = n / 3;
    let middle = &samples[third..2 * third];
    let last = &samples[2 * third..];
    let rss = |s: &[Sample]| mean(&s.iter().map(|x| x.rss_kb as f64).collect::<Vec<_>>());
    let growth = rss(last) / rss(middle) - 1.0;
    let max_of = |s: &[Sample], f: fn(&Sample) -> f64| s.iter().map(f).fold(f64::MIN, f64::max);
    let threads_growth = max_of(last, |s| s.threads as f64) - max_of(middle, |s| s.threads as f64);
    let fds_growth = max_of(last, |s| s.fds as f64) - max_of(middle, |s| s.fds as f64);
    let (first, end) = (&samples[third], &samples[n - 1]);
    let per_event = (end.rss_kb as f64 - first.rss_kb as f64) * 1024.0 / (end.events - first.events).max(1) as f64;
    println!();
    println!("duration {:.0} s, {} boards, a board state every {} ms per board", samples.last().map_or(0.0, |s| s.at_s), o.boards, o.pace_ms);
    println!("events published {total_events}, moves {total_moves} ({:.0} moves/s)", total_moves as f64 / o.seconds as f64);
    println!("RSS: middle third {:.0} kB, last third {:.0} kB ({:+.1}%), final {final_rss} kB; {:.0} bytes per event from the middle on", rss(middle), rss(last), growth * 100.0, per_event);
    println!("threads: {:+} (last third's max against the middle's), fds: {:+}", threads_growth, fds_growth);
    println!("CPU: {:.1} s over the run ({:.0}% of one core); load average {:.2} .. {:.2}", end.cpu_s, end.cpu_s / end.at_s * 100.0,
        samples.iter().map(|s| s.load1).fold(f64::MAX, f64::min), samples.iter().map(|s| s.load1).fold(f64::MIN, f64::max));
    if growth > 0.05 {
        failures.push(format!("memory grew {:+.1}% from the middle third to the last", growth * 100.0));
    }
    if threads_growth > 0.0 {
        failures.push(format!("threads grew by {threads_growth}"));
    }
    if fds_growth > 2.0 {
        failures.push(format!("open files grew by {fds_growth}"));
    }
    if failures.is_empty() {
        println!("soak: all checks passed");
        let _ = std::fs::remove_dir_all(&dir);
    } else {
        for f in &failures {
            println!("FAILED: {f}");
        }
        println!("(state kept in {})", dir.display());
        std::process::exit(1);
    }
}

/// The events of every record of a log, in order.
fn logged_events(path: &Path) -> Vec<Value> {
    let text = std::fs::read_to_string(path).unwrap();
    text.lines()
        .flat_map(|l| serde_json::from_str::<Value>(l).unwrap()["events"].as_array().unwrap().clone())
        .collect()
}

