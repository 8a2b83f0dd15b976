//! Statistics for the gate and the report: Kendall tau-b (metric rankings against the
//! reference), exact McNemar (paired binary verdicts), Holm's correction (several cells tested),
//! a paired bootstrap (continuous scores), mean / std / max across systems, and the five-number
//! summary of a sample.

use statrs::distribution::{Binomial, DiscreteCDF};
use statrs::statistics::{Data, OrderStatistics};

/// Kendall's tau-b of two paired samples, as `scipy.stats.kendalltau`; `None` when undefined
/// (fewer than two points, different lengths, or a constant sample).
pub fn kendall_tau_b(x: &[f64], y: &[f64]) -> Option<f64> {
    if x.len() != y.len() || x.len() < 2 || x.iter().chain(y).any(|v| v.is_nan()) {
        return None;
    }
    let (tau, _) = kendalls::tau_b_with_comparator(x, y, |a, b| a.total_cmp(b)).ok()?;
    tau.is_finite().then_some(tau)
}

/// Two-sided exact McNemar p-value from the discordant counts `b` and `c`: the binomial test of
/// `min(b, c)` in `b + c` trials with p = 1/2, as `scipy.stats.binomtest(b, b + c).pvalue`.
pub fn mcnemar_exact(b: u64, c: u64) -> f64 {
    let n = b + c;
    if n == 0 || b == c {
        return 1.0;
    }
    let tail = Binomial::new(0.5, n)
        .map(|d| d.cdf(b.min(c)))
        .unwrap_or(1.0);
    (2.0 * tail).min(1.0)
}

/// Holm-Bonferroni adjusted p-values, in input order (step-down, monotone, capped at 1).
pub fn holm(p_values: &[f64]) -> Vec<f64> {
    let m = p_values.len();
    let mut order: Vec<usize> = (0..m).collect();
    order.sort_by(|&a, &b| p_values[a].total_cmp(&p_values[b]));
    let mut adjusted = vec![0.0; m];
    let mut running = 0.0f64;
    for (rank, &index) in order.iter().enumerate() {
        running = running.max(((m - rank) as f64 * p_values[index]).min(1.0));
        adjusted[index] = running;
    }
    adjusted
}

/// Result of a paired bootstrap of candidate minus baseline scores.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Bootstrap {
    /// Observed mean difference (candidate - baseline).
    pub mean_difference: f64,
    /// 2.5th percentile of the resampled mean differences.
    pub ci_low: f64,
    /// 97.5th percentile of the resampled mean differences.
    pub ci_high: f64,
    /// One-sided p-value for "the candidate is worse": (1 + resamples whose mean difference is
    /// >= 0) / (1 + resamples), the add-one percentile estimate.
    pub p_worse: f64,
}

/// Paired bootstrap over items, deterministic for a seed; `None` without paired items.
pub fn paired_bootstrap(
    baseline: &[f64],
    candidate: &[f64],
    resamples: usize,
    seed: u64,
) -> Option<Bootstrap> {
    let n = baseline.len();
    if n == 0 || n != candidate.len() || resamples == 0 {
        return None;
    }
    let differences: Vec<f64> = candidate.iter().zip(baseline).map(|(c, b)| c - b).collect();
    let mean_difference = differences.iter().sum::<f64>() / n as f64;
    let mut rng = fastrand::Rng::with_seed(seed);
    let mut means: Vec<f64> = (0..resamples)
        .map(|_| (0..n).map(|_| differences[rng.usize(..n)]).sum::<f64>() / n as f64)
        .collect();
    means.sort_by(f64::total_cmp);
    let percentile =
        |q: f64| means[((q * (resamples - 1) as f64).round() as usize).min(resamples - 1)];
    let not_worse = means.iter().filter(|&&m| m >= 0.0).count();
    Some(Bootstrap {
        mean_difference,
        ci_low: percentile(0.025),
        ci_high: percentile(0.975),
        p_worse: (1 + not_worse) as f64 / (1 + resamples) as f64,
    })
}

/// Mean, population standard deviation and maximum; `None` for no values.
pub fn mean_std_max(values: &[f64]) -> Option<(f64, f64, f64)> {
    if values.is_empty() {
        return None;
    }
    let n = values.len() as f64;
    let mean = values.iter().sum::<f64>() / n;
    let variance = values.iter().map(|v| (v - mean).powi(2)).sum::<f64>() / n;
    let max = values.iter().copied().fold(f64::NEG_INFINITY, f64::max);
    Some((mean, variance.sqrt(), max))
}

