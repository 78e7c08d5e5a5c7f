//! A board on a loaded machine keeps the thread (issue 35): the daemon drops the frames a busy
//! board cannot take, so still positions go unseen and several plies arrive at once, more than
//! one reading may explain. The sample recordings replayed with frames dropped in bursts (a
//! sixth of them, in bursts of up to 6 frames) must still give their true moves.

mod common;
mod load_common;

use load_common::{replay_under_load, true_moves, Load};

fn replays_whole_under_load(name: &str, palette: &str, seeds: std::ops::Range<u64>) {
    let video = common::repo_file(&format!("samples/recordings/{name}.mp4"));
    let truth = true_moves(&common::repo_file(&format!("samples/recordings/{name}.truth.json")));
    boardwatch::vision::opencv_on_calling_threads().expect("OpenCV threads");
    for seed in seeds {
        let got = replay_under_load(&video, palette, Load { rate: 0.05, burst: 6, seed }, None);
        assert!(got.dropped * 10 > got.frames, "seed {seed}: a tenth of the frames dropped at least ({} of {})", got.dropped, got.frames);
        assert_eq!(got.moves, truth, "seed {seed}: {} of {} frames dropped; {:#?}", got.dropped, got.frames, got.notes);
    }
}

/// Quick play (0.33 to 0.8 s still between hands): before the boards seen on the way were
/// followed ply by ply, these three patterns lost the thread after 0, 9 and 10 of 64 moves.
#[test]
fn a_quickly_played_game_keeps_its_thread_when_frames_are_dropped() {
    replays_whole_under_load("acf5_quick_wooden", "wooden", 0..3);
}
