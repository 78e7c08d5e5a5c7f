//! The hand in a foreground mask, and its fingertip.
//!
//! An arm reaches over the table from outside the projected picture, so a hand is a foreground
//! region that touches the image border or lies partly outside the picture (a sleeve as grey as
//! the table may hide the rest of the arm); what changes inside the picture alone (the page
//! animating, a piece moved by the game) does neither. The fingertip is the point of the region
//! farthest from where the arm enters. A pointing finger ends in a thin tip; a head or a
//! shoulder leaning in ends bluntly, so the share of the region near its farthest point tells
//! them apart; closer up, a flat hand's fingers side by side fill more of it than one finger
//! (`Reach::flat`).

use image::GrayImage;
use imageproc::region_labelling::{connected_components, Connectivity};
use serde::{Deserialize, Serialize};

use super::grid_map::TableView;

/// What makes a region a hand with a fingertip.
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
pub struct FingertipSettings {
    /// The smallest region, as a share of the image's pixels.
    pub min_area: f64,
    /// The shortest reach from the image border to the fingertip, as a share of the image's
    /// diagonal (half of it from outside the picture, for a region that does not touch the
    /// border).
    pub min_reach: f64,
    /// The radius around the farthest point that is judged, as a share of the diagonal.
    pub tip_radius: f64,
    /// A tip fuller than this (share of the disc of `tip_radius` covered) is blunt: no finger.
    pub max_tip_fill: f64,
    /// A region larger than this share of the image is a person leaning in (head, shoulders
    /// and the shadow they cast on the picture, whose edge can end in a point), not a hand.
    #[serde(default = "default_max_area")]
    pub max_area: f64,
    /// A region bulkier than this (its area over its reach squared) is a head or shoulders
    /// leaning in, whose shadow's edge may end in a point, not an arm.
    #[serde(default = "default_max_bulk")]
    pub max_bulk: f64,
    /// A region larger than `max_area` (by half at most) is still an arm when it is this slender
    /// (bulk) or more: an arm reaching across the whole picture from a near camera covers more
    /// of the image than a leaning head, but it reaches far for its size. (The long wedge of a
    /// leaning person's shadow is slender too, but larger still.)
    #[serde(default = "default_slender_bulk")]
    pub slender_bulk: f64,
    /// A region bulkier than this must end in a thinner tip, down to `BULKIEST_TIP_FILL` at
    /// `max_bulk`: a hand seen without its arm is bulky but ends in a finger (bulk 0.44-0.53, tip
    /// fill 0.17 in the rendered taps), while a leaning person's shadow ending in a point is
    /// as bulky and blunter (bulk 0.58-0.63, tip fill 0.21-0.26; scenes 1420020, 1430020).
    #[serde(default = "default_bulky")]
    pub bulky: f64,
    /// A tip fuller than this close up (share of the disc of half `tip_radius` covered) is a
    /// flat hand's fingers side by side, not one finger: rendered arms resting at the table's
    /// edge fill 0.26-0.38 of it during their rests, fingers pointing near the grid's edge 0.09
    /// to 0.30 (99% of frames; tuning scenes 62-81 and 940001-940010). The watcher takes a flat
    /// hand at the grid's edge for a resting one.
    #[serde(default = "default_flat_near_fill")]
    pub flat_near_fill: f64,
}

fn default_flat_near_fill() -> f64 {
    0.3
}

/// The fullest tip a region as bulky as `max_bulk` may end in.
const BULKIEST_TIP_FILL: f64 = 0.16;

fn default_bulky() -> f64 {
    0.4
}

fn default_max_area() -> f64 {
    0.12
}

fn default_max_bulk() -> f64 {
    0.8
}

fn default_slender_bulk() -> f64 {
    0.3
}

impl Default for FingertipSettings {
    fn default() -> FingertipSettings {
        FingertipSettings {
            min_area: 0.002,
            min_reach: 0.08,
            tip_radius: 0.04,
            max_tip_fill: 0.26,
            max_area: default_max_area(),
            max_bulk: default_max_bulk(),
            slender_bulk: default_slender_bulk(),
            bulky: default_bulky(),
            flat_near_fill: default_flat_near_fill(),
        }
    }
}

