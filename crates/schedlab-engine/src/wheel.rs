//! The event queue for machines with many CPUs (`EventQueue::for_cpus`): a wheel of 8 ns
//! buckets for the next 16 µs in front of a binary heap. Same order as the front array of
//! `queue.rs` — `(time, rank, sequence)` — it only finds the earliest event differently.

use crate::queue::{pack_key, Entry};
use crate::time::SimTime;
use std::cell::Cell;
use std::collections::{BinaryHeap, VecDeque};

/// Width of a near-future bucket: 2^SHIFT ns.
const SHIFT: u32 = 3;

/// Number of near-future buckets (a power of two): they cover the next `WHEEL << SHIFT` ns.
const WHEEL: usize = 2048;

/// Words of the bit map of non-empty buckets (at most 64: one summary word).
const WORDS: usize = WHEEL / 64;
const _: () = assert!(WORDS <= 64 && WORDS * 64 == WHEEL);

/// Where the smallest pending key is: the wheel bucket (its last entry), or one of these.
const LOC_HEAP: u64 = u64::MAX - 1;
const LOC_LANE: u64 = u64::MAX;

/// `WheelQueue::min_key` when the smallest key is not known.
const UNKNOWN: u128 = u128::MAX;

/// The event queue of a machine with many CPUs (see [`crate::queue`] for the order).
///
/// The events of the next `WHEEL << SHIFT` ns (16 µs) sit in a wheel of buckets of 8 ns
/// each, with a bit map of the non-empty ones (and a summary word of its non-zero words);
/// later events wait in a binary heap. A bucket holds a few events, sorted by decreasing key:
/// a push inserts from its end, a pop finds the first non-empty bucket at or after the
/// current one through the bit map, takes its last entry and compares it with the heap's
/// minimum and the lane's head. The bucket of an event is its absolute time / 8 ns modulo
/// `WHEEL`: since no event is pushed before the current time and none beyond the wheel's
/// reach goes into it, the buckets from the current one on, in wheel order, are in time
/// order. The smallest key found is kept until the next pop (a peek between two pops, as
/// run-ahead does, costs nothing more). So a push and a pop cost a few dozen instructions
/// however many CPUs have events pending (the sorted array of the earliest events moves half
/// of its entries on each insert when 80 CPUs have events within the same microsecond).
///
/// Events pushed with `push_monotone` whose key is above every key pushed that
/// way before (periodic ticks: the next tick boundary never goes back) are appended to a
/// FIFO lane instead, which costs nothing however many of them are pending.
/// Invariant: the wheel holds only events of buckets `cur..cur + WHEEL`; `lane` is sorted.
pub(crate) struct WheelQueue<E> {
    wheel: Vec<Vec<Entry<E>>>,
    /// Bit `i % 64` of word `i / 64`: bucket `i` is non-empty.
    bits: [u64; WORDS],
    /// Bit `w`: word `w` of `bits` is non-zero.
    summary: u64,
    /// Number of events in the wheel.
    in_wheel: usize,
    /// The absolute bucket (time >> SHIFT) of the current time.
    cur: u64,
    heap: BinaryHeap<Entry<E>>,
    /// The smallest pending key when known, else `UNKNOWN` (a pop forgets it, a peek or a
    /// pop finds it, a push below it replaces it), and where it is (`LOC_*`).
    min_key: Cell<u128>,
    min_loc: Cell<u64>,
    lane: VecDeque<Entry<E>>,
    /// The key at the head of `lane`, `u128::MAX` when it is empty (keys never reach it: the
    /// sequence number stays below `2^56 - 1`).
    lane_min: u128,
    next_seq: u64,
    now: SimTime,
    popped: u64,
}

