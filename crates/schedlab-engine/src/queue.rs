//! The event queue: a total order on events by `(time, rank, sequence)`.
//!
//! * `time` — when the event fires.
//! * `rank` — a small integer given by the caller for the *kind* of event. Among events at
//!   the same instant, lower ranks fire first. The simulated kernel documents its rank
//!   table next to its event enum; the table is load-bearing (e.g. a timer expiry at time t
//!   must be seen before the tick at t so that the tick's accounting includes the wakeup).
//! * `sequence` — insertion counter: equal `(time, rank)` pairs leave in insertion order.
//!
//! There are therefore no ties: the same pushes in the same order always pop in the same
//! order. `pop` asserts that time never goes backwards, and `push` refuses an event in the
//! past.
//!
//! ```
//! use schedlab_engine::{EventQueue, SimTime};
//! let mut q = EventQueue::new();
//! q.push(SimTime(10), 1, "tick");
//! q.push(SimTime(10), 0, "timer");   // same time, lower rank: first
//! q.push(SimTime(5), 9, "early");
//! q.push(SimTime(10), 0, "timer2");  // same time and rank: after "timer"
//! let order: Vec<_> = std::iter::from_fn(|| q.pop().map(|(_, e)| e)).collect();
//! assert_eq!(order, ["early", "timer", "timer2", "tick"]);
//! ```

use crate::time::SimTime;
use crate::wheel::WheelQueue;
use std::cmp::Ordering;
use std::collections::{BinaryHeap, VecDeque};

/// `(time, rank, seq)` packed into one integer: time in the high 64 bits, then the rank in
/// 8 bits and the sequence number in the low 56 bits, so that one `u128` comparison is the
/// lexicographic order of the triple.
pub(crate) struct Entry<E> {
    pub(crate) key: u128,
    pub(crate) payload: E,
}

pub(crate) const SEQ_BITS: u32 = 56;

/// The packed key of a new event at `time` with kind `rank` (time, then rank, then push order)
/// and its sequence number, taken from `next_seq`. Panics if `time` is before `now` (the time
/// of the last popped event) or the sequence numbers run out.
#[inline]
pub(crate) fn pack_key(now: SimTime, next_seq: &mut u64, time: SimTime, rank: u8) -> (u128, u64) {
    assert!(
        time >= now,
        "event scheduled in the past: {:?} < now {:?}",
        time,
        now
    );
    let seq = *next_seq;
    *next_seq += 1;
    assert!(
        seq < (1 << SEQ_BITS) - 1,
        "event sequence numbers exhausted"
    );
    let key = ((time.0 as u128) << 64) | ((rank as u128) << SEQ_BITS) | seq as u128;
    (key, seq)
}

impl<E> PartialEq for Entry<E> {
    fn eq(&self, o: &Self) -> bool {
        self.key == o.key
    }
}
impl<E> Eq for Entry<E> {}
impl<E> PartialOrd for Entry<E> {
    fn partial_cmp(&self, o: &Self) -> Option<Ordering> {
        Some(self.cmp(o))
    }
}
impl<E> Ord for Entry<E> {
    /// Reversed so that `BinaryHeap` (a max-heap) pops the smallest key.
    #[inline]
    fn cmp(&self, o: &Self) -> Ordering {
        o.key.cmp(&self.key)
    }
}

/// How many of the earliest events are kept in the sorted front array.
const FRONT_CAP: usize = 64;

/// How many events a pop moves from the heap to an empty front array at once.
const REFILL: usize = 16;

/// A min-queue of events with a deterministic total order. See the module docs.
///
/// Two implementations give the same order: a sorted front array before a binary heap
/// (`FrontQueue`, the default: few CPUs, a short insert near the early end) and a wheel of
/// 8 ns buckets (`WheelQueue`, [`EventQueue::for_cpus`] with many CPUs, where the events of
/// 80 CPUs fall within the same microsecond and an array insert would move half the array).
pub struct EventQueue<E> {
    imp: Imp<E>,
}

enum Imp<E> {
    Front(FrontQueue<E>),
    Wheel(Box<WheelQueue<E>>),
}

/// From this many CPUs on, [`EventQueue::for_cpus`] uses the wheel.
pub const WHEEL_MIN_CPUS: usize = 32;

impl<E> Default for EventQueue<E> {
    fn default() -> Self {
        Self::new()
    }
}

macro_rules! each {
    ($self:expr, $q:ident => $e:expr) => {
        match &$self.imp {
            Imp::Front($q) => $e,
            Imp::Wheel($q) => $e,
        }
    };
    (mut $self:expr, $q:ident => $e:expr) => {
        match &mut $self.imp {
            Imp::Front($q) => $e,
            Imp::Wheel($q) => $e,
        }
    };
}