impl FingertipSettings {
    /// The fullest tip a finger of a region this bulky may have: `max_tip_fill` up to
    /// `bulky`, then less in proportion, down to `BULKIEST_TIP_FILL` at `max_bulk`.
    pub fn max_tip_fill_for(&self, bulk: f64) -> f64 {
        if bulk <= self.bulky || self.max_bulk <= self.bulky {
            return self.max_tip_fill;
        }
        let t = ((bulk - self.bulky) / (self.max_bulk - self.bulky)).min(1.0);
        self.max_tip_fill + (BULKIEST_TIP_FILL.min(self.max_tip_fill) - self.max_tip_fill) * t
    }
}

/// A region reaching in from the border.
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
pub struct Reach {
    /// The fingertip, in image pixels: a little back from the farthest point, on the finger pad.
    pub fingertip: [f64; 2],
    /// Where the arm enters: the mean of the region's pixels on the image border, or, when it
    /// does not reach the border, of its pixels outside the picture nearest the border.
    pub entry: [f64; 2],
    /// The region's size in pixels.
    pub area: usize,
    /// Distance from entry to the farthest point, in pixels.
    pub reach: f64,
    /// Share of the disc around the farthest point covered by the region.
    pub tip_fill: f64,
    /// Share of the disc of half that radius covered.
    pub near_fill: f64,
    /// The tip is as full close up as a flat hand's fingers side by side (`flat_near_fill`).
    pub flat: bool,
    /// The region's area over its reach squared: about 0.2 for an arm, 1 or more for a head
    /// and shoulders leaning in.
    pub bulk: f64,
    /// Thin enough a tip, long enough a reach, a tip away from the image border and a region
    /// shaped as a hand and arm: a pointing finger.
    pub pointing: bool,
}

