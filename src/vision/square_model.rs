//! The learnt square model: a small convolutional network that reads each playing square of a
//! board, with a margin round it so that a leaning piece top is seen whole.
//!
//! The network was trained (`models/square-model/train.py`, `make model`) on squares of many
//! rendered boards, sets, lamps and cameras and on labelled real photos; it turns each square's
//! picture into an embedding, and a linear head ([`SquareHead`]) turns that into
//! probabilities of empty, dark man, light man, dark king, light king and `other` (a hand or
//! anything else). A session's start position fine-tunes the head ([`SquareModel::adapt`]).
//! It runs through OpenCV's `dnn` module from ONNX; the trained weights are built into the
//! binary, so nothing is loaded from anywhere at run time.
//!
//! What the network sees is fixed here and in the training script alike: the playing area
//! warped with a margin of `MARGIN_PX` round it at `PX_PER_SQUARE` pixels a square (the
//! "board area"), normalised by the playing area's own mean colour and spread (so a lamp's
//! tint and the exposure cancel), and cut into `PATCH_PX` squares, one per playing square.
use opencv::core::{self, Mat, Scalar, Size};
use opencv::dnn;
use opencv::imgproc;
use opencv::prelude::*;
use serde::{Deserialize, Serialize};

use super::classify::CLASSES;
use super::locate::BoardLocation;
use super::square_head::{Adaptation, SquareHead, HEAD_CLASSES, OTHER};
use super::{Result, VisionError};

/// Pixels per square of the board area.
pub const PX_PER_SQUARE: i32 = 20;
/// Margin round each square (and round the playing area), pixels: 0.3 of a square.
pub const MARGIN_PX: i32 = 6;
/// Side of one square's patch.
pub const PATCH_PX: i32 = PX_PER_SQUARE + 2 * MARGIN_PX;
/// Side of the board area.
pub const AREA_PX: i32 = 8 * PX_PER_SQUARE + 2 * MARGIN_PX;

/// The model built into the binary.
pub const BUILTIN_ONNX: &[u8] = include_bytes!("../../models/square-cnn.onnx");
pub const BUILTIN_JSON: &str = include_str!("../../models/square-cnn.json");
/// The built-in networks by name, as a calibration names the one its session chose; the
/// first is the one a session reads with until its start has chosen. One for now: a second,
/// trained on veined stone too (`make model-stone`), was judged on sets held apart and misread
/// no fewer squares with it than without (BENCHMARKS.md), so it is not built in.
pub const BUILTIN_NETWORKS: [(&str, &[u8], &str); 1] = [("general", BUILTIN_ONNX, BUILTIN_JSON)];

/// The model card (`models/square-cnn.json`): the network's description.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct ModelCard {
    /// Always `boardwatch-square-model/1`.
    pub format: String,
    pub px_per_square: i32,
    pub margin_px: i32,
    pub embedding: usize,
    pub head: SquareHead,
    /// How it was trained (data, seeds, epochs): for the reader, not used here.
    #[serde(default)]
    pub training: serde_json::Value,
}

pub const FORMAT: &str = "boardwatch-square-model/1";

/// The board area of an image: the playing area and a margin of `MARGIN_PX` round it, warped to
/// `AREA_PX` square pixels (row 0 along the edge from `board_to_image(0, 0)` to
/// `board_to_image(8, 0)`). `board_to_image` maps board points (squares, 0..=8) to image pixels,
/// lens included: a [`BoardLocation`]'s, or a renderer's truth. An image much larger than the
/// area is shrunk first (by whole-pixel averaging), so that fine texture and sensor noise do
/// not alias into the few pixels a square gets.
pub fn board_area(img: &Mat, board_to_image: &dyn Fn(f64, f64) -> (f64, f64)) -> Result<Mat> {
    AreaWarp::new((img.cols(), img.rows()), board_to_image)?.apply(img)
}

/// The board area of a located board.
pub fn located_board_area(img: &Mat, loc: &BoardLocation) -> Result<Mat> {
    board_area(img, &|u, v| loc.board_to_image(u, v))
}

/// How a board area is cut from images of one size with the board at one place: the part of
/// the image it needs, how much that part is shrunk, and where each area pixel comes from.
/// Kept while the board stays where it is (see [`SquareModel::located_area`]): building the
/// map asks the board's mapping 30,000 times, applying it is a small remap.
pub struct AreaWarp {
    image_size: (i32, i32),
    /// The part of the image the area needs, in whole blocks of `shrink` pixels.
    roi: core::Rect,
    shrink: i32,
    /// Area pixel -> pixel of the shrunk part (CV_32FC2).
    map: Mat,
}

