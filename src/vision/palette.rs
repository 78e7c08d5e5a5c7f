//! Colour models: a default palette for a piece set (data file), or one learnt
//! from a photo of the start position (calibration).
//!
//! A model is one multivariate Student-t per appearance class over a chosen
//! subset of the board-normalised features of classify.rs (FEATURE_NAMES).
//! Full covariances, because the features are correlated (a glare spot raises
//! `level` and lowers `rel_level` together, and that correlation is exactly what
//! tells glare from a man); Student-t rather than Gaussian so one odd feature
//! value (a thread on the board) does not veto a class.
//!
//! Kings: seen from above a king is a man (two stacked men); the model reports
//! a king only if `king_prior` > 0, splitting the man's probability; the shipped
//! palette keeps it at 0 (kings are read as men, the game logic knows better).
use super::classify::{BoardFeatures, ColourClass, SquareFeatures, SquareReading, CLASSES, FEATURE_NAMES};
use super::{Result, Side, VisionError};
use serde::{Deserialize, Serialize};

#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct ClassModel {
    pub mean: Vec<f32>,
    /// Covariance, row-major d x d.
    pub cov: Vec<Vec<f32>>,
    /// Number of squares the model was estimated from (informational; used as
    /// the weight of this model when a calibration is shrunk towards it).
    #[serde(default)]
    pub n: f32,
    #[serde(skip)]
    inv: Vec<Vec<f64>>,
    #[serde(skip)]
    logdet: f64,
}

impl ClassModel {
    fn prepare(&mut self, d: usize) -> Result<()> {
        if self.mean.len() != d || self.cov.len() != d || self.cov.iter().any(|r| r.len() != d) {
            return Err(VisionError::Palette(format!("class model must have {d} features")));
        }
        if self.mean.iter().chain(self.cov.iter().flatten()).any(|v| !v.is_finite()) {
            return Err(VisionError::Palette("non-finite value".into()));
        }
        let c: Vec<Vec<f64>> = self.cov.iter().map(|r| r.iter().map(|&v| v as f64).collect()).collect();
        let (inv, logdet) = inv_logdet(&c).ok_or_else(|| VisionError::Palette("covariance not positive definite".into()))?;
        self.inv = inv;
        self.logdet = logdet;
        Ok(())
    }

    /// Squared Mahalanobis distance.
    fn mahal2(&self, x: &[f32]) -> f64 {
        let d = self.mean.len();
        let z: Vec<f64> = (0..d).map(|i| (x[i] - self.mean[i]) as f64).collect();
        let mut q = 0.0;
        for i in 0..d {
            for j in 0..d {
                q += z[i] * self.inv[i][j] * z[j];
            }
        }
        q.max(0.0)
    }

    /// Multivariate Student-t log density (up to a constant shared by classes
    /// of equal dimension).
    fn loglik(&self, x: &[f32], dof: f64) -> (f64, f64) {
        let d = self.mean.len() as f64;
        let q = self.mahal2(x);
        (-(dof + d) / 2.0 * (1.0 + q / dof).ln() - 0.5 * self.logdet, q)
    }

    /// Student-t log density of `x` on the features `subset` alone (the marginal: the class's
    /// mean and covariance restricted to them), up to the constant shared by classes. `None`
    /// if the restricted covariance is degenerate.
    fn marginal_loglik(&self, x: &[f32], subset: &[usize], dof: f64) -> Option<f64> {
        let cov: Vec<Vec<f64>> = subset.iter().map(|&i| subset.iter().map(|&j| self.cov[i][j] as f64).collect()).collect();
        let (inv, logdet) = inv_logdet(&cov)?;
        let z: Vec<f64> = subset.iter().map(|&i| (x[i] - self.mean[i]) as f64).collect();
        let q: f64 = (0..z.len()).map(|a| (0..z.len()).map(|b| z[a] * inv[a][b] * z[b]).sum::<f64>()).sum();
        Some(-(dof + z.len() as f64) / 2.0 * (1.0 + q.max(0.0) / dof).ln() - 0.5 * logdet)
    }

    /// Estimate from samples (rows of features), with a ridge on the diagonal.
    pub fn from_samples(v: &[Vec<f32>], ridge: &[f32]) -> Result<ClassModel> {
        let n = v.len();
        if n < 2 {
            return Err(VisionError::Calibration("need at least 2 samples per class".into()));
        }
        let d = v[0].len();
        let mean: Vec<f32> = (0..d).map(|k| v.iter().map(|x| x[k]).sum::<f32>() / n as f32).collect();
        let mut cov = vec![vec![0f32; d]; d];
        for x in v {
            for i in 0..d {
                for j in 0..d {
                    cov[i][j] += (x[i] - mean[i]) * (x[j] - mean[j]) / (n - 1) as f32;
                }
            }
        }
        for i in 0..d {
            cov[i][i] += ridge[i] * ridge[i];
        }
        let mut m = ClassModel { mean, cov, n: n as f32, inv: vec![], logdet: 0.0 };
        m.prepare(d)?;
        Ok(m)
    }

    /// Calibration: combine samples with this (prior) model, which counts as
    /// `n0` samples. Few samples (8 empty squares, 12 men) cannot pin down a
    /// covariance alone; the mean moves to the session's colours quickly.
    fn shrunk(&self, v: &[Vec<f32>], n0: f32) -> Result<ClassModel> {
        let n = v.len() as f32;
        let d = self.mean.len();
        if n < 2.0 {
            return Ok(self.clone());
        }
        let m: Vec<f32> = (0..d).map(|k| v.iter().map(|x| x[k]).sum::<f32>() / n).collect();
        let mean: Vec<f32> = (0..d).map(|k| (n * m[k] + n0 * self.mean[k]) / (n + n0)).collect();
        // The means move to the session. One photo does not show the spread that
        // glare and shadows cause over a whole game, so the palette's covariances
        // (fitted over many photos) are kept, except that a feature is widened
        // (never narrowed) to the session's own spread: men under the board's gloss
        // in one part of the board and out of it in another differ more than the
        // palette knew, and a model narrower than its own start cannot read it.
        let mut cov = self.cov.clone();
        for k in 0..d {
            let var = v.iter().map(|x| (x[k] - m[k]) * (x[k] - m[k])).sum::<f32>() / (n - 1.0);
            if var > cov[k][k] {
                cov[k][k] = var;
            }
        }
        let mut out = ClassModel { mean: mean.clone(), cov: cov.clone(), n: n + n0, inv: vec![], logdet: 0.0 };
        out.prepare(d)?;
        // A set the palette was not made for: its features vary together in ways the palette's
        // correlations call impossible (a red man's colour and its rim, say), and the model
        // would call its own start position foreign. Then the session's own covariance is
        // added, so the model explains what it was learnt from, and the palette's spread still
        // stands for what one look at the start cannot show.
        let own_worst = v.iter().map(|x| out.mahal2(x)).fold(0.0, f64::max);
        if own_worst > CALIB_OWN_MAHAL2_PER_FEATURE * d as f64 {
            for i in 0..d {
                for j in 0..d {
                    cov[i][j] += v.iter().map(|x| (x[i] - m[i]) * (x[j] - m[j])).sum::<f32>() / (n - 1.0);
                }
            }
            out = ClassModel { mean, cov, n: n + n0, inv: vec![], logdet: 0.0 };
            out.prepare(d)?;
        }
        Ok(out)
    }
}

