//! Rendered sessions at a projected table read by the camera pipeline, for the tests and the
//! benchmark: calibrate from the rendered pattern as a page would have it projected, then
//! every frame through `TableWatcher`, and the taps found matched against the intended ones.
#![allow(dead_code)]

use boardwatch::synth::table::{
    calibration_picture, grid_picture, plan_table_session, render_table_frame, table_session_truth, PlannedTableFrame, TableScene, TableScript,
    TruthTap,
};
use boardwatch::synth::RgbImage;
use boardwatch::touch::dwell::{DwellSettings, Tap};
use boardwatch::touch::pattern::CalibrationPattern;
use boardwatch::vision::source::rgb_image_to_mat;
use boardwatch::vision::table::{find_pattern, rests_across_an_edge, ForegroundSettings, TableWatcher};
use opencv::prelude::*;

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
    /// The tip fill (`Reach::tip_fill`), the region's share of the mask and its bulk
    /// (`Reach::bulk`) of the fingertip followed in the middle of each dwell found: of intended
    /// taps found on their cell, and of false taps.
    pub right_fills: Vec<(f64, f64, f64)>,
    pub false_fills: Vec<(f64, f64, f64)>,
    /// The mean near fill (`Reach::near_fill`) of the fingertip followed over each dwell found
    /// lying across the grid's edge as a resting hand does (`rests_across_an_edge`, in most of
    /// the dwell's frames): of intended taps found on their cell, and of false taps.
    pub right_edge_nears: Vec<f64>,
    pub false_edge_nears: Vec<f64>,
    /// Per frame: its time and the followed fingertip in cell units (column, row), if any.
    pub tips: Vec<(f64, Option<[f64; 2]>)>,
    /// Per false tap: its cell, its dwell, and the script's actions under way while it dwelt.
    pub false_tap_notes: Vec<String>,
    /// The same of every missed tap, and of every tap found on another cell.
    pub missed_notes: Vec<String>,
    pub wrong_cell_notes: Vec<String>,
    /// With `TOUCH_DEBUG_DIR`: each frame's time, the picture shown, the hands rendered, the
    /// foreground share and the regions reaching in.
    pub frame_notes: Vec<(f64, String)>,
}