impl AreaWarp {
    pub fn new(image_size: (i32, i32), board_to_image: &dyn Fn(f64, f64) -> (f64, f64)) -> Result<AreaWarp> {
        let (cols, rows) = image_size;
        if cols <= 0 || rows <= 0 {
            return Err(VisionError::BadImage(format!("board area needs an image, got {cols}x{rows}")));
        }
        // Image pixels per area pixel, from the playing area's diagonals.
        let (a, b, c, d) = (board_to_image(0.0, 0.0), board_to_image(8.0, 8.0), board_to_image(8.0, 0.0), board_to_image(0.0, 8.0));
        let diagonal = ((a.0 - b.0).hypot(a.1 - b.1) + (c.0 - d.0).hypot(c.1 - d.1)) / 2.0;
        let scale = diagonal / (8.0 * std::f64::consts::SQRT_2 * PX_PER_SQUARE as f64);
        if !scale.is_finite() || scale <= 0.0 {
            return Err(VisionError::BadCorners("the playing area has no size".into()));
        }
        let shrink = if scale > 2.0 { (scale / 1.5).floor() as i32 } else { 1 };
        let step = 1.0 / PX_PER_SQUARE as f64;
        let origin = -(MARGIN_PX as f64) * step;
        let mut points = Vec::with_capacity((AREA_PX * AREA_PX) as usize);
        let (mut lo, mut hi) = ((f64::INFINITY, f64::INFINITY), (f64::NEG_INFINITY, f64::NEG_INFINITY));
        for y in 0..AREA_PX {
            for x in 0..AREA_PX {
                // Pixel centres: area pixel x covers board u in [origin + x step, origin + (x+1) step).
                let (u, v) = (origin + (x as f64 + 0.5) * step, origin + (y as f64 + 0.5) * step);
                let p = board_to_image(u, v);
                if !(p.0.is_finite() && p.1.is_finite()) {
                    return Err(VisionError::BadCorners("the board area leaves the image plane".into()));
                }
                (lo, hi) = ((lo.0.min(p.0), lo.1.min(p.1)), (hi.0.max(p.0), hi.1.max(p.1)));
                points.push(p);
            }
        }
        // Only the part of the image the area samples is shrunk, in whole blocks (so a block
        // averages the same pixels as when the whole image is shrunk); beyond it the border
        // is replicated, as it would be beyond the image.
        let s = shrink as f64;
        let block_lo = |v: f64, limit: i32| (((v - 2.0 * s) / s).floor() as i64).clamp(0, (limit / shrink) as i64) as i32;
        let block_hi = |v: f64, limit: i32| (((v + 2.0 * s) / s).ceil() as i64).clamp(0, (limit / shrink) as i64) as i32;
        let (bx0, by0, bx1, by1) = (block_lo(lo.0, cols), block_lo(lo.1, rows), block_hi(hi.0, cols), block_hi(hi.1, rows));
        let roi = core::Rect::new(bx0 * shrink, by0 * shrink, ((bx1 - bx0) * shrink).max(shrink), ((by1 - by0) * shrink).max(shrink));
        let roi =
            core::Rect::new(roi.x.min(cols - roi.width.min(cols)), roi.y.min(rows - roi.height.min(rows)), roi.width.min(cols), roi.height.min(rows));
        let mut map = Mat::new_rows_cols_with_default(AREA_PX, AREA_PX, core::CV_32FC2, Scalar::default())?;
        for (i, (ix, iy)) in points.into_iter().enumerate() {
            // Image pixel centres are at integers; a shrunk block's at (i + 0.5) / s - 0.5.
            let (px, py) = ((ix + 0.5) / s - 0.5 - (roi.x / shrink) as f64, (iy + 0.5) / s - 0.5 - (roi.y / shrink) as f64);
            *map.at_2d_mut::<core::Vec2f>(i as i32 / AREA_PX, i as i32 % AREA_PX)? = core::Vec2f::from([px as f32, py as f32]);
        }
        Ok(AreaWarp { image_size, roi, shrink, map })
    }

    /// The board area of `img` (of the size this warp was made for).
    pub fn apply(&self, img: &Mat) -> Result<Mat> {
        if img.empty() || img.typ() != core::CV_8UC3 {
            return Err(VisionError::BadImage(format!("board area needs an 8-bit colour image, got type {}", img.typ())));
        }
        if (img.cols(), img.rows()) != self.image_size {
            return Err(VisionError::BadImage(format!(
                "image is {}x{} but the board area was placed on {}x{}",
                img.cols(),
                img.rows(),
                self.image_size.0,
                self.image_size.1
            )));
        }
        let part = Mat::roi(img, self.roi)?;
        if self.shrink > 1 {
            let mut small = Mat::default();
            let size = Size::new(self.roi.width / self.shrink, self.roi.height / self.shrink);
            imgproc::resize(&part, &mut small, size, 0.0, 0.0, imgproc::INTER_AREA)?;
            self.remap(&small)
        } else {
            self.remap(&part)
        }
    }

    fn remap(&self, source: &impl core::ToInputArray) -> Result<Mat> {
        let mut out = Mat::default();
        imgproc::remap(source, &mut out, &self.map, &core::no_array(), imgproc::INTER_LINEAR, core::BORDER_REPLICATE, Scalar::default())?;
        Ok(out)
    }
}

/// Per-channel mean and overall spread of the playing area (margin left out) of a board area:
/// what the network's input is normalised by.
pub fn area_statistics(area: &[u8]) -> ([f32; 3], f32) {
    let side = AREA_PX as usize;
    let m = MARGIN_PX as usize;
    let inner = side - 2 * m;
    let mut sum = [0f64; 3];
    let mut sum_sq = 0f64;
    for y in m..m + inner {
        for x in m..m + inner {
            for ch in 0..3 {
                let v = area[(y * side + x) * 3 + ch] as f64;
                sum[ch] += v;
                sum_sq += v * v;
            }
        }
    }
    let n = (inner * inner) as f64;
    let mean = sum.map(|s| (s / n) as f32);
    let overall = (sum[0] + sum[1] + sum[2]) / (3.0 * n);
    let var = (sum_sq / (3.0 * n) - overall * overall).max(0.0);
    // Per-channel means removed, the spread is about the overall mean: a board's light and
    // dark squares spread it whatever the lamp's tint.
    (mean, (var.sqrt() as f32).max(4.0))
}

