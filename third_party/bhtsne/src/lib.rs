//! # bhtsne
//!
//! `bhtsne` contains the implementations of both the
//! vanilla version of the t-SNE algorithm and the Barnes-Hut accelerated version.
//!
//! At the moment the only supported metric is the **euclidean distance**.
//!
//!
//! # Example
//!
//! ```
//! use bhtsne;
//!
//! const N: usize = 150;         // Number of vectors to embed.
//! const D: usize = 4;           // The dimensionality of the
//!                               // original space.
//! const THETA: f32 = 0.5;       // Parameter used by the Barnes-Hut algorithm.
//!                               // When set to 0.0 the exact t-SNE version is
//!                               // used instead.
//!    
//! const PERPLEXITY: f32 = 10.0; // Perplexity of the conditional distribution.
//! const MAX_ITER: u64 = 2000;   // Number of fitting iterations.
//! const NO_DIMS: usize = 2;     // Dimensionality of the embedded space.
//!
//! // Loads the data from a csv file skipping the first row,
//! // treating it as headers and skipping the 5th column,
//! // treating it as a class label.
//! // Do note that you can also use f64s.
//! let mut data: Vec<f32> = bhtsne::load_csv("iris.csv", true, Some(4));
//!
//! // The vector where the bi-dimensional embedding
//! // will be stored.
//! let mut y: Vec<f32> = vec![0.0; N * NO_DIMS];
//!
//! // Runs t-SNE.
//! bhtsne::run(
//!     &mut data, N, D, &mut y, NO_DIMS, PERPLEXITY, THETA, false, MAX_ITER, 250, 250,
//! );
//!
//! // Writes the embedding to a csv file.
//! bhtsne::write_csv("iris_embedding.csv", y, NO_DIMS);
//! ```
mod tsne;
pub(crate) use num_traits::{cast::AsPrimitive, cast::NumCast, Float};
use rand_distr::{Distribution, Normal};
use tsne::*;

#[cfg(feature = "csv")]
use std::fs::File;

/// Performs t-SNE.
///
/// # Arguments
///
/// * `x` - `&mut [T]` containing the data to embed. `T` must implement `num_traits::Float`.
///
/// * `n`- `usize` that represents the number of `d`-dimensional points in `x`.
///
/// * `d` - `usize` that represents the dimension of each point.
///
/// * `y` - `&mut [T]` where to store the resultant embedding.
///
/// * `no_dims` - `usize` that represents the dimension of the embedded points.
///
/// * `perplexity` - `T` representing perplexity value.
///
/// * `theta` - `T` representing the theta value. If `theta` is set to `0.0` the __exact__ version of t-SNE will be used,
/// if set to greater values the __Barnes-Hut__ version will be used instead.
///
/// * `skip_random_init` - `bool` stating whether to skip the random initialization of `y`.
/// In most cases it should be set to `false`.
///
/// * `max_iter` -` u64` indicating the maximum number of fitting iterations.
///
/// * `stop_lying_iter` - `u64` indicating the number of the iteration after which the P distribution
/// values become _“true“_.
///
/// * `mom_switch_iter` - `u64` indicating the number of the iteration after which the momentum's value is
/// set to its final value.
pub fn run<T>(
    x: &mut [T],
    n: usize,
    d: usize,
    y: &mut [T],
    no_dims: usize,
    perplexity: T,
    theta: T,
    skip_random_init: bool,
    max_iter: u64,
    stop_lying_iter: u64,
    mom_switch_iter: u64,
) where
    T: Float
        + NumCast
        + AsPrimitive<usize>
        + std::fmt::Display
        + std::ops::AddAssign
        + std::ops::SubAssign
        + std::ops::MulAssign
        + std::ops::DivAssign
        + std::iter::Sum
        + Send
        + Sync,
{
    run_with_progress(
        x,
        n,
        d,
        y,
        no_dims,
        perplexity,
        theta,
        skip_random_init,
        max_iter,
        stop_lying_iter,
        mom_switch_iter,
        Steps::default(),
        &mut |_| true,
    );
}

