//! Training and evaluation material for the learnt square model (`make model` runs it).
//!
//! ```text
//! cargo run --release --example square_dataset -- render --out DIR --first SEED --scenes N [--frames K] [--threads T] [--stone]
//! cargo run --release --example square_dataset -- photos --out DIR --labels FILE --images DIR --photos Image_001,Image_002,...
//! ```
//! Both write `DIR/areas.npy` (boards x AREA x AREA x 3, 8-bit BGR: each board's playing area
//! with its margin, as `vision::square_model::board_area` cuts it), `DIR/labels.npy` (boards x 8
//! x 8, 8-bit: the class of each playing square in the model's order, -1 for light squares and
//! squares left out) and `DIR/boards.json` (where each board came from).
//!
//! `render`: N scenes from seed SEED on, K frames each, of three families drawn by the seed:
//! boards and sets of any colours (`synth::unseen_board_scene`), the wooden and the four-colour
//! sets (`synth::random_scene`); with `--stone`, about a third of the first family's boards are
//! veined stone and a quarter of the two-colour sets' men tall (a model trained so was not
//! shipped: BENCHMARKS.md, "Learnt square model: a third training on veined stone").
//! Positions are random legal games and random placements (so
//! that kings are common); a third of the frames have a hand over the board, whose squares
//! (more than 30% covered) are labelled `other`. The area is cut from the true corners moved
//! by up to 0.06 of a square, as a board finder would place them.
//!
//! `photos`: labelled photos (labels as `tests/data/checkersvision_labels.json` has them: image-grid
//! order), the board found by the board finder.
use std::io::Write;
use std::path::{Path, PathBuf};

use boardwatch::draughts::Variant;
use boardwatch::synth::{colour_distance, random_position, random_scene, render_frame, unseen_board_scene, Hand, Palette, Scene};
use boardwatch::vision::source::{read_image, rgb_image_to_mat};
use boardwatch::vision::square_model::{board_area, located_board_area, AREA_PX};
use boardwatch::vision::{check_location, locate_board, rectify, ColourClass};
use opencv::prelude::*;
use rand::{Rng, SeedableRng};

type R<T> = std::result::Result<T, Box<dyn std::error::Error + Send + Sync>>;

const OTHER: i8 = 5;

fn main() {
    if let Err(e) = run() {
        eprintln!("square_dataset: {e}");
        std::process::exit(1);
    }
}

fn arg(args: &[String], name: &str) -> Option<String> {
    args.iter().position(|a| a == name).and_then(|i| args.get(i + 1)).cloned()
}

fn need(args: &[String], name: &str) -> R<String> {
    arg(args, name).ok_or_else(|| format!("missing {name}").into())
}

fn run() -> R<()> {
    boardwatch::vision::opencv_on_calling_threads()?;
    let args: Vec<String> = std::env::args().skip(1).collect();
    let out = PathBuf::from(need(&args, "--out")?);
    std::fs::create_dir_all(&out)?;
    let boards = match args.first().map(String::as_str) {
        Some("render") => {
            let first: u64 = need(&args, "--first")?.parse()?;
            let scenes: u64 = need(&args, "--scenes")?.parse()?;
            let frames: u64 = arg(&args, "--frames").map_or(Ok(3), |s| s.parse())?;
            let threads: u64 = arg(&args, "--threads").map_or(Ok(2), |s| s.parse())?;
            render_boards(first, scenes, frames, threads.max(1), args.iter().any(|a| a == "--stone"))?
        }
        Some("photos") => {
            let labels = PathBuf::from(need(&args, "--labels")?);
            let images = PathBuf::from(need(&args, "--images")?);
            let names = need(&args, "--photos")?;
            photo_boards(&labels, &images, &names.split(',').map(str::to_string).collect::<Vec<_>>())?
        }
        _ => return Err("usage: square_dataset render|photos --out DIR ...".into()),
    };
    write_boards(&out, &boards)?;
    eprintln!("square_dataset: {} boards written to {}", boards.len(), out.display());
    Ok(())
}

/// One board of the material.
struct Board {
    area: Vec<u8>,
    labels: [[i8; 8]; 8],
    what: serde_json::Value,
}

fn class_of(letter: u8) -> i8 {
    match ColourClass::from_letter(letter as char) {
        Some(ColourClass::Empty) => 0,
        Some(ColourClass::DarkMan) => 1,
        Some(ColourClass::LightMan) => 2,
        Some(ColourClass::DarkKing) => 3,
        Some(ColourClass::LightKing) => 4,
        _ => -1,
    }
}