/// Every region of `mask` (non-zero = foreground) that touches the image border or has pixels
/// where `outside_picture(x, y)`, largest first, with its fingertip. The tip is judged at the
/// size a finger has where it is seen, by `view`'s scale (`TableView::identity()`: at one
/// size everywhere).
pub fn reaches(mask: &GrayImage, settings: &FingertipSettings, outside_picture: &dyn Fn(u32, u32) -> bool, view: &TableView) -> Vec<Reach> {
    let (w, h) = mask.dimensions();
    if w < 3 || h < 3 {
        return Vec::new();
    }
    let labels = connected_components(mask, Connectivity::Eight, image::Luma([0u8]));
    let count = labels.pixels().map(|p| p[0]).max().unwrap_or(0) as usize;
    if count == 0 {
        return Vec::new();
    }
    // Per label: area, the sum and count of its pixels on the border, and of its pixels outside
    // the picture nearest the image border (within `NEAR_BORDER_PX` of the nearest one).
    const NEAR_BORDER_PX: u32 = 2;
    let to_border = |x: u32, y: u32| x.min(y).min(w - 1 - x).min(h - 1 - y);
    let mut area = vec![0usize; count + 1];
    let mut border = vec![(0.0f64, 0.0f64, 0usize); count + 1];
    let mut nearest_outside = vec![u32::MAX; count + 1];
    for (x, y, p) in labels.enumerate_pixels() {
        let l = p[0] as usize;
        if l != 0 && outside_picture(x, y) {
            nearest_outside[l] = nearest_outside[l].min(to_border(x, y));
        }
    }
    let mut outside = vec![(0.0f64, 0.0f64, 0usize); count + 1];
    for (x, y, p) in labels.enumerate_pixels() {
        let l = p[0] as usize;
        if l == 0 {
            continue;
        }
        area[l] += 1;
        // An arm lost against the table outside the picture came from the image border, so it
        // enters where its pixels outside the picture come nearest the border (not at their
        // middle, which may be the wrist of a hand dwelling near the picture's edge).
        if nearest_outside[l] != u32::MAX && to_border(x, y) <= nearest_outside[l] + NEAR_BORDER_PX && outside_picture(x, y) {
            let o = &mut outside[l];
            o.0 += x as f64;
            o.1 += y as f64;
            o.2 += 1;
        }
        if x == 0 || y == 0 || x == w - 1 || y == h - 1 {
            let b = &mut border[l];
            b.0 += x as f64;
            b.1 += y as f64;
            b.2 += 1;
        }
    }
    let diagonal = ((w as f64).powi(2) + (h as f64).powi(2)).sqrt();
    let min_area = (settings.min_area * (w * h) as f64).max(4.0) as usize;
    // The tip's radius at the picture's centre.
    let r_centre = (settings.tip_radius * diagonal).max(2.0);
    let mut out = Vec::new();
    // Regions joined to another as its cut-off finger, not reported on their own.
    let mut joined = Vec::new();
    for l in 1..=count {
        let (sx, sy, n) = if border[l].2 > 0 { border[l] } else { outside[l] };
        if n == 0 || area[l] < min_area {
            continue;
        }
        let entry = [sx / n as f64, sy / n as f64];
        let from_entry = |x: u32, y: u32| (x as f64 - entry[0]).powi(2) + (y as f64 - entry[1]).powi(2);
        // The farthest pixel from the entry.
        let mut far = (0.0f64, [0.0f64; 2]);
        for (x, y, p) in labels.enumerate_pixels() {
            if p[0] as usize == l {
                let d = from_entry(x, y);
                if d > far.0 {
                    far = (d, [x as f64, y as f64]);
                }
            }
        }
        // The tip's radius where the tip is: a finger at the far side of a tilted view looks
        // thinner, and its knuckles closer behind its tip, than one near the camera (rendered
        // tap scenes 990006, 1010002: taken for flat hands at the far edge).
        let r = r_centre / view.scale_at(far.1);
        // A finger the colour of the cell under it is cut off from its hand in the mask: the
        // rest of the finger is a small region just beyond the tip, farther from the entry,
        // not touching the image border (it may lie partly outside the picture, a finger
        // pointing into a corner cell from beyond it; rendered tap scene 990002).
        let piece = |m: usize| m != l && border[m].2 == 0 && area[m] as f64 <= FINGER_PIECE_DISCS * std::f64::consts::PI * r * r;
        let cut_off = cut_off_finger(&labels, far.1, far.0, r, &from_entry, &area, &piece);
        if let Some((m, further)) = cut_off {
            far = further;
            area[l] += area[m];
            joined.push(m);
        }
        let member = |label: usize| label == l || cut_off.is_some_and(|(m, _)| m == label);
        let reach = far.0.sqrt();
        let tip = far.1;
        // The region near the tip: its share of the disc, and its mean (on the finger pad).
        let (x0, x1) = ((tip[0] - r).max(0.0) as u32, ((tip[0] + r) as u32).min(w - 1));
        let (y0, y1) = ((tip[1] - r).max(0.0) as u32, ((tip[1] + r) as u32).min(h - 1));
        let pad_r = r * 0.3;
        let (mut inside, mut disc, mut pad) = (0usize, 0usize, (0.0f64, 0.0f64, 0usize));
        let (mut near_inside, mut near_disc) = (0usize, 0usize);
        let near_r = r * 0.5;
        for y in y0..=y1 {
            for x in x0..=x1 {
                let d2 = (x as f64 - tip[0]).powi(2) + (y as f64 - tip[1]).powi(2);
                if d2 <= r * r {
                    disc += 1;
                }
                if d2 <= near_r * near_r {
                    near_disc += 1;
                }
                if !member(labels.get_pixel(x, y)[0] as usize) {
                    continue;
                }
                if d2 <= r * r {
                    inside += 1;
                }
                if d2 <= near_r * near_r {
                    near_inside += 1;
                }
                if d2 <= pad_r * pad_r {
                    pad.0 += x as f64;
                    pad.1 += y as f64;
                    pad.2 += 1;
                }
            }
        }
        // Only the part of the disc inside the image counts.
        let tip_fill = inside as f64 / disc.max(1) as f64;
        let near_fill = near_inside as f64 / near_disc.max(1) as f64;
        let fingertip = if pad.2 > 0 { [pad.0 / pad.2 as f64, pad.1 / pad.2 as f64] } else { tip };
        // A farthest point on the image border is a region lying along it, not a finger
        // pointing into the picture.
        let off_border = tip[0].min(tip[1]).min(w as f64 - 1.0 - tip[0]).min(h as f64 - 1.0 - tip[1]) >= r * 0.5;
        // An arm lost against a dark table outside the picture is seen from the picture's edge
        // on: a finger on the picture's first row then reaches in only about a cell, so half
        // the reach is asked of a region that does not touch the image border.
        let min_reach = if border[l].2 > 0 { settings.min_reach } else { settings.min_reach / 2.0 };
        let bulk = area[l] as f64 / reach.max(1.0).powi(2);
        let share = area[l] as f64 / (w * h) as f64;
        let arm_shaped =
            bulk <= settings.max_bulk && (share <= settings.max_area || (share <= settings.max_area * 1.5 && bulk <= settings.slender_bulk));
        let pointing = reach >= min_reach * diagonal && tip_fill <= settings.max_tip_fill_for(bulk) && off_border && arm_shaped;
        out.push((l, Reach { fingertip, entry, area: area[l], reach, tip_fill, near_fill, flat: near_fill > settings.flat_near_fill, bulk, pointing }));
    }
    let mut out: Vec<Reach> = out.into_iter().filter(|(l, _)| !joined.contains(l)).map(|(_, r)| r).collect();
    out.sort_by_key(|r| std::cmp::Reverse(r.area));
    out
}