/// How each gradient step is sized. (Somna patch: openTSNE's rule.)
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Steps<T> {
    /// The learning rate; `None` takes openTSNE's rule, n / exaggeration: n / 12 while
    /// the P-values are exaggerated, n after.
    pub learning_rate: Option<T>,
    /// Each point's update is scaled down to at most this length (openTSNE's
    /// `max_step_norm`), so no point shoots off at a high learning rate; `None` leaves
    /// updates as they are.
    pub max_step_norm: Option<T>,
    /// The momentum until `mom_switch_iter` (0.8 after it): 0.4.1's 0.5, openTSNE's 0.8.
    pub early_momentum: T,
    /// How a gain shrinks while its gradient keeps its sign.
    pub gain_decay: GainDecay,
}

/// How a gain shrinks while its coordinate's gradient keeps its sign (it grows by 0.2
/// when the sign flips, in both).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum GainDecay {
    /// 0.4.1's: times 0.8, never below 0.01.
    Clamped,
    /// openTSNE's: times 0.8 plus 0.01, so a steady gain settles at 0.05.
    Additive,
}

impl<T: Float> Default for Steps<T> {
    /// bhtsne 0.4.1's own: a fixed learning rate of 200, no clipping, an early momentum
    /// of 0.5 and clamped gains.
    fn default() -> Self {
        Self {
            learning_rate: T::from(200.0),
            max_step_norm: None,
            early_momentum: T::from(0.5).unwrap(),
            gain_decay: GainDecay::Clamped,
        }
    }
}

