//! Simulated time: `SimTime` is an instant, `Nanos` a duration, both u64 nanoseconds.
//!
//! The two types are kept apart so that an instant can never be added to an instant by
//! mistake. Neither type ever reads the host clock.

use std::fmt;
use std::ops::{Add, AddAssign, Div, Mul, Sub, SubAssign};

/// A point in simulated time, nanoseconds since the start of the simulation.
#[derive(Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Default)]
pub struct SimTime(pub u64);

/// A span of simulated time in nanoseconds.
#[derive(Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Default)]
pub struct Nanos(pub u64);

impl SimTime {
    pub const ZERO: SimTime = SimTime(0);
    pub const MAX: SimTime = SimTime(u64::MAX);

    #[inline]
    pub const fn ns(self) -> u64 {
        self.0
    }

    /// Duration since `earlier`; panics if `earlier` is later (time never runs backwards).
    #[inline]
    pub fn since(self, earlier: SimTime) -> Nanos {
        assert!(
            earlier.0 <= self.0,
            "time went backwards: {} is before {}",
            self,
            earlier
        );
        Nanos(self.0 - earlier.0)
    }

    /// Duration since `earlier`, or zero if `earlier` is not earlier.
    #[inline]
    pub fn saturating_since(self, earlier: SimTime) -> Nanos {
        Nanos(self.0.saturating_sub(earlier.0))
    }
}

impl Nanos {
    pub const ZERO: Nanos = Nanos(0);

    #[inline]
    pub const fn from_us(us: u64) -> Nanos {
        Nanos(us * 1_000)
    }
    #[inline]
    pub const fn from_ms(ms: u64) -> Nanos {
        Nanos(ms * 1_000_000)
    }
    #[inline]
    pub const fn from_secs(s: u64) -> Nanos {
        Nanos(s * 1_000_000_000)
    }
    #[inline]
    pub const fn ns(self) -> u64 {
        self.0
    }
    #[inline]
    pub fn saturating_sub(self, o: Nanos) -> Nanos {
        Nanos(self.0.saturating_sub(o.0))
    }
    /// Seconds as a float, for reports only.
    pub fn as_secs_f64(self) -> f64 {
        self.0 as f64 / 1e9
    }
}

impl Add<Nanos> for SimTime {
    type Output = SimTime;
    #[inline]
    fn add(self, d: Nanos) -> SimTime {
        SimTime(self.0.checked_add(d.0).expect("SimTime overflow"))
    }
}
impl AddAssign<Nanos> for SimTime {
    #[inline]
    fn add_assign(&mut self, d: Nanos) {
        *self = *self + d;
    }
}
impl Add for Nanos {
    type Output = Nanos;
    #[inline]
    fn add(self, o: Nanos) -> Nanos {
        Nanos(self.0 + o.0)
    }
}
impl AddAssign for Nanos {
    #[inline]
    fn add_assign(&mut self, o: Nanos) {
        self.0 += o.0;
    }
}
impl Sub for Nanos {
    type Output = Nanos;
    #[inline]
    fn sub(self, o: Nanos) -> Nanos {
        Nanos(self.0.checked_sub(o.0).expect("Nanos underflow"))
    }
}
impl SubAssign for Nanos {
    #[inline]
    fn sub_assign(&mut self, o: Nanos) {
        *self = *self - o;
    }
}
impl Mul<u64> for Nanos {
    type Output = Nanos;
    #[inline]
    fn mul(self, k: u64) -> Nanos {
        Nanos(self.0 * k)
    }
}
impl Div<u64> for Nanos {
    type Output = Nanos;
    #[inline]
    fn div(self, k: u64) -> Nanos {
        Nanos(self.0 / k)
    }
}

impl fmt::Display for SimTime {
    /// Printed like the ftrace timestamp column: seconds with microsecond precision.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "{}.{:06}",
            self.0 / 1_000_000_000,
            (self.0 % 1_000_000_000) / 1_000
        )
    }
}
impl fmt::Debug for SimTime {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "t={}ns", self.0)
    }
}
impl fmt::Display for Nanos {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let n = self.0;
        if n >= 1_000_000_000 && n.is_multiple_of(1_000_000) {
            write!(f, "{}s", fmt_decimal(n, 1_000_000_000))
        } else if n >= 1_000_000 && n.is_multiple_of(1_000) {
            write!(f, "{}ms", fmt_decimal(n, 1_000_000))
        } else if n >= 1_000 {
            write!(f, "{}us", fmt_decimal(n, 1_000))
        } else {
            write!(f, "{}ns", n)
        }
    }
}
impl fmt::Debug for Nanos {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}ns", self.0)
    }
}

fn fmt_decimal(n: u64, unit: u64) -> String {
    let whole = n / unit;
    let frac = n % unit;
    if frac == 0 {
        return whole.to_string();
    }
    let width = unit.ilog10() as usize;
    let s = format!("{:0width$}", frac, width = width);
    format!("{}.{}", whole, s.trim_end_matches('0'))
}

/// Longest simulated time any input may ask for, in seconds: 2^33 s (about 272 years).
/// Simulated time is `u64` nanoseconds (about 584 years); the cap leaves room for the start-up
/// and tear-down margins that models add to a run length, so that none of them overflows.
/// Every front end (`--duration`, scenario durations, workload run lengths, rt-app times)
/// uses this one cap.
pub const MAX_SIM_SECS: u64 = 1 << 33;