/// Minimum, first quartile, median, third quartile and maximum of a sample; `None` when it is
/// empty or holds a NaN.
///
/// The quartiles are Hyndman and Fan's type 8 (median-unbiased; R's `quantile(type = 8)`,
/// numpy's `quantile(method="median_unbiased")`), as `statrs` computes them: with `n` sorted
/// values `x[1..=n]` and `h = (n + 1/3) p + 1/3`, the quantile is `x[⌊h⌋] + (h - ⌊h⌋)
/// (x[⌊h⌋ + 1] - x[⌊h⌋])`, clamped to the minimum and maximum.
pub fn five_numbers(values: &[f64]) -> Option<[f64; 5]> {
    if values.is_empty() || values.iter().any(|v| v.is_nan()) {
        return None;
    }
    let mut data = Data::new(values.to_vec());
    Some([0.0, 0.25, 0.5, 0.75, 1.0].map(|p| data.quantile(p)))
}

/// A p-value with four decimals, or in scientific notation when smaller than 0.0001.
pub fn format_p(p: f64) -> String {
    if p < 1e-4 {
        format!("{p:.1e}")
    } else {
        format!("{p:.4}")
    }
}

/// An accuracy (a fraction) as every text a person reads prints it (stdout, the comment, the
/// step summary, annotations, JUnit messages, the `score` step output): points with one decimal,
/// `0.8425` is `84.2`. The one rounding rule of accuracies; machine outputs keep the fraction.
pub fn format_points(fraction: f64) -> String {
    format!("{:.1}", 100.0 * fraction)
}

/// A change in points as every text a person reads prints it: signed, one decimal (`-1.3`).
pub fn format_delta(points: f64) -> String {
    format!("{points:+.1}")
}

/// A fraction as [`format_points`] prints it, parsed back, so a delta computed from two of them
/// adds up as printed.
pub fn shown_points(fraction: f64) -> f64 {
    format_points(fraction).parse().unwrap_or(100.0 * fraction)
}

