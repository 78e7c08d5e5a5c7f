//! Evaluation and palette fitting for the vision pipeline (developer tool).
//!
//! ```text
//! cargo run --release --example vision_eval -- photos [--data DIR] [--calib Image_013] [--palette P] [--overlays DIR] [--no-lean]
//!                                                    [--fit-on PHOTO,PHOTO,..] [--dump PHOTO] [--csv FILE]
//! cargo run --release --example vision_eval -- video  [--video FILE] [--palette seed] [--no-calibrate] [--verbose] [--squares learnt]
//! cargo run --release --example vision_eval -- fit-seed [--video FILE] [--out models/seed.json] [--train even|all] [--rendered SCENES]
//! ```
//! `photos`: the 25 b3nny01-checkersvision photos, labels from tests/data (display
//! frame), palette-only and calibrated on one start-position photo. `--fit-on` refits the
//! palette on those photos and scores only the others; `--dump` prints every dark square of one
//! photo with its features, the calibrated reading and its distance to each class per feature;
//! `--csv` writes every square's features and label of every photo, for looking at a feature's spread.
//! `video`: the ray-traced recording through the per-frame pipeline; on every
//! `start`/`ply-N` frame the reading in board coordinates must equal the truth,
//! and `hand-N` frames must be unstable.
//! `rendered-frame SCENE K|start [--out PNG] [--family wooden|four-colour] [--palette P]`: frame K of unseen-board scene SCENE exactly as the rendered
//! check (tests/vision_rendered.rs) draws it, its true corners, and where the board finder puts them.
//! `squares IMAGE [--palette P]`: every dark square's features and reading, palette alone, for
//! looking into why a start position does not calibrate.
//! `fit-seed`: fit the seed palette on the recording's still frames (even plies
//! for training by default, so odd plies stay held out).
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use boardwatch::vision::classify::SquareFeatures;
use boardwatch::vision::source::{FrameSource, VideoSource};
use boardwatch::vision::*;
use opencv::core::Vector;
use opencv::imgcodecs;

type R<T> = std::result::Result<T, Box<dyn std::error::Error>>;

fn main() {
    if let Err(e) = run() {
        eprintln!("vision_eval: {e}");
        std::process::exit(1);
    }
}

fn opt(args: &[String], name: &str) -> Option<String> {
    args.iter().position(|a| a == name).and_then(|i| args.get(i + 1).cloned())
}

fn run() -> R<()> {
    let args: Vec<String> = std::env::args().collect();
    match args.get(1).map(|s| s.as_str()) {
        Some("photos") => photos(&args),
        Some("video") => video(&args),
        Some("fit-seed") => fit_seed(&args),
        Some("squares") => squares(&args),
        Some("rendered-frame") => rendered_frame(&args),
        _ => Err("usage: vision_eval photos|video|fit-seed|squares|rendered-frame [options]".into()),
    }
}

fn squares(args: &[String]) -> R<()> {
    let file = args.get(2).ok_or("usage: vision_eval squares IMAGE [--palette P]")?;
    let palette = ColourModel::named(&opt(args, "--palette").unwrap_or("wooden".into()))?;
    let img = source::read_image(Path::new(file))?;
    let loc = locate_board(&img, None)?;
    let rect = rectify(&img, &loc)?;
    let lean = CameraPose::from_location(&loc).map(|p| p.lean(palette.piece_height as f64));
    let bf = board_features_with(&rect, lean.as_ref())?;
    let reading = classify_features(&bf, &palette);
    println!("{:>5}  {}  centre  read", "sq", classify::FEATURE_NAMES.map(|n| format!("{n:>9}")).join(""));
    for r in 0..8 {
        for c in (0..8).filter(|&c| bf.is_dark(r, c)) {
            let sq = &bf.squares[r][c];
            let f: String = sq.f.iter().map(|v| format!("{v:>9.3}")).collect();
            let rd = &reading.squares[r][c];
            println!("({r},{c})  {f}  {:?}  {} {:.2}", sq.centre, rd.class.letter(), rd.confidence);
        }
    }
    match palette.calibrate(&bf) {
        Ok((_, side)) => println!("calibrates: White's home {side:?}"),
        Err(e) => println!("does not calibrate: {e}"),
    }
    Ok(())
}