impl ClassModel {
    /// A bounded step towards samples of this class from a position the game accepted: the
    /// mean moves by `rate` of the way to theirs, and the spread takes in theirs (around the
    /// new mean) at the same rate, never narrower than `floor`'s diagonal. Slow changes of lamp,
    /// daylight and exposure are followed; one frame cannot carry the model away.
    fn follow(&mut self, v: &[Vec<f32>], rate: f32, floor: &ClassModel) -> Result<()> {
        let n = v.len();
        if n == 0 {
            return Ok(());
        }
        let d = self.mean.len();
        // Few samples (one king) move the model less than a full class of them.
        let a = rate * n as f32 / (n as f32 + 4.0);
        let m: Vec<f32> = (0..d).map(|k| v.iter().map(|x| x[k]).sum::<f32>() / n as f32).collect();
        let mean: Vec<f32> = (0..d).map(|k| self.mean[k] + a * (m[k] - self.mean[k])).collect();
        let mut cov = self.cov.clone();
        for i in 0..d {
            for j in 0..d {
                let s = v.iter().map(|x| (x[i] - mean[i]) * (x[j] - mean[j])).sum::<f32>() / n as f32;
                cov[i][j] = (1.0 - a) * cov[i][j] + a * s;
            }
            cov[i][i] = cov[i][i].max(floor.cov[i][i]);
        }
        let mut next = ClassModel { mean, cov, n: self.n, inv: vec![], logdet: 0.0 };
        // A step that would leave the model degenerate is not taken.
        if next.prepare(d).is_ok() {
            *self = next;
        }
        Ok(())
    }
}

/// Inverse and log-determinant of a small SPD matrix (Cholesky).
fn inv_logdet(a: &[Vec<f64>]) -> Option<(Vec<Vec<f64>>, f64)> {
    let n = a.len();
    let mut l = vec![vec![0.0; n]; n];
    for i in 0..n {
        for j in 0..=i {
            let s: f64 = a[i][j] - (0..j).map(|k| l[i][k] * l[j][k]).sum::<f64>();
            if i == j {
                if s <= 1e-12 {
                    return None;
                }
                l[i][i] = s.sqrt();
            } else {
                l[i][j] = s / l[j][j];
            }
        }
    }
    let logdet = 2.0 * (0..n).map(|i| l[i][i].ln()).sum::<f64>();
    // inverse via solving L L^T X = I
    let mut inv = vec![vec![0.0; n]; n];
    for col in 0..n {
        let mut y = vec![0.0; n];
        for i in 0..n {
            let b = if i == col { 1.0 } else { 0.0 };
            y[i] = (b - (0..i).map(|k| l[i][k] * y[k]).sum::<f64>()) / l[i][i];
        }
        let mut x = vec![0.0; n];
        for i in (0..n).rev() {
            x[i] = (y[i] - (i + 1..n).map(|k| l[k][i] * x[k]).sum::<f64>()) / l[i][i];
        }
        for i in 0..n {
            inv[i][col] = x[i];
        }
    }
    Some((inv, logdet))
}

#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct ColourModel {
    pub name: String,
    #[serde(default)]
    pub description: String,
    /// Features used, a subset of classify::FEATURE_NAMES, in this order.
    pub features: Vec<String>,
    /// Appearance of an empty dark (playing) square.
    pub empty_dark: ClassModel,
    /// Appearance of an empty light square.
    pub empty_light: ClassModel,
    pub dark_man: ClassModel,
    pub light_man: ClassModel,
    /// Kings that look different from men (the seed set: blue and green).
    /// Absent for sets whose kings are two stacked men (they read as men,
    /// split by `king_prior`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub dark_king: Option<ClassModel>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub light_king: Option<ClassModel>,
    /// Prior of a distinct-looking king relative to a man of its side.
    #[serde(default = "one")]
    pub king_vs_man_prior: f32,
    /// Height of a piece top above the board, in squares: where to look for
    /// the top in oblique views (rectify::Lean).
    #[serde(default = "default_piece_height")]
    pub piece_height: f32,
    /// Degrees of freedom of the Student-t (lower = heavier tails).
    pub dof: f32,
    /// Prior of a man standing on a light square (never in a legal game, but a
    /// knocked piece should not silently vanish). Relative to 1 for empty.
    pub man_on_light_prior: f32,
    /// Squares further than this (squared Mahalanobis distance) from every
    /// class are reported as Unknown: a hand, a foreign object, a bad view.
    pub unknown_mahal2: f32,
    /// Below this posterior the square is reported as Unknown ('?').
    pub min_confidence: f32,
    /// Diagonal ridge (per feature std) added when fitting or calibrating.
    pub ridge: Vec<f32>,
    #[serde(default)]
    pub king_prior: f32,
    /// Features that tell a piece from an empty square under any lamp (the wooden set's: the
    /// disc's rim and grooves): where the whole model is unsure whether a dark square holds a
    /// piece, these alone settle it when they are sure (see `settle_occupancy`). Empty: the
    /// whole model decides alone.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub occupancy_cues: Vec<String>,
    #[serde(skip)]
    idx: Vec<usize>,
    /// Positions in `features` of the `occupancy_cues`.
    #[serde(skip)]
    occupancy_idx: Vec<usize>,
    /// Per feature of `idx`: one of `DISC_FEATURES` (read one-sided, see `read`).
    #[serde(skip)]
    one_sided: Vec<bool>,
}

fn one() -> f32 {
    1.0
}

fn default_piece_height() -> f32 {
    0.15
}

/// Features that measure how much the inside of a square looks like a turned disc seen from
/// above (classify.rs, the grooves): high for a piece, near zero for an empty square, and lower
/// still only by accident. The rim is not among them: taken one-sided too, it read the photos
/// held apart from the palette no better (4 misread squares against 3).
const DISC_FEATURES: [&str; 2] = ["rings", "rings_med"];

/// Below this probability of its reading "piece or no piece" the whole model is unsure of a
/// dark square, and the occupancy cues may settle it (`ColourModel::settle_occupancy`).
const OCCUPANCY_UNSURE: f64 = 0.9;

/// How sure the occupancy cues must be to settle a square the whole model is unsure of.
const OCCUPANCY_SURE: f64 = 0.95;

/// The default palette for the two-colour wooden set, shipped as a data file.
pub const WOODEN_JSON: &str = include_str!("../../models/wooden.json");
/// The four-colour palette of the original program: red men / blue kings (Black, `b`/`B`),
/// yellow men / green kings (White, `w`/`W`).
pub const FOUR_COLOUR_JSON: &str = include_str!("../../models/four-colour.json");

