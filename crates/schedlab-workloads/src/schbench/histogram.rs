//! schbench's latency histogram ("mr axboe's magic latency histogram", from fio) and its
//! percentile walk, reproduced exactly (workloads.md §4.1, §4.3).
//!
//! Log-linear buckets with `PLAT_BITS = 8` bits of mantissa:
//!
//! ```text
//!   value         bucket index                       bucket width   printed value
//!   0 ..= 511     the value itself                   1              the value
//!   512 ..= 1023  512 + (v >> 1) - 256               2              512 + 2k + 1
//!   1024 ..= 2047 768 + (v >> 2) - 256               4              1024 + 4k + 2
//!   2^m .. (m>8)  (m-7)·256 + ((v >> (m-8)) & 255)   2^(m-8)        2^m + (k + ½)·2^(m-8)
//! ```
//!
//! `PLAT_GROUP_NR = 19` groups, `PLAT_NR = 19 × 256 = 4864` buckets; larger values land in
//! the last bucket. The printed value of a bucket above the exact range is its middle.

/// Bits of mantissa kept per power of two.
pub const PLAT_BITS: u32 = 8;
/// Buckets per group (`1 << PLAT_BITS`).
pub const PLAT_VAL: u32 = 1 << PLAT_BITS;
/// Number of groups.
pub const PLAT_GROUP_NR: u32 = 19;
/// Number of buckets.
pub const PLAT_NR: u32 = PLAT_GROUP_NR * PLAT_VAL;

/// The percentiles schbench computes, in order (`plist`); each report prints a subset.
pub const PLIST: [f64; 5] = [20.0, 50.0, 90.0, 99.0, 99.9];

/// Bucket index of a sample.
/// Origin: schbench.c `plat_val_to_idx()` (from fio).
pub fn plat_val_to_idx(val: u32) -> u32 {
    let msb = if val == 0 {
        0
    } else {
        31 - val.leading_zeros()
    };
    // msb <= PLAT_BITS: small enough to be its own bucket.
    if msb <= PLAT_BITS {
        return val;
    }
    let error_bits = msb - PLAT_BITS;
    let base = (error_bits + 1) << PLAT_BITS;
    let offset = (PLAT_VAL - 1) & (val >> error_bits);
    (base + offset).min(PLAT_NR - 1)
}

/// The value a bucket stands for (its middle above the exact range).
/// Origin: schbench.c `plat_idx_to_val()`; `base + (k + 0.5) × 2^error_bits` is an exact
/// integer for `error_bits >= 1`, so integer arithmetic gives the same result.
pub fn plat_idx_to_val(idx: u32) -> u32 {
    assert!(idx < PLAT_NR, "plat index {idx} out of range");
    if idx < (PLAT_VAL << 1) {
        return idx;
    }
    let error_bits = (idx >> PLAT_BITS) - 1;
    let base = 1u32 << (error_bits + PLAT_BITS);
    let k = idx % PLAT_VAL;
    base + k * (1 << error_bits) + (1 << (error_bits - 1))
}

/// One percentile of a report: its value and the "(N samples)" figure.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Percentile {
    pub pct: f64,
    pub value: u32,
    /// Samples between the previous entry of [`PLIST`] and this one (see
    /// [`Histogram::percentiles`]).
    pub count: u64,
}

/// schbench `struct stats`: bucket counts, sample count, min and max.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Histogram {
    plat: Vec<u64>,
    pub nr_samples: u64,
    pub max: u32,
    /// 0 means "no sample yet" (schbench's convention, kept with its quirk: a 0 sample is
    /// forgotten by the next one).
    pub min: u32,
}

impl Default for Histogram {
    fn default() -> Self {
        Histogram {
            plat: vec![0; PLAT_NR as usize],
            nr_samples: 0,
            max: 0,
            min: 0,
        }
    }
}

impl Histogram {
    pub fn new() -> Self {
        Self::default()
    }

