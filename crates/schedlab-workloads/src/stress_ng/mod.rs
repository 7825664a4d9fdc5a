//! stress_ng