/// Built-in palettes: (name, JSON).
pub const BUILT_IN: [(&str, &str); 2] = [("wooden", WOODEN_JSON), ("four-colour", FOUR_COLOUR_JSON)];

/// Other names users may give a built-in palette: its old name, and the American spelling.
const ALIASES: [(&str, &str); 2] = [("seed", "four-colour"), ("four-color", "four-colour")];

impl ColourModel {
    pub fn wooden() -> Result<Self> {
        Self::from_json(WOODEN_JSON)
    }

    pub fn four_colour() -> Result<Self> {
        Self::from_json(FOUR_COLOUR_JSON)
    }

    /// A built-in palette by name, or a palette file by path.
    pub fn named(name_or_path: &str) -> Result<Self> {
        let name = ALIASES.iter().find(|(alias, _)| *alias == name_or_path).map_or(name_or_path, |(_, name)| *name);
        if let Some((_, json)) = BUILT_IN.iter().find(|(n, _)| *n == name) {
            return Self::from_json(json);
        }
        let path = std::path::Path::new(name_or_path);
        if !path.is_file() {
            let known: Vec<&str> = BUILT_IN.iter().map(|b| b.0).collect();
            return Err(VisionError::Palette(format!(
                "`{name_or_path}`: no such built-in palette (known: {}) and no such file",
                known.join(", ")
            )));
        }
        Self::load(path)
    }

    pub fn from_json(s: &str) -> Result<Self> {
        let mut m: ColourModel = serde_json::from_str(s).map_err(|e| VisionError::Palette(e.to_string()))?;
        m.prepare()?;
        Ok(m)
    }

    pub(crate) fn prepare(&mut self) -> Result<()> {
        self.idx = self
            .features
            .iter()
            .map(|f| {
                FEATURE_NAMES
                    .iter()
                    .position(|n| n == f)
                    .ok_or_else(|| VisionError::Palette(format!("unknown feature {f:?}; known: {FEATURE_NAMES:?}")))
            })
            .collect::<Result<_>>()?;
        self.one_sided = self.idx.iter().map(|&i| DISC_FEATURES.contains(&FEATURE_NAMES[i])).collect();
        self.occupancy_idx = self
            .occupancy_cues
            .iter()
            .map(|cue| {
                self.features.iter().position(|f| f == cue).ok_or_else(|| {
                    VisionError::Palette(format!("occupancy cue {cue:?} is not among the model's features {:?}", self.features))
                })
            })
            .collect::<Result<_>>()?;
        let d = self.idx.len();
        if d == 0 || self.ridge.len() != d {
            return Err(VisionError::Palette("need >= 1 feature and one ridge value per feature".into()));
        }
        for c in [&mut self.empty_dark, &mut self.empty_light, &mut self.dark_man, &mut self.light_man] {
            c.prepare(d)?;
        }
        for c in [&mut self.dark_king, &mut self.light_king].into_iter().flatten() {
            c.prepare(d)?;
        }
        if !(self.dof > 0.0) {
            return Err(VisionError::Palette("dof must be > 0".into()));
        }
        if !(0.0..=1.0).contains(&self.piece_height) {
            return Err(VisionError::Palette(format!("piece_height {} not in 0..1 squares", self.piece_height)));
        }
        if !(self.king_vs_man_prior > 0.0) || !(self.king_prior >= 0.0 && self.king_prior < 1.0) {
            return Err(VisionError::Palette("king priors out of range".into()));
        }
        Ok(())
    }

    pub fn load(path: &std::path::Path) -> Result<Self> {
        let text = std::fs::read_to_string(path).map_err(|e| VisionError::Palette(format!("{}: {e}", path.display())))?;
        Self::from_json(&text).map_err(|e| VisionError::Palette(format!("{}: {e}", path.display())))
    }

    /// Whether kings have their own appearance (else they read as men).
    pub fn distinct_kings(&self) -> bool {
        self.dark_king.is_some() && self.light_king.is_some()
    }

    pub fn to_json(&self) -> String {
        serde_json::to_string_pretty(self).unwrap_or_default()
    }

    fn select(&self, sf: &SquareFeatures) -> Vec<f32> {
        self.idx.iter().map(|&i| sf.f[i]).collect()
    }

    /// The square's features as this model reads them, or `None` if one is not finite.
    fn square_vector(&self, sf: &SquareFeatures, dark_square: bool) -> Option<Vec<f32>> {
        let mut x = self.select(sf);
        if x.iter().any(|v| !v.is_finite()) {
            return None;
        }
        let empty = if dark_square { &self.empty_dark } else { &self.empty_light };
        // The disc cues are one-sided evidence: a square less disc-like than the typical empty
        // square of its colour (a glare streak running across it is tangential, not radial) is
        // no more like a piece for it. Without this the empty class, narrow in these features,
        // is the one such a square is furthest from.
        for (k, _) in self.one_sided.iter().enumerate().filter(|(_, &one_sided)| one_sided) {
            x[k] = x[k].max(empty.mean[k]);
        }
        Some(x)
    }

    /// The classes a square may show: (index into `SquareReading::probs`, model, prior), the
    /// empty class first.
    fn candidates(&self, dark_square: bool) -> Vec<(usize, &ClassModel, f64)> {
        let empty = if dark_square { &self.empty_dark } else { &self.empty_light };
        let man_prior = if dark_square { 1.0 } else { self.man_on_light_prior.max(1e-9) as f64 };
        let king_prior = man_prior * self.king_vs_man_prior as f64;
        let mut cands: Vec<(usize, &ClassModel, f64)> = vec![(0, empty, 1.0), (1, &self.dark_man, man_prior), (2, &self.light_man, man_prior)];
        if let (Some(dk), Some(lk)) = (&self.dark_king, &self.light_king) {
            cands.push((3, dk, king_prior));
            cands.push((4, lk, king_prior));
        }
        cands
    }