/// A piece of finger cut off from its hand is at most this many tip discs (of `tip_radius`) in
/// area...
const FINGER_PIECE_DISCS: f64 = 1.0;
/// ...and comes this close to the hand's farthest point, in tip radii (0.6 in scene 990002).
const FINGER_GAP: f64 = 0.75;

/// The region (label) lying just beyond `tip` that `may_join` allows: within `FINGER_GAP` tip
/// radii of the tip, wholly within two radii of it, and reaching farther from the entry than the
/// tip's squared distance `tip_d2`; with its own farthest point (squared distance, pixel).
fn cut_off_finger(
    labels: &image::ImageBuffer<image::Luma<u32>, Vec<u32>>,
    tip: [f64; 2],
    tip_d2: f64,
    r: f64,
    from_entry: &dyn Fn(u32, u32) -> f64,
    area: &[usize],
    may_join: &dyn Fn(usize) -> bool,
) -> Option<(usize, (f64, [f64; 2]))> {
    let (w, h) = labels.dimensions();
    let window = 2.0 * r;
    let (x0, x1) = ((tip[0] - window - 1.0).max(0.0) as u32, ((tip[0] + window + 1.0) as u32).min(w - 1));
    let (y0, y1) = ((tip[1] - window - 1.0).max(0.0) as u32, ((tip[1] + window + 1.0) as u32).min(h - 1));
    // What is seen of each candidate inside the window.
    struct Piece {
        /// Its nearest pixel's distance to the tip.
        gap: f64,
        /// Its farthest pixel from the entry (squared distance, pixel).
        far: (f64, [f64; 2]),
        /// Its pixels within the window's radius: all of them, for it to lie near the tip.
        within: usize,
    }
    let mut seen: std::collections::BTreeMap<usize, Piece> = std::collections::BTreeMap::new();
    for y in y0..=y1 {
        for x in x0..=x1 {
            let m = labels.get_pixel(x, y)[0] as usize;
            if m == 0 || !may_join(m) {
                continue;
            }
            let to_tip = ((x as f64 - tip[0]).powi(2) + (y as f64 - tip[1]).powi(2)).sqrt();
            let piece = seen.entry(m).or_insert(Piece { gap: f64::MAX, far: (0.0, [0.0; 2]), within: 0 });
            piece.gap = piece.gap.min(to_tip);
            let d = from_entry(x, y);
            if d > piece.far.0 {
                piece.far = (d, [x as f64, y as f64]);
            }
            if to_tip <= window {
                piece.within += 1;
            }
        }
    }
    seen.into_iter()
        .filter(|(m, piece)| piece.gap <= FINGER_GAP * r && piece.far.0 > tip_d2 && piece.within == area[*m])
        .max_by(|a, b| a.1.far.0.total_cmp(&b.1.far.0))
        .map(|(m, piece)| (m, piece.far))
}

