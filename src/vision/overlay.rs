//! Pictures of what was seen: the overlay drawn on the (downscaled) photo, a drawn diagram of a
//! board state, and both as JPEG for the live page.
use super::classify::BoardReading;
use super::locate::BoardLocation;
use super::Result;
use opencv::core::{Mat, Point, Scalar, Size, Vector, CV_8UC3};
use opencv::imgproc;
use opencv::prelude::*;

/// `image` as JPEG bytes.
pub fn encode_jpeg(image: &Mat) -> Result<Vec<u8>> {
    let mut jpeg = Vector::<u8>::new();
    opencv::imgcodecs::imencode(".jpg", image, &mut jpeg, &Vector::new())?;
    Ok(jpeg.to_vec())
}

/// The overlay ([`draw_overlay`]) as JPEG.
pub fn overlay_jpeg(img: &Mat, loc: &BoardLocation, reading: Option<&BoardReading>, max_px: i32) -> Result<Vec<u8>> {
    encode_jpeg(&draw_overlay(img, loc, reading, max_px)?)
}

/// A drawn diagram of a board state (for sources without a camera), as JPEG: `grid` holds 8
/// rows of 8 grid characters (`.`, `b`, `B`, `w`, `W`, `?`), row 0 at the top. Dark and light
/// squares, pieces as discs, kings with a ring, unknown squares grey.
pub fn board_diagram_jpeg(grid: &[String; 8]) -> Result<Vec<u8>> {
    const CELL: i32 = 40;
    let bgr = |r: f64, g: f64, b: f64| Scalar::new(b, g, r, 0.0);
    let mut img = Mat::new_rows_cols_with_default(8 * CELL, 8 * CELL, CV_8UC3, bgr(240.0, 217.0, 181.0))?;
    for (row, line) in grid.iter().enumerate() {
        for (col, ch) in line.chars().enumerate().take(8) {
            let (x, y) = (col as i32 * CELL, row as i32 * CELL);
            let dark = (row + col) % 2 == 1;
            let square = if dark { bgr(181.0, 136.0, 99.0) } else { bgr(240.0, 217.0, 181.0) };
            imgproc::rectangle_points(&mut img, Point::new(x, y), Point::new(x + CELL - 1, y + CELL - 1), square, imgproc::FILLED, 8, 0)?;
            let centre = Point::new(x + CELL / 2, y + CELL / 2);
            let (fill, king) = match ch {
                'b' => (Some(bgr(170.0, 30.0, 30.0)), false),
                'B' => (Some(bgr(170.0, 30.0, 30.0)), true),
                'w' => (Some(bgr(250.0, 245.0, 230.0)), false),
                'W' => (Some(bgr(250.0, 245.0, 230.0)), true),
                '.' => (None, false),
                _ => (Some(bgr(150.0, 150.0, 150.0)), false),
            };
            if let Some(fill) = fill {
                imgproc::circle(&mut img, centre, CELL * 2 / 5, fill, imgproc::FILLED, imgproc::LINE_AA, 0)?;
                if king {
                    imgproc::circle(&mut img, centre, CELL / 5, bgr(230.0, 180.0, 30.0), 3, imgproc::LINE_AA, 0)?;
                }
            }
        }
    }
    encode_jpeg(&img)
}

