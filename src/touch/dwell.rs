//! Fingertip positions over time to taps.
//!
//! A tap is a fingertip that stays on one cell for the dwell time (0.6 s by default) and then
//! leaves the cell or lifts (is no longer seen). What is not a tap:
//!
//! - a hand passing over the board: it stays on no cell long enough;
//! - an arm resting at the edge: it stays too long (more than `max_dwell`), so it is resting
//!   rather than pointing, and it gives no tap until the fingertip has left and come back;
//! - fingertips lying along the grid's outer edge: those of hands resting at the table's edge
//!   end there, while a finger that means a cell aims further in; within `edge_band` of the
//!   grid's outer edge a fingertip counts as off the grid (within half of it, once it dwells
//!   on the border cell);
//! - a fingertip that comes onto a cell without moving: a hand resting at the edge, still for
//!   longer than `arrival` before its fingertip counts on a cell (its tip measured a shade
//!   further in as the background learns it, or judged pointed at last); a finger that means a
//!   cell is brought there. Its dwell gives no tap until the fingertip has left the cell;
//! - a fingertip lost for a frame or two (noise, a shadow): the dwell goes on if it comes back
//!   to the same cell within `gap`.
//!
//! Cells are kept with some hysteresis: a fingertip trembling on the line between two cells
//! stays on the one it came to until it is `hysteresis` of a cell beyond that cell's edge. A
//! fingertip that comes to rest just past the line it arrived over, within the hysteresis but
//! steadily on the next cell for `settle` seconds, dwells on that cell from when it got there.

use serde::{Deserialize, Serialize};

/// How dwelling turns into taps.
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
pub struct DwellSettings {
    /// Seconds on one cell that make a tap (counted when the fingertip then leaves or lifts).
    pub dwell: f64,
    /// Seconds after which a fingertip on one cell is resting, not pointing: no tap.
    pub max_dwell: f64,
    /// Seconds a fingertip may be lost and still be the same dwell.
    pub gap: f64,
    /// How far beyond its cell's edge (in cells) a fingertip may stray and still be on it.
    pub hysteresis: f64,
    /// The band along the grid's outer edge, in cells, where a fingertip is off the grid.
    #[serde(default = "default_edge_band")]
    pub edge_band: f64,
    /// Seconds a fingertip kept on its cell only by the hysteresis must stay on the next cell
    /// for the dwell to move there.
    #[serde(default = "default_settle")]
    pub settle: f64,
    /// Seconds a hand may have been still before its fingertip counts on a cell for that dwell
    /// to tap: a fingertip on a cell whose hand was still longer than this came there without
    /// moving.
    #[serde(default = "default_arrival")]
    pub arrival: f64,
}

fn default_arrival() -> f64 {
    0.5
}

/// A hand whose tip stays within this many cells of where it stopped is still: more than a
/// resting hand's tip trembles in its estimate (a few hundredths), less than a finger brought
/// to a cell moves in its last frames.
pub const STILL_RADIUS: f64 = 0.15;

fn default_edge_band() -> f64 {
    0.2
}

fn default_settle() -> f64 {
    0.25
}

/// A fingertip held on one cell this many dwell times is resting, not pointing. A tap holds a
/// dwell or two; an arm resting at the table's edge, its fingers just inside an edge cell, or a
/// person leaning in stays longer (rendered distractor scenes 1400001-1400010, a held-apart set
/// since given over to tuning: resting arms and leaning people gave false taps dwelling
/// 2.5-3.2 s under the earlier limit of 4 s).
const RESTING_DWELLS: f64 = 4.0;

impl Default for DwellSettings {
    fn default() -> DwellSettings {
        DwellSettings {
            dwell: 0.6,
            max_dwell: 0.6 * RESTING_DWELLS,
            gap: 0.2,
            hysteresis: 0.2,
            edge_band: default_edge_band(),
            settle: default_settle(),
            arrival: default_arrival(),
        }
    }
}

