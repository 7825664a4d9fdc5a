//! Summary statistics as mmtests computes them (Amean, Hmean, sample Stddev), shared by the
//! workload models' metrics and the facade's reports.

/// Arithmetic mean (mmtests Amean); 0 for no samples.
pub fn amean(v: &[f64]) -> f64 {
    if v.is_empty() {
        return 0.0;
    }
    v.iter().sum::<f64>() / v.len() as f64
}

/// Harmonic mean (mmtests Hmean, for rates); 0 for no samples or a sample ≤ 0.
pub fn hmean(v: &[f64]) -> f64 {
    if v.is_empty() || v.iter().any(|x| *x <= 0.0) {
        return 0.0;
    }
    v.len() as f64 / v.iter().map(|x| 1.0 / x).sum::<f64>()
}

/// Sample standard deviation (n − 1); 0 below two samples.
pub fn stddev(v: &[f64]) -> f64 {
    if v.len() < 2 {
        return 0.0;
    }
    let m = amean(v);
    (v.iter().map(|x| (x - m) * (x - m)).sum::<f64>() / (v.len() - 1) as f64).sqrt()
}