#[cfg(test)]
mod tests {
    use super::*;
    use imageproc::drawing::{draw_filled_circle_mut, draw_filled_rect_mut, draw_line_segment_mut};
    use imageproc::rect::Rect;

    const W: u32 = 320;
    const H: u32 = 240;

    /// An arm from the bottom edge with a finger pointing up to (160, 70).
    fn pointing_arm() -> GrayImage {
        let mut m = GrayImage::new(W, H);
        draw_filled_rect_mut(&mut m, Rect::at(135, 150).of_size(50, 90), image::Luma([255])); // forearm and palm
        for dx in -3..=3 {
            draw_line_segment_mut(&mut m, (160.0 + dx as f32, 150.0), (160.0 + dx as f32, 70.0), image::Luma([255]));
        }
        m
    }

    #[test]
    fn a_pointing_finger_is_found_at_its_tip() {
        let found = reaches(&pointing_arm(), &FingertipSettings::default(), &|_, _| false, &TableView::identity());
        assert_eq!(found.len(), 1);
        let r = found[0];
        assert!(r.pointing, "{r:?}");
        assert!((r.fingertip[0] - 160.0).abs() < 3.0 && (r.fingertip[1] - 70.0).abs() < 6.0, "{r:?}");
        assert!((r.entry[1] - 239.0).abs() < 1e-9, "enters at the bottom edge: {r:?}");
    }

    #[test]
    fn a_finger_cut_off_from_its_hand_in_the_mask_is_joined_to_it_and_a_large_change_beyond_is_not() {
        // The arm of `pointing_arm` with its finger broken 4 pixels above the knuckles: the
        // finger over a cell of its own colour is lost there.
        let mut m = pointing_arm();
        draw_filled_rect_mut(&mut m, Rect::at(150, 96).of_size(20, 4), image::Luma([0]));
        let r = reaches(&m, &FingertipSettings::default(), &|_, _| false, &TableView::identity());
        assert_eq!(r.len(), 1, "{r:?}");
        assert!(r[0].pointing && (r[0].fingertip[1] - 70.0).abs() < 6.0, "the fingertip at the cut-off finger's end: {:?}", r[0]);
        let whole = reaches(&pointing_arm(), &FingertipSettings::default(), &|_, _| false, &TableView::identity())[0];
        assert_eq!(r[0].area + 4 * 7, whole.area, "the piece counts in the hand's area");
        // The same finger pointing into a corner cell from beyond the picture's edge: the piece
        // lies partly outside the picture and is still the hand's, not a region of its own.
        let r = reaches(&m, &FingertipSettings::default(), &|_, y| y < 80, &TableView::identity());
        assert_eq!(r.len(), 1, "{r:?}");
        assert!((r[0].fingertip[1] - 70.0).abs() < 6.0, "{:?}", r[0]);
        // The page changing beyond the knuckles of a fist: too large a region to be a finger.
        let mut fist = GrayImage::new(W, H);
        draw_filled_rect_mut(&mut fist, Rect::at(135, 150).of_size(50, 90), image::Luma([255]));
        draw_filled_circle_mut(&mut fist, (160, 115), 30, image::Luma([255]));
        draw_filled_rect_mut(&mut fist, Rect::at(100, 140).of_size(120, 6), image::Luma([0]));
        let r = reaches(&fist, &FingertipSettings::default(), &|_, _| false, &TableView::identity());
        assert!(r[0].fingertip[1] > 140.0, "the fist's own tip: {:?}", r[0]);
    }