/// The followed fingertip of a frame, in cells, for the frame notes.
fn tip_note(tip: Option<&(f64, Option<[f64; 2]>)>) -> String {
    tip.and_then(|(_, at)| *at).map_or("-".to_string(), |[x, y]| format!("{x:.2},{y:.2}"))
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

/// The calibration pattern of the scene's grid and the camera's frame of it as a page in
/// projector mode shows it.
pub fn pattern_frame(scene: &TableScene, seed: u64) -> (CalibrationPattern, RgbImage) {
    let pattern = CalibrationPattern::for_grid(scene.cols, scene.rows);
    let width = 960u32;
    let height = (width as f64 * scene.rows as f64 / scene.cols as f64).round() as u32;
    let (frame, _) = render_table_frame(scene, &calibration_picture(&pattern, width, height), &[], &[], seed).expect("pattern frame");
    (pattern, frame)
}

/// Renders the session and reads it with the camera pipeline; a scene whose calibration pattern
/// is not found stops the test (the tuning scenes all calibrate).
pub fn run_session(scene: &TableScene, script: &TableScript, pictures: &[RgbImage], fps: f64, seed: u64) -> SessionResult {
    try_run_session(scene, script, pictures, fps, seed).unwrap_or_else(|e| panic!("{e}"))
}

/// Renders the session and reads it with the camera pipeline; `Err` names the scene when its
/// calibration pattern is not found (a user would see that error and could not play).
pub fn try_run_session(scene: &TableScene, script: &TableScript, pictures: &[RgbImage], fps: f64, seed: u64) -> Result<SessionResult, String> {
    let (pattern, pattern_frame) = pattern_frame(scene, seed);
    let mat = rgb_image_to_mat(&pattern_frame).expect("frame to Mat");
    let fit = find_pattern(&mat, &pattern, scene.cols, scene.rows).map_err(|e| format!("calibration on scene {seed}: {e}"))?;
    let mut watcher = TableWatcher::new(fit.map, ForegroundSettings::default(), DwellSettings::default());
    let truth = table_session_truth(scene, script, fps).expect("truth");
    let planned = plan_table_session(scene, script, fps).expect("plan");
    let mut result = SessionResult { intended: truth.taps.clone(), ..SessionResult::default() };
    // TOUCH_DEBUG_DIR: pictures of the frames in the middle of each false tap's dwell.
    let debug_dir = std::env::var_os("TOUCH_DEBUG_DIR").map(std::path::PathBuf::from);
    let mut seen: Vec<(image::GrayImage, Vec<boardwatch::touch::fingertip::Reach>)> = Vec::new();
    let mut fills: Vec<Option<(f64, f64, f64)>> = Vec::new();
    // Per frame: the followed region's near fill and whether it lies across the grid's edge.
    let mut nears: Vec<Option<(f64, bool)>> = Vec::new();
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
        result.tips.push((frame.time_s, read.fingertip_px.and_then(|px| watcher.map().to_cells(px))));
        let (mask, reaches) = watcher.last_seen();
        // The region followed is the one whose fingertip, scaled to the frame, is the pointer's.
        let scale = mat.cols() as f64 / mask.width().max(1) as f64;
        let followed = read.fingertip_px.and_then(|px| {
            reaches.iter().find(|r| (r.fingertip[0] * scale - px[0]).abs() < 1e-6 && (r.fingertip[1] * scale - px[1]).abs() < 1e-6)
        });
        fills.push(followed.map(|r| (r.tip_fill, r.area as f64 / mask.len() as f64, r.bulk)));
        // The followed fingertip in cells is the one just noted in `tips`.
        let tip_cells = result.tips.last().and_then(|(_, at)| *at);
        nears.push(followed.map(|r| {
            let entry = watcher.map().to_cells([r.entry[0] * scale, r.entry[1] * scale]);
            let across = tip_cells.zip(entry).is_some_and(|(tip, entry)| rests_across_an_edge(tip, entry, scene.cols as f64, scene.rows as f64));
            (r.near_fill, across)
        }));
        if debug_dir.is_some() {
            let share = mask.pixels().filter(|p| p[0] != 0).count() as f64 / mask.len().max(1) as f64;
            let regions: Vec<String> = reaches.iter().map(|r| reach_note(r, mask)).collect();
            let action: String = frame.action.map_or("pause".to_string(), |a| format!("{:?}", script.actions[a])).chars().take(24).collect();
            result
                .frame_notes
                .push((frame.time_s, format!("{action} picture {} hands {} fg {share:.3} tip {} {regions:?}", frame.picture_index, frame.hands.len(), tip_note(result.tips.last()))));
            seen.push((mask.clone(), reaches.to_vec()));
        }
    }
    result.frames = planned.len();
    result.seconds = planned.last().map_or(0.0, |f| f.time_s);
    // The frame at `t` seconds (the first one not before it).
    let frame_at = |t: f64| planned.iter().position(|f| f.time_s >= t);
    let fill_at = |t: f64| frame_at(t).and_then(|i| fills[i]).unwrap_or((f64::NAN, f64::NAN, f64::NAN));
    // The mean near fill over a dwell lying across the grid's edge in most of its frames.
    let edge_near = |tap: &Tap| -> Option<f64> {
        let values: Vec<(f64, bool)> =
            planned.iter().zip(&nears).filter(|(f, _)| f.time_s >= tap.dwell_start && f.time_s <= tap.dwell_end).filter_map(|(_, n)| *n).collect();
        let across: Vec<f64> = values.iter().filter(|v| v.1).map(|v| v.0).collect();
        (across.len() * 2 > values.len()).then(|| across.iter().sum::<f64>() / across.len() as f64)
    };
    // Pictures of the camera frame and of the mask (fingertips red, blunt tips blue, entries
    // green) at frame `middle`.
    let dump = |middle: usize, label: &str| {
        if let (Some(dir), Some((mask, reaches))) = (&debug_dir, seen.get(middle)) {
            std::fs::create_dir_all(dir).unwrap();
            let frame = &planned[middle];
            let picture = &pictures[frame.picture_index % pictures.len()];
            let (image, _) = render_table_frame(scene, picture, &frame.hands, &frame.extras, seed ^ (middle as u64) << 20).expect("frame");
            let stem = format!("scene{seed}_t{:.1}_{label}", frame.time_s);
            image.save(dir.join(format!("{stem}_camera.png"))).unwrap();
            let mut marked = image::RgbImage::from_fn(mask.width(), mask.height(), |x, y| {
                let v = mask.get_pixel(x, y)[0];
                image::Rgb([v, v, v])
            });
            for r in reaches {
                let colour = if r.pointing { image::Rgb([255, 0, 0]) } else { image::Rgb([0, 128, 255]) };
                imageproc::drawing::draw_hollow_circle_mut(&mut marked, (r.fingertip[0] as i32, r.fingertip[1] as i32), 5, colour);
                imageproc::drawing::draw_hollow_circle_mut(&mut marked, (r.entry[0] as i32, r.entry[1] as i32), 3, image::Rgb([0, 200, 0]));
            }
            marked.save(dir.join(format!("{stem}_mask.png"))).unwrap();
        }
    };
    // The regions reaching in at frame `middle`.
    let reach_notes = |middle: usize| -> Vec<String> {
        seen.get(middle).map_or(Vec::new(), |(mask, reaches)| reaches.iter().map(|r| reach_note(r, mask)).collect())
    };
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
                    result.right_fills.push(fill_at((tap.dwell_start + tap.dwell_end) / 2.0));
                    result.right_edge_nears.extend(edge_near(tap));
                    result.latencies.push(emitted - result.intended[i].dwell_end_s);
                } else {
                    result.wrong_cell += 1;
                    let middle = frame_at((tap.dwell_start + tap.dwell_end) / 2.0).unwrap_or(0);
                    result.wrong_cell_notes.push(format!(
                        "cell {:?} found for {:?} at {:.1} s: regions {:?}",
                        tap.cell,
                        result.intended[i].cell,
                        tap.dwell_start,
                        reach_notes(middle)
                    ));
                    dump(middle, "wrong");
                }
            }
            None => {
                result.false_taps += 1;
                result.false_fills.push(fill_at((tap.dwell_start + tap.dwell_end) / 2.0));
                result.false_edge_nears.extend(edge_near(tap));
                let actions: std::collections::BTreeSet<String> = planned
                    .iter()
                    .filter(|f| f.time_s >= tap.dwell_start - 0.1 && f.time_s <= *emitted)
                    .map(|f| f.action.map_or("pause".to_string(), |a| format!("{:?}", script.actions[a])))
                    .collect();
                let middle = frame_at((tap.dwell_start + tap.dwell_end) / 2.0).unwrap_or(0);
                result.false_tap_notes.push(format!(
                    "cell {:?}, dwell {:.2}-{:.2} s, emitted {:.2} s, during {:?}; regions {:?}",
                    tap.cell,
                    tap.dwell_start,
                    tap.dwell_end,
                    emitted,
                    actions,
                    reach_notes(middle)
                ));
                dump(middle, "false");
            }
        }
    }
    result.missed = used.iter().filter(|u| !**u).count();
    // TOUCH_DUMP_AT=T1,T2,...: the pictures at those times (seconds) too.
    for t in std::env::var("TOUCH_DUMP_AT").unwrap_or_default().split(',').filter_map(|t| t.trim().parse::<f64>().ok()) {
        dump(frame_at(t).unwrap_or(0), "at");
    }
    for (tap, _) in result.intended.iter().zip(&used).filter(|(_, used)| !**used) {
        let middle = frame_at((tap.dwell_start_s + tap.dwell_end_s) / 2.0).unwrap_or(0);
        result.missed_notes.push(format!("cell {:?} at {:.1} s: regions {:?}", tap.cell, tap.dwell_start_s, reach_notes(middle)));
        dump(middle, "missed");
    }
    Ok(result)
}