/// A random placement: each playing square empty or any piece, men on their side's last row
/// allowed (boards are set up by hand).
fn random_placement(rng: &mut impl Rng) -> [String; 8] {
    let density = rng.gen_range(0.2..0.8);
    let king_share = rng.gen_range(0.0..0.6);
    std::array::from_fn(|r| {
        (0..8)
            .map(|c| {
                if (r + c) % 2 == 0 || !rng.gen_bool(density) {
                    '.'
                } else {
                    let dark = rng.gen_bool(0.5);
                    let king = rng.gen_bool(king_share);
                    match (dark, king) {
                        (true, false) => 'b',
                        (true, true) => 'B',
                        (false, false) => 'w',
                        (false, true) => 'W',
                    }
                }
            })
            .collect()
    })
}

type R8 = rand_chacha::ChaCha8Rng;

fn training_scene(seed: u64, rng: &mut R8, stone: bool) -> (Scene, &'static str) {
    let (mut scene, family) = match rng.gen_range(0..4) {
        0 | 1 => (unseen_board_scene(seed), "unseen"),
        2 => (random_scene(seed, Palette::Wooden), "wooden"),
        _ => (random_scene(seed, Palette::FourColour), "four-colour"),
    };
    if stone && family == "unseen" && rng.gen_bool(0.35) {
        // Polished stone: veined squares (the first model read empty marble squares as dark
        // men), most of them white and grey or black stone.
        scene.board.marble = rng.gen_range(0.35..0.9);
        scene.board.grain = 0.0;
        if rng.gen_bool(0.6) {
            let grey = |rng: &mut R8, lo: f64, hi: f64| -> [u8; 3] {
                let v = rng.gen_range(lo..hi);
                let tint: [f64; 3] = std::array::from_fn(|_| rng.gen_range(-0.03..0.03));
                std::array::from_fn(|k| ((v + tint[k]).clamp(0.0, 1.0) * 255.0) as u8)
            };
            let light = grey(rng, 0.78, 0.95);
            let dark = grey(rng, 0.1, 0.38);
            let c = &scene.colors;
            // Men must still stand out from the squares they stand on, as in any real set.
            if colour_distance(c.black_man, dark) > 30.0 && colour_distance(c.white_man, dark) > 60.0 {
                scene.colors.light_square = light;
                scene.colors.dark_square = dark;
            }
        }
    }
    if stone && family != "four-colour" && rng.gen_bool(0.25) {
        // Tall men, whose stacked kings lean far into the next square at a tilt.
        scene.pieces.height = rng.gen_range(0.22..0.36);
    }
    // Half the pixels of the scene's camera: four times quicker to render, and still 30 or
    // more pixels a square, more than the 20 the model looks at.
    scene.width /= 2;
    scene.height /= 2;
    (scene, family)
}

fn render_boards(first: u64, scenes: u64, frames: u64, threads: u64, stone: bool) -> R<Vec<Board>> {
    let done = std::sync::atomic::AtomicU64::new(0);
    let results: Vec<R<Vec<Board>>> = std::thread::scope(|s| {
        let handles: Vec<_> = (0..threads)
            .map(|t| {
                let done = &done;
                s.spawn(move || -> R<Vec<Board>> {
                    let mut boards = Vec::new();
                    for seed in (first + t..first + scenes).step_by(threads as usize) {
                        boards.extend(render_scene(seed, frames, stone)?);
                        let n = done.fetch_add(1, std::sync::atomic::Ordering::Relaxed) + 1;
                        if n % 50 == 0 {
                            eprintln!("square_dataset: {n} of {scenes} scenes");
                        }
                    }
                    Ok(boards)
                })
            })
            .collect();
        handles.into_iter().map(|h| h.join().unwrap_or_else(|_| Err("render thread panicked".into()))).collect()
    });
    let mut boards = Vec::new();
    for r in results {
        boards.extend(r?);
    }
    Ok(boards)
}

