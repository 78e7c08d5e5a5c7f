//! Cops and Robbers (the classic two-policemen game on a map of roads and buildings).