impl DwellSettings {
    /// The defaults with another dwell time; a resting finger is one that stays
    /// `RESTING_DWELLS` times that long, and a short dwell settles sooner.
    pub fn for_dwell(dwell: f64) -> DwellSettings {
        DwellSettings { dwell, max_dwell: dwell * RESTING_DWELLS, settle: default_settle().min(dwell * 0.4), ..DwellSettings::default() }
    }

    /// An error naming the setting that makes no sense.
    pub fn validate(&self) -> Result<(), String> {
        if !(self.dwell.is_finite() && (0.1..=10.0).contains(&self.dwell)) {
            return Err(format!("dwell {} s: must be 0.1 to 10 seconds", self.dwell));
        }
        if !(self.max_dwell.is_finite() && self.max_dwell > self.dwell) {
            return Err(format!("max dwell {} s: must be longer than the dwell ({} s)", self.max_dwell, self.dwell));
        }
        if !(self.gap.is_finite() && (0.0..=2.0).contains(&self.gap)) {
            return Err(format!("gap {} s: must be 0 to 2 seconds", self.gap));
        }
        if !(self.hysteresis.is_finite() && (0.0..0.5).contains(&self.hysteresis)) {
            return Err(format!("hysteresis {}: must be 0 to 0.5 of a cell", self.hysteresis));
        }
        if !(self.edge_band.is_finite() && (0.0..0.5).contains(&self.edge_band)) {
            return Err(format!("edge band {}: must be 0 to 0.5 of a cell", self.edge_band));
        }
        if !(self.settle.is_finite() && self.settle >= 0.0 && self.settle < self.dwell) {
            return Err(format!("settle {} s: must be 0 or more and shorter than the dwell ({} s)", self.settle, self.dwell));
        }
        if !(self.arrival.is_finite() && (0.0..=10.0).contains(&self.arrival)) {
            return Err(format!("arrival {} s: must be 0 to 10 seconds", self.arrival));
        }
        Ok(())
    }
}

/// A tap on a cell.
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
pub struct Tap {
    /// Column and row, from the grid's top left.
    pub cell: [usize; 2],
    /// When the dwell began and when it ended (the fingertip left or lifted), in seconds.
    pub dwell_start: f64,
    pub dwell_end: f64,
}

/// What the page shows: where the fingertip is and how far its dwell has gone.
#[derive(Clone, Copy, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct Pointer {
    /// The fingertip in cell units (column, row; a cell's centre is at +0.5), if one is seen.
    pub at: Option<[f64; 2]>,
    /// The cell dwelt on.
    pub cell: Option<[usize; 2]>,
    /// 0 to 1: the ring that fills while the fingertip dwells (1: a tap when it leaves).
    pub progress: f64,
    /// The fingertip has stayed too long, or came to the cell without moving: resting, not
    /// pointing.
    pub resting: bool,
}

#[derive(Clone, Copy, Debug)]
struct Dwelling {
    cell: [usize; 2],
    since: f64,
    last_seen: f64,
    /// The fingertip was brought to the cell (its hand not still longer than `arrival` before).
    arrived: bool,
}

/// A hand whose tip has stayed within `STILL_RADIUS` of `at` since `since`.
#[derive(Clone, Copy, Debug)]
struct Still {
    at: [f64; 2],
    since: f64,
    last_seen: f64,
    /// A dwell of a fingertip brought to its cell was under way while the hand was still here:
    /// a dwell begun again on the same spot (the fingertip lost and found) was brought there too.
    arrived_here: bool,
    /// The hand was seen resting here (`DwellTracker::hand_rests`): its fingertip was not lost
    /// but lying at rest, so no dwell begun again on this spot was brought there.
    rested: bool,
}

/// Turns a stream of fingertip positions into taps.
#[derive(Clone, Debug)]
pub struct DwellTracker {
    settings: DwellSettings,
    cols: usize,
    rows: usize,
    current: Option<Dwelling>,
    last_at: Option<[f64; 2]>,
    /// The cell the fingertip is plainly on (no hysteresis) and since when, frame after frame.
    plain: Option<([usize; 2], f64)>,
    still: Option<Still>,
}

impl DwellTracker {
    pub fn new(settings: DwellSettings, cols: usize, rows: usize) -> DwellTracker {
        DwellTracker { settings, cols, rows, current: None, last_at: None, plain: None, still: None }
    }

