//! The daemon killed with SIGKILL at random moments of a game and started again: every move an
//! SSE client saw before a kill is in the final record, exactly once, with the same sequence
//! number, and the record is the whole game.

mod daemon_common;

use std::collections::BTreeMap;
use std::time::{Duration, Instant};

use daemon_common::{moves_of, sample_game_config, temp_dir, Daemon, SseClient};
use rand::{Rng, SeedableRng};
use serde_json::Value;

#[test]
fn sigkill_at_random_moments_loses_and_repeats_nothing() {
    let tmp = temp_dir("crash");
    let dir = tmp.path();
    let (config, expected) = sample_game_config(&dir, 0, 8);
    let seed: u64 = std::env::var("BW_CRASH_SEED").ok().and_then(|s| s.parse().ok()).unwrap_or_else(rand::random);
    eprintln!("seed {seed} (BW_CRASH_SEED={seed} repeats this run)");
    let mut rng = rand::rngs::StdRng::seed_from_u64(seed);

    // seq -> event, as seen by the SSE clients of all runs.
    let mut seen: BTreeMap<u64, Value> = BTreeMap::new();
    let mut kills = 0;
    let started = Instant::now();
    loop {
        let mut daemon = Daemon::start(&config);
        let sse = SseClient::connect(&daemon.url("/boards/t/events/stream"));
        // Kill somewhere in the next 0-250 ms: while reading, tracking, logging or publishing.
        let wait = Duration::from_millis(rng.gen_range(0..250));
        let received = sse.collect_until(wait, |_| false);
        let finished = daemon.get_json("/boards/t")["source"]["state"] == "ended";
        if finished || started.elapsed() > Duration::from_secs(60) {
            // The last run: let the client catch up, then compare.
            let received = received.into_iter().chain(sse.collect_until(Duration::from_millis(300), |_| false));
            remember(&mut seen, received.map(|(_, e)| e));
            let state = daemon.get_json("/boards/t");
            let recorded: Vec<String> = serde_json::from_value(state["game"]["moves"].clone()).unwrap();
            assert_eq!(recorded, expected, "the record is the whole game ({kills} kills, seed {seed})");
            let pdn_http = daemon.get_text("/boards/t/game.pdn");
            let pdn_disk = std::fs::read_to_string(dir.join("state/t/game.pdn")).unwrap();
            assert_eq!(pdn_http, pdn_disk);
            assert_eq!(daemon_common::pdn_moves(&pdn_http), expected);
            let history = daemon.get_json("/boards/t/events");
            check_against_history(&seen, history.as_array().unwrap(), &expected, seed);
            daemon.kill();
            break;
        }
        daemon.kill();
        kills += 1;
        remember(&mut seen, received.into_iter().map(|(_, e)| e));
    }
    assert!(kills >= 3, "the game ended before the daemon was killed enough ({kills} kills); make it longer");
    eprintln!("{kills} kills, {} events seen over SSE", seen.len());

    // The log itself: every move once, sequence numbers strictly rising.
    let log = std::fs::read_to_string(dir.join("state/t/events.jsonl")).unwrap();
    let logged: Vec<Value> = log
        .lines()
        .flat_map(|l| serde_json::from_str::<Value>(l).unwrap()["events"].as_array().unwrap().clone())
        .collect();
    assert_eq!(moves_of(&logged), expected);
    let seqs: Vec<u64> = logged.iter().map(|e| e["seq"].as_u64().unwrap()).collect();
    assert!(seqs.windows(2).all(|w| w[1] == w[0] + 1), "{seqs:?}");
}

/// Add what a client received, checking that a sequence number never names two different events.
fn remember(seen: &mut BTreeMap<u64, Value>, events: impl Iterator<Item = Value>) {
    for event in events {
        let seq = event["seq"].as_u64().unwrap();
        if let Some(before) = seen.get(&seq) {
            assert_eq!(before, &event, "event {seq} was published twice, differently");
        }
        seen.insert(seq, event);
    }
}

fn check_against_history(seen: &BTreeMap<u64, Value>, history: &[Value], expected: &[String], seed: u64) {
    let by_seq: BTreeMap<u64, &Value> = history.iter().map(|e| (e["seq"].as_u64().unwrap(), e)).collect();
    assert_eq!(by_seq.len(), history.len(), "a sequence number twice in the history (seed {seed})");
    for (seq, event) in seen {
        assert_eq!(by_seq.get(seq).copied(), Some(event), "event {seq} seen over SSE is not in the record as seen (seed {seed})");
    }
    assert_eq!(moves_of(history), expected, "every move exactly once (seed {seed})");
    let seen_moves = moves_of(&seen.values().cloned().collect::<Vec<_>>());
    assert!(!seen_moves.is_empty());
}
