//! Seeded random numbers: one master seed, named substreams, integer-only draws.
//!
//! Each source of randomness asks for its own stream by name (`"hackbench/group/3"`,
//! `"cpu/2/newidle"`), so adding a workload or a random decision in one place never shifts
//! the numbers drawn anywhere else. Streams are derived from the master seed and a stable
//! hash (FNV-1a) of the name; nothing depends on the host, on hash-map order or on time.
//!
//! The generator is xoshiro256** seeded through SplitMix64. Everything here is integer
//! arithmetic, including the log-normal cost jitter, so results are bit-identical on every
//! machine (the platform `libm` is never called).
//!
//! Hand-written on purpose, not taken from the `rand` crates: every published figure depends on
//! the exact stream, and a dependency update that changed a generator or a distribution's
//! algorithm (which `rand` allows between versions) would silently change every result.

/// SplitMix64 step: used to expand seeds.
#[inline]
fn splitmix64(state: &mut u64) -> u64 {
    *state = state.wrapping_add(0x9E37_79B9_7F4A_7C15);
    let mut z = *state;
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    z ^ (z >> 31)
}

/// FNV-1a, 64 bit: a stable name hash for stream derivation.
pub fn fnv1a(bytes: &[u8]) -> u64 {
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    for &b in bytes {
        h ^= b as u64;
        h = h.wrapping_mul(0x0000_0100_0000_01B3);
    }
    h
}

/// A deterministic pseudo-random generator (xoshiro256**).
#[derive(Clone, Debug)]
pub struct Rng {
    s: [u64; 4],
}

impl Rng {
    pub fn from_seed(seed: u64) -> Rng {
        let mut st = seed;
        let s = [
            splitmix64(&mut st),
            splitmix64(&mut st),
            splitmix64(&mut st),
            splitmix64(&mut st),
        ];
        Rng { s }
    }

    #[inline]
    pub fn next_u64(&mut self) -> u64 {
        let result = self.s[1].wrapping_mul(5).rotate_left(7).wrapping_mul(9);
        let t = self.s[1] << 17;
        self.s[2] ^= self.s[0];
        self.s[3] ^= self.s[1];
        self.s[1] ^= self.s[2];
        self.s[0] ^= self.s[3];
        self.s[2] ^= t;
        self.s[3] = self.s[3].rotate_left(45);
        result
    }

    #[inline]
    pub fn next_u32(&mut self) -> u32 {
        (self.next_u64() >> 32) as u32
    }

    /// Uniform in `0..n` (n > 0), without modulo bias (Lemire's method).
    #[inline]
    pub fn below(&mut self, n: u64) -> u64 {
        assert!(n > 0);
        let mut m = (self.next_u64() as u128) * (n as u128);
        if (m as u64) < n {
            let t = n.wrapping_neg() % n;
            while (m as u64) < t {
                m = (self.next_u64() as u128) * (n as u128);
            }
        }
        (m >> 64) as u64
    }

    /// Uniform in `lo..=hi`.
    pub fn range_inclusive(&mut self, lo: u64, hi: u64) -> u64 {
        assert!(lo <= hi);
        if hi - lo == u64::MAX {
            return self.next_u64();
        }
        lo + self.below(hi - lo + 1)
    }

    /// True with probability `ppm / 1_000_000`.
    pub fn chance_ppm(&mut self, ppm: u32) -> bool {
        self.below(1_000_000) < ppm as u64
    }

    /// A standard-normal-like draw in Q32 fixed point (Irwin–Hall sum of 12 uniforms minus
    /// 6: mean 0, variance 1, bounded to ±6).
    pub fn normal_q32(&mut self) -> i64 {
        let mut sum: i64 = 0;
        for _ in 0..12 {
            sum += (self.next_u64() >> 32) as i64;
        }
        sum - (6i64 << 32)
    }

    /// A log-normal factor with median 1 and shape `sigma_ppm / 1e6`, in Q32 fixed point
    /// (`1 << 32` is 1.0). Used to jitter costs: `cost * factor >> 32`.
    pub fn lognormal_factor_q32(&mut self, sigma_ppm: u32) -> u64 {
        if sigma_ppm == 0 {
            return 1 << 32;
        }
        // |z| ≤ 6·2^32 and sigma_ppm ≤ 2^32: the product fits in i64 (the same truncating
        // division as in i128, so the same values)
        let z = self.normal_q32();
        let x = z * sigma_ppm as i64 / 1_000_000;
        exp_q32(x)
    }

    /// Applies a log-normal jitter with shape `sigma_ppm / 1e6` to `value`.
    pub fn jitter(&mut self, value: u64, sigma_ppm: u32) -> u64 {
        if sigma_ppm == 0 || value == 0 {
            return value;
        }
        let f = self.lognormal_factor_q32(sigma_ppm) as u128;
        ((value as u128 * f) >> 32) as u64
    }
}

