//! Warp the playing area to a square, unrotated image.
use super::{h_mul, h_to_mat, locate::BoardLocation, Result, VisionError, H3};
use opencv::core::{self, Mat, Scalar, Size};
use opencv::imgproc;
use opencv::prelude::*;

/// Pixels per square in the rectified image. 64 keeps a disc ~35 px across,
/// plenty for colour and ring texture, while a warp stays ~1 ms.
pub const SQUARE_PX: i32 = 64;
pub const RECT_SIZE: i32 = 8 * SQUARE_PX;

/// Rectified image (RECT_SIZE x RECT_SIZE, same type as `img`): square (row r,
/// col c) covers x in [64c, 64c+64), y in [64r, 64r+64). No rotation is applied:
/// its top-left is `loc.corners[0]`.
pub fn rectify(img: &Mat, loc: &BoardLocation) -> Result<Mat> {
    if img.empty() {
        return Err(VisionError::BadImage("empty".into()));
    }
    if (img.cols(), img.rows()) != loc.image_size {
        return Err(VisionError::BadImage(format!(
            "image is {}x{} but location is for {}x{}",
            img.cols(),
            img.rows(),
            loc.image_size.0,
            loc.image_size.1
        )));
    }
    let s = 1.0 / SQUARE_PX as f64;
    let rect_to_board: H3 = [[s, 0.0, 0.0], [0.0, s, 0.0], [0.0, 0.0, 1.0]];
    // dst(x,y) = src(M * (x,y)) with WARP_INVERSE_MAP: M maps rectified -> image.
    let m = h_to_mat(&h_mul(&loc.h_board_to_img, &rect_to_board))?;
    let mut out = Mat::default();
    imgproc::warp_perspective(
        img,
        &mut out,
        &m,
        Size::new(RECT_SIZE, RECT_SIZE),
        imgproc::INTER_LINEAR | imgproc::WARP_INVERSE_MAP,
        core::BORDER_REPLICATE,
        Scalar::default(),
    )?;
    Ok(out)
}