fn rendered_frame(args: &[String]) -> R<()> {
    use boardwatch::synth::{render_frame, session, unseen_board_scene};
    let usage = "usage: vision_eval rendered-frame SCENE K --out PNG";
    let scene_seed: u64 = args.get(2).ok_or(usage)?.parse()?;
    let which = args.get(3).ok_or(usage)?;
    // `--family wooden|four-colour`: the palettes' own sets (random_scene) instead of unseen boards.
    let scene = match opt(args, "--family").as_deref() {
        Some("wooden") => boardwatch::synth::random_scene(scene_seed, boardwatch::synth::Palette::Wooden),
        Some("four-colour") => boardwatch::synth::random_scene(scene_seed, boardwatch::synth::Palette::FourColour),
        _ => unseen_board_scene(scene_seed),
    };
    if which == "start" {
        // The start position the check calibrates on, with the same sensor noise.
        let start = boardwatch::draughts::Position::start(&boardwatch::draughts::Variant::English.rules()).to_grid();
        let (image, truth) = render_frame(&scene, &start, None, session::start_noise(scene_seed))?;
        if let Some(out) = opt(args, "--out") {
            image.save(&out)?;
        }
        println!("scene camera {:?}\ntrue corners  {:?}", scene.camera, truth.corners);
        let frame = source::rgb_image_to_mat(&image)?;
        let loc = locate_board(&frame, None)?;
        println!("found corners {:?} by {:?}, lens k1 {:.3}", loc.corners, loc.method, loc.lens.k1);
        if let Some(p) = CameraPose::from_location(&loc) {
            println!("pose: true focal {:.0} tilt {:.0}, estimated {:.0}", (scene.width as f64 / 2.0) / (scene.camera.fov_deg.to_radians() / 2.0).tan(), scene.camera.tilt_deg, p.focal_px);
        }
        let palette = ColourModel::named(&opt(args, "--palette").unwrap_or("wooden".into()))?;
        match Calibration::from_image(&frame, &palette, None, "start") {
            Ok(_) => println!("calibrates"),
            Err(e) => println!("does not calibrate: {e}"),
        }
        return Ok(());
    }
    let k: usize = which.parse()?;
    let (grid, noise) = session::frames(scene_seed).nth(k).ok_or("no such frame")?;
    let (image, truth) = render_frame(&scene, &grid, None, noise)?;
    let frame = source::rgb_image_to_mat(&image)?;
    if let Some(out) = opt(args, "--out") {
        image.save(&out)?;
        println!("wrote {out}");
    }
    println!("scene camera {:?}", scene.camera);
    println!("true corners  {:?}", truth.corners);
    let loc = locate_board(&frame, None)?;
    println!("found corners {:?} by {:?}, lens k1 {:.3}", loc.corners, loc.method, loc.lens.k1);
    Ok(())
}

const SHARED: &str = "../shared/data";

