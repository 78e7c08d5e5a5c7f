//! `cargo bench --bench perft`: perft speed, the figure recorded in BENCHMARKS.md.
//!
//! English from the start position to depth 11 (85,242,128 leaves), bulk counting at the last
//! ply, on one thread; best of three runs (through the shift-based English generator that
//! `perft` uses, then once through the generic one for comparison, then once with duplicate
//! capture paths kept). Also prints one deep count per variant.

use std::time::Instant;

use boardwatch::draughts::movegen::Duplicates;
use boardwatch::draughts::perft::{perft, perft_generic};
use boardwatch::draughts::{Position, Variant};

fn main() {
    let rules = Variant::English.rules();
    let start = Position::start(&rules);
    let mut best = f64::MAX;
    for run in 1..=3 {
        let clock = Instant::now();
        let nodes = perft(&start, &rules, 11, Duplicates::Remove);
        let seconds = clock.elapsed().as_secs_f64();
        assert_eq!(nodes, 85_242_128, "english perft(11) is published as 85242128");
        best = best.min(seconds);
        println!("english d11 run {run}: {nodes} leaves in {seconds:.3} s = {:.1} M leaves/s", nodes as f64 / seconds / 1e6);
    }
    println!("english d11 best: {:.1} M leaves/s", 85_242_128.0 / best / 1e6);
    let clock = Instant::now();
    let nodes = perft(&start, &rules, 11, Duplicates::Keep);
    let seconds = clock.elapsed().as_secs_f64();
    println!("english d11 duplicates kept: {nodes} leaves in {seconds:.3} s = {:.1} M leaves/s", nodes as f64 / seconds / 1e6);
    let clock = Instant::now();
    let nodes = perft_generic(&start, &rules, 11, Duplicates::Remove);
    let seconds = clock.elapsed().as_secs_f64();
    assert_eq!(nodes, 85_242_128);
    println!("english d11 generic generator: {nodes} leaves in {seconds:.3} s = {:.1} M leaves/s", nodes as f64 / seconds / 1e6);
    for (variant, depth) in [(Variant::Pool, 9), (Variant::Russian, 9), (Variant::Brazilian, 9), (Variant::Italian, 10), (Variant::Spanish, 10), (Variant::Czech, 10)] {
        let rules = variant.rules();
        let clock = Instant::now();
        let nodes = perft(&Position::start(&rules), &rules, depth, Duplicates::Remove);
        let seconds = clock.elapsed().as_secs_f64();
        println!("{variant} d{depth}: {nodes} leaves in {seconds:.3} s = {:.1} M leaves/s", nodes as f64 / seconds / 1e6);
    }
}