    /// Read one square.
    pub fn read(&self, sf: &SquareFeatures, dark_square: bool) -> SquareReading {
        let Some(x) = self.square_vector(sf, dark_square) else {
            return SquareReading { probs: [0.0; 5], p_unknown: 1.0, class: ColourClass::Unknown, confidence: 1.0, dark_square };
        };
        let dof = self.dof as f64;
        let cands = self.candidates(dark_square);
        let mut lls = [0f64; 5];
        let mut qmin = f64::MAX;
        for (k, &(_, c, prior)) in cands.iter().enumerate() {
            let (ll, q) = c.loglik(&x, dof);
            lls[k] = ll + prior.ln();
            qmin = qmin.min(q);
        }
        let lls = &lls[..cands.len()];
        let mx = lls.iter().cloned().fold(f64::MIN, f64::max);
        let tot: f64 = lls.iter().map(|l| (l - mx).exp()).sum();
        // Posteriors on the stack: this runs for every square of every frame read.
        let mut post = [0f64; 5];
        for (p, l) in post.iter_mut().zip(lls) {
            *p = (l - mx).exp() / tot;
        }
        let post = &mut post[..cands.len()];
        if dark_square {
            self.settle_occupancy(&x, &cands, post);
        }
        // Unknown: smooth step at the distance threshold.
        let p_unknown = (1.0 / (1.0 + (-(qmin - self.unknown_mahal2 as f64) / 4.0).exp())) as f32;
        let mut probs = [0f32; 5];
        for (k, &(i, _, _)) in cands.iter().enumerate() {
            probs[i] = post[k] as f32 * (1.0 - p_unknown);
        }
        if !self.distinct_kings() && self.king_prior > 0.0 {
            for (man, king) in [(1, 3), (2, 4)] {
                probs[king] = probs[man] * self.king_prior;
                probs[man] *= 1.0 - self.king_prior;
            }
        }
        let (bi, bp) = probs.iter().enumerate().fold((0, 0f32), |a, (i, &p)| if p > a.1 { (i, p) } else { a });
        let (class, confidence) = if p_unknown > bp || bp < self.min_confidence {
            (ColourClass::Unknown, bp.max(p_unknown))
        } else {
            (CLASSES[bi], bp)
        };
        SquareReading { probs, p_unknown, class, confidence, dark_square }
    }

    /// Occupancy before colour, where colour cannot tell: when the whole model (`post`, the
    /// posteriors of `cands`, the empty class first) is unsure whether this dark square holds a
    /// piece, the occupancy cues alone decide that if they are sure, and the whole model still
    /// decides which piece. An empty square in a shaded corner is darker and less red than the
    /// empty squares of the start, as the dark men are, while the disc's rim and grooves show
    /// plainly that nothing stands there; a square the colours read surely is left to them (a
    /// stacked king of a set no palette knows shows faint grooves at its lean).
    fn settle_occupancy(&self, x: &[f32], cands: &[(usize, &ClassModel, f64)], post: &mut [f64]) {
        if post[0].max(1.0 - post[0]) >= OCCUPANCY_UNSURE {
            return;
        }
        let Some(cue_empty) = self.empty_by_cues(x, cands).filter(|p| p.max(1.0 - p) >= OCCUPANCY_SURE) else {
            return;
        };
        let men: f64 = post[1..].iter().sum();
        let count = (post.len() - 1) as f64;
        for p in post[1..].iter_mut() {
            *p = (1.0 - cue_empty) * if men > 0.0 { *p / men } else { 1.0 / count };
        }
        post[0] = cue_empty;
    }

    /// The probability that a square (`x`, its classes `cands`, the empty class first) is
    /// empty by the occupancy cues alone; `None` without cues.
    fn empty_by_cues(&self, x: &[f32], cands: &[(usize, &ClassModel, f64)]) -> Option<f64> {
        if self.occupancy_idx.is_empty() {
            return None;
        }
        let dof = self.dof as f64;
        let lls = cands.iter().map(|&(_, c, prior)| c.marginal_loglik(x, &self.occupancy_idx, dof).map(|l| l + prior.ln())).collect::<Option<Vec<f64>>>()?;
        let mx = lls.iter().cloned().fold(f64::MIN, f64::max);
        let weights: Vec<f64> = lls.iter().map(|l| (l - mx).exp()).collect();
        Some(weights[0] / weights.iter().sum::<f64>())
    }

    /// The occupancy cues keep their say only in a session whose start they read right, and
    /// surely: every dark square of the start (`labels`, the odd ones the colours are learnt
    /// without too) as sure as they must be to settle a square (`OCCUPANCY_SURE`). Men with
    /// faint rims and grooves (3-D men in a corner of an oblique view, turned men at the edge
    /// under a dim lamp) would otherwise be read as empty wherever the colours are unsure; in
    /// such a session the colours decide alone.
    fn check_occupancy_cues(&mut self, bf: &BoardFeatures, labels: &[(usize, usize, ColourClass)]) {
        let cands = self.candidates(true);
        let misjudged = labels.iter().any(|&(r, c, class)| {
            let Some(x) = self.square_vector(&bf.squares[r][c], true) else { return false };
            let Some(p_empty) = self.empty_by_cues(&x, &cands) else { return false };
            let p_wrong = if class == ColourClass::Empty { 1.0 - p_empty } else { p_empty };
            p_wrong > 1.0 - OCCUPANCY_SURE
        });
        if misjudged {
            self.occupancy_cues.clear();
            self.occupancy_idx.clear();
        }
    }

    /// Fit a palette from labelled squares: (features, dark square?, class).
    /// Kings count as men. This is how palettes/wooden.json was made.
    pub fn fit(template: &ColourModel, samples: &[(SquareFeatures, bool, ColourClass)]) -> Result<ColourModel> {
        let mut m = template.clone();
        m.prepare()?;
        let pick = |dark: Option<bool>, cls: &[ColourClass]| -> Vec<Vec<f32>> {
            samples
                .iter()
                .filter(|s| dark.map_or(true, |d| s.1 == d) && cls.contains(&s.2))
                .map(|s| m.select(&s.0))
                .collect()
        };
        let r = m.ridge.clone();
        let empty_dark = ClassModel::from_samples(&pick(Some(true), &[ColourClass::Empty]), &r)?;
        let empty_light = ClassModel::from_samples(&pick(Some(false), &[ColourClass::Empty]), &r)?;
        if m.distinct_kings() {
            let dark_man = ClassModel::from_samples(&pick(Some(true), &[ColourClass::DarkMan]), &r)?;
            let light_man = ClassModel::from_samples(&pick(Some(true), &[ColourClass::LightMan]), &r)?;
            let dark_king = ClassModel::from_samples(&pick(Some(true), &[ColourClass::DarkKing]), &r)?;
            let light_king = ClassModel::from_samples(&pick(Some(true), &[ColourClass::LightKing]), &r)?;
            m.dark_man = dark_man;
            m.light_man = light_man;
            m.dark_king = Some(dark_king);
            m.light_king = Some(light_king);
            m.empty_dark = empty_dark;
            m.empty_light = empty_light;
            return Ok(m);
        }
        let dark_man = ClassModel::from_samples(&pick(Some(true), &[ColourClass::DarkMan, ColourClass::DarkKing]), &r)?;
        let light_man = ClassModel::from_samples(&pick(Some(true), &[ColourClass::LightMan, ColourClass::LightKing]), &r)?;
        m.empty_dark = empty_dark;
        m.empty_light = empty_light;
        m.dark_man = dark_man;
        m.light_man = light_man;
        Ok(m)
    }

