//! `CpuMask`: a small growable bitset over CPU numbers, the simulator's `struct cpumask`.
//!
//! Iteration is always in ascending CPU order (deterministic), `iter_wrap` mirrors the kernel's
//! `for_each_cpu_wrap()`, and `Display` prints the kernel's cpulist format (`0-3,8`) as in
//! `/sys/devices/system/cpu/online`.

use std::fmt;
use std::ops::{BitAnd, BitOr, Sub};

/// A set of CPU numbers.
///
/// Invariant: `words` has no trailing zero word, so two masks with the same members compare
/// equal whatever their history.
#[derive(Clone, Default, PartialEq, Eq, Hash)]
pub struct CpuMask {
    words: Words,
}

/// How many 64-bit words a mask keeps inline (256 CPUs) before it moves them to the heap.
const INLINE_WORDS: usize = 4;

/// The words of a mask: inline up to [`INLINE_WORDS`], else all on the heap. The masks built
/// on every wakeup and balance pass (`cpumask_and` of a span and `p->cpus_ptr`) then
/// allocate nothing on machines of up to 256 CPUs. Compares and hashes as its slice.
#[derive(Clone, Default)]
struct Words {
    len: usize,
    inline: [u64; INLINE_WORDS],
    heap: Vec<u64>,
}

impl Words {
    const fn new() -> Words {
        Words {
            len: 0,
            inline: [0; INLINE_WORDS],
            heap: Vec::new(),
        }
    }

    #[inline]
    fn as_slice(&self) -> &[u64] {
        if self.len <= INLINE_WORDS {
            &self.inline[..self.len]
        } else {
            &self.heap
        }
    }

    #[inline]
    fn as_mut_slice(&mut self) -> &mut [u64] {
        if self.len <= INLINE_WORDS {
            &mut self.inline[..self.len]
        } else {
            &mut self.heap
        }
    }

    #[inline]
    fn len(&self) -> usize {
        self.len
    }

    #[inline]
    fn push(&mut self, w: u64) {
        if self.len < INLINE_WORDS {
            self.inline[self.len] = w;
        } else {
            if self.len == INLINE_WORDS {
                self.heap.clear();
                self.heap.extend_from_slice(&self.inline);
            }
            self.heap.push(w);
        }
        self.len += 1;
    }

    #[inline]
    fn pop(&mut self) {
        if self.len > INLINE_WORDS {
            self.heap.pop();
            if self.len == INLINE_WORDS + 1 {
                self.inline.copy_from_slice(&self.heap[..INLINE_WORDS]);
            }
        }
        self.len -= 1;
    }

    /// `n` words `f(0)`, …, `f(n − 1)`, written in place when they fit inline.
    #[inline]
    fn from_fn(n: usize, f: impl Fn(usize) -> u64) -> Words {
        let mut w = Words::new();
        if n <= INLINE_WORDS {
            for i in 0..n {
                w.inline[i] = f(i);
            }
            w.len = n;
        } else {
            for i in 0..n {
                w.push(f(i));
            }
        }
        w
    }

    /// Grows to `n` words with zeros.
    fn grow(&mut self, n: usize) {
        while self.len < n {
            self.push(0);
        }
    }
}

impl std::ops::Deref for Words {
    type Target = [u64];
    #[inline]
    fn deref(&self) -> &[u64] {
        self.as_slice()
    }
}

impl std::ops::DerefMut for Words {
    #[inline]
    fn deref_mut(&mut self) -> &mut [u64] {
        self.as_mut_slice()
    }
}

impl PartialEq for Words {
    fn eq(&self, o: &Self) -> bool {
        self.as_slice() == o.as_slice()
    }
}

impl Eq for Words {}

impl std::hash::Hash for Words {
    fn hash<H: std::hash::Hasher>(&self, state: &mut H) {
        // as `Vec<u64>` hashed: length, then the words
        self.as_slice().hash(state)
    }
}

impl FromIterator<u64> for Words {
    fn from_iter<I: IntoIterator<Item = u64>>(it: I) -> Words {
        let mut w = Words::new();
        for x in it {
            w.push(x);
        }
        w
    }
}

/// A malformed cpulist (`isolcpus=`, `cpus=` and friends).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("bad cpulist `{list}`: {reason}")]
pub struct CpuListError {
    pub list: String,
    pub reason: String,
}

