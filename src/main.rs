fn main() {
    use boardwatch::draughts::{perft::perft, movegen::Duplicates, Position, Variant};
    let v: Variant = std::env::args().nth(1).unwrap().parse().unwrap();
    let d: u32 = std::env::args().nth(2).unwrap().parse().unwrap();
    let r = v.rules();
    let p = Position::start(&r);
    for depth in 1..=d {
        let t = std::time::Instant::now();
        let n = perft(&p, &r, depth, Duplicates::Remove);
        let k = perft(&p, &r, depth, Duplicates::Keep);
        println!("{v} d{depth} {n} / {k} {:.2}s", t.elapsed().as_secs_f64());
    }
}