fn photos(args: &[String]) -> R<()> {
    let data = opt(args, "--data").unwrap_or(format!("{SHARED}/photos/b3nny01-checkersvision/v2"));
    let calib = opt(args, "--calib").unwrap_or("Image_013".into());
    let mut palette = ColourModel::named(&opt(args, "--palette").unwrap_or("wooden".into()))?;
    if let Some(h) = opt(args, "--height").and_then(|h| h.parse::<f32>().ok()) {
        palette.piece_height = h;
    }
    let show_pose = args.iter().any(|a| a == "--pose");
    let show_distances = args.iter().any(|a| a == "--distances");
    let mut distances: Vec<f64> = Vec::new();
    let no_lean = args.iter().any(|a| a == "--no-lean");
    let overlays = opt(args, "--overlays").map(PathBuf::from);
    let labels: BTreeMap<String, serde_json::Value> =
        serde_json::from_str(&std::fs::read_to_string("tests/data/checkersvision_labels.json")?)?;
    let mut items = Vec::new();
    // `--follow`: find the board in each photo from where it was in the calibration photo, as
    // `detect --calibration` does, instead of afresh.
    let follow = match args.iter().any(|a| a == "--follow") {
        true => Some(locate_board(&source::read_image(&Path::new(&data).join(format!("{calib}.jpg")))?, None)?),
        false => None,
    };
    for (name, grid) in labels.iter().filter(|(k, _)| !k.starts_with('_')) {
        let truth: Vec<String> = grid.as_array().ok_or("grid")?.iter().map(|r| r.as_str().unwrap_or("").to_string()).collect();
        let file = Path::new(&data).join(format!("{name}.jpg"));
        if !file.exists() {
            continue;
        }
        let img = source::read_image(&file)?;
        let t = std::time::Instant::now();
        let loc = locate_board(&img, if name == &calib { None } else { follow.as_ref() }).ok();
        let ms = t.elapsed().as_secs_f64() * 1e3;
        if show_pose {
            if let Some(p) = loc.as_ref().and_then(CameraPose::from_location) {
                let l = p.lean(palette.piece_height as f64);
                println!("{name}: camera at {:.1?} f {:.0}; lean TL {:.1?} BR {:.1?}; lens k1 {:.3}; corners {:.1?}", p.centre, p.focal_px, l[0][0], l[7][7], loc.as_ref().map_or(0.0, |l| l.lens.k1), loc.as_ref().map(|l| l.corners));
            }
        }
        let feats = match &loc {
            Some(l) => {
                let rect = rectify(&img, l)?;
                let lean = if no_lean { None } else { CameraPose::from_location(l).map(|p| p.lean(palette.piece_height as f64)) };
                Some(board_features_with(&rect, lean.as_ref())?)
            }
            None => None,
        };
        items.push((name.clone(), img, loc, feats, truth, ms));
    }
    // `--csv FILE`: every square's features and label, for looking at a feature's spread.
    if let Some(csv) = opt(args, "--csv") {
        let mut out = format!("photo,r,c,dark,truth,{}\n", classify::FEATURE_NAMES.join(","));
        for (name, _, _, feats, truth, _) in &items {
            let Some(bf) = feats else { continue };
            for r in 0..8 {
                for c in 0..8 {
                    let f: Vec<String> = bf.squares[r][c].f.iter().map(|v| format!("{v:.4}")).collect();
                    out += &format!("{name},{r},{c},{},{},{}\n", bf.is_dark(r, c) as u8, truth[r].as_bytes()[c] as char, f.join(","));
                }
            }
        }
        std::fs::write(&csv, out)?;
    }
    // `--fit-on A,B,...`: refit on those photos only, and score only the others (nor the
    // calibration photo): a figure on photos no model saw.
    let fit_on: Option<Vec<String>> = opt(args, "--fit-on").map(|s| s.split(',').map(|n| n.trim().to_string()).collect());
    let out = opt(args, "--fit");
    if out.is_some() || fit_on.is_some() {
        // Refit the palette on every photo and its 90/180/270-degree turns (the
        // turns teach it how the features jitter with the view).
        let mut samples: Vec<(SquareFeatures, bool, ColourClass)> = Vec::new();
        for (_, img, _, _, truth, _) in items.iter().filter(|i| fit_on.as_ref().map_or(true, |f| f.contains(&i.0))) {
            samples.extend(labelled_squares(img, truth, if no_lean { 0.0 } else { palette.piece_height })?);
        }
        let mut m = ColourModel::fit(&palette, &samples)?;
        m.description = format!(
            "Default colour model of the two-colour wooden set (light and dark turned men with concentric grooves, glossy dark-brown/cream board; \
             kings are two stacked men and read as men). Fitted with `cargo run --release --example vision_eval -- photos --fit models/wooden.json` \
             on {} labelled squares of the 25 b3nny01-checkersvision photos (two lighting sessions) and their 90/180/270-degree turns, \
             piece tops looked for where the camera's angle puts them (piece_height). Features are board-normalised (classify.rs), so exposure \
             and white balance carry over; they are NOT resolution-invariant: fitted at ~78 px per square in the source image.",
            samples.len()
        );
        if let Some(out) = &out {
            std::fs::write(out, m.to_json() + "\n")?;
            println!("wrote {out}");
        }
        palette = m;
    }
    if let Some(fitted) = &fit_on {
        items.retain(|i| !fitted.contains(&i.0) || i.0 == calib);
        println!("fitted on {} photos; scoring the {} others (calibration photo {calib} not scored)", fitted.len(), items.len() - 1);
    }
    let cal_item = items.iter().find(|i| i.0 == calib).ok_or("calibration photo missing")?;
    let (calibrated, side) = palette.calibrate(cal_item.3.as_ref().ok_or("no board in calibration photo")?)?;
    println!("calibrated on {calib}: White's home {side:?}");
    println!("{:<10} {:>5} {:>7} {:>8} {:>8}  misread (r,c truth->palette/calibrated)", "photo", "found", "loc ms", "palette", "calibr.");
    let (mut tp, mut tc, mut found) = (0, 0, 0);
    let scored = items.iter().filter(|i| fit_on.is_none() || i.0 != calib);
    let scored_count = scored.clone().count();
    for (name, img, loc, feats, truth, ms) in scored {
        let (Some(loc), Some(bf)) = (loc, feats) else {
            println!("{name:<10} {:>5} {ms:>7.1}", "NO");
            tp += 64;
            tc += 64;
            continue;
        };
        found += 1;
        let rp = classify_features(bf, &palette);
        let rc = classify_features(bf, &calibrated);
        if let Some(sq) = opt(args, "--square") {
            let v: Vec<&str> = sq.split(',').collect();
            if v.len() == 3 && v[0] == name {
                let (r, c): (usize, usize) = (v[1].parse()?, v[2].parse()?);
                println!("{name} ({r},{c}): features {:?} centre {:?} probs {:?} unknown {:.2}", bf.squares[r][c].f, bf.squares[r][c].centre, rp.squares[r][c].probs, rp.squares[r][c].p_unknown);
            }
        }
        if opt(args, "--dump").as_deref() == Some(name.as_str()) {
            println!("{:>5} t  {}  read", "sq", classify::FEATURE_NAMES.map(|n| format!("{n:>9}")).join(""));
            for r in 0..8 {
                for c in (0..8).filter(|&c| bf.is_dark(r, c)) {
                    let f: String = bf.squares[r][c].f.iter().map(|v| format!("{v:>9.3}")).collect();
                    let rd = &rc.squares[r][c];
                    println!("({r},{c}) {}  {f}  {} {:.2} unk {:.2}", truth[r].as_bytes()[c] as char, rd.class.letter(), rd.confidence, rd.p_unknown);
                    for (cname, cm) in [("empty", &calibrated.empty_dark), ("dark", &calibrated.dark_man), ("light", &calibrated.light_man)] {
                        let z: Vec<String> = calibrated.features.iter().enumerate().map(|(k, fname)| {
                            let i = classify::FEATURE_NAMES.iter().position(|n| n == fname).unwrap_or(0);
                            format!("{fname}={:+.1}", (bf.squares[r][c].f[i] - cm.mean[k]) / cm.cov[k][k].sqrt())
                        }).collect();
                        println!("        z {cname:<6} {}", z.join(" "));
                    }
                }
            }
        }
        let (gp, gc) = (rp.grid(), rc.grid());
        let (mut ep, mut ec, mut errs) = (0, 0, Vec::new());
        for r in 0..8 {
            for c in 0..8 {
                let t = truth[r].as_bytes()[c] as char;
                let p = gp[r].as_bytes()[c] as char;
                let q = gc[r].as_bytes()[c] as char;
                ep += (p != t) as usize;
                ec += (q != t) as usize;
                if p != t || q != t {
                    errs.push(format!("({r},{c}) {t}->{p}/{q}"));
                }
            }
        }
        if show_distances {
            // The nearest class's distance, recovered from the reading's p(unknown).
            for r in 0..8 {
                for c in 0..8 {
                    let pu = rc.squares[r][c].p_unknown.clamp(1e-30, 1.0 - 1e-7) as f64;
                    let q = calibrated.unknown_mahal2 as f64 + 4.0 * (pu / (1.0 - pu)).ln();
                    let ok = gc[r].as_bytes()[c] == truth[r].as_bytes()[c];
                    if !ok {
                        println!("  {name} ({r},{c}) misread, nearest class distance {q:.1}");
                        continue;
                    }
                    distances.push(q);
                    if q > 30.0 {
                        println!("  {name} ({r},{c}) read right ({}), distance {q:.1}", truth[r].as_bytes()[c] as char);
                    }
                }
            }
        }
        tp += ep;
        tc += ec;
        println!("{name:<10} {:>5} {ms:>7.1} {ep:>8} {ec:>8}  {}", "yes", errs.join(" "));
        if let Some(dir) = &overlays {
            std::fs::create_dir_all(dir)?;
            let ov = draw_overlay(img, loc, Some(&rp), 800)?;
            imgcodecs::imwrite(&dir.join(format!("{name}.png")), &ov, &Vector::new())?;
        }
    }
    if show_distances && !distances.is_empty() {
        distances.sort_by(|a, b| a.total_cmp(b));
        let q = |f: f64| distances[((distances.len() - 1) as f64 * f) as usize];
        println!("nearest class distance of squares read right: median {:.1}, 99% {:.1}, 99.9% {:.1}, max {:.1}; over 30 {}, over 40 {}", q(0.5), q(0.99), q(0.999), q(1.0), distances.iter().filter(|&&d| d > 30.0).count(), distances.iter().filter(|&&d| d > 40.0).count());
    }
    println!("board found {found}/{scored_count}; misread squares: palette {tp}, calibrated {tc} (of {})", scored_count * 64);
    Ok(())
}