    pub fn settings(&self) -> &DwellSettings {
        &self.settings
    }

    /// One frame: the fingertip of a pointing hand (in cell units) or none, at `time` seconds,
    /// and the tip of the hand followed whether it points or not, on the grid or off it (the
    /// fingertip's own hand when there is one). Returns the tap this frame ends, if any.
    pub fn update(&mut self, time: f64, fingertip: Option<[f64; 2]>, hand: Option<[f64; 2]>) -> Option<Tap> {
        self.note_hand(time, fingertip.or(hand));
        // A fingertip dwelling on a border cell stays on the grid to half the edge band: its
        // estimate trembles by a tenth of a cell, and a finger aimed a third of a cell in may be
        // seen just inside the band and just outside it by turns (rendered tap scene 910006).
        self.last_at = fingertip.filter(|&p| {
            self.inside(p, self.settings.edge_band)
                || self.current.is_some_and(|d| self.on_cell(p, d.cell) && self.inside(p, self.settings.edge_band / 2.0))
        });
        self.plain = match (self.last_at, self.plain) {
            (Some(at), Some((cell, since))) if cell_of(at) == cell => Some((cell, since)),
            (Some(at), _) => Some((cell_of(at), time)),
            (None, _) => None,
        };
        let Some(at) = self.last_at else {
            // Lost or off the grid: lifted once the gap has passed.
            let lifted = self.current.is_some_and(|d| time - d.last_seen > self.settings.gap);
            return if lifted { self.end(time) } else { None };
        };
        match self.current {
            Some(d) if self.on_cell(at, d.cell) => {
                match self.plain {
                    // Settled on the next cell, within the hysteresis: the dwell is there.
                    Some((cell, since)) if cell != d.cell && time - since >= self.settings.settle => {
                        self.current = Some(Dwelling { cell, since, last_seen: time, ..d })
                    }
                    _ => self.current = Some(Dwelling { last_seen: time, ..d }),
                }
                None
            }
            Some(_) => {
                let tap = self.end(time);
                self.begin(time, cell_of(at));
                tap
            }
            None => {
                self.begin(time, cell_of(at));
                None
            }
        }
    }

    /// Follows the hand's stillness; a hand lost for longer than the gap is no longer still.
    fn note_hand(&mut self, time: f64, hand: Option<[f64; 2]>) {
        let dwelling_arrived = self.current.is_some_and(|d| d.arrived);
        // A stillness that goes on was arrived at if a brought fingertip dwelt in it, unless its
        // hand was seen resting there.
        let arrived_here = |s: &Still| !s.rested && (s.arrived_here || dwelling_arrived);
        self.still = match (hand, self.still) {
            (Some(h), Some(s)) if (h[0] - s.at[0]).hypot(h[1] - s.at[1]) <= STILL_RADIUS => {
                Some(Still { last_seen: time, arrived_here: arrived_here(&s), ..s })
            }
            (Some(h), _) => Some(Still { at: h, since: time, last_seen: time, arrived_here: dwelling_arrived, rested: false }),
            (None, Some(s)) if time - s.last_seen <= self.settings.gap => Some(Still { arrived_here: arrived_here(&s), ..s }),
            (None, _) => None,
        };
    }

    /// After this frame's `update`: the hand told was seen lying at rest (a flat hand across the
    /// grid's edge), not pointing. While it stays where it is, a dwell begun there again is not a
    /// fingertip lost and found but a resting hand judged pointing by turns (rendered distractor
    /// scene 1450018): it gives no tap unless the hand was brought there within `arrival`.
    pub fn hand_rests(&mut self) {
        if let Some(s) = self.still.as_mut() {
            s.rested = true;
            s.arrived_here = false;
        }
    }

    /// A dwell begins on `cell`: brought there unless its hand was still too long before.
    fn begin(&mut self, time: f64, cell: [usize; 2]) {
        // (`note_hand` marks the stillness with this dwell's arrival from the next frame on.)
        let arrived = self.still.is_none_or(|s| s.arrived_here || time - s.since <= self.settings.arrival);
        self.current = Some(Dwelling { cell, since: time, last_seen: time, arrived });
    }