    /// Learn the session's colours from one photo of the start position.
    ///
    /// The photo must show a start position: 12 men on the dark squares of the
    /// three rows (or columns) at each end, the two middle ones empty. Which side
    /// is which is read from the photo itself (the lighter group is White), and
    /// returned. The result is this model moved to the photo's colours.
    ///
    /// Whether the photo is a start position is checked on the photo itself,
    /// not with this model's reading: under a new lamp or camera the palette may
    /// not know the session's colours yet (that is why we calibrate). The model
    /// learnt from the supposed start must read every square of the photo as the
    /// start position says, with margin; a board one move away from the start,
    /// or mid-game, mixes classes within a group and fails that test.
    pub fn calibrate(&self, bf: &BoardFeatures) -> Result<(ColourModel, Side)> {
        let mut best: Option<(f32, f32, Side, Vec<(usize, usize, ColourClass)>)> = None;
        for side in [Side::Top, Side::Bottom, Side::Left, Side::Right] {
            let labels = start_position(side, bf.top_left_dark);
            let mean_level = |cls: ColourClass| {
                let v: Vec<f32> = labels.iter().filter(|l| l.2 == cls).map(|l| bf.squares[l.0][l.1].f[0]).collect();
                v.iter().sum::<f32>() / v.len().max(1) as f32
            };
            let sep = mean_level(ColourClass::LightMan) - mean_level(ColourClass::DarkMan).max(mean_level(ColourClass::Empty));
            // Where this model already tells the sides apart (the seed's red against
            // yellow, even when a bright lamp makes the red men as light as the yellow):
            // the share of men whose colour it reads as this arrangement says.
            let men: Vec<_> = labels.iter().filter(|l| l.2 != ColourClass::Empty).collect();
            let agree = men
                .iter()
                .filter(|l| {
                    let rd = self.read(&bf.squares[l.0][l.1], true);
                    (rd.p_side(true) > rd.p_side(false)) == (l.2 == ColourClass::DarkMan)
                })
                .count() as f32
                / men.len().max(1) as f32;
            if best.as_ref().map_or(true, |b| sep + agree > b.0 + b.1) {
                best = Some((sep, agree, side, labels));
            }
        }
        let (sep, agree, side, labels) = best.ok_or_else(|| VisionError::Calibration("no arrangement".into()))?;
        if sep < START_MIN_SEPARATION && agree < 0.9 {
            return Err(VisionError::Calibration(format!(
                "not a start position (light/dark separation {sep:.2}, men of the expected colour {:.0}%)",
                agree * 100.0
            )));
        }
        let (m, still_odd) = self.learn_start_twice(bf, &labels)?;
        if still_odd.len() > CALIB_MAX_ODD {
            let list: Vec<String> = still_odd.iter().map(|(r, c, letter, p)| format!("({r},{c}) reads {letter} {p:.2}")).collect();
            return Err(VisionError::Calibration(format!("not a start position: {} (image grid) against the start", list.join(", "))));
        }
        Ok((m, side))
    }

    /// The colours of a start position another reader has vouched for (the learnt square model,
    /// white's men on `side`): learnt as [`ColourModel::calibrate`] learns them, leaving out the
    /// squares the first fit cannot explain, but without asking the colours to read the start
    /// back: this set's colours may not tell its men from its squares, which the model can.
    pub fn calibrate_as(&self, bf: &BoardFeatures, side: Side) -> Result<ColourModel> {
        Ok(self.learn_start_twice(bf, &start_position(side, bf.top_left_dark))?.0)
    }

    /// The colours of a start position (`labels`) learnt twice: first from every square, then
    /// without the squares that model could not explain (a glare spot, a piece knocked off its
    /// square), so that one odd square does not drag a class's colours. With the squares the
    /// model learnt still contradicts.
    fn learn_start_twice(&self, bf: &BoardFeatures, labels: &[(usize, usize, ColourClass)]) -> Result<(ColourModel, Vec<(usize, usize, char, f32)>)> {
        let first = self.learn_start(bf, labels, &[])?;
        let odd = first.contradictions(bf, labels);
        if odd.is_empty() {
            return Ok((first, odd));
        }
        let skip: Vec<(usize, usize)> = odd.iter().map(|o| (o.0, o.1)).collect();
        let second = self.learn_start(bf, labels, &skip)?;
        let left = second.contradictions(bf, labels);
        Ok((second, left))
    }

    /// This model moved to the colours of a start position (`labels`: its dark
    /// squares), leaving out the squares `skip`.
    fn learn_start(&self, bf: &BoardFeatures, labels: &[(usize, usize, ColourClass)], skip: &[(usize, usize)]) -> Result<ColourModel> {
        let mut learnt = match self.with_session_features(bf, labels, skip)? {
            Some(extended) => extended.learn_start_on(bf, labels, skip)?,
            None => self.learn_start_on(bf, labels, skip)?,
        };
        learnt.check_occupancy_cues(bf, labels);
        Ok(learnt)
    }

    /// The features this model does not use (a palette made for another set leaves out what
    /// did not help there: the wooden palette reads no colour) that tell this start position's
    /// classes apart by far: dark-blue men on dark-blue squares differ from them only in hue.
    /// Returns this model with those features added, their spread the session's own (never
    /// under `SESSION_FEATURE_FLOOR`) and uncorrelated with the rest, or `None` when no unused
    /// feature separates the start's classes. Palettes whose kings have colours of their own
    /// are left as they are: the start shows no king to learn a new feature's value from.
    fn with_session_features(&self, bf: &BoardFeatures, labels: &[(usize, usize, ColourClass)], skip: &[(usize, usize)]) -> Result<Option<ColourModel>> {
        if self.distinct_kings() {
            return Ok(None);
        }
        let kept = |r: usize, c: usize| !skip.contains(&(r, c));
        let values = |k: usize, cls: ColourClass| -> Vec<f32> {
            labels.iter().filter(|l| l.2 == cls && kept(l.0, l.1)).map(|l| bf.squares[l.0][l.1].f[k]).collect()
        };
        let light_values = |k: usize| -> Vec<f32> { light_squares(bf, skip).map(|(r, c)| bf.squares[r][c].f[k]).collect() };
        let mut extra = Vec::new();
        for k in (0..FEATURE_NAMES.len()).filter(|k| !self.idx.contains(k)) {
            let floor = SESSION_FEATURE_FLOOR[k];
            let classes = [values(k, ColourClass::Empty), values(k, ColourClass::DarkMan), values(k, ColourClass::LightMan)];
            let stats: Vec<(f32, f32)> = classes.iter().map(|v| mean_var(v, floor)).collect();
            let separation = |a: (f32, f32), b: (f32, f32)| (a.0 - b.0).abs() / ((a.1 + b.1) / 2.0).sqrt();
            let widest = separation(stats[0], stats[1]).max(separation(stats[0], stats[2])).max(separation(stats[1], stats[2]));
            if widest >= SESSION_FEATURE_SEPARATION {
                extra.push((k, [stats[0], stats[1], stats[2], mean_var(&light_values(k), floor)]));
            }
        }
        if extra.is_empty() {
            return Ok(None);
        }
        let mut m = self.clone();
        let grow = |class: &mut ClassModel, added: &[(f32, f32)]| {
            let d = class.mean.len();
            let d2 = d + added.len();
            for row in class.cov.iter_mut() {
                row.resize(d2, 0.0);
            }
            for (i, &(mean, var)) in added.iter().enumerate() {
                class.mean.push(mean);
                let mut row = vec![0.0; d2];
                row[d + i] = var;
                class.cov.push(row);
            }
        };
        let pick = |slot: usize| -> Vec<(f32, f32)> { extra.iter().map(|e| e.1[slot]).collect() };
        grow(&mut m.empty_dark, &pick(0));
        grow(&mut m.dark_man, &pick(1));
        grow(&mut m.light_man, &pick(2));
        grow(&mut m.empty_light, &pick(3));
        // More features make every distance longer: "like nothing known" keeps its meaning per feature.
        m.unknown_mahal2 *= (self.idx.len() + extra.len()) as f32 / self.idx.len() as f32;
        for (k, _) in &extra {
            m.features.push(FEATURE_NAMES[*k].to_string());
            m.ridge.push(SESSION_FEATURE_FLOOR[*k]);
        }
        m.prepare()?;
        Ok(Some(m))
    }