/// Draw corners, the 9x9 grid lines and each square's letter + confidence (%)
/// (in the square's top-left corner, so the piece stays visible). The image is
/// cropped to the board plus a margin and scaled so its longest side is `max_px`.
pub fn draw_overlay(img: &Mat, loc: &BoardLocation, reading: Option<&BoardReading>, max_px: i32) -> Result<Mat> {
    let xs: Vec<f64> = (0..4).map(|k| loc.corners[k][0] as f64).collect();
    let ys: Vec<f64> = (0..4).map(|k| loc.corners[k][1] as f64).collect();
    let (x0, x1) = (xs.iter().cloned().fold(f64::MAX, f64::min), xs.iter().cloned().fold(f64::MIN, f64::max));
    let (y0, y1) = (ys.iter().cloned().fold(f64::MAX, f64::min), ys.iter().cloned().fold(f64::MIN, f64::max));
    let m = 0.08 * (x1 - x0).max(y1 - y0);
    let cx0 = ((x0 - m).floor() as i32).clamp(0, img.cols() - 1);
    let cy0 = ((y0 - m).floor() as i32).clamp(0, img.rows() - 1);
    let cx1 = ((x1 + m).ceil() as i32).clamp(cx0 + 1, img.cols());
    let cy1 = ((y1 + m).ceil() as i32).clamp(cy0 + 1, img.rows());
    let crop = Mat::roi(img, opencv::core::Rect::new(cx0, cy0, cx1 - cx0, cy1 - cy0))?;
    let s = max_px as f64 / (cx1 - cx0).max(cy1 - cy0) as f64;
    let mut out = Mat::default();
    let interp = if s < 1.0 { imgproc::INTER_AREA } else { imgproc::INTER_LINEAR };
    imgproc::resize(&crop, &mut out, Size::new(0, 0), s, s, interp)?;
    let p = |u: f64, v: f64| {
        let (x, y) = loc.board_to_image(u, v);
        Point::new(((x - cx0 as f64) * s).round() as i32, ((y - cy0 as f64) * s).round() as i32)
    };
    let grid = Scalar::new(255.0, 255.0, 0.0, 0.0);
    for k in 0..=8 {
        let k = k as f64;
        imgproc::line(&mut out, p(k, 0.0), p(k, 8.0), grid, 1, imgproc::LINE_AA, 0)?;
        imgproc::line(&mut out, p(0.0, k), p(8.0, k), grid, 1, imgproc::LINE_AA, 0)?;
    }
    let cols = [
        Scalar::new(0.0, 0.0, 255.0, 0.0),   // TL red
        Scalar::new(0.0, 255.0, 0.0, 0.0),   // TR green
        Scalar::new(255.0, 0.0, 0.0, 0.0),   // BR blue
        Scalar::new(0.0, 255.0, 255.0, 0.0), // BL yellow
    ];
    for (k, c) in loc.corners.iter().enumerate() {
        let pt = Point::new(((c[0] as f64 - cx0 as f64) * s) as i32, ((c[1] as f64 - cy0 as f64) * s) as i32);
        imgproc::circle(&mut out, pt, 6, cols[k], 2, imgproc::LINE_AA, 0)?;
    }
    if let Some(rd) = reading {
        let sq_px = ((p(4.0, 4.0).x - p(5.0, 4.0).x).abs()).max(12) as f64;
        let fs = (sq_px / 110.0).clamp(0.3, 0.8);
        for r in 0..8 {
            for c in 0..8 {
                let sr = &rd.squares[r][c];
                let ctr = p(c as f64 + 0.5, r as f64 + 0.5);
                let tl = p(c as f64 + 0.04, r as f64 + 0.04);
                let letter = sr.class.letter().to_string();
                let colour = match sr.class.letter() {
                    'b' | 'B' => Scalar::new(40.0, 40.0, 255.0, 0.0),
                    'w' | 'W' => Scalar::new(255.0, 255.0, 80.0, 0.0),
                    '?' => Scalar::new(255.0, 0.0, 255.0, 0.0),
                    _ => Scalar::new(0.0, 200.0, 0.0, 0.0),
                };
                let _ = ctr;
                let org = Point::new(tl.x, tl.y + (sq_px * 0.28) as i32);
                let black = Scalar::new(0.0, 0.0, 0.0, 0.0);
                imgproc::put_text(&mut out, &letter, org, imgproc::FONT_HERSHEY_SIMPLEX, fs, black, 3, imgproc::LINE_AA, false)?;
                imgproc::put_text(&mut out, &letter, org, imgproc::FONT_HERSHEY_SIMPLEX, fs, colour, 1, imgproc::LINE_AA, false)?;
                let conf = format!("{}", (sr.confidence * 100.0).round().min(99.0) as i32);
                let org2 = Point::new(tl.x, tl.y + (sq_px * 0.93) as i32);
                imgproc::put_text(&mut out, &conf, org2, imgproc::FONT_HERSHEY_SIMPLEX, fs * 0.6, black, 3, imgproc::LINE_AA, false)?;
                imgproc::put_text(&mut out, &conf, org2, imgproc::FONT_HERSHEY_SIMPLEX, fs * 0.6, colour, 1, imgproc::LINE_AA, false)?;
            }
        }
    }
    Ok(out)
}
