//! Rendered sessions at a projected table, read by the camera pipeline: intended taps land on
//! their cells, and hands passing, arms resting, people leaning in and the page changing give
//! no tap. Tuning scenes by default; the held-apart ones are measured by the ignored
//! `held_apart_scenes` (BENCHMARKS.md), how late a tap reaches a page by
//! `cargo bench --bench touch`, and tuning scenes are explained one tap at a time by
//! `cargo run --example touch_eval`.

mod touch_common;

use boardwatch::synth::table::{random_distractor_script, random_table_scene, random_tap_script, table_session_truth};
use touch_common::{game_pictures, run_session, tap_session_line, try_run_session};

const FPS: f64 = 12.0;

fn small_scene(seed: u64) -> boardwatch::synth::table::TableScene {
    let mut scene = random_table_scene(seed);
    scene.width = 480;
    scene.height = 360;
    scene
}

#[test]
fn intended_taps_land_on_their_cells() {
    let (mut right, mut intended, mut false_taps) = (0, 0, 0);
    for seed in [11u64, 12] {
        let scene = small_scene(seed);
        let script = random_tap_script(seed, scene.cols, scene.rows, 5);
        let result = run_session(&scene, &script, &game_pictures(&scene, seed), FPS, seed);
        eprintln!("{}; latencies {:?}", tap_session_line(seed, &scene, &result), result.latencies);
        right += result.right;
        intended += result.intended.len();
        false_taps += result.false_taps;
        for latency in &result.latencies {
            assert!(*latency < 0.6, "scene {seed}: a tap came {latency:.2} s after its dwell ended");
        }
    }
    assert!(right + 1 >= intended, "{right} of {intended} taps right");
    assert!(false_taps <= 1, "{false_taps} false taps");
}

#[test]
fn distractors_alone_give_no_tap() {
    let mut false_taps = 0;
    let mut seconds = 0.0;
    for seed in [21u64, 22] {
        let scene = small_scene(seed);
        let script = random_distractor_script(seed, 25.0);
        let result = run_session(&scene, &script, &game_pictures(&scene, seed), FPS, seed);
        eprintln!("scene {seed}: {:.0} s of distractors, {} false taps: {:?}", result.seconds, result.false_taps, result.found);
        false_taps += result.false_taps;
        seconds += result.seconds;
    }
    assert!(seconds > 40.0);
    assert_eq!(false_taps, 0, "false taps in {seconds:.0} s of distractors");
}

/// Scenes held apart from tuning, scored once per set (`TOUCH_FIRST_TAPS` and
/// `TOUCH_FIRST_DISTRACTORS` name the set; tuning uses scenes 1 to 99 and the sets already scored
/// and retired, which `examples/touch_eval.rs` lists): the figures in BENCHMARKS.md. By default,
/// for `make corpus`, 3 sessions of 10 taps from 900001 and 120 s of distractors from 1400001:
/// the first held-apart sets, since retired to tuning, kept as a regression check.
#[test]
#[ignore]
fn held_apart_scenes() {
    let sessions: u64 = std::env::var("TOUCH_SESSIONS").ok().and_then(|v| v.parse().ok()).unwrap_or(3);
    let distractor_seconds: f64 = std::env::var("TOUCH_DISTRACTOR_SECONDS").ok().and_then(|v| v.parse().ok()).unwrap_or(120.0);
    // Later held-apart sets start elsewhere (BENCHMARKS.md names each): TOUCH_FIRST_TAPS, TOUCH_FIRST_DISTRACTORS.
    let first_taps: u64 = std::env::var("TOUCH_FIRST_TAPS").ok().and_then(|v| v.parse().ok()).unwrap_or(900_001);
    let first_distractors: u64 = std::env::var("TOUCH_FIRST_DISTRACTORS").ok().and_then(|v| v.parse().ok()).unwrap_or(1_400_001);
    // TOUCH_DISTRACTOR_SCENES: at most this many distractor scenes (a frozen set's last scene).
    let distractor_scenes: u64 = std::env::var("TOUCH_DISTRACTOR_SCENES").ok().and_then(|v| v.parse().ok()).unwrap_or(u64::MAX);
    assert!(first_taps >= 100 && first_distractors >= 100, "the scenes below 100 are the tuning scenes, not held apart");
    let (mut intended, mut right, mut wrong, mut missed, mut false_in_taps) = (0, 0, 0, 0, 0);
    let (mut latencies, mut frames, mut pipeline) = (Vec::new(), 0usize, 0.0f64);
    // Scenes whose calibration pattern was not found.
    let mut uncalibrated: Vec<u64> = Vec::new();
    for k in 0..sessions {
        let seed = first_taps + k;
        let scene = random_table_scene(seed);
        let script = random_tap_script(seed, scene.cols, scene.rows, 10);
        let r = match try_run_session(&scene, &script, &game_pictures(&scene, seed), FPS, seed) {
            Ok(r) => r,
            Err(e) => {
                // Nothing can be played on a table whose calibration fails: its taps count as missed.
                let taps = table_session_truth(&scene, &script, FPS).expect("truth").taps.len();
                eprintln!("taps scene {seed}: not calibrated ({e}); its {taps} taps counted missed");
                (intended, missed) = (intended + taps, missed + taps);
                uncalibrated.push(seed);
                continue;
            }
        };
        eprintln!("{}", tap_session_line(seed, &scene, &r));
        intended += r.intended.len();
        right += r.right;
        wrong += r.wrong_cell;
        missed += r.missed;
        false_in_taps += r.false_taps;
        latencies.extend(r.latencies);
        frames += r.frames;
        pipeline += r.pipeline_seconds;
    }
    let (mut false_taps, mut seconds, mut k) = (0, 0.0, 0);
    while seconds < distractor_seconds && k < distractor_scenes {
        let seed = first_distractors + k;
        k += 1;
        let scene = random_table_scene(seed);
        let r = match try_run_session(&scene, &random_distractor_script(seed, 60.0), &game_pictures(&scene, seed), FPS, seed) {
            Ok(r) => r,
            Err(e) => {
                // Its minutes are not counted: a table that is not calibrated sees no taps at all.
                eprintln!("distractors scene {seed}: not calibrated ({e}); not counted");
                uncalibrated.push(seed);
                continue;
            }
        };
        eprintln!("distractors scene {seed}: {:.0} s, {} false taps", r.seconds, r.false_taps);
        false_taps += r.false_taps;
        seconds += r.seconds;
        frames += r.frames;
        pipeline += r.pipeline_seconds;
    }
    latencies.sort_by(f64::total_cmp);
    let median = latencies.get(latencies.len() / 2).copied().unwrap_or(f64::NAN);
    eprintln!(
        "held apart: {right} of {intended} taps on their cell ({:.1}%), {wrong} on another cell, {missed} missed, {false_in_taps} false among them; \
         {false_taps} false taps in {:.1} min of distractors; dwell end to tap median {median:.3} s; pipeline {:.2} ms a frame; \
         not calibrated: {uncalibrated:?}",
        100.0 * right as f64 / intended.max(1) as f64,
        seconds / 60.0,
        1000.0 * pipeline / frames.max(1) as f64
    );
    // The bar held today (see BENCHMARKS.md); the is 99% and 1 false tap in 30 minutes.
    assert!(right as f64 >= 0.8 * intended as f64, "{right} of {intended}");
}