/// Like [`run`], calling `on_iter(iteration)` after every gradient step; returning `false`
/// stops the optimisation early (the embedding holds the last completed step). Returns the
/// number of completed iterations. Steps are sized by `steps`. (Somna patch: progress
/// reporting and cancellation; the step rule.)
#[allow(clippy::too_many_arguments)]
pub fn run_with_progress<T>(
    x: &mut [T],
    n: usize,
    d: usize,
    y: &mut [T],
    no_dims: usize,
    perplexity: T,
    theta: T,
    skip_random_init: bool,
    max_iter: u64,
    stop_lying_iter: u64,
    mom_switch_iter: u64,
    steps: Steps<T>,
    on_iter: &mut dyn FnMut(u64) -> bool,
) -> u64
where
    T: Float
        + NumCast
        + AsPrimitive<usize>
        + std::fmt::Display
        + std::ops::AddAssign
        + std::ops::SubAssign
        + std::ops::MulAssign
        + std::ops::DivAssign
        + std::iter::Sum
        + Send
        + Sync,
{
    // Determine whether we are using the exact algorithm.
    if n - 1 < 3 * perplexity.as_() {
        panic!(
            "error: perplexity= {} too large for the number of data points.\n",
            perplexity
        );
    }
    let exact: bool = theta == T::zero();

    // Set learning parameters.
    let mut momentum: T = steps.early_momentum;
    let final_momentum: T = T::from(0.8).unwrap();
    let exaggeration: T = T::from(12.0).unwrap();
    let n_t: T = T::from(n).unwrap();
    let mut eta: T = steps.learning_rate.unwrap_or(n_t / exaggeration);

    let mut dy: Vec<T> = vec![T::zero(); n * no_dims];
    let mut uy: Vec<T> = vec![T::zero(); n * no_dims];
    let mut gains: Vec<T> = vec![T::one(); n * no_dims];

    // Normalizing input data to prevent numerical problems.
    zero_mean(x, n, d);

    let mut max_x: T = T::zero();
    for el in &x[..] {
        let el_abs = el.abs();
        if el_abs > max_x {
            max_x = el_abs;
        }
    }
    for el in &mut x[..] {
        *el /= max_x;
    }

    let mut p: Vec<T> = Vec::new();
    let mut row_p: Vec<usize> = Vec::new();
    let mut col_p: Vec<usize> = Vec::new();
    let mut val_p: Vec<T> = Vec::new();

    if exact {
        p = vec![T::zero(); n * n];
        // Compute similarities.
        compute_fixed_gaussian_perplexity(x, n, d, &mut p, perplexity);

        // Symmetrize input similarities.
        let mut nn: usize = 0;
        for _n in 0..n {
            let mut mn: usize = (_n + 1) * n;
            for m in (_n + 1)..n {
                let _p = p[mn + _n];
                p[nn + m] += _p;
                p[mn + _n] = p[nn + m];
                mn += n;
            }
            nn += n;
        }

        let mut sum_p: T = T::zero();
        for el in &p[..] {
            sum_p += *el;
        }
        for el in &mut p[..] {
            *el /= sum_p;
        }
    } else {
        let k: usize = (T::from(3.0).unwrap() * perplexity).as_();
        row_p = vec![0; n + 1];
        col_p = vec![0; n * k];
        val_p = vec![T::zero(); n * k];
        // Compute input similarities for approximate algorithm.
        compute_gaussian_perplexity(x, n, d, &mut row_p, &mut col_p, &mut val_p, perplexity, k);

        symmetrize_matrix(&mut row_p, &mut col_p, &mut val_p, n);

        let mut sum_p: T = T::zero();

        for el in val_p.iter().take(row_p[n]) {
            sum_p += *el;
        }
        for el in val_p.iter_mut().take(row_p[n]) {
            *el /= sum_p;
        }
    }

    // Lie about the P values.
    if exact {
        for el in &mut p[..] {
            *el *= T::from(12.0).unwrap();
        }
    } else {
        for el in val_p.iter_mut().take(row_p[n]) {
            *el *= T::from(12.0).unwrap();
        }
    }

    // Initialize solution randomly.
    if !skip_random_init {
        // Generates a Gaussian random number.
        let n_distr = Normal::new(0.0, 1e-4).unwrap();

        for el in &mut y[..] {
            *el = T::from(n_distr.sample(&mut rand::thread_rng()) * 0.0001).unwrap();
        }
    }

    // Main training loop.
    for iter in 0..max_iter {
        // Compute (approximate) gradient.
        if exact {
            compute_gradient(&mut p, y, n, no_dims, &mut dy);
        } else {
            compute_gradient_approx(
                &mut row_p, &mut col_p, &mut val_p, y, n, no_dims, &mut dy, theta,
            );
        }

        // Update gains.
        let (grow, shrink, floor) = (
            T::from(0.2).unwrap(),
            T::from(0.8).unwrap(),
            T::from(0.01).unwrap(),
        );
        for (i, el) in gains.iter_mut().enumerate() {
            *el = if dy[i].signum() != uy[i].signum() {
                *el + grow
            } else {
                match steps.gain_decay {
                    GainDecay::Clamped => (*el * shrink).max(floor),
                    GainDecay::Additive => *el * shrink + floor,
                }
            }
        }

        // Perform gradient update with momentum and gains.
        for i in 0..(n * no_dims) {
            uy[i] = momentum * uy[i] - eta * gains[i] * dy[i];
        }
        if let Some(max) = steps.max_step_norm {
            clip_rows(&mut uy, no_dims, max);
        }
        for i in 0..(n * no_dims) {
            y[i] += uy[i];
        }

        // Make solution zero mean.
        zero_mean(y, n, no_dims);

        // Stop lying about the P-values after a while, and switch momentum.
        if iter == stop_lying_iter {
            if exact {
                for el in &mut p[..] {
                    *el /= T::from(12.0).unwrap();
                }
            } else {
                for el in val_p.iter_mut().take(row_p[n]) {
                    *el /= T::from(12.0).unwrap();
                }
            }
            eta = steps.learning_rate.unwrap_or(n_t);
        }
        if iter == mom_switch_iter {
            momentum = final_momentum;
        }
        if !on_iter(iter) {
            return iter + 1;
        }
    }
    max_iter
}

/// Scales each `dims`-long row of `v` whose length is above `max` down to length `max`.
fn clip_rows<T: Float>(v: &mut [T], dims: usize, max: T) {
    for row in v.chunks_mut(dims) {
        let norm = row.iter().fold(T::zero(), |acc, x| acc + *x * *x).sqrt();
        if norm > max {
            let scale = max / norm;
            row.iter_mut().for_each(|x| *x = *x * scale);
        }
    }
}

