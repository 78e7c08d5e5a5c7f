//! A sample recording replayed as a loaded machine follows a camera: the board pipeline of
//! `boardwatch replay`, with frames dropped in bursts as the daemon drops them when a board is
//! still busy with an older frame. Shared by `tests/replay_under_load.rs` and
//! `examples/drop_eval.rs`.
#![allow(dead_code)]

use std::path::Path;

use boardwatch::draughts::Variant;
use boardwatch::pipeline::BoardPipeline;
use boardwatch::publish::recorder::Recorder;
use boardwatch::publish::records::{InputOrigin, PdnFiles};
use boardwatch::tracker::{Command, Input, KingStyle, RecordItem, TrackerConfig};
use boardwatch::vision::source::{FrameSource, VideoSource};
use boardwatch::vision::{ColourModel, WatchConfig, Watcher};

/// Which frames a loaded machine drops: a burst of 1..=`burst` frames starts at a frame with
/// probability `rate`, the draws made by a small generator (xorshift) from `seed`, so that a
/// seed names one pattern. Written here rather than taken from `rand_chacha`: the patterns
/// BENCHMARKS.md reports by seed are this generator's.
#[derive(Clone, Copy, Debug)]
pub struct Load {
    pub rate: f64,
    pub burst: u64,
    pub seed: u64,
}

struct Xorshift(u64);

impl Xorshift {
    fn next(&mut self) -> f64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        (self.0 >> 11) as f64 / (1u64 << 53) as f64
    }
}

/// What a replay under load gave.
pub struct Replayed {
    pub frames: u64,
    pub dropped: u64,
    /// The recorded moves, each as its first and last squares (see [`ends`]).
    pub moves: Vec<String>,
    /// Per recorded move, the other moves the record names as possible in its place (the boards
    /// seen could not tell the order of plies that arrived together).
    pub alternatives: Vec<Vec<String>>,
    /// Every event but moves and capture steps, with its video time.
    pub notes: Vec<String>,
}

/// A move as its first and last squares: the record names a capture `6x22` where the true
/// moves may give its path, `6x13x22`.
pub fn ends(text: &str) -> String {
    let sep = if text.contains('x') { "x" } else { "-" };
    let squares: Vec<&str> = text.split(sep).collect();
    format!("{}{sep}{}", squares[0], squares[squares.len() - 1])
}

/// The true moves of a sample recording's truth file, as [`ends`].
pub fn true_moves(truth: &Path) -> Vec<String> {
    let text = std::fs::read_to_string(truth).unwrap_or_else(|e| panic!("{}: {e}", truth.display()));
    let truth: serde_json::Value = serde_json::from_str(&text).unwrap_or_else(|e| panic!("{}: {e}", truth.display()));
    truth["plies"].as_array().expect("plies").iter().map(|p| ends(p["pdn"].as_str().expect("pdn"))).collect()
}

/// Replay `video` (English rules, the start position first) with `palette`, dropping frames
/// as `load` says; `log`: the event log, as `replay --log` writes it.
pub fn replay_under_load(video: &Path, palette: &str, load: Load, log: Option<&Path>) -> Replayed {
    let model = ColourModel::named(palette).expect("a palette");
    let kings = if model.dark_king.is_some() { KingStyle::Visible } else { KingStyle::Stacked };
    let mut pipeline = BoardPipeline::new(Watcher::new(model, WatchConfig::default()).expect("a watcher"));
    let (mut recorder, _) =
        Recorder::open(TrackerConfig::new(Variant::English, kings), log, PdnFiles::at(None, None, Vec::new())).expect("a recorder");
    recorder.step(InputOrigin::Operator, None, Input::Command(Command::Init)).expect("init");
    let mut source = VideoSource::open_file(video).unwrap_or_else(|e| panic!("{}: {e}", video.display()));
    let mut rng = Xorshift(0x9e37_79b9_7f4a_7c15 ^ (load.seed + 1).wrapping_mul(0x2545_f491_4f6c_dd1d));
    let (mut dropping, mut dropped, mut frames) = (0u64, 0u64, 0u64);
    let mut notes = Vec::new();
    while let Some(frame) = source.next_frame().unwrap_or_else(|e| panic!("{}: {e}", video.display())) {
        frames += 1;
        if dropping == 0 && rng.next() < load.rate {
            dropping = 1 + (rng.next() * load.burst as f64) as u64;
        }
        if dropping > 0 {
            dropping -= 1;
            dropped += 1;
            continue;
        }
        let step = pipeline.process(&frame, Some(frame.index), &mut recorder).expect("a frame processed");
        for e in step.events {
            if e.kind != boardwatch::tracker::EventKind::Move {
                notes.push(format!("{:.1}s {}", frame.t, e.line));
            }
        }
    }
    let recorded: Vec<_> = recorder
        .tracker()
        .record()
        .map(|g| g.items.iter().filter_map(|i| if let RecordItem::Move(m) = i { Some(m.clone()) } else { None }).collect())
        .unwrap_or_default();
    let moves = recorded.iter().map(|m| ends(&m.text)).collect();
    let alternatives = recorded.iter().map(|m| m.alternatives.iter().map(|a| ends(a)).collect()).collect();
    Replayed { frames, dropped, moves, alternatives, notes }
}