    /// What the page shows after the last update, at `time`.
    pub fn pointer(&self, time: f64) -> Pointer {
        let Some(d) = self.current else {
            return Pointer { at: self.last_at, ..Pointer::default() };
        };
        let held = (d.last_seen.min(time) - d.since).max(0.0);
        let resting = held > self.settings.max_dwell || !d.arrived;
        Pointer { at: self.last_at, cell: Some(d.cell), progress: if resting { 0.0 } else { (held / self.settings.dwell).min(1.0) }, resting }
    }

    /// Ends the current dwell: a tap if the fingertip was brought there and stayed the dwell
    /// time and no longer than the maximum.
    fn end(&mut self, _time: f64) -> Option<Tap> {
        let d = self.current.take()?;
        let held = d.last_seen - d.since;
        (d.arrived && held + 1e-9 >= self.settings.dwell && held <= self.settings.max_dwell).then_some(Tap {
            cell: d.cell,
            dwell_start: d.since,
            dwell_end: d.last_seen,
        })
    }

    fn inside(&self, [x, y]: [f64; 2], band: f64) -> bool {
        x >= band && y >= band && x < self.cols as f64 - band && y < self.rows as f64 - band
    }

    fn on_cell(&self, [x, y]: [f64; 2], [c, r]: [usize; 2]) -> bool {
        let h = self.settings.hysteresis;
        x >= c as f64 - h && x < (c + 1) as f64 + h && y >= r as f64 - h && y < (r + 1) as f64 + h
    }
}

fn cell_of([x, y]: [f64; 2]) -> [usize; 2] {
    [x.max(0.0).floor() as usize, y.max(0.0).floor() as usize]
}

#[cfg(test)]
mod tests {
    use super::*;

    const FPS: f64 = 15.0;

    /// Feeds positions at FPS from `start`; returns the taps and the time after the last frame.
    fn feed(tracker: &mut DwellTracker, start: f64, points: &[Option<[f64; 2]>]) -> (Vec<Tap>, f64) {
        let mut taps = Vec::new();
        let mut t = start;
        for p in points {
            taps.extend(tracker.update(t, *p, *p));
            t += 1.0 / FPS;
        }
        (taps, t)
    }

    fn hold(at: [f64; 2], seconds: f64) -> Vec<Option<[f64; 2]>> {
        vec![Some(at); (seconds * FPS).round() as usize]
    }

    fn none(seconds: f64) -> Vec<Option<[f64; 2]>> {
        vec![None; (seconds * FPS).round() as usize]
    }

    #[test]
    fn a_dwell_then_a_lift_is_one_tap_on_that_cell() {
        let mut tracker = DwellTracker::new(DwellSettings::default(), 8, 6);
        let mut frames = hold([3.4, 2.6], 0.8);
        frames.extend(none(0.5));
        let (taps, _) = feed(&mut tracker, 10.0, &frames);
        assert_eq!(taps.len(), 1, "{taps:?}");
        assert_eq!(taps[0].cell, [3, 2]);
        assert!((taps[0].dwell_start - 10.0).abs() < 1e-9);
        assert!(taps[0].dwell_end - taps[0].dwell_start >= 0.6);
    }

    #[test]
    fn a_passing_hand_and_a_resting_arm_are_not_taps() {
        let mut tracker = DwellTracker::new(DwellSettings::default(), 8, 6);
        // A sweep across the grid: a third of a cell a frame.
        let sweep: Vec<_> = (0..24).map(|i| Some([i as f64 / 3.0, 2.5])).collect();
        let (taps, t) = feed(&mut tracker, 0.0, &sweep);
        assert!(taps.is_empty(), "{taps:?}");
        // An arm resting on an edge cell for 6 seconds, then withdrawn.
        let mut rest = hold([0.3, 5.5], 6.0);
        rest.extend(none(0.5));
        let (taps, _) = feed(&mut tracker, t, &rest);
        assert!(taps.is_empty(), "{taps:?}");
    }

