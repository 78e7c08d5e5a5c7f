//! What can be wrong with a request to render: every error names the parameter at fault, so a
//! test or a CLI user can fix it without reading the renderer.

#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum SynthError {
    #[error("{name} = {value} is outside the allowed range {min}..={max}")]
    OutOfRange { name: String, value: f64, min: f64, max: f64 },
    #[error("{name} is not a finite number")]
    NotFinite { name: String },
    #[error(
        "camera.k1 = {k1} folds the image over at camera.fov_deg = {fov_deg} (the radial distortion \
         must keep growing towards the image corners): use a smaller |k1| or a narrower field of view"
    )]
    DistortionFolds { k1: f64, fov_deg: f64 },
    #[error("grid row {row}: {reason}")]
    BadGrid { row: usize, reason: String },
    #[error("hand.held = {0:?} is not a piece (expected one of b, B, w, W)")]
    BadHeldPiece(char),
    #[error("{what}: {reason}")]
    BadInput { what: String, reason: String },
    #[error("the camera cannot be placed to see the board with these camera.* parameters")]
    NoView,
}

/// Checks that `value` is finite and within `min..=max`; the error names `name`.
pub(crate) fn check_range(name: &str, value: f64, min: f64, max: f64) -> Result<(), SynthError> {
    if !value.is_finite() {
        return Err(SynthError::NotFinite { name: name.to_string() });
    }
    if value < min || value > max {
        return Err(SynthError::OutOfRange { name: name.to_string(), value, min, max });
    }
    Ok(())
}

/// Checks that `value` is finite (angles, which wrap around, have no range).
pub(crate) fn check_finite(name: &str, value: f64) -> Result<(), SynthError> {
    if value.is_finite() {
        Ok(())
    } else {
        Err(SynthError::NotFinite { name: name.to_string() })
    }
}