/// The change from `before` to `after` (fractions) in points, as the printed values make it:
/// `84.2 -> 82.9` is `-1.3`, whatever the unrounded accuracies were.
pub fn shown_delta(before: f64, after: f64) -> f64 {
    shown_points(after) - shown_points(before)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn close(a: f64, b: f64) -> bool {
        (a - b).abs() < 1e-12
    }

    #[test]
    fn tau_b_matches_scipy() {
        // scipy.stats.kendalltau documentation example.
        let tau = kendall_tau_b(&[12.0, 2.0, 1.0, 12.0, 2.0], &[1.0, 4.0, 7.0, 1.0, 0.0]).unwrap();
        assert!(close(tau, -0.47140452079103173), "{tau}");
        assert!(close(
            kendall_tau_b(&[1.0, 2.0, 3.0], &[10.0, 20.0, 30.0]).unwrap(),
            1.0
        ));
        assert!(close(
            kendall_tau_b(&[1.0, 2.0, 3.0], &[3.0, 2.0, 1.0]).unwrap(),
            -1.0
        ));
        // Ties in both samples: 4 concordant, 0 discordant, 1 pair tied only in x, 1 only in y:
        // 4 / sqrt(5 * 5) = 0.8.
        let tau = kendall_tau_b(&[1.0, 1.0, 2.0, 3.0], &[1.0, 2.0, 2.0, 3.0]).unwrap();
        assert!(close(tau, 0.8), "{tau}");
        assert_eq!(kendall_tau_b(&[1.0, 1.0], &[1.0, 2.0]), None);
        assert_eq!(kendall_tau_b(&[1.0], &[1.0]), None);
    }

    #[test]
    fn mcnemar_matches_the_binomial_test() {
        assert_eq!(mcnemar_exact(0, 0), 1.0);
        assert_eq!(mcnemar_exact(3, 3), 1.0);
        assert!(close(mcnemar_exact(1, 9), 0.021484375));
        assert!(close(mcnemar_exact(9, 1), 0.021484375));
        assert!(close(mcnemar_exact(0, 10), 0.001953125));
        // 2 * P[X <= 480], X ~ Bin(1000, 1/2), summed exactly in rational arithmetic
        // (Python fractions): 0.21744829320414094.
        let p = mcnemar_exact(480, 520);
        assert!((p - 0.21744829320414094).abs() < 1e-9, "{p}");
        assert!(mcnemar_exact(40_000, 60_000) < 1e-300 || mcnemar_exact(40_000, 60_000) == 0.0);
    }

    #[test]
    fn holm_matches_statsmodels() {
        let adjusted = holm(&[0.01, 0.04, 0.03, 0.005]);
        for (got, want) in adjusted.iter().zip([0.03, 0.06, 0.06, 0.02]) {
            assert!(close(*got, want), "{adjusted:?}");
        }
        assert_eq!(holm(&[0.5, 0.9]), vec![1.0, 1.0]);
        assert_eq!(holm(&[0.2, 0.01]), vec![0.2, 0.02]);
        assert!(holm(&[]).is_empty());
    }

    #[test]
    fn bootstrap_is_deterministic_and_detects_drops() {
        let same = vec![1.0; 50];
        let result = paired_bootstrap(&same, &same, 1000, 7).unwrap();
        assert_eq!(result.mean_difference, 0.0);
        assert!(result.ci_low <= 0.0 && result.ci_high >= 0.0);
        let baseline: Vec<f64> = (0..200)
            .map(|i| if i % 10 == 0 { 0.0 } else { 1.0 })
            .collect();
        let candidate = vec![0.0; 200];
        let drop = paired_bootstrap(&baseline, &candidate, 1000, 7).unwrap();
        assert!(drop.p_worse < 0.01 && drop.ci_high < 0.0, "{drop:?}");
        assert_eq!(
            drop,
            paired_bootstrap(&baseline, &candidate, 1000, 7).unwrap()
        );
    }

    #[test]
    fn five_numbers_are_hyndman_fan_type_8() {
        // n = 4, p = 1/4: h = (4 + 1/3) / 4 + 1/3 = 17/12, so Q1 = 1 + 5/12 (2 - 1); the same
        // values as numpy.quantile(x, p, method="median_unbiased") and R's type 8.
        let check = |values: &[f64], want: [f64; 5]| {
            let got = five_numbers(values).unwrap();
            for (g, w) in got.iter().zip(want) {
                assert!((g - w).abs() < 1e-12, "{values:?}: {got:?} vs {want:?}");
            }
        };
        check(
            &[4.0, 2.0, 3.0, 1.0],
            [1.0, 17.0 / 12.0, 2.5, 43.0 / 12.0, 4.0],
        );
        check(
            &[0.1, 0.9, 0.4, 0.4, 0.25],
            [0.1, 0.2, 0.4, 0.5666666666666665, 0.9],
        );
        check(
            &[3.0, 1.0, 4.0, 1.0, 5.0, 9.0, 2.0, 6.0, 5.0, 3.0, 5.0],
            [1.0, 2.1666666666666665, 4.0, 5.0, 9.0],
        );
        check(&[0.2, 0.8], [0.2, 0.2, 0.5, 0.8, 0.8]);
        check(&[0.5], [0.5; 5]);
        assert_eq!(five_numbers(&[]), None);
        assert_eq!(five_numbers(&[0.1, f64::NAN]), None);
    }

    #[test]
    fn population_standard_deviation() {
        let (mean, std, max) = mean_std_max(&[2.0, 4.0, 4.0, 4.0, 5.0, 5.0, 7.0, 9.0]).unwrap();
        assert_eq!((mean, std, max), (5.0, 2.0, 9.0));
        assert_eq!(mean_std_max(&[]), None);
    }

    #[test]
    fn printed_deltas_add_up() {
        // 84.25 % -> 82.94 %: the unrounded delta is -1.31 (printed -1.3); 84.249 % -> 82.951 %
        // prints 84.2 -> 83.0, so -1.2 is what the reader computes, while unrounded it is -1.298.
        assert_eq!(format!("{:+.1}", shown_delta(0.84249, 0.82951)), "-1.2");
        assert_eq!(format!("{:+.1}", 100.0 * (0.82951 - 0.84249)), "-1.3");
        assert_eq!(format!("{:+.1}", shown_delta(0.5, 0.5)), "+0.0");
        assert_eq!(shown_points(0.949), 94.9);
    }
}