/// Largest CPU number accepted by [`CpuMask::parse_cpulist`] (the kernel's `NR_CPUS` ceiling).
pub const CPULIST_MAX_CPU: usize = 8191;

impl CpuMask {
    /// The empty mask.
    pub const fn new() -> CpuMask {
        CpuMask {
            words: Words::new(),
        }
    }

    /// `{cpu}`.
    pub fn single(cpu: usize) -> CpuMask {
        let mut m = CpuMask::new();
        m.set(cpu);
        m
    }

    /// `{0, 1, …, n-1}`.
    pub fn first_n(n: usize) -> CpuMask {
        CpuMask::range(0, n)
    }

    /// `{start, …, end-1}`.
    pub fn range(start: usize, end: usize) -> CpuMask {
        let mut m = CpuMask::new();
        for c in start..end {
            m.set(c);
        }
        m
    }

    fn trim(&mut self) {
        while self.words.last() == Some(&0) {
            self.words.pop();
        }
    }

    /// Adds `cpu` (`cpumask_set_cpu`).
    pub fn set(&mut self, cpu: usize) {
        let (w, b) = (cpu / 64, cpu % 64);
        if self.words.len() <= w {
            self.words.grow(w + 1);
        }
        self.words[w] |= 1u64 << b;
    }

    /// Removes `cpu` (`cpumask_clear_cpu`).
    pub fn clear(&mut self, cpu: usize) {
        let (w, b) = (cpu / 64, cpu % 64);
        if w < self.words.len() {
            self.words[w] &= !(1u64 << b);
            self.trim();
        }
    }

    /// `cpumask_test_cpu`.
    pub fn contains(&self, cpu: usize) -> bool {
        let (w, b) = (cpu / 64, cpu % 64);
        w < self.words.len() && self.words[w] & (1u64 << b) != 0
    }

    /// Number of CPUs in the mask (`cpumask_weight`).
    pub fn weight(&self) -> usize {
        self.words.iter().map(|w| w.count_ones() as usize).sum()
    }

    pub fn is_empty(&self) -> bool {
        self.words.is_empty()
    }

    /// Lowest CPU (`cpumask_first`), `None` when empty.
    pub fn first(&self) -> Option<usize> {
        self.next_from(0)
    }

    /// Highest CPU (`cpumask_last`).
    pub fn last(&self) -> Option<usize> {
        let w = self.words.len().checked_sub(1)?;
        Some(w * 64 + 63 - self.words[w].leading_zeros() as usize)
    }

    /// Lowest CPU `>= cpu`.
    pub fn next_from(&self, cpu: usize) -> Option<usize> {
        let mut w = cpu / 64;
        if w >= self.words.len() {
            return None;
        }
        let mut bits = self.words[w] & (!0u64 << (cpu % 64));
        loop {
            if bits != 0 {
                return Some(w * 64 + bits.trailing_zeros() as usize);
            }
            w += 1;
            if w >= self.words.len() {
                return None;
            }
            bits = self.words[w];
        }
    }

    /// Number of CPUs of the mask in `start..end` (`cpumask_weight` of the mask ANDed with a
    /// range, without building the range).
    pub fn weight_range(&self, start: usize, end: usize) -> usize {
        let end = end.min(self.words.len() * 64);
        if start >= end {
            return 0;
        }
        let (ws, we) = (start / 64, (end - 1) / 64);
        let mut n = 0;
        for w in ws..=we {
            let mut bits = self.words[w];
            if w == ws {
                bits &= !0u64 << (start % 64);
            }
            let top = end - w * 64; // CPUs of this word below `end`
            if top < 64 {
                bits &= (1u64 << top) - 1;
            }
            n += bits.count_ones() as usize;
        }
        n
    }

    /// Lowest CPU `> cpu` (`cpumask_next`).
    pub fn next_after(&self, cpu: usize) -> Option<usize> {
        self.next_from(cpu + 1)
    }

    /// The `n`-th CPU in ascending order, counting from 0 (`cpumask_nth`).
    pub fn nth(&self, n: usize) -> Option<usize> {
        self.iter().nth(n)
    }