/// The network's input for the given squares (row, col of the board area): N x 3 x PATCH x PATCH,
/// channels in the image's order (BGR), normalised by `area_statistics`.
pub fn patches_blob(area: &Mat, squares: &[(usize, usize)]) -> Result<Mat> {
    if area.rows() != AREA_PX || area.cols() != AREA_PX || area.typ() != core::CV_8UC3 {
        return Err(VisionError::BadImage(format!("board area must be {AREA_PX}x{AREA_PX} 8-bit colour")));
    }
    let continuous = if area.is_continuous() { area.clone() } else { area.try_clone()? };
    let pixels = continuous.data_bytes()?;
    let (mean, spread) = area_statistics(pixels);
    let p = PATCH_PX as usize;
    let side = AREA_PX as usize;
    let mut blob = Mat::new_nd_with_default(&[squares.len() as i32, 3, PATCH_PX, PATCH_PX], core::CV_32F, Scalar::all(0.0))?;
    let data = blob.data_typed_mut::<f32>()?;
    for (n, &(r, c)) in squares.iter().enumerate() {
        let (x0, y0) = (c * PX_PER_SQUARE as usize, r * PX_PER_SQUARE as usize);
        for ch in 0..3 {
            let plane = &mut data[(n * 3 + ch) * p * p..(n * 3 + ch + 1) * p * p];
            for y in 0..p {
                for x in 0..p {
                    let v = pixels[((y0 + y) * side + x0 + x) * 3 + ch] as f32;
                    plane[y * p + x] = (v - mean[ch]) / spread;
                }
            }
        }
    }
    Ok(blob)
}

/// One trained network, its card and its head.
struct Network {
    name: String,
    net: dnn::Net,
    card: ModelCard,
    /// The head as trained, the floor every session's adaptation starts from.
    trained_head: SquareHead,
}

/// The square model: one or more trained networks, of which each session reads with one, the
/// one that reads its start position surer ([`LearntReading::adapt`]); until a start has chosen,
/// every network reads (so that the start can choose) and the first one's reading is used.
pub struct SquareModel {
    networks: Vec<Network>,
    /// The network this session reads with, once its start position has chosen it.
    chosen: Option<usize>,
    /// The last board area's warp and the location it was made for.
    warp: Option<(WarpKey, AreaWarp)>,
}

/// What an area warp depends on: the board's mapping and the image size.
#[derive(PartialEq)]
struct WarpKey {
    h_board_to_img: [[f64; 3]; 3],
    k1: f64,
    image_size: (i32, i32),
}

impl std::fmt::Debug for SquareModel {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let names: Vec<&str> = self.networks.iter().map(|n| n.name.as_str()).collect();
        f.debug_struct("SquareModel").field("networks", &names).field("chosen", &self.chosen).finish_non_exhaustive()
    }
}

/// One square as the model reads it.
#[derive(Debug, Clone, PartialEq)]
pub struct SquareVerdict {
    /// P(empty, dark man, light man, dark king, light king, other).
    pub probs: [f32; HEAD_CLASSES],
    pub embedding: Vec<f32>,
}

impl SquareModel {
    /// The model built into the binary: its networks, the session's start to choose.
    pub fn builtin() -> Result<SquareModel> {
        SquareModel::from_networks(&BUILTIN_NETWORKS)
    }

    /// A model of one network from its ONNX file and its card (JSON).
    pub fn from_parts(onnx: &[u8], card_json: &str) -> Result<SquareModel> {
        SquareModel::from_networks(&[(BUILTIN_NETWORKS[0].0, onnx, card_json)])
    }

    /// A model of several networks (name, ONNX file, card), each session to choose one by its
    /// start; a model of one network reads with it from the start.
    pub fn from_networks(networks: &[(&str, &[u8], &str)]) -> Result<SquareModel> {
        if networks.is_empty() {
            return Err(VisionError::Palette("square model: no network given".into()));
        }
        let networks = networks.iter().map(|&(name, onnx, card)| Network::from_parts(name, onnx, card)).collect::<Result<Vec<_>>>()?;
        let chosen = (networks.len() == 1).then_some(0);
        Ok(SquareModel { networks, chosen, warp: None })
    }

    /// The network a reading uses: the chosen one, or the first until a start chooses.
    fn reading_network(&self) -> usize {
        self.chosen.unwrap_or(0)
    }

    /// Name of the network this session reads with (`None` until its start has chosen).
    pub fn chosen_network(&self) -> Option<&str> {
        self.chosen.map(|k| self.networks[k].name.as_str())
    }

    /// The head in use (the trained one, or the session's) of the network that reads.
    pub fn head(&self) -> &SquareHead {
        &self.networks[self.reading_network()].card.head
    }

    /// The board area of a located board, its warp kept while the board stays where it is.
    pub fn located_area(&mut self, img: &Mat, loc: &BoardLocation) -> Result<Mat> {
        let key = WarpKey { h_board_to_img: loc.h_board_to_img, k1: loc.lens.k1, image_size: (img.cols(), img.rows()) };
        if self.warp.as_ref().is_none_or(|(kept, _)| *kept != key) {
            self.warp = Some((key, AreaWarp::new((img.cols(), img.rows()), &|u, v| loc.board_to_image(u, v))?));
        }
        self.warp.as_ref().expect("warp set").1.apply(img)
    }

    /// Embeddings of the given squares of a board area, by the network that reads.
    pub fn embed(&mut self, area: &Mat, squares: &[(usize, usize)]) -> Result<Vec<Vec<f32>>> {
        let k = self.reading_network();
        self.networks[k].embed(area, squares)
    }

    /// The given squares of a board area, read.
    pub fn read(&mut self, area: &Mat, squares: &[(usize, usize)]) -> Result<Vec<SquareVerdict>> {
        let embeddings = self.embed(area, squares)?;
        let head = self.head();
        Ok(embeddings.into_iter().map(|embedding| SquareVerdict { probs: head.probabilities(&embedding), embedding }).collect())
    }