/// Log-normal jitter factors for one shape σ, tabulated once so that a draw costs three
/// generator steps and a table read. The normal variate is Irwin–Hall (the sum of twelve
/// 16-bit uniforms, minus 6: mean 0, variance 1 − 1/65536², bounded to ±6), quantized to
/// 1/1024; the table holds `e^(σ·z)` at the centre of each of the 12 288 cells, in Q32, computed
/// with [`exp_q32`] (integer arithmetic: the same table on every machine).
#[derive(Clone, Debug)]
pub struct LognormalTable {
    sigma_ppm: u32,
    factors: Box<[u64]>,
}

impl LognormalTable {
    /// Cells of 1/1024 over z ∈ [−6, 6).
    const CELLS: usize = 12 * 1024;

    pub fn new(sigma_ppm: u32) -> LognormalTable {
        let factors = (0..Self::CELLS as i64)
            .map(|i| {
                // cell centre: z = (2i + 1)/2048 − 6, in Q32
                let z = ((2 * i + 1) << 32) / 2048 - (6i64 << 32);
                exp_q32(z * sigma_ppm as i64 / 1_000_000)
            })
            .collect();
        LognormalTable { sigma_ppm, factors }
    }

    /// The table for `sigma_ppm`, built once per process and shared (it depends on σ only).
    pub fn shared(sigma_ppm: u32) -> std::sync::Arc<LognormalTable> {
        use std::sync::{Arc, Mutex, OnceLock};
        static TABLES: OnceLock<Mutex<Vec<Arc<LognormalTable>>>> = OnceLock::new();
        let mut v = TABLES
            .get_or_init(|| Mutex::new(Vec::new()))
            .lock()
            .unwrap_or_else(|e| e.into_inner());
        if let Some(t) = v.iter().find(|t| t.sigma_ppm == sigma_ppm) {
            return t.clone();
        }
        let t = Arc::new(LognormalTable::new(sigma_ppm));
        v.push(t.clone());
        t
    }

    pub fn sigma_ppm(&self) -> u32 {
        self.sigma_ppm
    }

    /// One factor (median ≈ 1, Q32).
    #[inline]
    pub fn factor_q32(&self, rng: &mut Rng) -> u64 {
        // the twelve 16-bit chunks of three draws, summed two lanes at a time: each 32-bit
        // lane gathers at most 6 · 0xffff < 2^32, so no carry crosses lanes and the total is
        // exactly the chunk-by-chunk sum
        const LO: u64 = 0x0000_ffff_0000_ffff;
        let mut lanes: u64 = 0;
        for _ in 0..3 {
            let v = rng.next_u64();
            lanes += (v & LO) + ((v >> 16) & LO);
        }
        let sum = (lanes & 0xffff_ffff) + (lanes >> 32);
        // sum/65536 − 6 in cells of 1/1024: index = sum / 64
        self.factors[(sum >> 6) as usize]
    }

    /// `value` times one factor.
    #[inline]
    pub fn apply(&self, rng: &mut Rng, value: u64) -> u64 {
        if self.sigma_ppm == 0 || value == 0 {
            return value;
        }
        ((value as u128 * self.factor_q32(rng) as u128) >> 32) as u64
    }
}

/// `e^x` for `x` in Q32 fixed point, result in Q32. Valid for |x| < 20.
/// Range reduction `x = n·ln2 + r`, |r| ≤ ln2/2, then a Taylor series for `e^r`.
pub fn exp_q32(x: i64) -> u64 {
    const ONE: i64 = 1 << 32;
    // ln 2 in Q32 = 0.693147180559945 * 2^32
    const LN2: i64 = 2_977_044_472;
    // |x| < 20·2^32 keeps every step in i64 except the term product, which is widened; the
    // divisions truncate toward zero exactly as the former all-i128 version did.
    let n = if x >= 0 {
        (x + LN2 / 2) / LN2
    } else {
        (x - LN2 / 2) / LN2
    };
    let r = x - n * LN2; // |r| ≤ ln2/2 in Q32
                         // e^r = Σ r^k / k!
    let mut term: i64 = ONE;
    let mut sum: i128 = ONE as i128;
    for k in 1..=14i64 {
        // |term| ≤ 2^32 and |r| < 2^31: the product fits in i64 and so does the quotient
        let p = term * r;
        term = p / ONE / k;
        sum += term as i128;
        if term == 0 {
            break;
        }
    }
    if n >= 0 {
        (sum << n) as u64
    } else {
        (sum >> (-n)) as u64
    }
}

/// Derives named substreams from one master seed.
#[derive(Clone, Copy, Debug)]
pub struct RngStreams {
    master: u64,
}

impl RngStreams {
    pub fn new(master_seed: u64) -> RngStreams {
        RngStreams {
            master: master_seed,
        }
    }

    pub fn master(&self) -> u64 {
        self.master
    }