    /// CPUs in ascending order.
    pub fn iter(&self) -> Iter<'_> {
        Iter {
            mask: self,
            next: 0,
        }
    }

    /// CPUs in ascending order starting at `start` (inclusive) and wrapping around to the lowest
    /// CPU: the kernel's `for_each_cpu_wrap(cpu, mask, start)`, used by the idle scans so that
    /// every scanner starts at its own position.
    pub fn iter_wrap(&self, start: usize) -> impl Iterator<Item = usize> + '_ {
        let upper = Iter {
            mask: self,
            next: start,
        };
        let lower = self.iter().take_while(move |&c| c < start);
        upper.chain(lower)
    }

    /// `cpumask_and`.
    pub fn and(&self, other: &CpuMask) -> CpuMask {
        let (a, b) = (self.words.as_slice(), other.words.as_slice());
        let n = a.len().min(b.len());
        let mut m = CpuMask {
            words: Words::from_fn(n, |i| a[i] & b[i]),
        };
        m.trim();
        m
    }

    /// `cpumask_or`.
    pub fn or(&self, other: &CpuMask) -> CpuMask {
        let (a, b) = (self.words.as_slice(), other.words.as_slice());
        let n = a.len().max(b.len());
        let get = |v: &[u64], i: usize| v.get(i).copied().unwrap_or(0);
        CpuMask {
            words: Words::from_fn(n, |i| get(a, i) | get(b, i)),
        }
    }

    /// `cpumask_andnot`: CPUs of `self` not in `other`.
    pub fn andnot(&self, other: &CpuMask) -> CpuMask {
        let (a, b) = (self.words.as_slice(), other.words.as_slice());
        let mut m = CpuMask {
            words: Words::from_fn(a.len(), |i| a[i] & !b.get(i).copied().unwrap_or(0)),
        };
        m.trim();
        m
    }

    /// `cpumask_intersects`.
    pub fn intersects(&self, other: &CpuMask) -> bool {
        self.words
            .iter()
            .zip(other.words.iter())
            .any(|(a, b)| a & b != 0)
    }

    /// `cpumask_subset(self, other)`: every CPU of `self` is in `other`.
    pub fn is_subset_of(&self, other: &CpuMask) -> bool {
        self.andnot(other).is_empty()
    }

    /// Parses the kernel's cpulist syntax (`bitmap_parselist`): comma-separated CPUs `N`,
    /// ranges `A-B` and strided ranges `A-B:used/group` (e.g. `0-15:2/4` = 0,1,4,5,8,9,12,13).
    /// The empty string is the empty mask.
    pub fn parse_cpulist(list: &str) -> Result<CpuMask, CpuListError> {
        let err = |reason: String| CpuListError {
            list: list.to_string(),
            reason,
        };
        let num = |s: &str| -> Result<usize, CpuListError> {
            let s = s.trim();
            if s.is_empty() || !s.bytes().all(|b| b.is_ascii_digit()) {
                return Err(err(format!("`{s}` is not a CPU number")));
            }
            let n: usize = s.parse().map_err(|_| err(format!("`{s}` is too large")))?;
            if n > CPULIST_MAX_CPU {
                return Err(err(format!("CPU {n} is above {CPULIST_MAX_CPU}")));
            }
            Ok(n)
        };
        let mut m = CpuMask::new();
        let trimmed = list.trim();
        if trimmed.is_empty() {
            return Ok(m);
        }
        for part in trimmed.split(',') {
            let (range, stride) = match part.split_once(':') {
                Some((r, s)) => (r, Some(s)),
                None => (part, None),
            };
            let (a, b) = match range.split_once('-') {
                Some((a, b)) => (num(a)?, num(b)?),
                None => {
                    let a = num(range)?;
                    (a, a)
                }
            };
            if a > b {
                return Err(err(format!("range {a}-{b} is backwards")));
            }
            let (used, group) = match stride {
                None => (1, 1),
                Some(s) => {
                    let (u, g) = s
                        .split_once('/')
                        .ok_or_else(|| err(format!("stride `{s}` is not `used/group`")))?;
                    let (u, g) = (num(u)?, num(g)?);
                    if u == 0 || g == 0 || u > g {
                        return Err(err(format!("stride {u}/{g} needs 0 < used <= group")));
                    }
                    (u, g)
                }
            };
            for c in a..=b {
                if (c - a) % group < used {
                    m.set(c);
                }
            }
        }
        Ok(m)
    }
}