    fn learn_start_on(&self, bf: &BoardFeatures, labels: &[(usize, usize, ColourClass)], skip: &[(usize, usize)]) -> Result<ColourModel> {
        let kept = |r: usize, c: usize| !skip.contains(&(r, c));
        let sel = |cls: ColourClass| -> Vec<Vec<f32>> {
            labels.iter().filter(|l| l.2 == cls && kept(l.0, l.1)).map(|l| self.select(&bf.squares[l.0][l.1])).collect()
        };
        let light: Vec<Vec<f32>> = light_squares(bf, skip).map(|(r, c)| self.select(&bf.squares[r][c])).collect();
        let mut m = self.clone();
        m.name = format!("{} (calibrated)", self.name);
        m.empty_dark = self.empty_dark.shrunk(&sel(ColourClass::Empty), CALIB_N0)?;
        m.dark_man = self.dark_man.shrunk(&sel(ColourClass::DarkMan), CALIB_N0)?;
        m.light_man = self.light_man.shrunk(&sel(ColourClass::LightMan), CALIB_N0)?;
        m.empty_light = self.empty_light.shrunk(&light, CALIB_N0)?;
        // Kings are not on the board at the start: they move with their men
        // (the same lamp and camera shift both the same way).
        let shift = |from: &ClassModel, to: &ClassModel, king: &Option<ClassModel>| -> Result<Option<ClassModel>> {
            let Some(k) = king else { return Ok(None) };
            let mut k = k.clone();
            for i in 0..k.mean.len() {
                k.mean[i] += to.mean[i] - from.mean[i];
            }
            k.prepare(k.mean.len())?;
            Ok(Some(k))
        };
        m.dark_king = shift(&self.dark_man, &m.dark_man, &self.dark_king)?;
        m.light_king = shift(&self.light_man, &m.light_man, &self.light_king)?;
        Ok(m)
    }

    /// Follow the session (lamps, daylight, exposure) from a position the game accepted:
    /// `labels` gives every square's class in the image grid (kings of stacked sets as men).
    /// Each class takes a bounded step (`FOLLOW_RATE`) towards what its squares show now,
    /// never narrower than `calibrated`, the model this one started from.
    pub fn follow(&mut self, bf: &BoardFeatures, labels: &[[ColourClass; 8]; 8], calibrated: &ColourModel) -> Result<()> {
        let distinct = self.distinct_kings();
        let mut by_class: [Vec<Vec<f32>>; 6] = Default::default();
        for r in 0..8 {
            for c in 0..8 {
                let slot = match (labels[r][c], bf.is_dark(r, c)) {
                    (ColourClass::Empty, true) => 0,
                    (ColourClass::Empty, false) => 1,
                    (ColourClass::DarkMan, true) => 2,
                    (ColourClass::LightMan, true) => 3,
                    (ColourClass::DarkKing, true) => if distinct { 4 } else { 2 },
                    (ColourClass::LightKing, true) => if distinct { 5 } else { 3 },
                    // A piece on a light square or an unknown label teaches nothing.
                    _ => continue,
                };
                by_class[slot].push(self.select(&bf.squares[r][c]));
            }
        }
        let [empty_dark, empty_light, dark_man, light_man, dark_king, light_king] = &by_class;
        self.empty_dark.follow(empty_dark, FOLLOW_RATE, &calibrated.empty_dark)?;
        self.empty_light.follow(empty_light, FOLLOW_RATE, &calibrated.empty_light)?;
        self.dark_man.follow(dark_man, FOLLOW_RATE, &calibrated.dark_man)?;
        self.light_man.follow(light_man, FOLLOW_RATE, &calibrated.light_man)?;
        for (king, samples, floor) in [(&mut self.dark_king, dark_king, &calibrated.dark_king), (&mut self.light_king, light_king, &calibrated.light_king)] {
            if let (Some(k), Some(f)) = (king.as_mut(), floor.as_ref()) {
                k.follow(samples, FOLLOW_RATE, f)?;
            }
        }
        Ok(())
    }

    /// Squares of a start position (`labels`: its dark squares) this model does
    /// not read as the start says: (row, col, letter read, its probability).
    fn contradictions(&self, bf: &BoardFeatures, labels: &[(usize, usize, ColourClass)]) -> Vec<(usize, usize, char, f32)> {
        let mut out = Vec::new();
        for r in 0..8 {
            for c in 0..8 {
                let want = labels.iter().find(|l| l.0 == r && l.1 == c).map_or(ColourClass::Empty, |l| l.2);
                let rd = self.read(&bf.squares[r][c], bf.is_dark(r, c));
                let p = match want {
                    ColourClass::Empty => rd.probs[0],
                    man => rd.p_side(man == ColourClass::DarkMan),
                };
                if p < CALIB_MIN_AGREEMENT {
                    out.push((r, c, rd.class.letter(), rd.confidence));
                }
            }
        }
        out
    }
}

/// The light squares of the board (row, col) but those in `skip`: the empty light class of a start.
fn light_squares<'a>(bf: &'a BoardFeatures, skip: &'a [(usize, usize)]) -> impl Iterator<Item = (usize, usize)> + 'a {
    (0..8).flat_map(|r| (0..8).map(move |c| (r, c))).filter(move |&(r, c)| !bf.is_dark(r, c) && !skip.contains(&(r, c)))
}

/// Mean and variance of `v` (the variance never under `floor` squared).
fn mean_var(v: &[f32], floor: f32) -> (f32, f32) {
    let n = v.len().max(1) as f32;
    let mean = v.iter().sum::<f32>() / n;
    let var = v.iter().map(|x| (x - mean) * (x - mean)).sum::<f32>() / (n - 1.0).max(1.0);
    (mean, var.max(floor * floor))
}

/// Least spread (standard deviation) a feature learnt from the start position alone is given,
/// per feature of `FEATURE_NAMES`: a dozen squares under one lamp show less than a game will.
/// Levels are in board-contrast units, colours in 8-bit Lab units.
const SESSION_FEATURE_FLOOR: [f32; 9] = [0.08, 0.08, 3.0, 3.0, 0.05, 0.03, 0.03, 3.0, 3.0];