impl<E> WheelQueue<E> {
    pub(crate) fn new() -> Self {
        WheelQueue {
            wheel: (0..WHEEL).map(|_| Vec::new()).collect(),
            bits: [0; WORDS],
            summary: 0,
            in_wheel: 0,
            cur: 0,
            heap: BinaryHeap::new(),
            min_key: Cell::new(UNKNOWN),
            min_loc: Cell::new(0),
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
                self.note_push(key, LOC_LANE);
            }
            self.lane.push_back(e);
        } else {
            self.push_entry(e);
        }
        seq
    }

    #[inline]
    fn push_entry(&mut self, e: Entry<E>) {
        let b = ((e.key >> 64) as u64) >> SHIFT;
        // b >= cur: nothing is pushed before the current time
        let key = e.key;
        if b - self.cur >= WHEEL as u64 {
            self.heap.push(e);
            self.note_push(key, LOC_HEAP);
            return;
        }
        let i = b as usize % WHEEL;
        self.bits[i / 64] |= 1 << (i % 64);
        self.summary |= 1 << (i / 64);
        // a bucket is sorted by decreasing key (it holds a few events): insert from its end
        let v = &mut self.wheel[i];
        let mut j = v.len();
        while j > 0 && v[j - 1].key < key {
            j -= 1;
        }
        if j == v.len() {
            v.push(e);
        } else {
            v.insert(j, e);
        }
        self.in_wheel += 1;
        self.note_push(key, i as u64);
    }

    /// A key was pushed at `loc`: it is the new minimum if it is below the known one.
    #[inline]
    fn note_push(&mut self, key: u128, loc: u64) {
        if key < self.min_key.get() {
            // UNKNOWN is above every key: an unknown minimum stays unknown
            if self.min_key.get() != UNKNOWN {
                self.min_key.set(key);
                self.min_loc.set(loc);
            }
        }
    }

    /// The smallest pending key and where it is (`UNKNOWN` when the queue is empty).
    #[inline]
    fn find_min(&self) -> (u128, u64) {
        let k = self.min_key.get();
        if k != UNKNOWN {
            return (k, self.min_loc.get());
        }
        let (mut best, mut loc) = match self.wheel_min() {
            Some((b, k)) => (k, b as u64),
            None => (UNKNOWN, 0),
        };
        if let Some(h) = self.heap.peek() {
            if h.key < best {
                best = h.key;
                loc = LOC_HEAP;
            }
        }
        if self.lane_min < best {
            best = self.lane_min;
            loc = LOC_LANE;
        }
        self.min_key.set(best);
        self.min_loc.set(loc);
        (best, loc)
    }

    /// The first non-empty bucket at or after the current one, in time order.
    #[inline]
    fn first_bucket(&self) -> Option<usize> {
        if self.in_wheel == 0 {
            return None;
        }
        let start = self.cur as usize % WHEEL;
        let w0 = start / 64;
        let head = self.bits[w0] & (!0u64 << (start % 64));
        if head != 0 {
            return Some(w0 * 64 + head.trailing_zeros() as usize);
        }
        // the words after the start word, then the words up to it (its buckets before
        // `start` are the wheel's last)
        let after = self.summary & (!1u64 << w0);
        let w = if after != 0 {
            after.trailing_zeros() as usize
        } else if self.summary != 0 {
            self.summary.trailing_zeros() as usize
        } else {
            return None;
        };
        Some(w * 64 + self.bits[w].trailing_zeros() as usize)
    }

    /// The bucket of the smallest wheel key (the bucket's last), and the key.
    #[inline]
    fn wheel_min(&self) -> Option<(usize, u128)> {
        let b = self.first_bucket()?;
        self.wheel[b].last().map(|e| (b, e.key))
    }

    /// Removes and returns the earliest event. Time never goes backwards.
    #[inline]
    pub(crate) fn pop(&mut self) -> Option<(SimTime, E)> {
        let (key, loc) = self.find_min();
        if key == UNKNOWN {
            return None;
        }
        self.min_key.set(UNKNOWN);
        let e = match loc {
            LOC_HEAP => self.heap.pop()?,
            LOC_LANE => {
                let e = self.lane.pop_front()?;
                self.lane_min = self.lane.front().map_or(u128::MAX, |l| l.key);
                e
            }
            _ => {
                let b = loc as usize;
                let v = &mut self.wheel[b];
                // the smallest key of a bucket is its last
                let e = v.pop()?;
                if v.is_empty() {
                    self.bits[b / 64] &= !(1 << (b % 64));
                    if self.bits[b / 64] == 0 {
                        self.summary &= !(1 << (b / 64));
                    }
                }
                self.in_wheel -= 1;
                e
            }
        };
        let t = SimTime((e.key >> 64) as u64);
        assert!(t >= self.now, "time went backwards in the event queue");
        self.now = t;
        self.cur = t.0 >> SHIFT;
        self.popped += 1;
        Some((t, e.payload))
    }

    /// Time of the earliest pending event.
    #[inline]
    pub(crate) fn peek_time(&self) -> Option<SimTime> {
        let (k, _) = self.find_min();
        (k != UNKNOWN).then_some(SimTime((k >> 64) as u64))
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
        self.heap.len() + self.in_wheel + self.lane.len()
    }

    pub(crate) fn is_empty(&self) -> bool {
        self.len() == 0
    }
}