/// Loads data from a csv file.
///
/// # Arguments
///
/// * `file_path` -`&str` that specifies the path of the file to load the data from.
///
/// * `has_headers` - `bool` value that specifies whether the file has headers or not. if `has_headers`
/// is set to `true` the function will not parse the first line of the .csv file.
///
/// * `skip_col` - `Option<usize>` that may specify a column of the file that must not be parsed.
#[cfg(feature = "csv")]
pub fn load_csv<T>(file_path: &str, has_headers: bool, skip_col: Option<usize>) -> Vec<T>
where
    T: Float + std::str::FromStr + std::fmt::Debug,
    <T as std::str::FromStr>::Err: std::fmt::Debug,
{
    // Declaring the vectors where we'll put the parsed data.
    let mut data: Vec<T> = Vec::new();
    // Opening the file.
    let file = match File::open(file_path) {
        Ok(file) => file,
        Err(e) => panic!("error: tsne couldn't open the .csv file, {}", e),
    };
    let mut rdr = csv::ReaderBuilder::new()
        .has_headers(has_headers)
        .from_reader(file);

    match skip_col {
        Some(tc) => {
            for result in rdr.records() {
                let record = match result {
                    Ok(res) => res,
                    Err(e) => panic!("error: while parsing records, {}", e),
                };
                for i in 0..record.len() {
                    if i != tc {
                        data.push(record.get(i).unwrap().parse().unwrap())
                    }
                }
            }
        }
        None => {
            for result in rdr.records() {
                let record = match result {
                    Ok(res) => res,
                    Err(e) => panic!("error: while parsing records, {}", e),
                };
                for i in 0..record.len() {
                    data.push(record.get(i).unwrap().parse().unwrap())
                }
            }
        }
    }
    data
}

/// Writes the embedding to a csv file.
///
/// # Arguments
///
/// * `file_path` - `&str` that specifies the path of the file to write the embedding to.
///
/// * `embedding`- `&mut [T]` where the embedding is stored. `T` must implement `num_traits::Float`.
///
/// * `dims` - `usize` representing the dimension of the embedding's space. If the emdedding's space has more than three or less than two dimensions
/// the resultant file won't have headers.
#[cfg(feature = "csv")]
pub fn write_csv<T>(file_path: &str, embedding: Vec<T>, dims: usize)
where
    T: Float + std::fmt::Display,
{
    let mut wtr: csv::Writer<File> = match csv::Writer::from_path(file_path) {
        Ok(writer) => writer,
        Err(e) => panic!("error: during the opening of the file : {}", e),
    };

    // String-ify the embedding.
    let to_write: Vec<String> = embedding
        .iter()
        .map(|el| el.to_string())
        .collect::<Vec<String>>();

    // Write headers.
    match dims {
        2 => match wtr.write_record(&["x", "y"]) {
            Ok(_) => (),
            Err(e) => panic!("error: during write, {}", e),
        },
        3 => match wtr.write_record(&["x", "y", "z"]) {
            Ok(_) => (),
            Err(e) => panic!("error: during write, {}", e),
        },
        _ => (),
    }
    // Write records.
    for chunk in to_write.chunks(dims) {
        match wtr.write_record(chunk) {
            Ok(_) => (),
            Err(e) => panic!("error: during write, {}", e),
        }
    }
    // Final flush.
    match wtr.flush() {
        Ok(_) => (),
        Err(e) => panic!("error: during flush, {}", e),
    }
}

#[cfg(test)]
mod test {
    use super::tsne::compute_gaussian_perplexity;

