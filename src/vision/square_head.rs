//! The last layer of the learnt square model, and its adaptation to one session.
//!
//! The network (`square_model`) turns a square's picture into an embedding; this linear head
//! turns the embedding into class probabilities. The head is kept apart from the network, in
//! plain Rust, for two reasons: it is what a session's start position fine-tunes (the 32
//! playing squares of a start frame have known classes), and it is small enough to fit in
//! microseconds without any framework. Pure: no OpenCV, no I/O.

use serde::{Deserialize, Serialize};

/// What the model tells apart, in this order: the five classes of
/// [`crate::vision::classify::CLASSES`], then `Other` (a hand, a sleeve, anything that is no
/// square of the set).
pub const HEAD_CLASSES: usize = 6;
/// Index of the `Other` class.
pub const OTHER: usize = 5;

/// A linear layer with softmax: `p = softmax(W e + b)`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SquareHead {
    /// `HEAD_CLASSES` rows of `embedding` weights.
    pub weights: Vec<Vec<f32>>,
    pub bias: Vec<f32>,
}

/// How a session's start position moves the head: plain gradient descent on the cross-entropy
/// of the labelled embeddings, pulled back towards the trained head so that 32 squares cannot
/// unlearn what thousands taught (kings and hands never appear in a start position).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Adaptation {
    pub steps: usize,
    pub learning_rate: f32,
    /// Weight of the squared distance to the trained head.
    pub pull: f32,
}

impl Default for Adaptation {
    fn default() -> Self {
        // Chosen on game 1 of the real photos (trained on; calibrated on Image_001 the other ten
        // read 1 square wrong, 6 without adapting) and the rendered validation sessions: enough
        // to move a session whose light men sit near the hands' class, little enough that the
        // kings' rows, which a start never shows, keep their place.
        Adaptation { steps: 60, learning_rate: 0.05, pull: 0.05 }
    }
}

impl SquareHead {
    /// Checks the shape against the embedding size; names what is wrong.
    pub fn validate(&self, embedding: usize) -> Result<(), String> {
        if self.weights.len() != HEAD_CLASSES || self.bias.len() != HEAD_CLASSES {
            return Err(format!("head: need {HEAD_CLASSES} classes, got {} rows and {} biases", self.weights.len(), self.bias.len()));
        }
        if let Some((k, row)) = self.weights.iter().enumerate().find(|(_, row)| row.len() != embedding) {
            return Err(format!("head: row {k} has {} weights, the embedding has {embedding}", row.len()));
        }
        if self.weights.iter().flatten().chain(&self.bias).any(|v| !v.is_finite()) {
            return Err("head: a weight is not a finite number".into());
        }
        Ok(())
    }

    /// Class probabilities of one embedding.
    pub fn probabilities(&self, embedding: &[f32]) -> [f32; HEAD_CLASSES] {
        let mut logits = [0f32; HEAD_CLASSES];
        for (k, logit) in logits.iter_mut().enumerate() {
            *logit = self.bias[k] + self.weights[k].iter().zip(embedding).map(|(w, e)| w * e).sum::<f32>();
        }
        softmax(logits)
    }

    /// The head fine-tuned on labelled embeddings (`labels[i]` < `HEAD_CLASSES`), starting from
    /// and pulled towards `self`. Returns `self` unchanged when given nothing to learn from.
    pub fn adapted(&self, embeddings: &[Vec<f32>], labels: &[usize], how: Adaptation) -> SquareHead {
        let mut head = self.clone();
        let n = embeddings.len().min(labels.len());
        if n == 0 || how.steps == 0 {
            return head;
        }
        let dim = self.weights[0].len();
        for _ in 0..how.steps {
            let mut grad_w = vec![vec![0f32; dim]; HEAD_CLASSES];
            let mut grad_b = [0f32; HEAD_CLASSES];
            for (e, &label) in embeddings.iter().zip(labels).take(n) {
                let p = head.probabilities(e);
                for k in 0..HEAD_CLASSES {
                    let g = (p[k] - (k == label) as u8 as f32) / n as f32;
                    grad_b[k] += g;
                    for (gw, x) in grad_w[k].iter_mut().zip(e) {
                        *gw += g * x;
                    }
                }
            }
            for k in 0..HEAD_CLASSES {
                for j in 0..dim {
                    let pull = how.pull * (head.weights[k][j] - self.weights[k][j]);
                    head.weights[k][j] -= how.learning_rate * (grad_w[k][j] + pull);
                }
                head.bias[k] -= how.learning_rate * (grad_b[k] + how.pull * (head.bias[k] - self.bias[k]));
            }
        }
        head
    }
}