    #[test]
    fn a_flat_hands_fingers_side_by_side_are_flat_close_up_and_a_pointing_finger_is_not() {
        let settings = FingertipSettings::default();
        let finger = reaches(&pointing_arm(), &settings, &|_, _| false, &TableView::identity())[0];
        assert!(finger.pointing && !finger.flat, "{finger:?}");
        // A flat hand from the left edge, 12 pixels wide, its fingertips' line rounded.
        let mut m = GrayImage::new(W, H);
        draw_filled_rect_mut(&mut m, Rect::at(0, 121).of_size(40, 12), image::Luma([255]));
        draw_filled_circle_mut(&mut m, (40, 127), 6, image::Luma([255]));
        let flat = reaches(&m, &settings, &|_, _| false, &TableView::identity())[0];
        assert!(flat.tip_fill <= settings.max_tip_fill, "as thin as a finger at the tip radius: {flat:?}");
        assert!(flat.near_fill > settings.flat_near_fill && flat.flat, "{flat:?}");
    }

    #[test]
    fn a_blob_inside_the_picture_and_a_blunt_shoulder_are_not_fingers() {
        let mut m = GrayImage::new(W, H);
        // The page animating: a change away from the border.
        draw_filled_circle_mut(&mut m, (160, 100), 20, image::Luma([255]));
        // A shoulder leaning in from the left edge.
        draw_filled_circle_mut(&mut m, (0, 200), 60, image::Luma([255]));
        let found = reaches(&m, &FingertipSettings::default(), &|_, _| false, &TableView::identity());
        assert_eq!(found.len(), 1, "only the region at the border: {found:?}");
        assert!(!found[0].pointing, "blunt: {:?}", found[0]);
    }

    #[test]
    fn a_pointed_shadow_of_a_person_leaning_in_is_not_a_finger() {
        // Head and shoulders at the right edge, their shadow a long wedge ending in a point.
        let mut m = GrayImage::new(W, H);
        draw_filled_circle_mut(&mut m, (300, 150), 70, image::Luma([255]));
        let wedge = [imageproc::point::Point::new(60, 170), imageproc::point::Point::new(260, 100), imageproc::point::Point::new(260, 200)];
        imageproc::drawing::draw_polygon_mut(&mut m, &wedge, image::Luma([255]));
        let found = reaches(&m, &FingertipSettings::default(), &|_, _| false, &TableView::identity());
        assert_eq!(found.len(), 1);
        assert!(found[0].tip_fill <= FingertipSettings::default().max_tip_fill, "a thin tip: {:?}", found[0]);
        assert!(!found[0].pointing, "too large a region for a hand: {:?}", found[0]);
    }

    #[test]
    fn a_bulky_shadow_ending_in_a_point_is_not_a_finger_but_a_hand_seen_without_its_arm_is() {
        // A leaning person's shadow at the top edge: a broad lobe narrowing to a blunt point.
        let mut m = GrayImage::new(W, H);
        let lobe = [
            imageproc::point::Point::new(100, 0),
            imageproc::point::Point::new(220, 0),
            imageproc::point::Point::new(210, 40),
            imageproc::point::Point::new(190, 60),
            imageproc::point::Point::new(160, 100),
            imageproc::point::Point::new(130, 60),
            imageproc::point::Point::new(110, 40),
        ];
        imageproc::drawing::draw_polygon_mut(&mut m, &lobe, image::Luma([255]));
        let found = reaches(&m, &FingertipSettings::default(), &|_, _| false, &TableView::identity());
        let r = found[0];
        let settings = FingertipSettings::default();
        assert!(r.tip_fill <= settings.max_tip_fill && r.bulk > settings.bulky && r.bulk <= settings.max_bulk, "pointed, and bulky: {r:?}");
        assert!(r.tip_fill > settings.max_tip_fill_for(r.bulk) && !r.pointing, "a shadow, not a finger: {r:?}");
        // A hand whose arm is not seen: a palm at the bottom edge and one finger.
        let mut m = GrayImage::new(W, H);
        draw_filled_rect_mut(&mut m, Rect::at(127, 195).of_size(70, 45), image::Luma([255]));
        draw_filled_rect_mut(&mut m, Rect::at(159, 150).of_size(7, 46), image::Luma([255]));
        let r = reaches(&m, &FingertipSettings::default(), &|_, _| false, &TableView::identity())[0];
        assert!(r.bulk > settings.bulky && r.pointing, "{r:?}");
    }