    /// Spread-out points (neighbour distances well above 1): the entropy at beta = 1 is
    /// below log(perplexity), so the search must lower beta. 0.4.1 made it negative here.
    #[test]
    fn perplexity_search_keeps_beta_positive_and_rows_normalised() {
        let n = 200;
        let d = 3;
        let mut x: Vec<f64> = (0..n * d)
            .map(|i| ((i * 7919 + 13) % 1009) as f64 * 0.05)
            .collect();
        let perplexity = 30.0;
        let k = 90;
        let mut row_p = vec![0; n + 1];
        let mut col_p = vec![0; n * k];
        let mut val_p = vec![0.0; n * k];
        compute_gaussian_perplexity(&mut x, n, d, &mut row_p, &mut col_p, &mut val_p, perplexity, k);
        for i in 0..n {
            let row = &val_p[row_p[i]..row_p[i + 1]];
            assert!(row.iter().all(|p| p.is_finite() && *p >= 0.0), "row {}: {:?}", i, row);
            let sum: f64 = row.iter().sum();
            assert!((sum - 1.0).abs() < 1e-6, "row {} sums to {}", i, sum);
            // Effective number of neighbours close to the asked perplexity.
            let h: f64 = -row.iter().filter(|p| **p > 0.0).map(|p| p * p.ln()).sum::<f64>();
            assert!((h.exp() - perplexity).abs() < 1.0, "row {i}: perplexity {}", h.exp());
        }
    }

    #[test]
    fn run_with_progress_stops_when_asked() {
        let n = 120;
        let mut x: Vec<f64> = (0..n * 4).map(|i| ((i * 31 % 97) as f64) / 97.0).collect();
        let mut y = vec![0.0; n * 2];
        let mut seen = 0;
        let done = super::run_with_progress(
            &mut x, n, 4, &mut y, 2, 10.0, 0.5, false, 1000, 250, 250,
            super::Steps::default(),
            &mut |it| {
                seen = it + 1;
                it < 9
            },
        );
        assert_eq!(done, 10);
        assert_eq!(seen, 10);
        assert!(y.iter().all(|v| v.is_finite()));
    }

    #[test]
    fn clip_rows_shortens_only_the_rows_longer_than_the_bound() {
        let mut v: Vec<f64> = vec![3.0, 4.0, 0.3, 0.4, -6.0, 8.0];
        super::clip_rows(&mut v, 2, 1.0);
        let expect = [0.6, 0.8, 0.3, 0.4, -0.6, 0.8];
        for (a, b) in v.iter().zip(expect) {
            assert!((a - b).abs() < 1e-12, "{:?}", v);
        }
    }

    /// The longest move of a point in iteration `at` (0-based) of a run of 200 points.
    fn longest_step(steps: super::Steps<f64>, at: u64) -> f64 {
        let n = 200;
        let run = |iters: u64| {
            let mut x: Vec<f64> = (0..n * 4).map(|i| ((i * 31 % 97) as f64) / 97.0).collect();
            let mut y: Vec<f64> = (0..n * 2).map(|i| ((i * 17 % 89) as f64) * 1e-3).collect();
            super::run_with_progress(
                &mut x, n, 4, &mut y, 2, 10.0, 0.5, true, iters, 20, 20, steps,
                &mut |_| true,
            );
            y
        };
        let (before, after) = (run(at), run(at + 1));
        before
            .chunks(2)
            .zip(after.chunks(2))
            .map(|(a, b)| ((a[0] - b[0]).powi(2) + (a[1] - b[1]).powi(2)).sqrt())
            .fold(0.0, f64::max)
    }

    #[test]
    fn a_step_bound_keeps_every_move_within_it_at_a_high_learning_rate() {
        let fast = super::Steps {
            learning_rate: Some(1e5),
            max_step_norm: None,
            early_momentum: 0.8,
            gain_decay: super::GainDecay::Additive,
        };
        let bounded = super::Steps {
            max_step_norm: Some(0.05),
            ..fast
        };
        assert!(longest_step(fast, 30) > 0.1, "the rate alone moves points far");
        // Re-centring moves every point by the mean step, itself within the bound.
        let longest = longest_step(bounded, 30);
        assert!(longest <= 0.1 + 1e-9, "{}", longest);
        // openTSNE's rule (n / 12, then n) runs and stays finite.
        let auto = super::Steps {
            learning_rate: None,
            max_step_norm: Some(5.0),
            early_momentum: 0.8,
            gain_decay: super::GainDecay::Additive,
        };
        assert!(longest_step(auto, 30).is_finite());
    }
}