impl<E> EventQueue<E> {
    /// The front-array queue.
    pub fn new() -> Self {
        EventQueue {
            imp: Imp::Front(FrontQueue::new()),
        }
    }

    /// The queue for a machine of `ncpus` CPUs: the wheel from [`WHEEL_MIN_CPUS`] on.
    pub fn for_cpus(ncpus: usize) -> Self {
        if ncpus >= WHEEL_MIN_CPUS {
            Self::wheel()
        } else {
            Self::new()
        }
    }

    /// The wheel queue, whatever the machine.
    pub fn wheel() -> Self {
        EventQueue {
            imp: Imp::Wheel(Box::new(WheelQueue::new())),
        }
    }

    /// Schedules `payload` at `time` with the given kind rank. Returns its sequence number.
    /// Panics if `time` is before the time of the last popped event.
    #[inline]
    pub fn push(&mut self, time: SimTime, rank: u8, payload: E) -> u64 {
        each!(mut self, q => q.push(time, rank, payload))
    }

    /// As [`EventQueue::push`], for a kind of event whose times mostly do not decrease from
    /// one push to the next (periodic ticks: they go to a FIFO lane; the order of the events
    /// is the same as with `push`).
    #[inline]
    pub fn push_monotone(&mut self, time: SimTime, rank: u8, payload: E) -> u64 {
        each!(mut self, q => q.push_monotone(time, rank, payload))
    }

    /// Removes and returns the earliest event. Time never goes backwards.
    #[inline]
    pub fn pop(&mut self) -> Option<(SimTime, E)> {
        each!(mut self, q => q.pop())
    }

    /// Time of the earliest pending event.
    #[inline]
    pub fn peek_time(&self) -> Option<SimTime> {
        each!(self, q => q.peek_time())
    }

    /// Time of the most recently popped event (the simulation's "now").
    #[inline]
    pub fn now(&self) -> SimTime {
        each!(self, q => q.now())
    }

    /// Number of events popped so far.
    pub fn popped(&self) -> u64 {
        each!(self, q => q.popped())
    }

    pub fn len(&self) -> usize {
        each!(self, q => q.len())
    }

    pub fn is_empty(&self) -> bool {
        each!(self, q => q.is_empty())
    }
}

/// The event queue of a machine with few CPUs (see the module docs for the order).
///
/// The earliest events (up to [`FRONT_CAP`]) are kept in a small array sorted by decreasing
/// key, the rest in a binary heap. A simulation mostly pushes the next event of the CPU it is
/// processing, which is among the earliest: a binary search and a short move, and the pop
/// takes the array's last entry. A machine with few CPUs keeps all its events in the array;
/// thousands of sleepers' timers live in the heap. When the array runs empty, a pop moves the
/// next [`REFILL`] events from the heap into it, so that later pushes of near events are
/// array inserts again.
///
/// Events pushed with `push_monotone` whose key is above every key pushed that
/// way before (periodic ticks: the next tick boundary never goes back) are appended to a
/// FIFO lane instead, which costs nothing however many of them are pending.
/// Invariant: every key in `front` is below every key in `heap`; `lane` is sorted.
pub(crate) struct FrontQueue<E> {
    front: Vec<Entry<E>>,
    heap: BinaryHeap<Entry<E>>,
    lane: VecDeque<Entry<E>>,
    /// The key at the head of `lane`, `u128::MAX` when it is empty (keys never reach it: the
    /// sequence number stays below `2^56 - 1`).
    lane_min: u128,
    next_seq: u64,
    now: SimTime,
    popped: u64,
}

impl<E> FrontQueue<E> {
    pub(crate) fn new() -> Self {
        FrontQueue {
            front: Vec::with_capacity(FRONT_CAP + 1),
            heap: BinaryHeap::new(),
            lane: VecDeque::new(),
            lane_min: u128::MAX,
            next_seq: 0,
            now: SimTime::ZERO,
            popped: 0,
        }
    }

    /// The packed key of a new event (and its sequence number).
    #[inline]
    fn key(&mut self, time: SimTime, rank: u8) -> (u128, u64) {
        pack_key(self.now, &mut self.next_seq, time, rank)
    }

    /// Schedules `payload` at `time` with the given kind rank. Returns its sequence number.
    /// Panics if `time` is before the time of the last popped event.
    #[inline]
    pub(crate) fn push(&mut self, time: SimTime, rank: u8, payload: E) -> u64 {
        let (key, seq) = self.key(time, rank);
        self.push_entry(Entry { key, payload });
        seq
    }

