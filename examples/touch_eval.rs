//! Rendered table sessions of the tuning range (scenes 1 to 99) read by the camera pipeline, one
//! tap at a time: what was happening during every false tap, where the fingertip was during
//! every missed one, and the tip fill and size of the hands found.
//!
//! ```sh
//! cargo run --example touch_eval -- distractors --first 30 --scenes 4
//! cargo run --example touch_eval -- taps --first 40 --scenes 4
//! cargo run --example touch_eval -- rests --first 62 --scenes 20
//! cargo run --example touch_eval -- pattern --first 1 --scenes 99
//! ```
//!
//! `pattern` looks for the calibration pattern alone: the scene's camera, projector and room,
//! and what the search made of it (with `TOUCH_DEBUG_DIR`, the camera's frame of the pattern).
//!
//! `rests` renders arms resting at the edge alone, eight of two seconds each a scene (the
//! tuning scenes 62-81 were read this way for the flat-hand rule).
//!
//! With `TOUCH_DEBUG_DIR=DIR`, the camera frame and the foreground mask in the middle of every
//! false, missed or wrong-cell tap are written there, and every missed or wrong-cell tap is
//! printed with the regions reaching in at the middle of its dwell; with `TOUCH_FRAME_NOTES=1`
//! as well, every frame's foreground share and regions; with `TOUCH_DUMP_AT=T1,T2` the camera
//! frame and mask at those times (seconds) too. The held-apart scenes are scored by
//! `tests/touch_sessions.rs` (`held_apart_scenes`), never here; once a held-apart set has been
//! scored and reported it may be retired to tuning (`RETIRED`) and a fresh set frozen.

#[path = "../tests/touch_common/mod.rs"]
mod touch_common;

use boardwatch::synth::table::{random_distractor_script, random_table_scene, random_tap_script, Side, TableAction, TableScript};
use boardwatch::vision::source::rgb_image_to_mat;
use boardwatch::vision::table::find_pattern;
use touch_common::{game_pictures, pattern_frame, run_session, tap_session_line};

const FPS: f64 = 12.0;

/// Held-apart sets of taps and of distractors already scored and reported (BENCHMARKS.md), since
/// given over to tuning (first and last scene of each).
const RETIRED: [(u64, u64); 26] = [
    (900_001, 900_006),
    (910_001, 910_006),
    (920_001, 920_010),
    (930_001, 930_010),
    (940_001, 940_010),
    (950_001, 950_010),
    (960_001, 960_010),
    (970_001, 970_010),
    (980_001, 980_010),
    (990_001, 990_010),
    (1_000_001, 1_000_010),
    (1_010_001, 1_010_010),
    (1_020_001, 1_020_010),
    (1_400_001, 1_400_010),
    (1_410_001, 1_410_010),
    (1_420_001, 1_420_028),
    (1_430_001, 1_430_028),
    (1_440_001, 1_440_028),
    (1_450_001, 1_450_028),
    (1_460_001, 1_460_028),
    (1_470_001, 1_470_028),
    (1_480_001, 1_480_028),
    (1_490_001, 1_490_028),
    (1_500_001, 1_500_028),
    (1_510_001, 1_510_028),
    (1_520_001, 1_520_005),
];

fn is_tuning(first: u64, scenes: u64) -> bool {
    let last = first + scenes.max(1) - 1;
    (first >= 1 && last <= 99) || RETIRED.iter().any(|&(a, b)| first >= a && last <= b)
}

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let number = |name: &str, default: u64| -> u64 {
        match args.iter().position(|a| a == name) {
            Some(i) => args.get(i + 1).and_then(|v| v.parse().ok()).unwrap_or_else(|| {
                eprintln!("{name} needs a number");
                std::process::exit(2)
            }),
            None => default,
        }
    };
    let (first, scenes) = (number("--first", 30), number("--scenes", 4));
    if !is_tuning(first, scenes) {
        eprintln!("--first {first} --scenes {scenes}: the tuning scenes are 1 to 99 and the retired held-apart sets {RETIRED:?}");
        std::process::exit(2);
    }
    match args.first().map(String::as_str) {
        Some("distractors") => distractors(first, scenes),
        Some("taps") => taps(first, scenes),
        Some("rests") => rests(first, scenes),
        Some("pattern") => patterns(first, scenes),
        _ => {
            eprintln!("usage: touch_eval distractors|taps|rests|pattern [--first N] [--scenes N]");
            std::process::exit(2);
        }
    }
}

fn distractors(first: u64, scenes: u64) {
    let (mut false_taps, mut seconds) = (0, 0.0);
    for seed in first..first + scenes {
        let scene = random_table_scene(seed);
        let r = run_session(&scene, &random_distractor_script(seed, 60.0), &game_pictures(&scene, seed), FPS, seed);
        println!(
            "distractors scene {seed}: {}x{} cells, tilt {:.0}, {}x{} px, {:.0} s, {} false taps",
            scene.cols, scene.rows, scene.camera.tilt_deg, scene.width, scene.height, r.seconds, r.false_taps
        );
        for note in &r.false_tap_notes {
            println!("  {note}");
        }
        println!("  tip fills, area shares and bulks of false taps {:.3?}", r.false_fills);
        println!("  mean near fills of false taps lying across the grid's edge {:.3?}", r.false_edge_nears);
        print_frame_notes(&r);
        false_taps += r.false_taps;
        seconds += r.seconds;
    }
    println!("{false_taps} false taps in {:.1} min", seconds / 60.0);
}