    /// Read with `network` from now on and fine-tune its head on labelled squares of this
    /// session (a start position's playing squares): `labels` index [`CLASSES`] (`OTHER` for a
    /// hand). Always from the trained head, so a second calibration does not stack on the first.
    fn choose_and_adapt(&mut self, network: usize, embeddings: &[Vec<f32>], labels: &[usize]) {
        let n = &mut self.networks[network];
        n.card.head = n.trained_head.adapted(embeddings, labels, Adaptation::default());
        self.chosen = Some(network);
    }

    /// Back to the trained heads, no network chosen (a new session). A model of one network
    /// keeps it.
    pub fn forget_session(&mut self) {
        for n in &mut self.networks {
            n.card.head = n.trained_head.clone();
        }
        self.chosen = if self.networks.len() == 1 { Some(0) } else { None };
    }

    /// Use a session's head learnt before (a calibration file's) on the reading network.
    pub fn set_session_head(&mut self, head: SquareHead) -> Result<()> {
        let k = self.reading_network();
        let n = &mut self.networks[k];
        head.validate(n.card.embedding).map_err(|e| VisionError::Calibration(format!("square model ({}) {e}", n.name)))?;
        n.card.head = head;
        Ok(())
    }

    /// Read as a calibration says: with the network its session chose (the general one when it
    /// names none, as files made before there were two do not) and its session's head, or the
    /// trained head when it was made without the model.
    pub fn use_calibration(&mut self, cal: &super::Calibration) -> Result<()> {
        let name = cal.square_model.as_deref().unwrap_or(BUILTIN_NETWORKS[0].0);
        let Some(k) = self.networks.iter().position(|n| n.name == name) else {
            return Err(unknown_network(name, &self.networks.iter().map(|n| n.name.as_str()).collect::<Vec<_>>()));
        };
        self.forget_session();
        self.chosen = Some(k);
        match &cal.square_head {
            Some(head) => self.set_session_head(head.clone()),
            None => Ok(()),
        }
    }
}

fn unknown_network(name: &str, known: &[&str]) -> VisionError {
    VisionError::Calibration(format!("square model: no network named {name:?} (this one has {})", known.join(", ")))
}

impl Network {
    fn from_parts(name: &str, onnx: &[u8], card_json: &str) -> Result<Network> {
        let card: ModelCard = serde_json::from_str(card_json).map_err(|e| VisionError::Palette(format!("square model card ({name}): {e}")))?;
        if card.format != FORMAT {
            return Err(VisionError::Palette(format!("square model card ({name}): format {:?}, expected {FORMAT:?}", card.format)));
        }
        if card.px_per_square != PX_PER_SQUARE || card.margin_px != MARGIN_PX {
            return Err(VisionError::Palette(format!(
                "square model card ({name}): trained on {} px squares with {} px margins, this build cuts {PX_PER_SQUARE} and {MARGIN_PX}",
                card.px_per_square, card.margin_px
            )));
        }
        card.head.validate(card.embedding).map_err(|e| VisionError::Palette(format!("square model card ({name}): {e}")))?;
        let buffer: core::Vector<u8> = onnx.iter().copied().collect();
        let mut net = dnn::read_net_from_onnx_buffer(&buffer).map_err(|e| VisionError::Palette(format!("square model network ({name}): {e}")))?;
        net.set_preferable_backend(dnn::DNN_BACKEND_OPENCV)?;
        net.set_preferable_target(dnn::DNN_TARGET_CPU)?;
        let trained_head = card.head.clone();
        Ok(Network { name: name.to_string(), net, card, trained_head })
    }

    fn embed(&mut self, area: &Mat, squares: &[(usize, usize)]) -> Result<Vec<Vec<f32>>> {
        if squares.is_empty() {
            return Ok(Vec::new());
        }
        let blob = patches_blob(area, squares)?;
        self.net.set_input(&blob, "", 1.0, Scalar::default())?;
        let out = self.net.forward_single("")?;
        let out = out.reshape(1, squares.len() as i32)?;
        let dim = self.card.embedding;
        if out.cols() as usize != dim {
            return Err(VisionError::Palette(format!(
                "square model network ({}) gives {} values a square, its card says {dim}",
                self.name,
                out.cols()
            )));
        }
        let mut embeddings = Vec::with_capacity(squares.len());
        for n in 0..squares.len() as i32 {
            embeddings.push(out.at_row::<f32>(n)?.to_vec());
        }
        Ok(embeddings)
    }
}

/// Index of a class in the model's output (`CLASSES` order, `OTHER` last).
pub fn class_index(class: super::ColourClass) -> usize {
    CLASSES.iter().position(|&k| k == class).unwrap_or(OTHER)
}

/// The playing squares (row, col) of the image grid: where `(row + col) % 2 == 0` equals
/// `top_left_dark`.
pub fn playing_squares(top_left_dark: bool) -> Vec<(usize, usize)> {
    (0..8).flat_map(|r| (0..8).map(move |c| (r, c))).filter(|&(r, c)| ((r + c) % 2 == 0) == top_left_dark).collect()
}

/// The colours' reading of a square goes into the model's as a second expert, to this power.
/// Chosen on material the model may be tuned on (BENCHMARKS.md, "Learnt square model"): on the
/// rendered validation sessions 620000-620011 the model alone misread 3 squares of 27,648 and
/// with the colours at 0.5 none (1 `?`); on the photos of game 1, calibrated on Image_001, 2
/// misread of 640 alone and none with them (at 1, one `?`).
const COLOUR_SHARE: f32 = 0.5;

/// How sure the trained model must be of every square of a start position it vouches for when
/// the colours cannot tell the start (`LearntReading::start_side`).
pub const START_CONFIDENCE: f32 = 0.6;