    /// Records one sample (µs, or requests for the RPS histogram).
    /// Origin: schbench.c `add_lat()`.
    pub fn add_lat(&mut self, us: u32) {
        if us > self.max {
            self.max = us;
        }
        if self.min == 0 || us < self.min {
            self.min = us;
        }
        self.plat[plat_val_to_idx(us) as usize] += 1;
        self.nr_samples += 1;
    }

    /// Folds `s` into `self`. Origin: schbench.c `combine_stats()`.
    pub fn combine(&mut self, s: &Histogram) {
        for (d, v) in self.plat.iter_mut().zip(&s.plat) {
            *d += v;
        }
        self.nr_samples += s.nr_samples;
        if s.max > self.max {
            self.max = s.max;
        }
        if self.min == 0 || s.min < self.min {
            self.min = s.min;
        }
    }

    /// Zeroes everything (schbench's `memset` on reset, `-z`, warmup).
    pub fn reset(&mut self) {
        *self = Histogram::default();
    }

    /// Count in one bucket.
    pub fn bucket(&self, idx: u32) -> u64 {
        self.plat[idx as usize]
    }

    /// All five [`PLIST`] percentiles. Origin: schbench.c `calc_percentiles()`.
    ///
    /// Walk the buckets in ascending order keeping a running sum; the value of percentile
    /// `p` is the first bucket where `sum >= p / 100 × nr_samples` (compared in `f64`,
    /// as the C code does). The count of entry `i` is its cumulative count minus the
    /// cumulative count of entry `i − 1` of [`PLIST`] — including the 20th, which latency
    /// reports compute but do not print, so the printed 50th counts only the samples
    /// between the 20th and the 50th percentile.
    pub fn percentiles(&self) -> [Percentile; 5] {
        let nr = self.nr_samples as f64;
        let mut out = PLIST.map(|pct| Percentile {
            pct,
            value: 0,
            count: 0,
        });
        let mut sum = 0u64;
        let mut j = 0;
        'walk: for (i, &n) in self.plat.iter().enumerate() {
            sum += n;
            while sum as f64 >= PLIST[j] / 100.0 * nr {
                out[j].value = plat_idx_to_val(i as u32);
                out[j].count = sum;
                if j == PLIST.len() - 1 {
                    break 'walk;
                }
                j += 1;
            }
        }
        for i in (1..out.len()).rev() {
            out[i].count -= out[i - 1].count;
        }
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn constants() {
        assert_eq!((PLAT_VAL, PLAT_NR), (256, 4864));
    }

    #[test]
    fn exact_range_below_512() {
        for v in [0u32, 1, 100, 255, 256, 511] {
            assert_eq!(plat_val_to_idx(v), v);
            assert_eq!(plat_idx_to_val(v), v);
        }
    }

    #[test]
    fn buckets_around_512_and_above() {
        // 512: msb 9, error_bits 1, base 2<<8 = 512, offset (512>>1)&255 = 0 -> 512.
        assert_eq!(plat_val_to_idx(512), 512);
        assert_eq!(plat_val_to_idx(513), 512);
        // Bucket 512 covers 512..=513; its middle is 512 + 0.5×2 = 513.
        assert_eq!(plat_idx_to_val(512), 513);
        assert_eq!(plat_val_to_idx(514), 513);
        assert_eq!(plat_idx_to_val(513), 515);
        // 1000: msb 9, offset (1000>>1)&255 = 500-256 = 244 -> 756; value 512+244×2+1 = 1001.
        assert_eq!(plat_val_to_idx(1000), 756);
        assert_eq!(plat_idx_to_val(756), 1001);
        // 1023 -> 512+255 = 767 -> 512 + 255×2 + 1 = 1023.
        assert_eq!(plat_val_to_idx(1023), 767);
        assert_eq!(plat_idx_to_val(767), 1023);
        // 1024: msb 10, error_bits 2, base 3<<8 = 768, offset 0 -> 768; value 1024+2 = 1026.
        assert_eq!(plat_val_to_idx(1024), 768);
        assert_eq!(plat_idx_to_val(768), 1026);
        // 10000: msb 13, error_bits 5, base 6<<8 = 1536, offset (10000>>5)&255 = 312-256 = 56
        // -> 1592; value 8192 + 56×32 + 16 = 10000.
        assert_eq!(plat_val_to_idx(10_000), 1592);
        assert_eq!(plat_idx_to_val(1592), 10_000);
        // Saturation: the last bucket is PLAT_NR - 1 = 4863.
        assert_eq!(plat_val_to_idx(u32::MAX), 4863);
    }