/// Truth of the recording, per frame: label and (for still frames) the grid in
/// board coordinates.
struct Truth {
    labels: Vec<String>,
    grids: Vec<Option<Vec<String>>>,
}

fn load_truth(video: &Path) -> R<Truth> {
    let p = video.with_extension("truth.json");
    let v: serde_json::Value = serde_json::from_str(&std::fs::read_to_string(&p)?)?;
    let strs = |x: &serde_json::Value| -> Vec<String> { x.as_array().map(|a| a.iter().map(|s| s.as_str().unwrap_or("").to_string()).collect()).unwrap_or_default() };
    let labels = strs(&v["frame_labels"]);
    let plies: Vec<Vec<String>> = v["plies"].as_array().ok_or("plies")?.iter().map(|p| fen_grid(p["fen_after"].as_str().unwrap_or(""))).collect();
    let start = strs(&v["start_grid"]);
    let fin = strs(&v["final_grid"]);
    let grids = labels
        .iter()
        .map(|l| {
            if l == "start" {
                Some(start.clone())
            } else if l == "end" {
                Some(fin.clone())
            } else if let Some(n) = l.strip_prefix("ply-") {
                n.parse::<usize>().ok().and_then(|n| plies.get(n).cloned())
            } else {
                None
            }
        })
        .collect();
    Ok(Truth { labels, grids })
}