impl FromIterator<usize> for CpuMask {
    fn from_iter<I: IntoIterator<Item = usize>>(iter: I) -> CpuMask {
        let mut m = CpuMask::new();
        for c in iter {
            m.set(c);
        }
        m
    }
}

/// Ascending iterator over a [`CpuMask`].
pub struct Iter<'a> {
    mask: &'a CpuMask,
    next: usize,
}

impl Iterator for Iter<'_> {
    type Item = usize;
    fn next(&mut self) -> Option<usize> {
        let c = self.mask.next_from(self.next)?;
        self.next = c + 1;
        Some(c)
    }
}

impl<'a> IntoIterator for &'a CpuMask {
    type Item = usize;
    type IntoIter = Iter<'a>;
    fn into_iter(self) -> Iter<'a> {
        self.iter()
    }
}

impl BitAnd for &CpuMask {
    type Output = CpuMask;
    fn bitand(self, o: &CpuMask) -> CpuMask {
        self.and(o)
    }
}
impl BitOr for &CpuMask {
    type Output = CpuMask;
    fn bitor(self, o: &CpuMask) -> CpuMask {
        self.or(o)
    }
}
impl Sub for &CpuMask {
    type Output = CpuMask;
    /// `a - b` is `cpumask_andnot(a, b)`.
    fn sub(self, o: &CpuMask) -> CpuMask {
        self.andnot(o)
    }
}

impl fmt::Display for CpuMask {
    /// The kernel's cpulist format (`%*pbl`): ascending runs, `a-b` for runs of two or more.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let mut first = true;
        let mut it = self.iter().peekable();
        while let Some(start) = it.next() {
            let mut end = start;
            while it.peek() == Some(&(end + 1)) {
                end = it.next().unwrap_or(end);
            }
            if !first {
                f.write_str(",")?;
            }
            first = false;
            if end == start {
                write!(f, "{start}")?;
            } else {
                write!(f, "{start}-{end}")?;
            }
        }
        Ok(())
    }
}

impl fmt::Debug for CpuMask {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "CpuMask{{{self}}}")
    }
}

#[cfg(test)]
mod tests {
    #[test]
    fn weight_range_counts_members_in_the_range() {
        // {1, 3, 63, 64, 130, 300}: hand-counted per range below
        let m: CpuMask = [1usize, 3, 63, 64, 130, 300].into_iter().collect();
        assert_eq!(m.weight_range(0, 0), 0);
        assert_eq!(m.weight_range(0, 1), 0);
        assert_eq!(m.weight_range(0, 2), 1); // 1
        assert_eq!(m.weight_range(2, 64), 2); // 3, 63
        assert_eq!(m.weight_range(63, 65), 2); // 63, 64
        assert_eq!(m.weight_range(64, 128), 1); // 64
        assert_eq!(m.weight_range(4, 131), 3); // 63, 64, 130
        assert_eq!(m.weight_range(0, 1000), 6);
        assert_eq!(m.weight_range(301, 1000), 0);
        assert_eq!(m.weight_range(200, 100), 0);
    }

    #[test]
    fn inline_and_heap_words_behave_alike() {
        // masks crossing the 256-CPU inline boundary both ways compare, hash and operate as
        // the members they hold
        use std::hash::{Hash, Hasher};
        let h = |m: &CpuMask| {
            let mut s = std::collections::hash_map::DefaultHasher::new();
            m.hash(&mut s);
            s.finish()
        };
        let mut a = CpuMask::range(250, 260);
        assert_eq!(a.weight(), 10);
        assert_eq!(a.last(), Some(259));
        for c in 256..260 {
            a.clear(c);
        }
        let b = CpuMask::range(250, 256);
        assert_eq!(a, b);
        assert_eq!(h(&a), h(&b));
        a.set(600);
        assert_eq!(
            a.iter().collect::<Vec<_>>(),
            vec![250, 251, 252, 253, 254, 255, 600]
        );
        let big = CpuMask::range(0, 700);
        assert_eq!(big.and(&a), a);
        assert_eq!(big.andnot(&a).weight(), 693);
        assert_eq!(b.or(&CpuMask::single(640)).last(), Some(640));
        a.clear(600);
        assert_eq!(a, b);
        assert_eq!(h(&a), h(&b));
        assert!(a.intersects(&big) && a.is_subset_of(&big));
    }