/// How far apart (in their pooled spread) two of the start's classes must be for a feature the
/// palette does not use to be learnt for the session.
const SESSION_FEATURE_SEPARATION: f32 = 3.0;

/// How far one accepted position moves a class of the session's colours (see `follow`).
const FOLLOW_RATE: f32 = 0.15;

/// How much lighter (in board-contrast units) the lighter side's men must be than the darker
/// side's men and the empty dark squares for a set the palette does not know to be named by
/// lightness (the lighter side is White). Red and white men, or green and yellow, differ by
/// 0.2 and less; whether the picture is a start position at all is decided afterwards, by
/// every square of it read as the start says with the model learnt from it.
const START_MIN_SEPARATION: f32 = 0.12;

/// A start position may have a square or two the camera cannot see well (glare,
/// a piece off its square); more is another position.
pub(crate) const CALIB_MAX_ODD: usize = 2;

/// How sure the learnt model must be of every square of a start position.
const CALIB_MIN_AGREEMENT: f32 = 0.8;

/// A learnt class whose own samples lie further than this (squared Mahalanobis distance per
/// feature) from it does not fit the palette's covariances: see `ClassModel::shrunk`.
const CALIB_OWN_MAHAL2_PER_FEATURE: f64 = 4.0;

/// Weight (in squares) of the palette when calibrating.
const CALIB_N0: f32 = 2.0;