/// "W:W21,22,K5:B1,2" -> 8 strings, row 0 = Black's edge (squares 1-4).
fn fen_grid(fen: &str) -> Vec<String> {
    let mut g = vec![vec!['.'; 8]; 8];
    for part in fen.split(':').skip(1) {
        let (side, list) = part.split_at(1);
        for sq in list.split(',').filter(|s| !s.is_empty()) {
            let (king, num) = match sq.strip_prefix('K') {
                Some(n) => (true, n),
                None => (false, sq),
            };
            let Ok(n) = num.trim().parse::<usize>() else { continue };
            if !(1..=32).contains(&n) {
                continue;
            }
            let row = (n - 1) / 4;
            let k = (n - 1) % 4;
            let col = if row % 2 == 0 { 2 * k + 1 } else { 2 * k };
            g[row][col] = match (side, king) {
                ("W", false) => 'w',
                ("W", true) => 'W',
                ("B", false) => 'b',
                _ => 'B',
            };
        }
    }
    g.into_iter().map(|r| r.into_iter().collect()).collect()
}

fn video(args: &[String]) -> R<()> {
    let path = PathBuf::from(opt(args, "--video").unwrap_or(format!("{SHARED}/videos/acf7_seed_overhead.mp4")));
    let palette = ColourModel::named(&opt(args, "--palette").unwrap_or("four-colour".into()))?;
    let verbose = args.iter().any(|a| a == "--verbose");
    let truth = load_truth(&path)?;
    let mut config = WatchConfig::default();
    config.auto_calibrate = !args.iter().any(|a| a == "--no-calibrate");
    // --squares learnt: the learnt square model reads the playing squares.
    if opt(args, "--squares").as_deref() == Some("learnt") {
        config.squares = SquareReader::Learnt;
    }
    let mut w = Watcher::new(palette, config)?;
    let mut src = VideoSource::open_file(&path)?;
    let (mut still_frames, mut still_wrong, mut sq_wrong) = (0, 0, 0);
    let (mut hand_frames, mut hand_stable) = (0, 0);
    let (mut stable_frames, mut stable_wrong) = (0, 0);
    let mut relocations = 0;
    let mut times = Vec::new();
    // --cast B,G,R: multiply the channels (another lamp, another camera's white balance).
    let cast: Option<Vec<f64>> = opt(args, "--cast").map(|c| c.split(',').filter_map(|v| v.parse().ok()).collect());
    while let Some(mut f) = src.next_frame()? {
        if let Some(k) = &cast {
            let mut out = opencv::core::Mat::default();
            opencv::core::multiply(&f.image, &opencv::core::Scalar::new(k[0], k[1], k[2], 0.0), &mut out, 1.0, -1)?;
            f.image = out;
        }
        let i = f.index as usize;
        let t0 = std::time::Instant::now();
        let r = w.process(&f.image, f.t)?;
        times.push(t0.elapsed().as_secs_f64() * 1e3);
        relocations += r.relocated as usize;
        let label = truth.labels.get(i).cloned().unwrap_or_default();
        if let Some(lim) = opt(args, "--trace").and_then(|v| v.parse::<usize>().ok()) {
            if i < lim {
                println!(
                    "frame {i} {label}: motion {:.1} moving {} unknown {:?} stable {} check {:?} grid {:?}",
                    r.stability.motion, r.stability.moving_cells, r.stability.unknown_squares, r.stability.stable, r.check,
                    r.reading.as_ref().map(|x| x.grid())
                );
            }
        }
        let got = r.view.as_ref().map(|v| v.rows());
        if label.starts_with("hand") {
            hand_frames += 1;
            if r.stability.stable {
                hand_stable += 1;
                if verbose {
                    println!("frame {i} {label}: STABLE during a hand (motion {:.1})", r.stability.motion);
                }
            }
        }
        if r.stability.stable {
            stable_frames += 1;
            if let (Some(t), Some(g)) = (&truth.grids.get(i).cloned().flatten(), &got) {
                if t != g {
                    stable_wrong += 1;
                }
            } else if !label.starts_with("partial") && !label.starts_with("uncrowned") {
                stable_wrong += 1;
                if verbose {
                    println!("frame {i} {label}: stable but no truth / no view");
                }
            }
        }
        if let Some(t) = truth.grids.get(i).cloned().flatten() {
            if label == "end" {
                continue;
            }
            still_frames += 1;
            match &got {
                Some(g) => {
                    let n: usize = (0..8).map(|r| (0..8).filter(|&c| g[r].as_bytes()[c] != t[r].as_bytes()[c]).count()).sum();
                    if n > 0 {
                        still_wrong += 1;
                        sq_wrong += n;
                        if verbose {
                            println!("frame {i} {label}: {n} wrong; got {g:?} want {t:?} stable {}", r.stability.stable);
                        }
                    }
                }
                None => {
                    still_wrong += 1;
                    sq_wrong += 64;
                    if verbose {
                        println!("frame {i} {label}: no view");
                    }
                }
            }
        }
    }
    times.sort_by(|a, b| a.total_cmp(b));
    println!(
        "start/ply frames: {still_frames}, wrong {still_wrong} ({sq_wrong} squares); hand frames {hand_frames}, flagged stable {hand_stable}; \
         stable frames {stable_frames}, wrong {stable_wrong}; relocations {relocations}; calibrated {}",
        w.is_calibrated()
    );
    println!("per-frame ms (960x720, whole pipeline): median {:.2}, p95 {:.2}, max {:.2}", times[times.len() / 2], times[times.len() * 95 / 100], times[times.len() - 1]);
    Ok(())
}