    /// As [`EventQueue::push`], for a kind of event whose times mostly do not decrease from
    /// one push to the next (the order of the events is the same as with `push`).
    #[inline]
    pub(crate) fn push_monotone(&mut self, time: SimTime, rank: u8, payload: E) -> u64 {
        let (key, seq) = self.key(time, rank);
        let e = Entry { key, payload };
        if self.lane.back().is_none_or(|b| key > b.key) {
            if self.lane.is_empty() {
                self.lane_min = key;
            }
            self.lane.push_back(e);
        } else {
            self.push_entry(e);
        }
        seq
    }

    #[inline]
    fn push_entry(&mut self, e: Entry<E>) {
        let key = e.key;
        // the key belongs in front if it is below the heap's minimum; with a non-empty front
        // that is the case when it is below the front's maximum (front < heap)
        let to_front = match self.front.first() {
            Some(max) => key < max.key || self.heap.is_empty(),
            None => self.heap.peek().is_none_or(|h| key < h.key),
        };
        if !to_front {
            self.heap.push(e);
            return;
        }
        // most pushes are of the next few events: look from the earliest end first
        let f = &self.front;
        let mut i = f.len();
        let stop = i.saturating_sub(8);
        while i > stop && f[i - 1].key < key {
            i -= 1;
        }
        if i == stop && i > 0 && f[i - 1].key < key {
            i = f[..i].partition_point(|x| x.key > key);
        }
        self.front.insert(i, e);
        if self.front.len() > FRONT_CAP {
            // the largest front key is below every heap key: it becomes the heap's minimum
            let max = self.front.remove(0);
            self.heap.push(max);
        }
    }

    /// Refills an empty front array with the heap's smallest entries.
    #[cold]
    fn refill(&mut self) {
        debug_assert!(self.front.is_empty());
        while self.front.len() < REFILL {
            match self.heap.pop() {
                Some(e) => self.front.push(e),
                None => break,
            }
        }
        self.front.reverse();
    }

    /// Removes and returns the earliest event. Time never goes backwards.
    #[inline]
    pub(crate) fn pop(&mut self) -> Option<(SimTime, E)> {
        if self.front.is_empty() && !self.heap.is_empty() {
            self.refill();
        }
        let from_lane = match self.front.last() {
            Some(f) => self.lane_min < f.key,
            None => true,
        };
        let e = if from_lane {
            let e = self.lane.pop_front()?;
            self.lane_min = self.lane.front().map_or(u128::MAX, |l| l.key);
            e
        } else {
            self.front.pop()?
        };
        let t = SimTime((e.key >> 64) as u64);
        assert!(t >= self.now, "time went backwards in the event queue");
        self.now = t;
        self.popped += 1;
        Some((t, e.payload))
    }

    /// Time of the earliest pending event.
    #[inline]
    pub(crate) fn peek_time(&self) -> Option<SimTime> {
        let main = self
            .front
            .last()
            .or_else(|| self.heap.peek())
            .map(|e| e.key);
        let key = match main {
            Some(a) => a.min(self.lane_min),
            None if self.lane.is_empty() => return None,
            None => self.lane_min,
        };
        Some(SimTime((key >> 64) as u64))
    }

    /// Time of the most recently popped event (the simulation's "now").
    #[inline]
    pub(crate) fn now(&self) -> SimTime {
        self.now
    }

    /// Number of events popped so far.
    pub(crate) fn popped(&self) -> u64 {
        self.popped
    }

    pub(crate) fn len(&self) -> usize {
        self.heap.len() + self.front.len() + self.lane.len()
    }