    #[test]
    fn every_bucket_value_maps_back() {
        for idx in 0..PLAT_NR - 1 {
            assert_eq!(plat_val_to_idx(plat_idx_to_val(idx)), idx, "idx {idx}");
        }
    }

    #[test]
    fn min_max_quirks() {
        let mut h = Histogram::new();
        h.add_lat(7);
        h.add_lat(3);
        h.add_lat(0);
        assert_eq!((h.min, h.max, h.nr_samples), (0, 7, 3));
        h.add_lat(9); // min 0 means "unset" to schbench
        assert_eq!(h.min, 9);
        let mut d = Histogram::new();
        d.combine(&h);
        assert_eq!((d.min, d.max, d.nr_samples, d.bucket(0)), (9, 9, 4, 1));
    }

    #[test]
    fn percentile_walk_ten_samples() {
        // Samples 1..=10, one each. Thresholds: 20% of 10 = 2, 50% = 5, 90% = 9,
        // 99% = 9.9, 99.9% = 9.99. Cumulative sums reach them at values 2, 5, 9, 10, 10.
        let mut h = Histogram::new();
        for v in 1..=10 {
            h.add_lat(v);
        }
        let p = h.percentiles();
        let vals: Vec<u32> = p.iter().map(|x| x.value).collect();
        let counts: Vec<u64> = p.iter().map(|x| x.count).collect();
        assert_eq!(vals, vec![2, 5, 9, 10, 10]);
        // Cumulative 2, 5, 9, 10, 10 -> differences 2, 3, 4, 1, 0.
        assert_eq!(counts, vec![2, 3, 4, 1, 0]);
    }

    #[test]
    fn percentile_walk_with_large_buckets() {
        // 900 samples of 100 us and 100 samples of 1000 us (bucket 756, printed 1001).
        // N = 1000: 20% -> 200 (value 100), 50% -> 500 (100), 90% -> 900 (100),
        // 99% -> 990 (1001), 99.9% -> 999 (1001). Cumulative 900, 900, 900, 1000, 1000.
        let mut h = Histogram::new();
        for _ in 0..900 {
            h.add_lat(100);
        }
        for _ in 0..100 {
            h.add_lat(1000);
        }
        let p = h.percentiles();
        assert_eq!(p.map(|x| x.value), [100, 100, 100, 1001, 1001]);
        assert_eq!(p.map(|x| x.count), [900, 0, 0, 100, 0]);
    }

    #[test]
    fn percentile_threshold_is_a_double() {
        // 999 samples of 10 us and one of 20 us. In C doubles 99.9 / 100.0 * 1000 is
        // 999.0000000000001 > 999, so schbench reports the 99.9th as 20, not 10.
        let mut h = Histogram::new();
        (0..999).for_each(|_| h.add_lat(10));
        h.add_lat(20);
        let p = h.percentiles();
        assert_eq!(p.map(|x| x.value), [10, 10, 10, 10, 20]);
        assert_eq!(p.map(|x| x.count), [999, 0, 0, 0, 1]);
    }

    #[test]
    fn empty_histogram() {
        // sum 0 >= p × 0 holds at bucket 0 for every percentile.
        let p = Histogram::new().percentiles();
        assert_eq!(p.map(|x| x.value), [0; 5]);
        assert_eq!(p.map(|x| x.count), [0; 5]);
    }
}
