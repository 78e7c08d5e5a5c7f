//! FEN placeholder