    #[test]
    fn fingers_resting_three_seconds_inside_an_edge_cell_are_not_a_tap() {
        let mut tracker = DwellTracker::new(DwellSettings::default(), 8, 6);
        let mut frames = hold([7.72, 3.4], 3.0);
        frames.extend(none(0.5));
        let (taps, _) = feed(&mut tracker, 0.0, &frames);
        assert!(taps.is_empty(), "{taps:?}");
        // The same cell held for a dwell and a half is a tap.
        let mut frames = hold([7.6, 3.4], 0.9);
        frames.extend(none(0.5));
        let (taps, _) = feed(&mut tracker, 10.0, &frames);
        assert_eq!(taps.iter().map(|t| t.cell).collect::<Vec<_>>(), vec![[7, 3]]);
    }

    #[test]
    fn fingertips_along_the_grids_outer_edge_are_not_taps_but_a_border_cells_middle_is() {
        let mut tracker = DwellTracker::new(DwellSettings::default(), 8, 6);
        // Fingers of a hand resting at the left edge, a tenth of a cell in, for 1.5 s.
        let mut frames = hold([0.1, 3.5], 1.5);
        frames.extend(none(0.5));
        // The same at the bottom edge.
        frames.extend(hold([4.5, 5.85], 1.5));
        frames.extend(none(0.5));
        let (taps, t) = feed(&mut tracker, 0.0, &frames);
        assert!(taps.is_empty(), "{taps:?}");
        // A finger meaning the border cell, trembling around its middle.
        let mut frames: Vec<_> = (0..12).map(|i| Some([0.3 + 0.05 * (i % 3) as f64, 3.5])).collect();
        frames.extend(none(0.5));
        let (taps, _) = feed(&mut tracker, t, &frames);
        assert_eq!(taps.iter().map(|t| t.cell).collect::<Vec<_>>(), vec![[0, 3]]);
    }

    #[test]
    fn a_fingertip_trembling_across_the_edge_band_of_the_border_cell_it_dwells_on_taps_it() {
        let mut tracker = DwellTracker::new(DwellSettings::default(), 8, 6);
        let band = DwellSettings::default().edge_band;
        // Aimed at column 0, seen by turns just inside and just outside the edge band.
        let xs = [0.02, 0.0, -0.02, 0.02, 0.02, -0.01, -0.02, -0.01, -0.02, 0.02, 0.0, -0.01, -0.02, -0.01, 0.02];
        let mut frames: Vec<_> = xs.iter().map(|dx| Some([band + dx, 4.5])).collect();
        frames.extend(none(0.5));
        let (taps, t) = feed(&mut tracker, 0.0, &frames);
        assert_eq!(taps.iter().map(|t| t.cell).collect::<Vec<_>>(), vec![[0, 4]]);
        // Never in further than the band: no dwell begins.
        let mut frames: Vec<_> = xs.iter().map(|dx| Some([band - 0.03 + dx, 4.5])).collect();
        frames.extend(none(0.5));
        let (taps, _) = feed(&mut tracker, t, &frames);
        assert!(taps.is_empty(), "{taps:?}");
    }

    /// Feeds a hand seen at FPS from `start`, its fingertip pointing or not.
    fn feed_hand(tracker: &mut DwellTracker, start: f64, frames: &[(Option<[f64; 2]>, Option<[f64; 2]>)]) -> (Vec<Tap>, f64) {
        let mut taps = Vec::new();
        let mut t = start;
        for &(fingertip, hand) in frames {
            taps.extend(tracker.update(t, fingertip, hand));
            t += 1.0 / FPS;
        }
        (taps, t)
    }