/// Dark squares of a start position with White's home on `white`:
/// (row, col, class).
pub fn start_position(white: Side, top_left_dark: bool) -> Vec<(usize, usize, ColourClass)> {
    let mut v = Vec::new();
    for r in 0..8 {
        for c in 0..8 {
            if ((r + c) % 2 == 0) != top_left_dark {
                continue;
            }
            let k = match white {
                Side::Top | Side::Bottom => r,
                _ => c,
            };
            let white_near = matches!(white, Side::Top | Side::Left);
            let cls = if k <= 2 {
                if white_near { ColourClass::LightMan } else { ColourClass::DarkMan }
            } else if k >= 5 {
                if white_near { ColourClass::DarkMan } else { ColourClass::LightMan }
            } else {
                ColourClass::Empty
            };
            v.push((r, c, cls));
        }
    }
    v
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_four_colour_palette_answers_to_its_old_name_too() {
        let model = ColourModel::named("four-colour").unwrap();
        assert_eq!(model.name, "four-colour");
        assert_eq!(ColourModel::named("seed").unwrap().name, model.name);
        assert_eq!(ColourModel::named("four-color").unwrap().name, model.name);
        let err = ColourModel::named("plaid").unwrap_err().to_string();
        assert!(err.contains("wooden, four-colour") && !err.contains("seed"), "{err}");
    }

    /// A board whose every square looks exactly like its class's mean in `model`, with the dark
    /// men's `level` raised by `shift` (a lamp that lights the dark men more than before).
    fn board_like(model: &ColourModel, labels: &[[ColourClass; 8]; 8], shift: f32) -> BoardFeatures {
        let mut squares = [[SquareFeatures::default(); 8]; 8];
        for r in 0..8 {
            for c in 0..8 {
                let dark = (r + c) % 2 == 1;
                let class = match (labels[r][c], dark) {
                    (ColourClass::Empty, true) => &model.empty_dark,
                    (ColourClass::Empty, false) => &model.empty_light,
                    (ColourClass::DarkMan, _) => &model.dark_man,
                    _ => &model.light_man,
                };
                for (k, &i) in model.idx.iter().enumerate() {
                    squares[r][c].f[i] = class.mean[k];
                }
                if labels[r][c] == ColourClass::DarkMan {
                    squares[r][c].f[0] += shift;
                }
            }
        }
        BoardFeatures { squares, top_left_dark: false, contrast: 100.0 }
    }

    fn start_labels() -> [[ColourClass; 8]; 8] {
        let mut labels = [[ColourClass::Empty; 8]; 8];
        for (r, c, class) in start_position(Side::Bottom, false) {
            labels[r][c] = class;
        }
        labels
    }

    #[test]
    fn a_glare_streak_across_an_empty_dark_square_is_no_evidence_of_a_man() {
        // An empty dark square of the wooden set in the shade, streaks of glare across it (as
        // measured on a photo, the streaks a little broader): as dark as a dark man, and its
        // grooves score negative, the streaks being tangential to any circle around the centre.
        // Read without the one-sided rule, the dark man wins (0.74).
        let palette = ColourModel::wooden().unwrap();
        let mut sf = SquareFeatures::default();
        for (name, v) in [("level", -0.253), ("rel_level", 0.001), ("rel_a", -0.437), ("rim", 0.135), ("rings", -0.1), ("rings_med", -0.02)] {
            sf.f[FEATURE_NAMES.iter().position(|n| *n == name).unwrap()] = v;
        }
        assert_eq!(palette.read(&sf, true).class, ColourClass::Empty, "{:?}", palette.read(&sf, true));
        // The same square with a man's grooves is a man: the cue still counts where it is evidence.
        for name in ["rings", "rings_med"] {
            let k = palette.features.iter().position(|n| n == name).unwrap();
            sf.f[FEATURE_NAMES.iter().position(|n| *n == name).unwrap()] = palette.dark_man.mean[k];
        }
        assert_eq!(palette.read(&sf, true).class, ColourClass::DarkMan, "{:?}", palette.read(&sf, true));
    }

    #[test]
    fn occupancy_cues_that_misjudge_the_start_lose_their_say_for_the_session() {
        let palette = ColourModel::wooden().unwrap();
        let labels = start_labels();
        let clean = board_like(&palette, &labels, 0.0);
        let (kept, _) = palette.calibrate(&clean).unwrap();
        assert_eq!(kept.occupancy_cues, palette.occupancy_cues);
        // One man of the start (a corner of an oblique view) shows an empty square's rim and
        // grooves: in this session the cues cannot be trusted to overrule the colours.
        let mut faint = board_like(&palette, &labels, 0.0);
        let (r, c, _) = start_position(Side::Bottom, false).into_iter().find(|l| l.2 == ColourClass::DarkMan).unwrap();
        for name in ["rim", "rings", "rings_med"] {
            let k = palette.features.iter().position(|n| n == name).unwrap();
            faint.squares[r][c].f[FEATURE_NAMES.iter().position(|n| *n == name).unwrap()] = palette.empty_dark.mean[k];
        }
        let (dropped, _) = palette.calibrate(&faint).unwrap();
        assert!(dropped.occupancy_cues.is_empty() && dropped.occupancy_idx.is_empty(), "{:?}", dropped.occupancy_cues);
    }

    #[test]
    fn an_occupancy_cue_the_model_does_not_read_is_refused_by_name() {
        let mut v: serde_json::Value = serde_json::from_str(WOODEN_JSON).unwrap();
        v["occupancy_cues"] = serde_json::json!(["rim", "top_a"]);
        let err = ColourModel::from_json(&v.to_string()).unwrap_err().to_string();
        assert!(err.contains("occupancy cue \"top_a\""), "{err}");
    }

    #[test]
    fn an_empty_square_in_shade_is_told_by_its_plain_disc_cues_where_the_colours_are_unsure() {
        // An empty dark square in a shaded corner of a photo (Image_010 (0,0), as measured),
        // read with the wooden palette moved to a session whose start showed its empty squares
        // a little brighter and redder (calibration): darker and less red than those, the square
        // looks like a dark man to the colours; its rim and grooves are an empty square's.
        let session = |level_shift: f32, red_shift: f32, cues: bool| {
            let mut m = ColourModel::wooden().unwrap();
            let k = |name: &str| m.features.iter().position(|n| n == name).unwrap();
            let (level, red) = (k("level"), k("rel_a"));
            m.empty_dark.mean[level] += level_shift;
            m.empty_dark.mean[red] += red_shift;
            if !cues {
                m.occupancy_cues.clear();
            }
            m.prepare().unwrap();
            m
        };
        let mut sf = SquareFeatures::default();
        for (name, v) in [("level", -0.289), ("rel_level", -0.029), ("rel_a", -0.977), ("rim", 0.017), ("rings", 0.013), ("rings_med", 0.010)] {
            sf.f[FEATURE_NAMES.iter().position(|n| *n == name).unwrap()] = v;
        }
        let without = session(0.05, 0.5, false).read(&sf, true);
        assert_eq!(without.class, ColourClass::DarkMan, "{without:?}");
        assert!(without.probs[0] > 0.1, "the colours alone are unsure: {without:?}");
        let with = session(0.05, 0.5, true).read(&sf, true);
        assert_eq!(with.class, ColourClass::Empty, "{with:?}");
        // A man's rim and grooves on the same square: a man, the side still the colours'.
        let palette = ColourModel::wooden().unwrap();
        let mut man = sf;
        for name in ["rim", "rings", "rings_med"] {
            let k = palette.features.iter().position(|n| n == name).unwrap();
            man.f[FEATURE_NAMES.iter().position(|n| *n == name).unwrap()] = palette.dark_man.mean[k];
        }
        assert_eq!(session(0.05, 0.5, true).read(&man, true).class, ColourClass::DarkMan);
        // Where the colours are sure, the cues do not overrule them.
        let sure = session(0.15, 1.5, true).read(&sf, true);
        assert_eq!(sure.class, ColourClass::DarkMan, "{sure:?}");
    }

    #[test]
    fn following_the_session_moves_a_bounded_step_and_never_narrows_below_the_calibration() {
        let calibrated = ColourModel::wooden().unwrap();
        let labels = start_labels();
        let level = calibrated.idx.iter().position(|&i| i == 0).expect("the wooden palette reads the level");
        let before = calibrated.dark_man.mean[level];
        let board = board_like(&calibrated, &labels, 0.3);
        let mut model = calibrated.clone();
        model.follow(&board, &labels, &calibrated).unwrap();
        let step = model.dark_man.mean[level] - before;
        // Twelve dark men: a step of FOLLOW_RATE * 12 / 16 of the way, not the whole way.
        assert!((step - 0.3 * FOLLOW_RATE * 12.0 / 16.0).abs() < 1e-4, "step {step}");
        for (k, row) in model.dark_man.cov.iter().enumerate() {
            assert!(row[k] >= calibrated.dark_man.cov[k][k], "feature {k} narrowed");
        }
        // The classes nothing changed for stay where they were.
        assert!((model.light_man.mean[level] - calibrated.light_man.mean[level]).abs() < 1e-4);
        // Position after position, the model arrives where the session is.
        for _ in 0..60 {
            model.follow(&board, &labels, &calibrated).unwrap();
        }
        assert!((model.dark_man.mean[level] - (before + 0.3)).abs() < 0.01, "{}", model.dark_man.mean[level]);
    }

    #[test]
    fn a_start_told_apart_only_by_a_colour_the_palette_does_not_read_still_calibrates() {
        let palette = ColourModel::wooden().unwrap();
        assert!(!palette.features.iter().any(|f| f == "rel_b"), "the wooden palette reads no hue: that is what this test is about");
        let labels = start_labels();
        // Dark men that look like empty dark squares in every feature the palette reads, and
        // differ from them only in hue (dark-blue men on dark-blue squares), with a little
        // spread so that no class is a single point.
        let mut board = board_like(&palette, &labels, 0.0);
        let rel_b = FEATURE_NAMES.iter().position(|&n| n == "rel_b").unwrap();
        let mut wobble = 0.0f32;
        for r in 0..8 {
            for c in 0..8 {
                wobble = (wobble + 0.37) % 1.0;
                if labels[r][c] == ColourClass::DarkMan {
                    for (k, &i) in palette.idx.iter().enumerate() {
                        board.squares[r][c].f[i] = palette.empty_dark.mean[k];
                    }
                    board.squares[r][c].f[rel_b] = 10.0 + wobble;
                } else {
                    board.squares[r][c].f[rel_b] = wobble - 0.5;
                }
            }
        }
        let skip: Vec<(usize, usize)> = Vec::new();
        let start: Vec<_> = start_position(Side::Bottom, false);
        let palette_features_only = palette.learn_start_on(&board, &start, &skip).unwrap();
        assert!(
            palette_features_only.contradictions(&board, &start).len() > CALIB_MAX_ODD,
            "without the session's own features the start cannot be told apart"
        );
        let (model, _) = palette.calibrate(&board).expect("the hue is learnt from the start");
        assert!(model.features.iter().any(|f| f == "rel_b"), "{:?}", model.features);
        for r in 0..8 {
            for c in 0..8 {
                assert_eq!(model.read(&board.squares[r][c], board.is_dark(r, c)).class, labels[r][c], "square ({r},{c})");
            }
        }
        // The learnt model is a palette file like any other (calibration files keep it).
        let again = ColourModel::from_json(&model.to_json()).unwrap();
        assert_eq!(again.features, model.features);
    }

    #[test]
    fn a_dark_man_under_a_new_lamp_reads_right_once_followed() {
        let calibrated = ColourModel::wooden().unwrap();
        let labels = start_labels();
        // Dark men now nearly as light as the light squares: read wrong at first.
        let board = board_like(&calibrated, &labels, 0.9);
        let wrong = (0..8).flat_map(|r| (0..8).map(move |c| (r, c))).filter(|&(r, c)| labels[r][c] == ColourClass::DarkMan);
        let misread = |m: &ColourModel| wrong.clone().filter(|&(r, c)| m.read(&board.squares[r][c], true).class != ColourClass::DarkMan).count();
        assert!(misread(&calibrated) > 0, "the shift must matter for this test to mean anything");
        let mut model = calibrated.clone();
        for _ in 0..20 {
            model.follow(&board, &labels, &calibrated).unwrap();
        }
        assert_eq!(misread(&model), 0);
    }
}