/// [`MAX_SIM_SECS`] in nanoseconds (8 589 934 592 000 000 000 ns < 2^63).
pub const MAX_SIM_NS: u64 = MAX_SIM_SECS * 1_000_000_000;

/// Error from [`parse_duration`]: the text it could not read, or a duration beyond
/// [`MAX_SIM_SECS`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DurationError {
    pub text: String,
    pub too_long: bool,
}

impl fmt::Display for DurationError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.too_long {
            return write!(
                f,
                "duration '{}' is longer than the {} s (2^33 s, about 272 years) schedlab can simulate",
                self.text, MAX_SIM_SECS
            );
        }
        write!(
            f,
            "bad duration '{}': expected a number with a unit ns, us, ms, s, m or h (e.g. 10s, 2.5ms)",
            self.text
        )
    }
}
impl std::error::Error for DurationError {}

/// Parses `10s`, `2.5ms`, `500us`, `100ns`, `1m`, `1h`; a bare number is seconds
/// (the convention of stress-ng's `--timeout` and cyclictest's `-D`).
/// Decimal fractions are parsed exactly (no floating point).
pub fn parse_duration(text: &str) -> Result<Nanos, DurationError> {
    let too_long = || DurationError {
        text: text.to_string(),
        too_long: true,
    };
    let err = || DurationError {
        text: text.to_string(),
        too_long: false,
    };
    let t = text.trim();
    let split = t
        .find(|c: char| !(c.is_ascii_digit() || c == '.'))
        .unwrap_or(t.len());
    let (num, unit) = t.split_at(split);
    if num.is_empty() {
        return Err(err());
    }
    let scale: u64 = match unit {
        "ns" => 1,
        "us" | "µs" => 1_000,
        "ms" => 1_000_000,
        "" | "s" | "sec" => 1_000_000_000,
        "m" | "min" => 60_000_000_000,
        "h" => 3_600_000_000_000,
        _ => return Err(err()),
    };
    let (whole, frac) = match num.split_once('.') {
        Some((w, f)) => (w, f),
        None => (num, ""),
    };
    if frac.contains('.') || (whole.is_empty() && frac.is_empty()) {
        return Err(err());
    }
    let whole: u64 = if whole.is_empty() {
        0
    } else {
        // `whole` is all digits here, so parse fails only on overflow.
        whole.parse().map_err(|_| too_long())?
    };
    let mut total = whole.checked_mul(scale).ok_or_else(too_long)?;
    let mut place = scale;
    for d in frac.chars() {
        place /= 10;
        let dv = d.to_digit(10).ok_or_else(err)? as u64;
        if place == 0 {
            if dv != 0 {
                return Err(err()); // finer than a nanosecond
            }
            continue;
        }
        total = total.checked_add(dv * place).ok_or_else(too_long)?;
    }
    if total > MAX_SIM_NS {
        return Err(too_long());
    }
    Ok(Nanos(total))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parse_units() {
        assert_eq!(parse_duration("10s").unwrap(), Nanos::from_secs(10));
        assert_eq!(parse_duration("20").unwrap(), Nanos::from_secs(20));
        assert_eq!(parse_duration("2.5ms").unwrap(), Nanos(2_500_000));
        assert_eq!(parse_duration("500us").unwrap(), Nanos(500_000));
        assert_eq!(parse_duration("7ns").unwrap(), Nanos(7));
        assert_eq!(parse_duration("1m").unwrap(), Nanos::from_secs(60));
        assert_eq!(parse_duration(".5s").unwrap(), Nanos(500_000_000));
    }

    #[test]
    fn parse_rejects() {
        for bad in ["", "s", "10x", "1.2.3s", "-1s", "0.5ns", "abc"] {
            assert!(parse_duration(bad).is_err(), "{bad} should be rejected");
        }
    }

    #[test]
    fn parse_caps_at_2_pow_33_seconds() {
        // 2^33 s = 8589934592 s is the cap itself; one nanosecond more is refused.
        assert_eq!(parse_duration("8589934592s").unwrap(), Nanos(MAX_SIM_NS));
        for long in [
            "8589934592.000000001s",
            "8589934593",
            "143165577m",
            "18446744073709551615s",
            "99999999999999999999999",
        ] {
            let e = parse_duration(long).unwrap_err();
            assert!(e.too_long, "{long}");
            assert!(e.to_string().contains("8589934592 s"), "{e}");
        }
        // 143165576 min = 8589934560 s fits.
        assert!(parse_duration("143165576m").is_ok());
    }

    #[test]
    fn display() {
        assert_eq!(Nanos::from_secs(10).to_string(), "10s");
        assert_eq!(Nanos(2_500_000).to_string(), "2.5ms");
        assert_eq!(Nanos(1_500).to_string(), "1.5us");
        assert_eq!(SimTime(1_234_567_891).to_string(), "1.234567");
    }

    #[test]
    #[should_panic(expected = "time went backwards")]
    fn since_backwards_panics() {
        let _ = SimTime(5).since(SimTime(6));
    }
}