/// Scene seeds of the renderer used for fitting; the tests' scenes are below.
const RENDERED_TRAINING_SEEDS: u64 = 1_000_000;

/// Labelled squares from `scenes` random renderer scenes (the start and four positions from
/// random games each), found and read as a session would. Returns the frames used.
fn add_rendered_samples(template: &ColourModel, scenes: u64, samples: &mut Vec<(SquareFeatures, bool, ColourClass)>) -> R<usize> {
    use boardwatch::draughts::Variant;
    use boardwatch::synth::{random_position, random_scene, render_frame, Palette};
    let mut used = 0;
    for k in 0..scenes {
        let seed = RENDERED_TRAINING_SEEDS + k;
        let scene = random_scene(seed, Palette::FourColour);
        for j in 0..5u64 {
            let grid = random_position(Variant::English, if j == 0 { 0 } else { 90 }, seed * 31 + j).to_grid();
            let (image, truth) = render_frame(&scene, &grid, None, seed * 17 + j)?;
            let frame = source::rgb_image_to_mat(&image)?;
            let Ok(l) = locate_board(&frame, None) else { continue };
            let Some(seen) = truth.grid_as_seen(&l.corners) else { continue };
            let rect = rectify(&frame, &l)?;
            let lean = CameraPose::from_location(&l).map(|p| p.lean(template.piece_height as f64));
            let bf = board_features_with(&rect, lean.as_ref())?;
            for r in 0..8 {
                for c in 0..8 {
                    let dark = bf.is_dark(r, c);
                    let letter = seen[r].as_bytes()[c] as char;
                    samples.push((bf.squares[r][c], dark, ColourClass::from_letter(letter).ok_or("bad truth letter")?));
                }
            }
            used += 1;
        }
    }
    Ok(used)
}