/// Men of a start position the trained model may read empty and still vouch for it: as many
/// squares as the colours may find odd in a start they calibrate on (a square or two the camera
/// cannot see well). On the wooden starts 100-399 of the renderer, one allowed took 297 of 300,
/// two 299 (the three refused had two, two and three dark men read empty; 2026-11-30).
pub const START_MEN_READ_EMPTY: usize = super::palette::CALIB_MAX_ODD;

/// How much darker one group of a start's men must be than the other (piece tops' `level`,
/// between the board's dark and light squares) to tell the sides of a start the learnt model
/// sees only by where the men stand ([`LearntReading::start_side_seen`]).
pub const START_DARKER_BY: f32 = 0.2;

/// A floor under the colours' probabilities, so that a class the colours rule out stays possible.
const COLOUR_FLOOR: f32 = 0.02;

/// A square's probabilities with each king's given to its man: a stacked king of the wooden set
/// looks like a man from above, and a start position has no kings.
pub fn kings_as_men(p: [f32; HEAD_CLASSES]) -> [f32; HEAD_CLASSES] {
    [p[0], p[1] + p[3], p[2] + p[4], 0.0, 0.0, p[OTHER]]
}

/// The model's reading of one frame's playing squares, kept with the frame: its embeddings
/// serve the session's adaptation when the frame turns out to be a start position.
#[derive(Debug, Clone)]
pub struct LearntReading {
    /// (row, col) in the image grid of each playing square read.
    pub squares: Vec<(usize, usize)>,
    /// Each network's embeddings of the squares, by the model's order of networks; empty for a
    /// network that did not read (once a session has chosen, only its network reads).
    embeddings: Vec<Vec<Vec<f32>>>,
    /// The network whose reading is used (the model's reading network when it read).
    network: usize,
}

impl LearntReading {
    /// Read the playing squares (those where `(row + col) % 2 == 0` equals `top_left_dark`)
    /// of a located board: by the network the session chose, or by every network until a
    /// start has chosen.
    pub fn read(model: &mut SquareModel, img: &Mat, loc: &BoardLocation, top_left_dark: bool) -> Result<LearntReading> {
        let area = model.located_area(img, loc)?;
        let squares = playing_squares(top_left_dark);
        let chosen = model.chosen;
        let mut embeddings = Vec::with_capacity(model.networks.len());
        for (k, network) in model.networks.iter_mut().enumerate() {
            embeddings.push(if chosen.is_none_or(|c| c == k) { network.embed(&area, &squares)? } else { Vec::new() });
        }
        Ok(LearntReading { squares, embeddings, network: model.reading_network() })
    }

    /// The embeddings of the network whose reading is used.
    pub fn embeddings(&self) -> &[Vec<f32>] {
        &self.embeddings[self.network]
    }

    /// How surely network `k`'s head as trained reads `start` (row, col, class of every
    /// playing square): the mean log-probability of the start's classes, each king's given to
    /// its man.
    fn start_score(&self, model: &SquareModel, k: usize, start: &[(usize, usize, super::ColourClass)]) -> f32 {
        let head = &model.networks[k].trained_head;
        let mut sum = 0.0f32;
        let mut n = 0usize;
        for &(r, c, class) in start {
            if let Some(i) = self.squares.iter().position(|&s| s == (r, c)) {
                sum += kings_as_men(head.probabilities(&self.embeddings[k][i]))[class_index(class)].max(1e-6).ln();
                n += 1;
            }
        }
        if n == 0 {
            f32::NEG_INFINITY
        } else {
            sum / n as f32
        }
    }

