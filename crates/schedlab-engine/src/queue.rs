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
use std::cmp::Ordering;
use std::collections::BinaryHeap;

struct Entry<E> {
    time: u64,
    rank: u8,
    seq: u64,
    payload: E,
}

impl<E> Entry<E> {
    #[inline]
    fn key(&self) -> (u64, u8, u64) {
        (self.time, self.rank, self.seq)
    }
}
impl<E> PartialEq for Entry<E> {
    fn eq(&self, o: &Self) -> bool {
        self.key() == o.key()
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
    fn cmp(&self, o: &Self) -> Ordering {
        o.key().cmp(&self.key())
    }
}

/// A min-queue of events with a deterministic total order. See the module docs.
pub struct EventQueue<E> {
    heap: BinaryHeap<Entry<E>>,
    next_seq: u64,
    now: SimTime,
    popped: u64,
}

impl<E> Default for EventQueue<E> {
    fn default() -> Self {
        Self::new()
    }
}

impl<E> EventQueue<E> {
    pub fn new() -> Self {
        EventQueue {
            heap: BinaryHeap::new(),
            next_seq: 0,
            now: SimTime::ZERO,
            popped: 0,
        }
    }

    /// Schedules `payload` at `time` with the given kind rank. Returns its sequence number.
    /// Panics if `time` is before the time of the last popped event.
    #[inline]
    pub fn push(&mut self, time: SimTime, rank: u8, payload: E) -> u64 {
        assert!(
            time >= self.now,
            "event scheduled in the past: {:?} < now {:?}",
            time,
            self.now
        );
        let seq = self.next_seq;
        self.next_seq += 1;
        self.heap.push(Entry {
            time: time.0,
            rank,
            seq,
            payload,
        });
        seq
    }

    /// Removes and returns the earliest event. Time never goes backwards.
    #[inline]
    pub fn pop(&mut self) -> Option<(SimTime, E)> {
        let e = self.heap.pop()?;
        let t = SimTime(e.time);
        assert!(t >= self.now, "time went backwards in the event queue");
        self.now = t;
        self.popped += 1;
        Some((t, e.payload))
    }

    /// Time of the earliest pending event.
    #[inline]
    pub fn peek_time(&self) -> Option<SimTime> {
        self.heap.peek().map(|e| SimTime(e.time))
    }

    /// Time of the most recently popped event (the simulation's "now").
    #[inline]
    pub fn now(&self) -> SimTime {
        self.now
    }

    /// Number of events popped so far.
    pub fn popped(&self) -> u64 {
        self.popped
    }

    pub fn len(&self) -> usize {
        self.heap.len()
    }

    pub fn is_empty(&self) -> bool {
        self.heap.is_empty()
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
    #[should_panic(expected = "in the past")]
    fn refuses_past() {
        let mut q = EventQueue::new();
        q.push(SimTime(10), 0, ());
        q.pop();
        q.push(SimTime(9), 0, ());
    }
}