    use super::*;

    fn m(list: &str) -> CpuMask {
        CpuMask::parse_cpulist(list).unwrap()
    }

    #[test]
    fn cpulist_format_matches_kernel() {
        // Kernel %*pbl: runs as a-b, singletons bare, comma separated, ascending.
        assert_eq!(m("0-3,8").to_string(), "0-3,8");
        assert_eq!(m("8,3,2,1,0").to_string(), "0-3,8");
        assert_eq!(m("5").to_string(), "5");
        assert_eq!(m("4,5").to_string(), "4-5"); // two adjacent CPUs print as a range
        assert_eq!(m("").to_string(), "");
        assert_eq!(m("0-15,32-47").to_string(), "0-15,32-47");
        assert_eq!(m("63-65").to_string(), "63-65"); // crosses a word boundary
        assert_eq!(format!("{:?}", m("1,3")), "CpuMask{1,3}");
    }

    #[test]
    fn cpulist_parse_strides_and_errors() {
        // bitmap_parselist: "0-15:2/4" takes 2 of every 4 starting at 0.
        assert_eq!(m("0-15:2/4").to_string(), "0-1,4-5,8-9,12-13");
        assert_eq!(m(" 3 ").to_string(), "3");
        assert!(CpuMask::parse_cpulist("3-1").is_err());
        assert!(CpuMask::parse_cpulist("a").is_err());
        assert!(CpuMask::parse_cpulist("1,,2").is_err());
        assert!(CpuMask::parse_cpulist("0-3:3/2").is_err());
        assert!(CpuMask::parse_cpulist("9000").is_err());
    }

    #[test]
    fn set_ops_weight_first() {
        let a = m("0-7");
        let b = m("4-11");
        assert_eq!((&a & &b).to_string(), "4-7");
        assert_eq!((&a | &b).to_string(), "0-11");
        assert_eq!((&a - &b).to_string(), "0-3");
        assert_eq!(a.weight(), 8);
        assert_eq!(b.first(), Some(4));
        assert_eq!(b.last(), Some(11));
        assert!(a.intersects(&b));
        assert!(!m("0-3").intersects(&m("4-7")));
        assert!(m("1-2").is_subset_of(&a));
        assert!(!b.is_subset_of(&a));
        assert!(CpuMask::new().first().is_none());
        assert_eq!(a.next_after(7), None);
        assert_eq!(b.next_after(4), Some(5));
        assert_eq!(m("0,100").next_after(0), Some(100));
        assert_eq!(m("0-3,8").nth(4), Some(8));
    }

    #[test]
    fn equality_ignores_history() {
        let mut a = m("0,130");
        a.clear(130);
        assert_eq!(a, m("0"));
        assert_eq!(CpuMask::range(2, 4), m("2-3"));
        assert_eq!(m("0-3").and(&m("64-70")), CpuMask::new());
        assert!(m("0-3").and(&m("64-70")).is_empty());
    }

    #[test]
    fn iteration_ascending_and_wrapping() {
        let a = m("1,3,5,64,70");
        assert_eq!(a.iter().collect::<Vec<_>>(), vec![1, 3, 5, 64, 70]);
        // for_each_cpu_wrap(cpu, mask, 5): 5, 64, 70, then 1, 3.
        assert_eq!(a.iter_wrap(5).collect::<Vec<_>>(), vec![5, 64, 70, 1, 3]);
        // Start not in the mask: first CPU at or after it, then wrap.
        assert_eq!(a.iter_wrap(4).collect::<Vec<_>>(), vec![5, 64, 70, 1, 3]);
        assert_eq!(a.iter_wrap(0).collect::<Vec<_>>(), vec![1, 3, 5, 64, 70]);
        assert_eq!(a.iter_wrap(200).collect::<Vec<_>>(), vec![1, 3, 5, 64, 70]);
        assert_eq!(
            CpuMask::new().iter_wrap(3).collect::<Vec<_>>(),
            Vec::<usize>::new()
        );
    }
}
