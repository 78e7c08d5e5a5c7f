//! notation placeholder
