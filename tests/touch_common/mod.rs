//! Rendered sessions at a projected table read by the camera pipeline, for the tests and the
//! benchmark: calibrate from the rendered pattern as a page would have it projected, then
//! every frame through `TableWatcher`, and the taps found matched against the intended ones.
#![allow(dead_code)]

use boardwatch::synth::table::{
    calibration_picture, grid_picture, plan_table_session, render_table_frame, table_session_truth, TableScene, TableScript, TruthTap,
};
use boardwatch::synth::RgbImage;
use boardwatch::touch::dwell::{DwellSettings, Tap};
use boardwatch::touch::pattern::CalibrationPattern;
use boardwatch::vision::source::rgb_image_to_mat;
use boardwatch::vision::table::{find_pattern, ForegroundSettings, TableWatcher};

/// What the camera made of a session.
#[derive(Debug, Default)]
pub struct SessionResult {
    pub intended: Vec<TruthTap>,
    pub found: Vec<(f64, Tap)>,
    /// Intended taps found on their cell.
    pub right: usize,
    /// Intended taps found on another cell.
    pub wrong_cell: usize,
    pub missed: usize,
    /// Taps found where none was intended.
    pub false_taps: usize,
    /// Seconds from an intended dwell's end to the frame that gave its tap.
    pub latencies: Vec<f64>,
    pub seconds: f64,
    pub frames: usize,
    /// Seconds of computing per frame in the camera pipeline (rendering not counted).
    pub pipeline_seconds: f64,
}

/// Four pictures a page could show: a grid in the scene's size, its cells coloured from `seed`.
pub fn game_pictures(scene: &TableScene, seed: u64) -> Vec<RgbImage> {
    (0..4u64)
        .map(|k| {
            grid_picture(scene.cols, scene.rows, 24, &|c, r| {
                let h = (c as u64 * 73 + r as u64 * 151 + k * 977 + seed * 31) % 7;
                let palette = [[235, 235, 225], [235, 235, 225], [240, 220, 120], [120, 190, 240], [235, 235, 225], [230, 120, 110], [150, 220, 140]];
                image::Rgb(palette[h as usize])
            })
        })
        .collect()
}

/// Renders the session and reads it with the camera pipeline.
pub fn run_session(scene: &TableScene, script: &TableScript, pictures: &[RgbImage], fps: f64, seed: u64) -> SessionResult {
    let pattern = CalibrationPattern::for_grid(scene.cols, scene.rows);
    let width = 960u32;
    let height = (width as f64 * scene.rows as f64 / scene.cols as f64).round() as u32;
    let (pattern_frame, _) = render_table_frame(scene, &calibration_picture(&pattern, width, height), &[], &[], seed).expect("pattern frame");
    let mat = rgb_image_to_mat(&pattern_frame).expect("frame to Mat");
    let fit = find_pattern(&mat, &pattern, scene.cols, scene.rows).unwrap_or_else(|e| panic!("calibration on scene {seed}: {e}"));
    let mut watcher = TableWatcher::new(fit.map, ForegroundSettings::default(), DwellSettings::default());
    let truth = table_session_truth(scene, script, fps).expect("truth");
    let planned = plan_table_session(scene, script, fps).expect("plan");
    let mut result = SessionResult { intended: truth.taps.clone(), ..SessionResult::default() };
    for (index, frame) in planned.iter().enumerate() {
        let picture = &pictures[frame.picture_index % pictures.len()];
        let (image, _) = render_table_frame(scene, picture, &frame.hands, &frame.extras, seed ^ (index as u64) << 20).expect("frame");
        let mat = rgb_image_to_mat(&image).expect("frame to Mat");
        let clock = std::time::Instant::now();
        let read = watcher.frame(frame.time_s, &mat).expect("pipeline");
        result.pipeline_seconds += clock.elapsed().as_secs_f64();
        if let Some(tap) = read.tap {
            result.found.push((frame.time_s, tap));
        }
    }
    result.frames = planned.len();
    result.seconds = planned.last().map_or(0.0, |f| f.time_s);
    // Each found tap belongs to the intended tap whose dwell it overlaps most.
    let mut used = vec![false; result.intended.len()];
    for (emitted, tap) in &result.found {
        let best = result
            .intended
            .iter()
            .enumerate()
            .filter(|(i, _)| !used[*i])
            .map(|(i, t)| (i, t.dwell_end_s.min(tap.dwell_end) - t.dwell_start_s.max(tap.dwell_start)))
            .filter(|(_, overlap)| *overlap > 0.0)
            .max_by(|a, b| a.1.total_cmp(&b.1));
        match best {
            Some((i, _)) => {
                used[i] = true;
                if result.intended[i].cell == tap.cell {
                    result.right += 1;
                    result.latencies.push(emitted - result.intended[i].dwell_end_s);
                } else {
                    result.wrong_cell += 1;
                }
            }
            None => result.false_taps += 1,
        }
    }
    result.missed = used.iter().filter(|u| !**u).count();
    result
}
