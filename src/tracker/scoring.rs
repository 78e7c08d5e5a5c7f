//! How well a board state explains an observation, and the rule that picks one.
//!
//! Each square's reading gives a log-likelihood for each class the square could truly hold
//! ([`Evidence`]); a candidate state's score is the sum over the 32 playing squares. Scores are
//! kept as *deficits*: how far the candidate falls short of the best any arbitrary board could do
//! (the per-square most likely class). A candidate with deficit 0 explains every square; a hard
//! reading that contradicts it costs about 6 (`ln(0.99 / 0.0025)`); an unknown square costs
//! nothing whatever it holds.
//!
//! The decision ([`decide`]): the best candidate is accepted when its deficit is small
//! (`explain`) and every candidate that would change the game differently is worse by at least
//! `margin`; a large deficit (`error`) means no legal successor explains the board; anything in
//! between, or a close rival, is "uncertain": the tracker waits for a clearer view.

use crate::draughts::bitboard::{Square, Squares, DARK};
use crate::draughts::notation::square_at;
use crate::draughts::rules::Rules;

use super::candidates::{Candidate, Look};
use super::observation::{Observation, Reading, SquareClass};
use super::KingStyle;

/// Probabilities are floored here so that one wild reading costs at most `ln(1e4)` ≈ 9.2.
const PROB_FLOOR: f32 = 1e-4;

/// Log-likelihood of each observation square under each true class, on the engine's squares.
#[derive(Clone, Debug, PartialEq)]
pub struct Evidence {
    ll: [[f32; 5]; 64],
    /// Kings look like men: classes are compared by look (`b` for a black man or king).
    stacked: bool,
}

impl Evidence {
    /// `hard_error`: the chance that a hard grid character is wrong (spread over the other classes).
    pub fn new(obs: &Observation, rules: &Rules, kings: KingStyle, hard_error: f32) -> Evidence {
        let stacked = kings == KingStyle::Stacked;
        let mut ll = [[0f32; 5]; 64];
        let right = (1.0 - hard_error).ln();
        let wrong = (hard_error / 4.0).ln();
        for row in 0..8u8 {
            for col in 0..8u8 {
                let Some(sq) = square_at(row, col, rules) else { continue };
                let reading = obs.squares[row as usize][col as usize];
                ll[sq as usize] = match reading {
                    Reading::Unknown => [0.0; 5],
                    Reading::Class(c) => {
                        let c = if stacked { c.as_man() } else { c };
                        std::array::from_fn(|i| {
                            let same = if stacked { SquareClass::ALL[i].as_man() == c } else { i == c.index() };
                            if same {
                                right
                            } else {
                                wrong
                            }
                        })
                    }
                    Reading::Probabilities(mut p) => {
                        // The share the classifier could not place says nothing: spread it evenly.
                        let unplaced = (1.0 - p.iter().sum::<f32>()).max(0.0);
                        let looks = if stacked { 3.0 } else { 5.0 };
                        if stacked {
                            // A king and a man look alike: the reading says "black piece" for both.
                            for (man, king) in [(1, 3), (2, 4)] {
                                let piece = p[man] + p[king];
                                p[man] = piece;
                                p[king] = piece;
                            }
                        }
                        p.map(|v| (v + unplaced / looks).max(PROB_FLOOR).ln())
                    }
                };
            }
        }
        Evidence { ll, stacked }
    }

    fn same_look(&self, a: SquareClass, b: SquareClass) -> bool {
        if self.stacked {
            a.as_man() == b.as_man()
        } else {
            a == b
        }
    }

    pub fn log_likelihood(&self, sq: Square, class: SquareClass) -> f32 {
        self.ll[sq as usize][class.index()]
    }

    fn best(&self, sq: Square) -> f32 {
        self.ll[sq as usize].iter().copied().fold(f32::NEG_INFINITY, f32::max)
    }

    /// How much worse than the best possible board `look` explains the observation (>= 0).
    pub fn deficit(&self, look: &Look) -> f32 {
        Squares(DARK).map(|sq| self.best(sq) - self.log_likelihood(sq, look.class_at(sq))).sum()
    }

    /// The class read on `sq` if the reading favours it over every other look by `margin`.
    pub fn read(&self, sq: Square, margin: f32) -> Option<SquareClass> {
        let best = SquareClass::ALL
            .into_iter()
            .max_by(|&a, &b| self.log_likelihood(sq, a).total_cmp(&self.log_likelihood(sq, b)))?;
        self.confident(sq, best, margin).then_some(if self.stacked { best.as_man() } else { best })
    }

    /// Whether the reading of `sq` favours `class` over every class that looks different.
    pub fn confident(&self, sq: Square, class: SquareClass, margin: f32) -> bool {
        let own = self.log_likelihood(sq, class);
        SquareClass::ALL
            .into_iter()
            .filter(|&other| !self.same_look(other, class))
            .all(|other| own - self.log_likelihood(sq, other) >= margin)
    }

    /// Squares confidently read as something other than `look` shows (unknown squares are not
    /// counted: nothing is known about them).
    pub fn changed_from(&self, look: &Look, margin: f32) -> u64 {
        Squares(DARK)
            .filter(|&sq| match self.read(sq, margin) {
                Some(class) => !self.same_look(class, look.class_at(sq)),
                None => false,
            })
            .fold(0, |acc, sq| acc | 1u64 << sq)
    }
}