fn fit_seed(args: &[String]) -> R<()> {
    let path = PathBuf::from(opt(args, "--video").unwrap_or(format!("{SHARED}/videos/acf7_seed_overhead.mp4")));
    let out = opt(args, "--out").unwrap_or("models/seed.json".into());
    let train_all = opt(args, "--train").as_deref() == Some("all");
    let template = ColourModel::from_json(&std::fs::read_to_string(opt(args, "--template").unwrap_or("models/seed.json".into()))?)?;
    let truth = load_truth(&path)?;
    let mut src = VideoSource::open_file(&path)?;
    let mut loc: Option<BoardLocation> = None;
    let mut samples: Vec<(SquareFeatures, bool, ColourClass)> = Vec::new();
    let frame = BoardFrame { white_home: Side::Bottom, top_left_dark: false };
    let mut used = 0;
    while let Some(f) = src.next_frame()? {
        let i = f.index as usize;
        let label = &truth.labels[i];
        let Some(t) = truth.grids[i].clone() else { continue };
        let ply_ok = match label.strip_prefix("ply-") {
            Some(n) => train_all || n.parse::<usize>().map_or(false, |n| n % 2 == 0),
            None => true,
        };
        if !ply_ok || i % 3 != 0 {
            continue;
        }
        if loc.is_none() {
            loc = Some(locate_board(&f.image, None)?);
        }
        let l = locate_board(&f.image, loc.as_ref())?;
        let rect = rectify(&f.image, &l)?;
        let lean = CameraPose::from_location(&l).map(|p| p.lean(template.piece_height as f64));
        let bf = board_features_with(&rect, lean.as_ref())?;
        for r in 0..8 {
            for c in 0..8 {
                let (br, bc) = frame.to_board(r, c);
                let ch = t[br].as_bytes()[bc] as char;
                let dark = bf.is_dark(r, c);
                samples.push((bf.squares[r][c], dark, ColourClass::from_letter(ch).ok_or("bad truth letter")?));
            }
        }
        used += 1;
    }
    let video_squares = samples.len();
    let rendered_scenes: u64 = opt(args, "--rendered").and_then(|n| n.parse().ok()).unwrap_or(0);
    let rendered_frames = add_rendered_samples(&template, rendered_scenes, &mut samples)?;
    let mut m = ColourModel::fit(&template, &samples)?;
    m.description = format!(
        "Seed palette: red men / blue kings = Black (b/B), yellow men / green kings = White (w/W), cream and taupe board. \
         Fitted with `cargo run --release --example vision_eval -- fit-seed --rendered {rendered_scenes}` on {} still frames ({}) of the ray-traced \
         recording acf7_seed_overhead.mp4 ({} labelled squares) and {} frames of {} random scenes of the project's renderer \
         (scene seeds from {RENDERED_TRAINING_SEEDS}; tests use others) ({} squares). Colours are white-balanced against the board's light squares (top_a, top_b).",
        used,
        if train_all { "all plies" } else { "start and even plies; odd plies held out" },
        video_squares,
        rendered_frames,
        rendered_scenes,
        samples.len() - video_squares
    );
    std::fs::write(&out, m.to_json() + "\n")?;
    println!("wrote {out} from {used} frames, {} squares", samples.len());
    Ok(())
}