    #[test]
    fn an_arm_across_the_whole_picture_from_a_near_camera_is_a_hand() {
        // From the bottom-right corner to the far left, 40 pixels thick (15% of the image,
        // above the area a leaning head may have), a finger 4 pixels wide at its end.
        let mut m = GrayImage::new(W, H);
        let arm = [
            imageproc::point::Point::new(320, 200),
            imageproc::point::Point::new(320, 239),
            imageproc::point::Point::new(60, 135),
            imageproc::point::Point::new(60, 95),
        ];
        imageproc::drawing::draw_polygon_mut(&mut m, &arm, image::Luma([255]));
        for dy in -2..=1 {
            draw_line_segment_mut(&mut m, (60.0, 112.0 + dy as f32), (35.0, 112.0 + dy as f32), image::Luma([255]));
        }
        let found = reaches(&m, &FingertipSettings::default(), &|_, _| false, &TableView::identity());
        assert_eq!(found.len(), 1);
        let share = found[0].area as f64 / (W * H) as f64;
        assert!(share > FingertipSettings::default().max_area, "as large as meant: {share}");
        assert!(found[0].pointing && (found[0].fingertip[0] - 36.0).abs() < 6.0, "{:?}", found[0]);
    }

    #[test]
    fn a_head_leaning_in_with_a_short_point_is_not_a_finger() {
        // A head half in view at the top edge, a thin point of its shadow 15 pixels below it.
        let mut m = GrayImage::new(W, H);
        draw_filled_circle_mut(&mut m, (160, 0), 60, image::Luma([255]));
        for dx in -2..=1 {
            draw_line_segment_mut(&mut m, (160.0 + dx as f32, 58.0), (160.0 + dx as f32, 75.0), image::Luma([255]));
        }
        let found = reaches(&m, &FingertipSettings::default(), &|_, _| false, &TableView::identity());
        assert_eq!(found.len(), 1);
        assert!(found[0].tip_fill <= FingertipSettings::default().max_tip_fill, "a thin tip: {:?}", found[0]);
        assert!(found[0].bulk > FingertipSettings::default().max_bulk && !found[0].pointing, "{:?}", found[0]);
    }

    #[test]
    fn an_empty_mask_has_no_reach() {
        assert!(reaches(&GrayImage::new(W, H), &FingertipSettings::default(), &|_, _| false, &TableView::identity()).is_empty());
    }

    #[test]
    fn a_hand_whose_arm_is_not_seen_enters_from_outside_the_picture() {
        // The picture is x >= 100; a hand from the left whose arm is lost below x = 60.
        let mut m = GrayImage::new(W, H);
        draw_filled_rect_mut(&mut m, Rect::at(60, 110).of_size(60, 30), image::Luma([255]));
        for dy in -3..=3 {
            draw_line_segment_mut(&mut m, (120.0, 125.0 + dy as f32), (190.0, 125.0 + dy as f32), image::Luma([255]));
        }
        let found = reaches(&m, &FingertipSettings::default(), &|x, _| x < 100, &TableView::identity());
        assert_eq!(found.len(), 1);
        assert!(found[0].pointing && (found[0].fingertip[0] - 190.0).abs() < 6.0, "{:?}", found[0]);
        assert!(reaches(&m, &FingertipSettings::default(), &|_, _| false, &TableView::identity()).is_empty(), "an island inside the picture is not a hand");
    }

