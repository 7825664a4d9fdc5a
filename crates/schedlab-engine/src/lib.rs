//! schedlab-engine: the discrete-event core. Simulated time ([`SimTime`], [`Nanos`]), the
//! totally ordered [`EventQueue`], seeded RNG substreams ([`RngStreams`]) and typed arena
//! ids ([`define_id!`]). It knows nothing about scheduling.

pub mod ids;
pub mod input;
pub mod queue;
pub mod rng;
pub mod time;
mod wheel;

pub use queue::EventQueue;
pub use rng::{Rng, RngStreams};
pub use time::{parse_duration, DurationError, Nanos, SimTime, MAX_SIM_NS, MAX_SIM_SECS};