    /// The stream called `name`. The same name always gives the same stream.
    pub fn stream(&self, name: &str) -> Rng {
        let mut st = self.master ^ fnv1a(name.as_bytes()).rotate_left(17);
        let seed = splitmix64(&mut st) ^ splitmix64(&mut st);
        Rng::from_seed(seed)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn streams_are_stable_and_distinct() {
        let s = RngStreams::new(42);
        let a1: Vec<u64> = (0..4)
            .map({
                let mut r = s.stream("a");
                move |_| r.next_u64()
            })
            .collect();
        let a2: Vec<u64> = (0..4)
            .map({
                let mut r = s.stream("a");
                move |_| r.next_u64()
            })
            .collect();
        let b: Vec<u64> = (0..4)
            .map({
                let mut r = s.stream("b");
                move |_| r.next_u64()
            })
            .collect();
        assert_eq!(a1, a2);
        assert_ne!(a1, b);
    }

    #[test]
    fn below_is_in_range() {
        let mut r = Rng::from_seed(1);
        for n in [1u64, 2, 3, 10, 1000, u64::MAX] {
            for _ in 0..100 {
                assert!(r.below(n) < n);
            }
        }
    }

    #[test]
    fn exp_matches_known_values() {
        // e^0 = 1, e^1 = 2.718281828..., e^-1 = 0.367879441...
        assert_eq!(exp_q32(0), 1 << 32);
        let e1 = exp_q32(1 << 32) as f64 / (1u64 << 32) as f64;
        assert!((e1 - std::f64::consts::E).abs() < 1e-8, "{e1}");
        let em1 = exp_q32(-(1 << 32)) as f64 / (1u64 << 32) as f64;
        assert!((em1 - 0.367_879_441_171_442_3).abs() < 1e-8, "{em1}");
    }

    /// The all-i128 formulation the fast `exp_q32` replaced; both must agree bit for bit so
    /// that jittered runs keep their values.
    fn exp_q32_i128(x: i64) -> u64 {
        const ONE: i128 = 1 << 32;
        const LN2: i128 = 2_977_044_472;
        let x = x as i128;
        let n = if x >= 0 {
            (x + LN2 / 2) / LN2
        } else {
            (x - LN2 / 2) / LN2
        };
        let r = x - n * LN2;
        let (mut term, mut sum) = (ONE, ONE);
        for k in 1..=14i128 {
            term = term * r / ONE / k;
            sum += term;
            if term == 0 {
                break;
            }
        }
        if n >= 0 {
            (sum << n) as u64
        } else {
            (sum >> (-n)) as u64
        }
    }

    #[test]
    fn exp_q32_matches_the_i128_formulation() {
        let mut r = Rng::from_seed(3);
        for i in -2000i64..=2000 {
            let x = i * (1 << 32) / 200; // −10 … 10 in steps of 0.005
            assert_eq!(exp_q32(x), exp_q32_i128(x), "x = {x}");
        }
        for _ in 0..20_000 {
            let x = (r.next_u64() % (20u64 << 33)) as i64 - (20i64 << 32);
            assert_eq!(exp_q32(x), exp_q32_i128(x), "x = {x}");
        }
    }

    #[test]
    fn lognormal_table_shape() {
        // σ = 0.10: median e^0 = 1, mean e^(σ²/2) = 1.005, 84th percentile e^σ = 1.105;
        // the table is symmetric in log space around the middle cell boundary.
        let t = LognormalTable::new(100_000);
        let mut r = Rng::from_seed(11);
        let mut v: Vec<u64> = (0..200_001).map(|_| t.factor_q32(&mut r)).collect();
        v.sort_unstable();
        let q = |p: f64| v[(p * (v.len() - 1) as f64) as usize] as f64 / (1u64 << 32) as f64;
        assert!((q(0.5) - 1.0).abs() < 0.002, "median {}", q(0.5));
        assert!((q(0.8413) - 1.105).abs() < 0.004, "84th {}", q(0.8413));
        let mean = v.iter().map(|&x| x as f64).sum::<f64>() / v.len() as f64 / 2f64.powi(32);
        assert!((mean - 1.005).abs() < 0.002, "mean {mean}");
        // extremes stay within e^(±0.6)
        assert!(q(0.0) > 0.54 && q(1.0) < 1.83);
        assert_eq!(LognormalTable::new(0).apply(&mut r, 1234), 1234);
    }

    #[test]
    fn lognormal_median_near_one() {
        // The median of many draws with sigma 0.1 must be close to 1.
        let mut r = Rng::from_seed(7);
        let mut v: Vec<u64> = (0..10_001)
            .map(|_| r.lognormal_factor_q32(100_000))
            .collect();
        v.sort_unstable();
        let med = v[5000] as f64 / (1u64 << 32) as f64;
        assert!((med - 1.0).abs() < 0.01, "median {med}");
    }
}