/// The decision thresholds, in natural-log likelihood units.
#[derive(Clone, Copy, Debug, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct Thresholds {
    /// A candidate explains the board if its deficit is at most this.
    pub explain: f32,
    /// With the best candidate's deficit at least this, nothing explains the board: an error.
    pub error: f32,
    /// The winner must beat every candidate with a different outcome by this much.
    pub margin: f32,
}

impl Default for Thresholds {
    fn default() -> Self {
        // One contradicted hard reading costs ~6.0: an error, as in the seed. Probabilities must
        // favour the winner about 20:1 over any rival outcome before it is accepted.
        Thresholds { explain: 3.0, error: 5.5, margin: 3.0 }
    }
}

#[derive(Clone, Debug, PartialEq)]
pub enum Decision {
    /// `best` wins; `near` are the candidates with the same outcome that score almost as well
    /// (their partial-move details are merged by the caller).
    Accept { best: usize, near: Vec<usize> },
    /// No clear winner: the best candidate does not explain the board well enough, or a rival
    /// with another outcome is too close (`rival`).
    Uncertain { best: usize, rival: Option<usize>, deficit: f32, gap: f32 },
    /// Nothing explains the board.
    Unexplained { best: usize, deficit: f32 },
}

pub fn decide(evidence: &Evidence, candidates: &[Candidate], th: &Thresholds) -> Decision {
    let deficits: Vec<f32> = candidates.iter().map(|c| evidence.deficit(&c.look)).collect();
    let best = (0..candidates.len()).min_by(|&a, &b| deficits[a].total_cmp(&deficits[b])).unwrap_or(0);
    let best_deficit = deficits.get(best).copied().unwrap_or(f32::INFINITY);
    if best_deficit >= th.error {
        return Decision::Unexplained { best, deficit: best_deficit };
    }
    let rival = (0..candidates.len())
        .filter(|&i| !candidates[i].plan.same_outcome(&candidates[best].plan))
        .min_by(|&a, &b| deficits[a].total_cmp(&deficits[b]));
    let gap = rival.map_or(f32::INFINITY, |r| deficits[r] - best_deficit);
    if best_deficit > th.explain || gap < th.margin {
        return Decision::Uncertain { best, rival: rival.filter(|_| gap < th.margin), deficit: best_deficit, gap };
    }
    let near = (0..candidates.len())
        .filter(|&i| {
            i != best
                && deficits[i] - best_deficit < th.margin
                && candidates[i].plan.same_outcome(&candidates[best].plan)
        })
        .collect();
    Decision::Accept { best, near }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::draughts::position::Position;
    use crate::draughts::rules::Variant;

    fn evidence_of(obs: &Observation, kings: KingStyle) -> Evidence {
        Evidence::new(obs, &Variant::Pool.rules(), kings, 0.01)
    }

    #[test]
    fn a_hard_mismatch_costs_more_than_the_error_threshold() {
        let rules = Variant::Pool.rules();
        let pos = Position::start(&rules);
        let look = Look::of(&pos, 0);
        let mut obs = Observation::of_position(&pos, 0, &rules);
        let ev = evidence_of(&obs, KingStyle::Visible);
        assert!(ev.deficit(&look) < 1e-3);
        obs.squares[3][0] = Reading::Class(SquareClass::WhiteMan);
        let ev = evidence_of(&obs, KingStyle::Visible);
        let d = ev.deficit(&look);
        assert!(d > Thresholds::default().error && d < 6.5, "deficit {d}");
        assert_eq!(ev.changed_from(&look, 1.0), 1u64 << 24);
    }

    #[test]
    fn unknown_squares_cost_nothing_and_are_never_changed() {
        let rules = Variant::Pool.rules();
        let pos = Position::start(&rules);
        let mut obs = Observation::of_position(&pos, 0, &rules);
        obs.squares[0][1] = Reading::Unknown;
        let ev = evidence_of(&obs, KingStyle::Visible);
        assert!(ev.deficit(&Look::of(&Position::empty(pos.to_move), 0)) > 100.0);
        let mut without = Look::of(&pos, 0);
        without.black &= !(1u64 << 1);
        assert!(ev.deficit(&without) < 1e-3);
        assert_eq!(ev.changed_from(&without, 1.0), 0);
    }

    #[test]
    fn stacked_kings_read_as_men() {
        let rules = Variant::Pool.rules();
        let mut obs = Observation::of_position(&Position::empty(rules.first_mover), 0, &rules);
        obs.squares[0][1] = Reading::Class(SquareClass::BlackKing);
        obs.squares[0][3] = Reading::Probabilities([0.1, 0.5, 0.0, 0.4, 0.0]);
        obs.squares[0][5] = Reading::Probabilities([0.0, 0.0, 0.0, 0.0, 0.1]);
        let ev = evidence_of(&obs, KingStyle::Stacked);
        assert_eq!(ev.read(1, 1.0), Some(SquareClass::BlackMan));
        assert!((ev.log_likelihood(3, SquareClass::BlackMan) - 0.9f32.ln()).abs() < 1e-5);
        assert!(ev.confident(3, SquareClass::BlackKing, 2.0));
        // 90% unplaced (a hand): nearly nothing is known about the square.
        assert!((ev.log_likelihood(5, SquareClass::Empty) - 0.3f32.ln()).abs() < 1e-5);
        assert!((ev.log_likelihood(5, SquareClass::WhiteMan) - 0.4f32.ln()).abs() < 1e-5);
    }
}
