//! Faults of the machine: the daemon's records stop fitting on the disk in the middle of a game.
//! The daemon runs under a file-size limit (`RLIMIT_FSIZE`, SIGXFSZ ignored so that writes fail
//! with EFBIG as on a full disk); the test lowers the limit mid-game to just past the log's
//! size, so that the next record is cut off mid-line, then lifts it again. Meanwhile the log on
//! disk must stay a list of whole records, the PDN files must parse, the API must say that
//! recording fails and why; afterwards the game must complete with every move recorded once.

mod daemon_common;

use std::os::unix::process::CommandExt;
use std::time::{Duration, Instant};

use daemon_common::{moves_of, pdn_moves, sample_game_config, temp_dir, write_config, Daemon, SseClient, TOKEN};
use serde_json::Value;

/// Set the soft file-size limit of process `pid` (the hard limit stays unlimited).
fn set_file_size_limit(pid: u32, limit: Option<u64>) {
    let soft = limit.unwrap_or(libc::RLIM_INFINITY);
    let new = libc::rlimit { rlim_cur: soft, rlim_max: libc::RLIM_INFINITY };
    let done = unsafe { libc::prlimit(pid as libc::pid_t, libc::RLIMIT_FSIZE, &new, std::ptr::null_mut()) };
    assert_eq!(done, 0, "prlimit: {}", std::io::Error::last_os_error());
}

/// Every line of the log is a whole JSON record; their events, in order.
fn logged_events(text: &str) -> Vec<Value> {
    assert!(text.is_empty() || text.ends_with('\n'), "the log ends mid-line: {:?}", &text[text.len().saturating_sub(80)..]);
    text.lines()
        .enumerate()
        .flat_map(|(i, l)| {
            let record: Value = serde_json::from_str(l).unwrap_or_else(|e| panic!("log line {}: {e}: {l}", i + 1));
            record["events"].as_array().unwrap().clone()
        })
        .collect()
}

/// An event as the API publishes it, without what the API adds to the logged one.
fn as_logged(events: &[Value]) -> Vec<Value> {
    events
        .iter()
        .map(|e| {
            let mut e = e.clone();
            let object = e.as_object_mut().unwrap();
            object.remove("board");
            object.remove("grid");
            e
        })
        .collect()
}