fn render_scene(seed: u64, frames: u64, stone: bool) -> R<Vec<Board>> {
    let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(seed ^ 0x5A0A_DE75);
    let (scene, family) = training_scene(seed, &mut rng, stone);
    let mut boards = Vec::new();
    for k in 0..frames {
        let grid = if rng.gen_bool(0.5) { random_position(Variant::English, 100, rng.gen()).to_grid() } else { random_placement(&mut rng) };
        let hand = rng.gen_bool(0.33).then(|| Hand::random(rng.gen()));
        let (image, truth) = render_frame(&scene, &grid, hand.as_ref(), rng.gen())?;
        if !truth.board_in_view {
            continue;
        }
        let mat = rgb_image_to_mat(&image)?;
        // The corners as a finder might place them: each moved by up to 0.06 of a square, the
        // rest of the board following bilinearly.
        let jitter: [[f64; 2]; 4] = std::array::from_fn(|_| [rng.gen_range(-0.06..0.06), rng.gen_range(-0.06..0.06)]);
        let moved = |u: f64, v: f64| {
            let (a, b) = (u / 8.0, v / 8.0);
            let w = [(1.0 - a) * (1.0 - b), a * (1.0 - b), a * b, (1.0 - a) * b];
            let du: f64 = (0..4).map(|i| w[i] * jitter[i][0]).sum();
            let dv: f64 = (0..4).map(|i| w[i] * jitter[i][1]).sum();
            let p = truth.board_to_image(u + du, v + dv);
            (p[0], p[1])
        };
        let area = board_area(&mat, &moved)?;
        let mut labels = [[-1i8; 8]; 8];
        for r in 0..8 {
            for c in 0..8 {
                if (r + c) % 2 == 0 {
                    continue;
                }
                let covered = truth.hand_coverage[r][c];
                labels[r][c] = if covered > 0.3 {
                    OTHER
                } else if covered > 0.05 {
                    -1
                } else {
                    class_of(truth.grid[r].as_bytes()[c])
                };
            }
        }
        boards.push(Board {
            area: area.data_bytes()?.to_vec(),
            labels,
            what: serde_json::json!({"kind": "render", "family": family, "scene": seed, "frame": k, "hand": hand.is_some(), "tilt_deg": truth.tilt_deg}),
        });
    }
    Ok(boards)
}

fn photo_boards(labels_file: &Path, images: &Path, names: &[String]) -> R<Vec<Board>> {
    let text = std::fs::read_to_string(labels_file).map_err(|e| format!("{}: {e}", labels_file.display()))?;
    let labels: serde_json::Value = serde_json::from_str(&text)?;
    let mut boards = Vec::new();
    for name in names {
        let grid = labels[name].as_array().ok_or_else(|| format!("no labels for {name}"))?;
        let img = read_image(&images.join(format!("{name}.jpg")))?;
        let loc = locate_board(&img, None)?;
        let top_left_dark = check_location(&rectify(&img, &loc)?)?.top_left_dark;
        let area = located_board_area(&img, &loc)?;
        let mut board_labels = [[-1i8; 8]; 8];
        for r in 0..8 {
            let row = grid[r].as_str().ok_or("label rows are strings")?.as_bytes();
            for c in 0..8 {
                if ((r + c) % 2 == 0) == top_left_dark {
                    board_labels[r][c] = class_of(row[c]);
                }
            }
        }
        boards.push(Board { area: area.data_bytes()?.to_vec(), labels: board_labels, what: serde_json::json!({"kind": "photo", "photo": name}) });
    }
    Ok(boards)
}

/// A NumPy `.npy` file (version 1.0) of 8-bit values.
fn write_npy(path: &Path, dtype: &str, shape: &[usize], bytes: &[u8]) -> R<()> {
    let dims: Vec<String> = shape.iter().map(|d| d.to_string()).collect();
    let mut header = format!("{{'descr': '{dtype}', 'fortran_order': False, 'shape': ({},), }}", dims.join(", "));
    // Magic (6) + version (2) + length (2) + header + newline, padded to a multiple of 64.
    while (10 + header.len() + 1) % 64 != 0 {
        header.push(' ');
    }
    header.push('\n');
    let mut f = std::io::BufWriter::new(std::fs::File::create(path).map_err(|e| format!("{}: {e}", path.display()))?);
    f.write_all(b"\x93NUMPY\x01\x00")?;
    f.write_all(&(header.len() as u16).to_le_bytes())?;
    f.write_all(header.as_bytes())?;
    f.write_all(bytes)?;
    f.flush()?;
    Ok(())
}

fn write_boards(out: &Path, boards: &[Board]) -> R<()> {
    let side = AREA_PX as usize;
    let areas: Vec<u8> = boards.iter().flat_map(|b| b.area.iter().copied()).collect();
    write_npy(&out.join("areas.npy"), "|u1", &[boards.len(), side, side, 3], &areas)?;
    let labels: Vec<u8> = boards.iter().flat_map(|b| b.labels.iter().flatten().map(|&v| v as u8)).collect();
    write_npy(&out.join("labels.npy"), "|i1", &[boards.len(), 8, 8], &labels)?;
    let what: Vec<&serde_json::Value> = boards.iter().map(|b| &b.what).collect();
    std::fs::write(out.join("boards.json"), serde_json::to_string_pretty(&what)?)?;
    Ok(())
}