/// Softmax, stable for large logits.
pub fn softmax<const N: usize>(logits: [f32; N]) -> [f32; N] {
    let top = logits.iter().copied().fold(f32::NEG_INFINITY, f32::max);
    let mut p = logits.map(|l| (l - top).exp());
    let sum: f32 = p.iter().sum();
    for v in &mut p {
        *v /= sum;
    }
    p
}

#[cfg(test)]
mod tests {
    use super::*;

    fn head(dim: usize) -> SquareHead {
        // Class k answers to embedding component k (k < dim).
        let weights = (0..HEAD_CLASSES).map(|k| (0..dim).map(|j| if j == k { 4.0 } else { 0.0 }).collect()).collect();
        SquareHead { weights, bias: vec![0.0; HEAD_CLASSES] }
    }

    fn unit(dim: usize, k: usize, scale: f32) -> Vec<f32> {
        (0..dim).map(|j| if j == k { scale } else { 0.0 }).collect()
    }

    #[test]
    fn probabilities_sum_to_one_and_follow_the_weights() {
        let h = head(8);
        let p = h.probabilities(&unit(8, 2, 1.0));
        assert!((p.iter().sum::<f32>() - 1.0).abs() < 1e-5);
        assert_eq!(p.iter().enumerate().max_by(|a, b| a.1.total_cmp(b.1)).unwrap().0, 2);
        // Huge logits do not overflow.
        let p = h.probabilities(&unit(8, 1, 1e4));
        assert!(p.iter().all(|v| v.is_finite()) && p[1] > 0.99);
    }

    #[test]
    fn adaptation_moves_a_session_whose_squares_sit_elsewhere() {
        // This session's empty squares look like component 1 at half strength plus a little
        // of component 6, which the trained head reads as dark men.
        let dim = 8;
        let h = head(dim);
        let empty: Vec<f32> = (0..dim).map(|j| match j {
            1 => 0.5,
            6 => 1.0,
            _ => 0.0,
        }).collect();
        assert_ne!(argmax(&h.probabilities(&empty)), 0, "the trained head misreads this session's empty squares");
        let mut embeddings = Vec::new();
        let mut labels = Vec::new();
        for _ in 0..8 {
            embeddings.push(empty.clone());
            labels.push(0);
        }
        for _ in 0..12 {
            embeddings.push(unit(dim, 1, 1.0));
            labels.push(1);
            embeddings.push(unit(dim, 2, 1.0));
            labels.push(2);
        }
        let adapted = h.adapted(&embeddings, &labels, Adaptation { steps: 200, learning_rate: 0.2, pull: 0.01 });
        assert_eq!(argmax(&adapted.probabilities(&empty)), 0);
        assert_eq!(argmax(&adapted.probabilities(&unit(dim, 1, 1.0))), 1);
        assert_eq!(argmax(&adapted.probabilities(&unit(dim, 2, 1.0))), 2);
        // A class the start never shows keeps its reading (kings).
        assert_eq!(argmax(&adapted.probabilities(&unit(dim, 3, 1.0))), 3);
        assert!(adapted.validate(dim).is_ok());
    }

    #[test]
    fn nothing_to_learn_from_leaves_the_head_alone() {
        let h = head(4);
        assert_eq!(h.adapted(&[], &[], Adaptation::default()), h);
    }

    #[test]
    fn malformed_heads_are_named() {
        let mut h = head(4);
        assert!(h.validate(5).unwrap_err().contains("row 0"));
        h.bias.pop();
        assert!(h.validate(4).unwrap_err().contains("biases"));
        let mut h = head(4);
        h.weights[3][1] = f32::NAN;
        assert!(h.validate(4).unwrap_err().contains("finite"));
    }

    fn argmax(p: &[f32]) -> usize {
        p.iter().enumerate().max_by(|a, b| a.1.total_cmp(b.1)).unwrap().0
    }
}