    #[test]
    fn a_resting_hand_whose_fingertip_comes_onto_a_cell_without_moving_is_not_a_tap() {
        let mut tracker = DwellTracker::new(DwellSettings::default(), 8, 8);
        // Slid in from below, then still with its tip in the edge band for 1.2 s; then the
        // estimate, a hundredth further in, is on cell (4, 7) for 1.2 s; then withdrawn.
        let mut frames: Vec<_> = (0..5).map(|i| Some([4.1, 9.0 - 0.25 * i as f64])).map(|p| (p, p)).collect();
        frames.extend(hold([4.12, 7.805], 1.2).into_iter().map(|p| (p, p)));
        frames.extend(hold([4.13, 7.795], 1.2).into_iter().map(|p| (p, p)));
        let (_, t) = feed_hand(&mut tracker, 0.0, &frames);
        let p = tracker.pointer(t);
        assert!(p.cell == Some([4, 7]) && p.resting && p.progress == 0.0, "{p:?}");
        let (taps, t) = feed(&mut tracker, t, &none(0.5));
        assert!(taps.is_empty(), "{taps:?}");
        // A hand seen still for 1.3 s with a blunt tip (no pointing fingertip), then judged
        // pointing where it lies, inside cell (7, 3), for 1.3 s.
        let mut frames = vec![(None, Some([7.74, 3.36])); 20];
        frames.extend(hold([7.74, 3.36], 1.3).into_iter().map(|p| (p, p)));
        frames.extend(none(0.5).into_iter().map(|p| (p, p)));
        let (taps, t) = feed_hand(&mut tracker, t, &frames);
        assert!(taps.is_empty(), "{taps:?}");
        // The same hand lifted and brought back to the same place: a tap.
        let mut frames: Vec<_> = (0..5).map(|i| Some([9.0 - 0.25 * i as f64, 3.36])).map(|p| (p, p)).collect();
        frames.extend(hold([7.74, 3.36], 0.9).into_iter().map(|p| (p, p)));
        frames.extend(none(0.5).into_iter().map(|p| (p, p)));
        let (taps, _) = feed_hand(&mut tracker, t, &frames);
        assert_eq!(taps.iter().map(|t| t.cell).collect::<Vec<_>>(), vec![[7, 3]]);
    }

    #[test]
    fn a_fingertip_brought_to_a_cell_lost_and_found_again_where_it_was_still_taps() {
        let mut tracker = DwellTracker::new(DwellSettings::default(), 8, 6);
        // Brought to (2, 2), pointing for 0.3 s, then judged blunt for 0.4 s (its hand still
        // there), then pointing again for 0.8 s, then lifted.
        let mut frames: Vec<_> = (0..6).map(|i| Some([2.5, 6.5 - 0.7 * i as f64])).map(|p| (p, p)).collect();
        frames.extend(hold([2.5, 2.5], 0.3).into_iter().map(|p| (p, p)));
        frames.extend(vec![(None, Some([2.52, 2.5])); 6]);
        frames.extend(hold([2.5, 2.5], 0.8).into_iter().map(|p| (p, p)));
        frames.extend(none(0.5).into_iter().map(|p| (p, p)));
        let (taps, _) = feed_hand(&mut tracker, 0.0, &frames);
        assert_eq!(taps.iter().map(|t| t.cell).collect::<Vec<_>>(), vec![[2, 2]]);
    }

    #[test]
    fn a_fingertip_judged_resting_then_pointing_where_its_hand_lay_still_is_not_a_tap() {
        // As above, but the hand is judged resting (not merely blunt) while its fingertip is
        // lost: a flat hand at the edge, seen pointing by turns.
        let mut tracker = DwellTracker::new(DwellSettings::default(), 8, 6);
        let mut t = 0.0;
        let mut taps = Vec::new();
        let mut step = |tracker: &mut DwellTracker, fingertip: Option<[f64; 2]>, hand: Option<[f64; 2]>, rests: bool| {
            taps.extend(tracker.update(t, fingertip, hand));
            if rests {
                tracker.hand_rests();
            }
            t += 1.0 / FPS;
        };
        for i in 0..6 {
            let p = Some([2.5, 6.5 - 0.7 * i as f64]);
            step(&mut tracker, p, p, false);
        }
        for _ in 0..5 {
            step(&mut tracker, Some([2.5, 2.5]), Some([2.5, 2.5]), false);
        }
        for _ in 0..6 {
            step(&mut tracker, None, Some([2.52, 2.5]), true);
        }
        for _ in 0..12 {
            step(&mut tracker, Some([2.5, 2.5]), Some([2.5, 2.5]), false);
        }
        for _ in 0..8 {
            step(&mut tracker, None, None, false);
        }
        assert!(taps.is_empty(), "{taps:?}");
    }