#[test]
fn a_full_disk_mid_game_is_reported_and_recording_resumes_losing_nothing() {
    let tmp = temp_dir("faults");
    let dir = tmp.path();
    let (config, expected) = sample_game_config(&dir, 0, 25);
    let mut daemon = Daemon::start_with(&config, |command| unsafe {
        command.pre_exec(|| {
            // Ignored, the signal a process gets past its file-size limit leaves a failed write.
            libc::signal(libc::SIGXFSZ, libc::SIG_IGN);
            Ok(())
        });
    });
    let pid = daemon.child.id();
    let sse = SseClient::connect(&daemon.url("/boards/t/events/stream"));
    let log_path = dir.join("state/t/events.jsonl");

    // Mid-game: the log may grow by a fraction of a record, then the "disk" is full.
    daemon.wait_for_board("t", "five moves", |s| s["game"]["moves"].as_array().map_or(0, Vec::len) >= 5);
    let size = std::fs::metadata(&log_path).unwrap().len();
    set_file_size_limit(pid, Some(size + 60));
    let failing = daemon.wait_for_board("t", "recording failing", |s| s["recording"] == "failing");
    let error = failing["records"]["error"].as_str().unwrap();
    assert!(error.contains("events.jsonl") && error.contains("File too large"), "{error}");
    assert!(failing["records"]["since"].as_str().unwrap().ends_with('Z'), "{failing:#}");
    let health = daemon.get_json("/health");
    assert_eq!(health["status"], "degraded", "{health:#}");
    assert_eq!(health["boards"][0]["recording"], "failing", "{health:#}");

    // Nothing moves while the disk is full: the same input is tried again, nothing after it read.
    let moves_then = failing["game"]["moves"].as_array().unwrap().len();
    std::thread::sleep(Duration::from_millis(800));
    let still = daemon.get_json("/boards/t");
    assert_eq!(still["recording"], "failing");
    assert_eq!(still["game"]["moves"].as_array().unwrap().len(), moves_then, "a move recorded on a full disk");
    assert!(still["records"]["failed_attempts"].as_u64().unwrap() >= 2, "{still:#}");
    let (status, body) = daemon.act("t", Some(TOKEN), r#"{"op": "draw"}"#);
    assert_eq!(status, 503, "{body}");

    // On disk meanwhile: whole records only (the cut-off one was removed), and every event
    // published so far is among them; the PDN files parse and hold the moves recorded.
    let text = std::fs::read_to_string(&log_path).unwrap();
    assert!(text.len() as u64 <= size + 60);
    let logged = logged_events(&text);
    let published = daemon.get_json("/boards/t/events");
    let published = published.as_array().unwrap();
    assert_eq!(logged, as_logged(published), "published events and the log differ while the disk is full");
    let recorded = moves_of(published);
    assert_eq!(recorded, expected[..recorded.len()]);
    let game_pdn = std::fs::read_to_string(dir.join("state/t/game.pdn")).unwrap();
    assert_eq!(pdn_moves(&game_pdn), recorded);
    let games_pdn = std::fs::read_to_string(dir.join("state/t/games.pdn")).unwrap();
    assert_eq!(pdn_moves(&games_pdn), recorded);

    // Room again: the game completes by itself, and the API is clear.
    let freed = Instant::now();
    set_file_size_limit(pid, None);
    let done = daemon.wait_for_board("t", "the end of the game", |s| s["source"]["state"] == "ended");
    assert_eq!(done["recording"], "ok", "{done:#}");
    assert!(done["records"].get("error").is_none(), "{done:#}");
    assert_eq!(daemon.get_json("/health")["status"], "ok");
    let moves: Vec<String> = serde_json::from_value(done["game"]["moves"].clone()).unwrap();
    assert_eq!(moves, expected, "every move once, in order");
    eprintln!("recording resumed; the game ended {:.1} s after the disk had room", freed.elapsed().as_secs_f64());

    // Every event a listener saw is in the log once, in order, and nothing else.
    let seen: Vec<Value> = sse
        .collect_until(Duration::from_secs(2), |e| e["seq"] == done["last_seq"])
        .into_iter()
        .map(|(_, e)| e)
        .collect();
    let logged = logged_events(&std::fs::read_to_string(&log_path).unwrap());
    let seqs: Vec<u64> = logged.iter().map(|e| e["seq"].as_u64().unwrap()).collect();
    assert!(seqs.windows(2).all(|w| w[1] == w[0] + 1), "{seqs:?}");
    assert_eq!(as_logged(&seen), logged, "the events seen live are the log's");
    assert_eq!(moves_of(&logged), expected);
    assert_eq!(pdn_moves(&daemon.get_text("/boards/t/game.pdn")), expected);
    assert_eq!(pdn_moves(&std::fs::read_to_string(dir.join("state/t/game.pdn")).unwrap()), expected);

    let stderr = daemon.log.lock().unwrap().clone();
    assert!(stderr.contains("recording failing") && stderr.contains("File too large"), "{stderr}");
    assert!(stderr.contains("recording again after"), "{stderr}");
    daemon.terminate();

    // And a restart replays the log to the same game.
    let daemon = Daemon::start(&config);
    let again = daemon.wait_for_board("t", "the replayed game", |s| s["source"]["state"] == "ended");
    assert_eq!(again["game"]["moves"], done["game"]["moves"]);
}

/// The cursor (frame number) of the last record of a log.
fn last_cursor(text: &str) -> Option<u64> {
    text.lines().filter_map(|l| serde_json::from_str::<Value>(l).ok()?["cursor"].as_u64()).last()
}

/// A video file on a full disk: the board state that could not be written is handed again, and
/// no later frame is read until it is written, so the log's cursor never passes a frame whose
/// board state was not recorded, and every move of the recording is in the record once.
#[test]
fn a_video_on_a_full_disk_waits_at_the_unrecorded_frame_and_loses_no_move() {
    let Some(video) = daemon_common::sample_video() else { return };
    let truth: Value =
        serde_json::from_str(&std::fs::read_to_string(video.with_extension("truth.json")).unwrap()).unwrap();
    let compact = |pdn: &str| match pdn.split_once('x') {
        Some((from, rest)) => format!("{from}x{}", rest.rsplit('x').next().unwrap_or(rest)),
        None => pdn.to_string(),
    };
    let expected: Vec<String> = truth["plies"].as_array().unwrap().iter().map(|p| compact(p["pdn"].as_str().unwrap())).collect();
    let tmp = temp_dir("faults-video");
    let dir = tmp.path();
    let config = write_config(
        &dir,
        &format!(
            "[[boards]]\nid = \"v\"\nvariant = \"english\"\npalette = \"seed\"\nsource = {{ kind = \"video\", path = \"{}\", realtime = false }}\n",
            video.display()
        ),
    );
    let daemon = Daemon::start_with(&config, |command| unsafe {
        command.pre_exec(|| {
            libc::signal(libc::SIGXFSZ, libc::SIG_IGN);
            Ok(())
        });
    });
    let pid = daemon.child.id();
    let log_path = dir.join("state/v/events.jsonl");
    daemon.wait_for_board("v", "three moves", |s| s["game"]["moves"].as_array().map_or(0, Vec::len) >= 3);
    set_file_size_limit(pid, Some(std::fs::metadata(&log_path).unwrap().len() + 60));
    let failing = daemon.wait_for_board("v", "recording failing", |s| s["recording"] == "failing");
    let frames = failing["source"]["frames"].as_u64().unwrap();
    let cursor = last_cursor(&std::fs::read_to_string(&log_path).unwrap()).unwrap();
    assert!(cursor < frames, "the frame that failed is after the last recorded one");
    std::thread::sleep(Duration::from_millis(1000));
    let still = daemon.get_json("/boards/v");
    assert_eq!(still["recording"], "failing");
    assert_eq!(still["source"]["frames"].as_u64().unwrap(), frames, "frames were read past the unrecorded one");
    let text = std::fs::read_to_string(&log_path).unwrap();
    assert_eq!(last_cursor(&text), Some(cursor), "the cursor moved on a full disk");
    logged_events(&text);

    set_file_size_limit(pid, None);
    let done = Instant::now() + Duration::from_secs(240);
    let state = loop {
        let state = daemon.get_json("/boards/v");
        if state["source"]["state"] == "ended" {
            break state;
        }
        assert!(Instant::now() < done, "the recording never ended: {state:#}");
        std::thread::sleep(Duration::from_millis(100));
    };
    assert_eq!(state["recording"], "ok");
    assert_eq!(state["source"]["frames"], 1425);
    let moves: Vec<String> = serde_json::from_value(state["game"]["moves"].clone()).unwrap();
    assert_eq!(moves, expected, "every move of the recording once, in order");
    let logged = logged_events(&std::fs::read_to_string(&log_path).unwrap());
    assert_eq!(moves_of(&logged), expected);
    assert_eq!(logged, as_logged(daemon.get_json("/boards/v/events").as_array().unwrap()));
}