/// A region reaching in, in a few words: its size (share of the mask), reach, tip fill and
/// whether it points.
fn reach_note(r: &boardwatch::touch::fingertip::Reach, mask: &image::GrayImage) -> String {
    format!(
        "area {:.3} reach {:.0} bulk {:.2} fill {:.2} near {:.2} pointing {}",
        r.area as f64 / mask.len().max(1) as f64,
        r.reach,
        r.bulk,
        r.tip_fill,
        r.near_fill,
        r.pointing
    )
}

/// One line on a session of taps: the scene's grid and view, and what became of its taps.
pub fn tap_session_line(seed: u64, scene: &TableScene, r: &SessionResult) -> String {
    format!(
        "taps scene {seed}: {}x{} cells, tilt {:.0}, {}x{} px: {}/{} right, {} wrong cell, {} missed, {} false",
        scene.cols,
        scene.rows,
        scene.camera.tilt_deg,
        scene.width,
        scene.height,
        r.right,
        r.intended.len(),
        r.wrong_cell,
        r.missed,
        r.false_taps
    )
}

/// Writes a session's frames to an MJPEG AVI at `path`, as a camera recording of the table; a
/// frame without hands is rendered once per picture, the others on every core, a batch at a time.
pub fn write_session_video(scene: &TableScene, pictures: &[RgbImage], frames: &[PlannedTableFrame], fps: f64, path: &std::path::Path) {
    use opencv::videoio::VideoWriter;
    let fourcc = VideoWriter::fourcc('M', 'J', 'P', 'G').unwrap();
    let size = opencv::core::Size::new(scene.width as i32, scene.height as i32);
    let mut writer = VideoWriter::new(path.to_str().unwrap(), fourcc, fps, size, true).unwrap();
    assert!(writer.is_opened().unwrap(), "cannot write {}", path.display());
    let mut still: std::collections::HashMap<usize, opencv::core::Mat> = std::collections::HashMap::new();
    let render = |index: usize| {
        let frame = &frames[index];
        let (image, _) = render_table_frame(scene, &pictures[frame.picture_index], &frame.hands, &frame.extras, index as u64).unwrap();
        image
    };
    let threads = std::thread::available_parallelism().map_or(1, |n| n.get());
    let indices: Vec<usize> = (0..frames.len()).collect();
    for batch in indices.chunks(4 * threads) {
        let moving: Vec<usize> = batch.iter().copied().filter(|&i| !(frames[i].hands.is_empty() && frames[i].extras.is_empty())).collect();
        let mut rendered: std::collections::HashMap<usize, RgbImage> = std::thread::scope(|s| {
            let workers: Vec<_> = moving
                .chunks(moving.len().div_ceil(threads).max(1))
                .map(|part| s.spawn(|| part.iter().map(|&i| (i, render(i))).collect::<Vec<_>>()))
                .collect();
            workers.into_iter().flat_map(|w| w.join().unwrap()).collect()
        });
        for &index in batch {
            let frame = &frames[index];
            let mat = match rendered.remove(&index) {
                Some(image) => rgb_image_to_mat(&image).unwrap(),
                None => still
                    .entry(frame.picture_index)
                    .or_insert_with(|| {
                        let (image, _) = render_table_frame(scene, &pictures[frame.picture_index], &[], &[], 7).unwrap();
                        rgb_image_to_mat(&image).unwrap()
                    })
                    .clone(),
            };
            writer.write(&mat).unwrap();
        }
    }
    writer.release().unwrap();
}