    #[test]
    fn trembling_on_a_line_and_a_lost_frame_keep_the_dwell() {
        let mut tracker = DwellTracker::new(DwellSettings::default(), 8, 6);
        // On cell (2, 1) near its right edge, trembling across it by a tenth of a cell.
        let mut frames: Vec<_> = (0..12).map(|i| Some([2.95 + if i % 2 == 1 { 0.1 } else { -0.05 }, 1.5])).collect();
        frames[6] = None;
        frames.extend(none(0.4));
        let (taps, _) = feed(&mut tracker, 0.0, &frames);
        assert_eq!(taps.len(), 1, "{taps:?}");
        assert_eq!(taps[0].cell, [2, 1], "the cell the fingertip came to");
    }

    #[test]
    fn a_fingertip_settling_just_past_the_line_it_came_over_taps_the_cell_it_rests_on() {
        let mut tracker = DwellTracker::new(DwellSettings::default(), 8, 6);
        // Arriving down column 0 through row 2, coming to rest at row 3.19 (within the
        // hysteresis of row 2) for a second, then lifted.
        let mut frames: Vec<_> = (0..6).map(|i| Some([0.6, 2.4 + 0.13 * i as f64])).collect();
        frames.extend(hold([0.64, 3.19], 1.0));
        frames.extend(none(0.4));
        let (taps, _) = feed(&mut tracker, 0.0, &frames);
        assert_eq!(taps.iter().map(|t| t.cell).collect::<Vec<_>>(), vec![[0, 3]]);
        // It dwelt on row 3 from when it got there.
        assert!(taps[0].dwell_start < 6.0 / FPS + 1e-9, "{taps:?}");
    }

    #[test]
    fn moving_from_cell_to_cell_taps_each_dwelt_one() {
        let mut tracker = DwellTracker::new(DwellSettings::default(), 8, 6);
        let mut frames = hold([1.5, 1.5], 0.7);
        frames.extend(hold([1.5, 2.5], 0.3)); // too short
        frames.extend(hold([4.5, 2.5], 0.9));
        frames.extend(none(0.4));
        let (taps, _) = feed(&mut tracker, 0.0, &frames);
        let cells: Vec<_> = taps.iter().map(|t| t.cell).collect();
        assert_eq!(cells, vec![[1, 1], [4, 2]]);
    }

    #[test]
    fn the_ring_fills_with_the_dwell_and_a_resting_finger_empties_it() {
        let mut tracker = DwellTracker::new(DwellSettings::default(), 8, 6);
        let (_, t) = feed(&mut tracker, 0.0, &hold([5.5, 0.5], 0.3));
        let p = tracker.pointer(t);
        assert_eq!(p.cell, Some([5, 0]));
        assert!(p.progress > 0.3 && p.progress < 0.7, "{p:?}");
        let (_, t) = feed(&mut tracker, t, &hold([5.5, 0.5], 5.0));
        let p = tracker.pointer(t);
        assert!(p.resting && p.progress == 0.0, "{p:?}");
    }

    #[test]
    fn impossible_settings_are_named() {
        let bad = DwellSettings { dwell: 0.0, ..DwellSettings::default() };
        assert!(bad.validate().unwrap_err().contains("dwell"));
        let bad = DwellSettings { max_dwell: 0.5, ..DwellSettings::default() };
        assert!(bad.validate().unwrap_err().contains("max dwell"));
        let bad = DwellSettings { edge_band: 0.5, ..DwellSettings::default() };
        assert!(bad.validate().unwrap_err().contains("edge band"));
        let bad = DwellSettings { settle: 0.7, ..DwellSettings::default() };
        assert!(bad.validate().unwrap_err().contains("settle"));
        let bad = DwellSettings { arrival: -1.0, ..DwellSettings::default() };
        assert!(bad.validate().unwrap_err().contains("arrival"));
        assert!(DwellSettings::default().validate().is_ok());
        for dwell in [0.1, 0.3, 0.6, 2.0, 10.0] {
            assert!(DwellSettings::for_dwell(dwell).validate().is_ok(), "dwell {dwell}");
        }
    }
}