    /// The networks that read this frame.
    fn networks_read(&self) -> impl Iterator<Item = usize> + '_ {
        (0..self.embeddings.len()).filter(|&k| !self.embeddings[k].is_empty())
    }

    /// The side whose start position this reading shows by a network's head alone as trained
    /// (the model before any session taught it), if one does beyond doubt: every playing square
    /// read as that start has it, at least [`START_CONFIDENCE`] sure (a stacked king counts as
    /// its man), but for at most [`START_MEN_READ_EMPTY`] men read empty: the model's most
    /// common error (a dark man on a dark square), which no start position one move on
    /// explains, since a move also fills a square the start leaves empty. When networks tell
    /// different sides, the one read surer wins.
    pub fn start_side(&self, model: &SquareModel, top_left_dark: bool) -> Option<super::Side> {
        use super::Side;
        let empty = class_index(super::ColourClass::Empty);
        let mut best: Option<(Side, f32)> = None;
        for k in self.networks_read() {
            let embeddings = &self.embeddings[k];
            let read: Vec<((usize, usize), usize, f32)> = self
                .squares
                .iter()
                .zip(embeddings)
                .map(|(&square, embedding)| {
                    let merged = kings_as_men(model.networks[k].trained_head.probabilities(embedding));
                    let (best, &sure) = merged.iter().enumerate().max_by(|a, b| a.1.total_cmp(b.1)).expect("six classes");
                    (square, best, sure)
                })
                .collect();
            let side = [Side::Top, Side::Bottom, Side::Left, Side::Right].into_iter().find(|&side| {
                let start = super::palette::start_position(side, top_left_dark);
                let mut men_read_empty = 0;
                let all_read = start.len() == read.len()
                    && start.iter().all(|&(r, c, class)| {
                        let Some(&(_, best, sure)) = read.iter().find(|s| s.0 == (r, c)) else { return false };
                        if best == class_index(class) && sure >= START_CONFIDENCE {
                            true
                        } else if best == empty && class != super::ColourClass::Empty {
                            men_read_empty += 1;
                            true
                        } else {
                            false
                        }
                    });
                all_read && men_read_empty <= START_MEN_READ_EMPTY
            });
            if let Some(side) = side {
                let start = super::palette::start_position(side, top_left_dark);
                let score = self.start_score(model, k, &start);
                if best.is_none_or(|(_, b)| score > b) {
                    best = Some((side, score));
                }
            }
        }
        best.map(|(side, _)| side)
    }

    /// [`LearntReading::start_side`], or else a start told by where the men stand
    /// ([`LearntReading::start_by_occupancy`]) whose sides the squares' features tell apart: the
    /// group of men whose tops are darker (`level`, between the board's dark and light squares)
    /// by at least [`START_DARKER_BY`] is the dark side's, unless the model reads that group
    /// the lighter by as much.
    pub fn start_side_seen(&self, model: &SquareModel, features: &super::BoardFeatures) -> Option<super::Side> {
        use super::{ColourClass, Side};
        if let Some(side) = self.start_side(model, features.top_left_dark) {
            return Some(side);
        }
        let (side, model_darker_by) = self.start_by_occupancy(model, features.top_left_dark)?;
        let start = super::palette::start_position(side, features.top_left_dark);
        let level = |class: ColourClass| {
            let tops: Vec<f32> = start.iter().filter(|s| s.2 == class).map(|&(r, c, _)| features.squares[r][c].f[0]).collect();
            tops.iter().sum::<f32>() / tops.len().max(1) as f32
        };
        let darker_by = level(ColourClass::LightMan) - level(ColourClass::DarkMan);
        let opposite = if side == Side::Top { Side::Bottom } else { Side::Right };
        tracing::debug!("a start by where the men stand: {side:?}'s dark men darker by {darker_by:.2} (the model: {model_darker_by:.2})");
        if darker_by >= START_DARKER_BY && model_darker_by > -START_DARKER_BY {
            Some(side)
        } else if darker_by <= -START_DARKER_BY && model_darker_by < START_DARKER_BY {
            Some(opposite)
        } else {
            None
        }
    }

    /// A start position this reading shows by where the men stand, whatever their colours (a
    /// set whose two colours no network tells apart): every playing square read occupied or
    /// empty as a start has it, at least [`START_CONFIDENCE`] sure (but for at most
    /// [`START_MEN_READ_EMPTY`] men read empty). Returns the side as if White's home were `Top`
    /// or `Left` (the men stand on the same squares for `Bottom` or `Right`) and how much darker
    /// the model reads the men that side gives Black than the others (each square's share of
    /// dark among its man probabilities, averaged over the group). By the first network that
    /// sees one.
    pub fn start_by_occupancy(&self, model: &SquareModel, top_left_dark: bool) -> Option<(super::Side, f32)> {
        use super::{ColourClass, Side};
        for k in self.networks_read() {
            let embeddings = &self.embeddings[k];
            let probs: Vec<[f32; HEAD_CLASSES]> = embeddings.iter().map(|e| kings_as_men(model.networks[k].trained_head.probabilities(e))).collect();
            for side in [Side::Top, Side::Left] {
                let start = super::palette::start_position(side, top_left_dark);
                let mut men_read_empty = 0;
                let mut darkness = [Vec::new(), Vec::new()];
                let occupancy_holds = start.len() == self.squares.len()
                    && start.iter().all(|&(r, c, class)| {
                        let Some(i) = self.squares.iter().position(|&s| s == (r, c)) else { return false };
                        let p = probs[i];
                        let (empty, men) = (p[0], p[1] + p[2]);
                        if class == ColourClass::Empty {
                            return empty >= START_CONFIDENCE;
                        }
                        darkness[(class == ColourClass::LightMan) as usize].push(p[1] / men.max(1e-6));
                        if men >= START_CONFIDENCE {
                            true
                        } else {
                            men_read_empty += (empty > men) as usize;
                            empty > men
                        }
                    });
                if !occupancy_holds || men_read_empty > START_MEN_READ_EMPTY {
                    continue;
                }
                let mean = |v: &[f32]| v.iter().sum::<f32>() / v.len().max(1) as f32;
                // darkness[0]: the squares the start gives dark men if White's home is `side`.
                return Some((side, mean(&darkness[0]) - mean(&darkness[1])));
            }
        }
        None
    }

    /// Put the model's verdicts (by the network the session reads with, and its head) on the
    /// playing squares of `reading`, in place of the colours'. `distinct_kings`: whether the set's kings look unlike its men (a stacked king
    /// of the wooden set does not: its probability goes to the man, as the colours read it).
    /// Below `min_confidence` a square reads `?`, as with the colours.
    pub fn apply(&self, model: &SquareModel, reading: &mut super::BoardReading, distinct_kings: bool, min_confidence: f32) {
        let share = COLOUR_SHARE;
        // A reading made before the session chose its network has every network's embeddings.
        let k = if self.embeddings[model.reading_network()].is_empty() { self.network } else { model.reading_network() };
        let head = &model.networks[k].card.head;
        for (&(r, c), embedding) in self.squares.iter().zip(&self.embeddings[k]) {
            let mut p = head.probabilities(embedding);
            if !distinct_kings {
                p = kings_as_men(p);
            }
            let square = &mut reading.squares[r][c];
            if share > 0.0 {
                // Product of experts: the colours' reading of the same square, weighted.
                let colour = [square.probs[0], square.probs[1], square.probs[2], square.probs[3], square.probs[4], square.p_unknown];
                for (v, q) in p.iter_mut().zip(colour) {
                    *v *= (q + COLOUR_FLOOR).powf(share);
                }
                let sum: f32 = p.iter().sum();
                if sum > 0.0 {
                    p.iter_mut().for_each(|v| *v /= sum);
                }
            }
            let probs = [p[0], p[1], p[2], p[3], p[4]];
            let (best, &confidence) = probs.iter().enumerate().max_by(|a, b| a.1.total_cmp(b.1)).expect("five classes");
            square.probs = probs;
            square.p_unknown = p[OTHER];
            square.class = if p[OTHER] > confidence || confidence < min_confidence { super::ColourClass::Unknown } else { CLASSES[best] };
            square.confidence = if square.class == super::ColourClass::Unknown { p[OTHER].max(1.0 - confidence) } else { confidence };
        }
    }

    /// Fine-tune `model` on this reading as a start position: `start` gives every playing
    /// square's class (row, col, class) in the image grid. A session that has not chosen its
    /// network yet chooses here the one whose head as trained reads the start surer.
    pub fn adapt(&self, model: &mut SquareModel, start: &[(usize, usize, super::ColourClass)]) {
        let k = match model.chosen {
            Some(c) if !self.embeddings[c].is_empty() => c,
            _ => self
                .networks_read()
                .max_by(|&a, &b| self.start_score(model, a, start).total_cmp(&self.start_score(model, b, start)))
                .unwrap_or(self.network),
        };
        let mut embeddings = Vec::new();
        let mut labels = Vec::new();
        for &(r, c, class) in start {
            if let Some(i) = self.squares.iter().position(|&s| s == (r, c)) {
                embeddings.push(self.embeddings[k][i].clone());
                labels.push(class_index(class));
            }
        }
        model.choose_and_adapt(k, &embeddings, &labels);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use opencv::core::{Point, Rect};

    /// A flat board filling a 400x400 image from (40, 40) to (360, 360): 40 px squares, dark
    /// squares where row + col is odd, one red disc on square (2, 3).
    fn drawn_board() -> Mat {
        let mut img = Mat::new_rows_cols_with_default(400, 400, core::CV_8UC3, Scalar::new(90.0, 140.0, 90.0, 0.0)).unwrap();
        for r in 0..8 {
            for c in 0..8 {
                let colour = if (r + c) % 2 == 1 { Scalar::all(60.0) } else { Scalar::all(210.0) };
                imgproc::rectangle(&mut img, Rect::new(40 + 40 * c, 40 + 40 * r, 40, 40), colour, -1, imgproc::LINE_8, 0).unwrap();
            }
        }
        imgproc::circle(&mut img, Point::new(40 + 40 * 3 + 20, 40 + 40 * 2 + 20), 14, Scalar::new(0.0, 0.0, 230.0, 0.0), -1, imgproc::LINE_AA, 0)
            .unwrap();
        img
    }

    fn flat(u: f64, v: f64) -> (f64, f64) {
        (40.0 + 40.0 * u - 0.5, 40.0 + 40.0 * v - 0.5)
    }

    #[test]
    fn the_board_area_puts_each_square_where_the_patches_expect_it() {
        let area = board_area(&drawn_board(), &flat).unwrap();
        assert_eq!((area.rows(), area.cols()), (AREA_PX, AREA_PX));
        let centre = |r: i32, c: i32| {
            *area.at_2d::<core::Vec3b>(MARGIN_PX + PX_PER_SQUARE * r + PX_PER_SQUARE / 2, MARGIN_PX + PX_PER_SQUARE * c + PX_PER_SQUARE / 2).unwrap()
        };
        assert!(centre(0, 0)[0] > 200 && centre(0, 1)[0] < 70, "light then dark along the first row");
        let disc = centre(2, 3);
        assert!(disc[2] > 200 && disc[0] < 30, "the red disc is on square (2, 3): {disc:?}");
        // The margin shows what is round the board (the green table).
        let corner = *area.at_2d::<core::Vec3b>(1, 1).unwrap();
        assert!(corner[1] > 120 && corner[0] < 100, "{corner:?}");
    }

    /// The board area as first written: the whole image shrunk, then remapped.
    fn board_area_of_whole_image(img: &Mat, board_to_image: &dyn Fn(f64, f64) -> (f64, f64), shrink: f64) -> Mat {
        let mut small = Mat::default();
        let size = Size::new((img.cols() as f64 / shrink).round() as i32, (img.rows() as f64 / shrink).round() as i32);
        imgproc::resize(img, &mut small, size, 0.0, 0.0, imgproc::INTER_AREA).unwrap();
        let mut map = Mat::new_rows_cols_with_default(AREA_PX, AREA_PX, core::CV_32FC2, Scalar::default()).unwrap();
        let step = 1.0 / PX_PER_SQUARE as f64;
        for y in 0..AREA_PX {
            for x in 0..AREA_PX {
                let (u, v) = ((x - MARGIN_PX) as f64 * step + 0.5 * step, (y - MARGIN_PX) as f64 * step + 0.5 * step);
                let (ix, iy) = board_to_image(u, v);
                *map.at_2d_mut::<core::Vec2f>(y, x).unwrap() =
                    core::Vec2f::from([((ix + 0.5) / shrink - 0.5) as f32, ((iy + 0.5) / shrink - 0.5) as f32]);
            }
        }
        let mut out = Mat::default();
        imgproc::remap(&small, &mut out, &map, &core::no_array(), imgproc::INTER_LINEAR, core::BORDER_REPLICATE, Scalar::default()).unwrap();
        out
    }

    #[test]
    fn a_large_board_is_cut_from_its_own_part_of_the_image_as_from_the_whole() {
        // The drawn board twice as large in a 1000x900 image (80 px squares: shrunk by 2).
        let mut big = Mat::default();
        imgproc::resize(&drawn_board(), &mut big, Size::new(800, 800), 0.0, 0.0, imgproc::INTER_NEAREST).unwrap();
        let mut img = Mat::new_rows_cols_with_default(900, 1000, core::CV_8UC3, Scalar::new(30.0, 90.0, 160.0, 0.0)).unwrap();
        big.copy_to(&mut Mat::roi_mut(&mut img, Rect::new(150, 60, 800, 800)).unwrap()).unwrap();
        let turned = |u: f64, v: f64| (150.0 + 80.0 + 80.0 * u - 0.5 + 3.0 * v, 60.0 + 80.0 + 80.0 * v - 0.5 - 2.0 * u);
        let ours = board_area(&img, &turned).unwrap();
        let whole = board_area_of_whole_image(&img, &turned, 2.0);
        let mut diff = Mat::default();
        core::absdiff(&ours, &whole, &mut diff).unwrap();
        let worst = core::norm(&diff, core::NORM_INF, &core::no_array()).unwrap();
        assert!(worst <= 1.0, "the part and the whole give the same area, worst difference {worst}");
        // A board running off the image: the margin replicates the image's edge, as before.
        let off = |u: f64, v: f64| (-100.0 + 80.0 * u, 60.0 + 80.0 * v);
        let ours = board_area(&img, &off).unwrap();
        core::absdiff(&ours, &board_area_of_whole_image(&img, &off, 2.0), &mut diff).unwrap();
        assert!(core::norm(&diff, core::NORM_INF, &core::no_array()).unwrap() <= 1.0);
    }

    #[test]
    fn the_model_keeps_a_boards_warp_until_the_board_moves() {
        let mut model = SquareModel::builtin().unwrap();
        let img = drawn_board();
        let loc = crate::vision::locate::locate_board(&img, None).unwrap();
        let first = model.located_area(&img, &loc).unwrap();
        let again = model.located_area(&img, &loc).unwrap();
        assert_eq!(first.data_bytes().unwrap(), again.data_bytes().unwrap());
        assert_eq!(first.data_bytes().unwrap(), located_board_area(&img, &loc).unwrap().data_bytes().unwrap());
        // Moved by a square: the kept warp is not used.
        let mut moved = loc.clone();
        moved.h_board_to_img = crate::vision::h_mul(&loc.h_board_to_img, &[[1.0, 0.0, 1.0], [0.0, 1.0, 0.0], [0.0, 0.0, 1.0]]);
        let shifted = model.located_area(&img, &moved).unwrap();
        assert_eq!(shifted.data_bytes().unwrap(), located_board_area(&img, &moved).unwrap().data_bytes().unwrap());
        assert_ne!(shifted.data_bytes().unwrap(), first.data_bytes().unwrap());
        // Another image size is refused by name rather than read wrongly.
        let small = AreaWarp::new((400, 400), &flat).unwrap();
        let err = small.apply(&Mat::new_rows_cols_with_default(300, 400, core::CV_8UC3, Scalar::all(0.0)).unwrap()).unwrap_err().to_string();
        assert!(err.contains("400x400"), "{err}");
    }

    #[test]
    fn patches_are_normalised_by_the_playing_area() {
        let area = board_area(&drawn_board(), &flat).unwrap();
        let bytes = area.data_bytes().unwrap();
        let (mean, spread) = area_statistics(bytes);
        // Half light (210) and half dark (60) squares: mean near 135, spread near 75.
        assert!((mean[0] - 135.0).abs() < 4.0, "{mean:?}");
        assert!((spread - 75.0).abs() < 5.0, "{spread}");
        let blob = patches_blob(&area, &[(0, 1), (2, 3)]).unwrap();
        assert_eq!(blob.mat_size().iter().copied().collect::<Vec<i32>>(), vec![2, 3, PATCH_PX, PATCH_PX]);
        let data = blob.data_typed::<f32>().unwrap();
        let p = (PATCH_PX * PATCH_PX) as usize;
        let at = |n: usize, ch: usize, y: usize, x: usize| data[(n * 3 + ch) * p + y * PATCH_PX as usize + x];
        let mid = (PATCH_PX / 2) as usize;
        // An empty dark square is about one spread below the mean, in every channel.
        assert!((at(0, 1, mid, mid) + 1.0).abs() < 0.1, "{}", at(0, 1, mid, mid));
        // The red disc: red channel (BGR: 2) well above, blue well below.
        assert!(at(1, 2, mid, mid) > 1.0 && at(1, 0, mid, mid) < -1.5);
        assert!(patches_blob(&Mat::default(), &[(0, 0)]).is_err());
    }

    #[test]
    fn the_built_in_model_loads_and_reads_every_playing_square() {
        let mut model = SquareModel::builtin().unwrap();
        let area = board_area(&drawn_board(), &flat).unwrap();
        let squares = playing_squares(false);
        let verdicts = model.read(&area, &squares).unwrap();
        assert_eq!(verdicts.len(), 32);
        for v in &verdicts {
            assert_eq!(v.embedding.len(), model.head().weights[0].len());
            assert!((v.probs.iter().sum::<f32>() - 1.0).abs() < 1e-4);
        }
        // The same squares read alone give the same embedding (no batch effects).
        let alone = model.read(&area, &squares[5..6]).unwrap();
        for (a, b) in alone[0].embedding.iter().zip(&verdicts[5].embedding) {
            assert!((a - b).abs() < 1e-4);
        }
    }

    #[test]
    fn a_card_for_another_patch_geometry_is_refused_by_name() {
        let mut card: serde_json::Value = serde_json::from_str(BUILTIN_JSON).unwrap();
        card["px_per_square"] = serde_json::json!(24);
        let err = SquareModel::from_parts(BUILTIN_ONNX, &card.to_string()).unwrap_err().to_string();
        assert!(err.contains("24 px"), "{err}");
        let err = SquareModel::from_parts(b"not a network", BUILTIN_JSON).unwrap_err().to_string();
        assert!(err.contains("network"), "{err}");
    }
}