    pub(crate) fn is_empty(&self) -> bool {
        self.front.is_empty() && self.heap.is_empty() && self.lane.is_empty()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn order_time_rank_seq() {
        let mut q = EventQueue::new();
        q.push(SimTime(3), 2, 'a');
        q.push(SimTime(3), 1, 'b');
        q.push(SimTime(1), 5, 'c');
        q.push(SimTime(3), 1, 'd');
        let v: Vec<char> = std::iter::from_fn(|| q.pop().map(|x| x.1)).collect();
        assert_eq!(v, vec!['c', 'b', 'd', 'a']);
        assert_eq!(q.now(), SimTime(3));
    }

    #[test]
    fn same_order_as_a_sort_under_interleaved_pushes_and_pops() {
        interleaved(EventQueue::new());
        interleaved(EventQueue::wheel());
    }

    fn interleaved(mut q: EventQueue<u64>) {
        // Neither the sorted front array nor the wheel may change the order: compare with
        // sorting the keys.
        let mut r = crate::rng::Rng::from_seed(5);
        let mut reference: Vec<(u64, u8, u64)> = Vec::new();
        let mut now = 0u64;
        let mut seq = 0u64;
        for _ in 0..20_000 {
            if r.below(3) < 2 {
                let t = now + r.below(50);
                let rank = r.below(4) as u8;
                q.push(SimTime(t), rank, seq);
                reference.push((t, rank, seq));
                seq += 1;
            } else if let Some((t, s)) = q.pop() {
                reference.sort_unstable();
                let want = reference.remove(0);
                assert_eq!((t.0, s), (want.0, want.2));
                now = t.0;
            }
        }
        assert_eq!(q.len(), reference.len());
    }

    #[test]
    fn same_order_as_a_sort_with_wide_spreads_and_peeks() {
        wide(EventQueue::new());
        wide(EventQueue::wheel());
    }

    /// The wheel with events 0–40 ns apart (several in a bucket, the buckets wrapping round
    /// the wheel many times) and far ones in the heap.
    #[test]
    fn the_wheel_keeps_the_order_of_dense_events() {
        let mut r = crate::rng::Rng::from_seed(3);
        let mut q = EventQueue::wheel();
        let mut reference: std::collections::BTreeSet<(u64, u8, u64)> = Default::default();
        let mut now = 0u64;
        for seq in 0..200_000u64 {
            if r.below(2) == 0 || reference.is_empty() {
                let t = if r.below(50) == 0 {
                    now + (1 << 14) + r.below(1 << 16)
                } else {
                    now + r.below(40)
                };
                let rank = r.below(3) as u8;
                q.push(SimTime(t), rank, seq);
                reference.insert((t, rank, seq));
            } else {
                assert_eq!(q.peek_time(), reference.first().map(|x| SimTime(x.0)));
                let (t, s) = q.pop().unwrap();
                let w = reference.pop_first().unwrap();
                assert_eq!((t.0, s), (w.0, w.2));
                now = t.0;
            }
        }
    }

    fn wide(mut q: EventQueue<u64>) {
        // Times spread over 2^40 ns, pushes at the current instant with any rank (below the
        // last popped key), peeks between pops: the pops must follow the sorted keys exactly.
        let mut r = crate::rng::Rng::from_seed(11);
        let mut reference: std::collections::BTreeSet<(u64, u8, u64)> = Default::default();
        let mut now = 0u64;
        let mut seq = 0u64;
        for i in 0..50_000u64 {
            match r.below(6) {
                0 | 1 => {
                    let t = now + (r.next_u64() >> (24 + r.below(40)));
                    let rank = r.below(6) as u8;
                    q.push(SimTime(t), rank, seq);
                    reference.insert((t, rank, seq));
                    seq += 1;
                }
                5 => {
                    // the monotone lane: mostly the next "tick boundary" at or after now,
                    // sometimes a time below the lane's last one (the event goes elsewhere)
                    let t = if r.below(8) == 0 {
                        now + r.below(1 << 10)
                    } else {
                        ((now >> 20) + 1) << 20
                    };
                    let rank = 3;
                    q.push_monotone(SimTime(t), rank, seq);
                    reference.insert((t, rank, seq));
                    seq += 1;
                }
                2 => {
                    // at the current instant
                    let rank = r.below(6) as u8;
                    q.push(SimTime(now), rank, seq);
                    reference.insert((now, rank, seq));
                    seq += 1;
                }
                3 => {
                    let want = reference.iter().next().map(|x| SimTime(x.0));
                    assert_eq!(q.peek_time(), want, "peek at step {i}");
                }
                _ => {
                    let got = q.pop();
                    let want = reference.pop_first();
                    assert_eq!(
                        got.map(|(t, s)| (t.0, s)),
                        want.map(|w| (w.0, w.2)),
                        "step {i}"
                    );
                    if let Some(w) = want {
                        now = w.0;
                    }
                }
            }
            assert_eq!(q.len(), reference.len());
        }
        while let Some((t, s)) = q.pop() {
            let w = reference.pop_first().unwrap();
            assert_eq!((t.0, s), (w.0, w.2));
        }
        assert!(reference.is_empty() && q.is_empty());
    }

    #[test]
    #[should_panic(expected = "in the past")]
    fn refuses_past() {
        let mut q = EventQueue::new();
        q.push(SimTime(10), 0, ());
        q.pop();
        q.push(SimTime(9), 0, ());
    }
}
