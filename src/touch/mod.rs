//! The camera as the projected board's controller: a finger dwelling on a projected cell is a tap.
//!
//! Pure parts, free of I/O and OpenCV, so that they test fast:
//!
//! - [`pattern`]: the calibration picture the game page projects inside its pinned rectangle,
//!   and where its corners are (the same definition draws it and finds it);
//! - [`grid_map`]: the mapping from camera pixels to the game's cells, fitted from the pattern;
//! - [`fingertip`]: the hand in a foreground mask and the point of it farthest from where the arm
//!   enters;
//! - [`dwell`]: fingertip positions over time to taps (dwell, then leave or lift).
//!
//! The OpenCV side (finding the pattern, the foreground against the projected background) is in
//! `crate::vision::table`; the daemon and `boardwatch play --camera` wire them to the game rooms.

/// Whether `name` can name a screen (it is part of URLs and of the mappings file): 1 to 64
/// letters, digits, `-` and `_`.
pub fn is_screen_name(name: &str) -> bool {
    !name.is_empty() && name.len() <= 64 && name.chars().all(|c| c.is_ascii_alphanumeric() || c == '-' || c == '_')
}

pub mod dwell;
pub mod fingertip;
pub mod grid_map;
pub mod pattern;