    #[test]
    fn a_hand_whose_sleeve_is_lost_enters_where_its_trace_nears_the_border() {
        // The picture is x < 250; a hand dwelling at its edge pointing left to x = 190, its wrist
        // outside the picture, and only a thin trace of the sleeve's edge seen from there to
        // 2 pixels short of the right border.
        let mut m = GrayImage::new(W, H);
        draw_filled_rect_mut(&mut m, Rect::at(215, 110).of_size(45, 24), image::Luma([255]));
        for dy in -2..=2 {
            draw_line_segment_mut(&mut m, (190.0, 122.0 + dy as f32), (215.0, 122.0 + dy as f32), image::Luma([255]));
        }
        draw_line_segment_mut(&mut m, (259.0, 118.0), (W as f32 - 3.0, 112.0), image::Luma([255]));
        let found = reaches(&m, &FingertipSettings::default(), &|x, _| x >= 250, &TableView::identity());
        assert_eq!(found.len(), 1);
        let r = found[0];
        assert!(r.entry[0] > W as f64 - 6.0, "enters near the right border: {r:?}");
        assert!(r.pointing && (r.fingertip[0] - 190.0).abs() < 6.0, "the fingertip, not the trace's end: {r:?}");
    }

    #[test]
    fn a_finger_on_the_first_row_whose_arm_is_lost_outside_the_picture_points() {
        // The picture is y >= 60; only the hand's last 15 pixels outside it are seen, and the
        // finger reaches 20 pixels in (a first-row cell): a reach of 0.07 of the diagonal.
        let mut m = GrayImage::new(W, H);
        draw_filled_rect_mut(&mut m, Rect::at(150, 45).of_size(22, 15), image::Luma([255]));
        for dx in -2..=2 {
            draw_line_segment_mut(&mut m, (160.0 + dx as f32, 60.0), (160.0 + dx as f32, 80.0), image::Luma([255]));
        }
        let found = reaches(&m, &FingertipSettings::default(), &|_, y| y < 60, &TableView::identity());
        assert_eq!(found.len(), 1);
        assert!(found[0].pointing && (found[0].fingertip[1] - 80.0).abs() < 5.0, "{:?}", found[0]);
        // A hand as long at the image border is too short a reach from it.
        let mut at_border = GrayImage::new(W, H);
        draw_filled_rect_mut(&mut at_border, Rect::at(150, 0).of_size(22, 8), image::Luma([255]));
        for dx in -2..=2 {
            draw_line_segment_mut(&mut at_border, (160.0 + dx as f32, 8.0), (160.0 + dx as f32, 28.0), image::Luma([255]));
        }
        let found = reaches(&at_border, &FingertipSettings::default(), &|_, _| false, &TableView::identity());
        assert!(!found[0].pointing, "{:?}", found[0]);
    }

    #[test]
    fn a_finger_at_the_far_side_of_a_tilted_view_is_judged_at_its_own_size() {
        // A grid seen from a tilted camera, its far side at the top narrower than its near side.
        let outline = [[100.0, 40.0], [220.0, 40.0], [300.0, 230.0], [20.0, 230.0]];
        let map = crate::touch::grid_map::GridMap { cols: 8, rows: 6, camera_to_rect: crate::touch::grid_map::quad_to_unit_square(outline).unwrap(), image_size: [W, H] };
        let view = TableView::of_grid(&map).unwrap();
        assert!(view.scale_at([170.0, 50.0]) > 1.4, "far: {}", view.scale_at([170.0, 50.0]));
        // An arm from the left border along the far side, its hand with a finger 4 pixels wide
        // and 6 long: at the picture centre's size the knuckles are within the tip's disc.
        let mut m = GrayImage::new(W, H);
        draw_filled_rect_mut(&mut m, Rect::at(0, 45).of_size(100, 10), image::Luma([255]));
        draw_filled_rect_mut(&mut m, Rect::at(100, 20).of_size(64, 60), image::Luma([255]));
        draw_filled_rect_mut(&mut m, Rect::at(164, 48).of_size(7, 4), image::Luma([255]));
        let settings = FingertipSettings::default();
        let as_seen = reaches(&m, &settings, &|_, _| false, &TableView::identity())[0];
        assert!(as_seen.tip_fill > settings.max_tip_fill && !as_seen.pointing, "blunt at the picture centre's size: {as_seen:?}");
        let far = reaches(&m, &settings, &|_, _| false, &view)[0];
        assert!(far.pointing && (far.fingertip[0] - 169.0).abs() < 3.0, "a finger at its own size: {far:?}");
    }
}
