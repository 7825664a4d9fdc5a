//! Summary statistics for reports (floating point is fine here: reports only).

pub use schedlab_workloads::stats::{amean, hmean, stddev};

/// A rough significance marker: the means differ by more than twice the pooled standard
/// error (mmtests marks significance with a t-test; this is the same idea, documented).
pub fn significant(a: &[f64], b: &[f64]) -> bool {
    if a.len() < 2 || b.len() < 2 {
        return amean(a) != amean(b);
    }
    let se = (stddev(a).powi(2) / a.len() as f64 + stddev(b).powi(2) / b.len() as f64).sqrt();
    (amean(a) - amean(b)).abs() > 2.0 * se
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn means() {
        // hand: amean(1,2,4) = 7/3; hmean = 3 / (1 + 0.5 + 0.25) = 12/7; stddev of (2,4,4,4,5,5,7,9) with n-1 = sqrt(32/7)
        assert!((amean(&[1.0, 2.0, 4.0]) - 7.0 / 3.0).abs() < 1e-12);
        assert!((hmean(&[1.0, 2.0, 4.0]) - 12.0 / 7.0).abs() < 1e-12);
        let v = [2.0, 4.0, 4.0, 4.0, 5.0, 5.0, 7.0, 9.0];
        assert!((stddev(&v) - (32.0f64 / 7.0).sqrt()).abs() < 1e-12);
        assert!(significant(&[1.0, 1.1, 0.9], &[5.0, 5.1, 4.9]));
        assert!(!significant(&[1.0, 2.0, 3.0], &[1.5, 2.5, 2.0]));
    }
}