/// Arms resting at the edge alone, two seconds each (shorter than a resting finger's limit, so
/// only the shape and the edge band keep them from tapping), from every side in turn.
fn rests(first: u64, scenes: u64) {
    let (mut false_taps, mut rests) = (0, 0);
    for seed in first..first + scenes {
        let scene = random_table_scene(seed);
        let mut actions = Vec::new();
        for side in Side::ALL.into_iter().chain(Side::ALL) {
            actions.push(TableAction::Pause { seconds: 0.6 });
            actions.push(TableAction::RestAtEdge { seconds: 2.0, side });
        }
        rests += 8;
        let r = run_session(&scene, &TableScript { actions }, &game_pictures(&scene, seed), FPS, seed);
        println!("rests scene {seed}: {}x{} cells, tilt {:.0}, {}x{} px, {} false taps", scene.cols, scene.rows, scene.camera.tilt_deg, scene.width, scene.height, r.false_taps);
        for note in &r.false_tap_notes {
            println!("  {note}");
        }
        println!("  mean near fills of false taps lying across the grid's edge {:.3?}", r.false_edge_nears);
        print_frame_notes(&r);
        false_taps += r.false_taps;
    }
    println!("{false_taps} false taps in {rests} rests");
}

fn taps(first: u64, scenes: u64) {
    let (mut right, mut intended, mut fills, mut nears) = (0, 0, Vec::new(), Vec::new());
    for seed in first..first + scenes {
        let scene = random_table_scene(seed);
        let script = random_tap_script(seed, scene.cols, scene.rows, 10);
        let r = run_session(&scene, &script, &game_pictures(&scene, seed), FPS, seed);
        println!("{} {:?}", tap_session_line(seed, &scene, &r), r.false_tap_notes);
        let missed = r
            .intended
            .iter()
            .filter(|t| !r.found.iter().any(|(_, f)| f.cell == t.cell && f.dwell_end > t.dwell_start_s && f.dwell_start < t.dwell_end_s));
        for t in missed {
            let tips: Vec<String> = r
                .tips
                .iter()
                .filter(|(time, _)| *time >= t.dwell_start_s && *time <= t.dwell_end_s)
                .map(|(_, tip)| tip.map_or("-".to_string(), |p| format!("{:.2},{:.2}", p[0], p[1])))
                .collect();
            println!("  missed {:?} at {:.1} s: fingertip {}", t.cell, t.dwell_start_s, tips.join(" "));
        }
        for note in r.missed_notes.iter().chain(&r.wrong_cell_notes) {
            println!("  {note}");
        }
        print_frame_notes(&r);
        right += r.right;
        intended += r.intended.len();
        fills.extend(r.right_fills);
        nears.extend(r.right_edge_nears);
    }
    fills.sort_by(|a, b| a.2.total_cmp(&b.2));
    nears.sort_by(f64::total_cmp);
    println!("{right} of {intended} taps right; tip fills, area shares and bulks (by bulk) {fills:.3?}");
    println!("mean near fills over the dwells of taps found lying across the grid's edge (sorted) {nears:.3?}");
}

/// The calibration pattern of each scene, looked for as the page's calibration does.
fn patterns(first: u64, scenes: u64) {
    let debug_dir = std::env::var_os("TOUCH_DEBUG_DIR").map(std::path::PathBuf::from);
    let mut found = 0;
    for seed in first..first + scenes {
        let scene = random_table_scene(seed);
        let (pattern, frame) = pattern_frame(&scene, seed);
        let (cam, pro) = (&scene.camera, &scene.projector);
        let outcome = match find_pattern(&rgb_image_to_mat(&frame).expect("frame to Mat"), &pattern, scene.cols, scene.rows) {
            Ok(_) => {
                found += 1;
                "found".to_string()
            }
            Err(e) => format!("NOT FOUND: {e}"),
        };
        println!(
            "pattern scene {seed}: tilt {:.0}, fov {:.0}, k1 {:.3}, fill {:.2}; keystone {:.0}, frame scale {:.2}, brightness {:.2}, black {:.2}; room {:.2}, table {:?} {:?}: {outcome}",
            cam.tilt_deg, cam.fov_deg, cam.k1, cam.fill, pro.keystone_deg, pro.frame_scale, pro.brightness, pro.black_level, scene.room.level, scene.table.finish, scene.table.color
        );
        if let Some(dir) = &debug_dir {
            std::fs::create_dir_all(dir).expect("debug directory");
            frame.save(dir.join(format!("scene{seed}_pattern.png"))).expect("pattern picture");
        }
    }
    println!("{found} of {scenes} patterns found");
}

/// With `TOUCH_FRAME_NOTES` (and `TOUCH_DEBUG_DIR`): every frame's foreground and regions.
fn print_frame_notes(r: &touch_common::SessionResult) {
    if std::env::var_os("TOUCH_FRAME_NOTES").is_some() {
        for (t, note) in &r.frame_notes {
            println!("    {t:.2} {note}");
        }
    }
}
