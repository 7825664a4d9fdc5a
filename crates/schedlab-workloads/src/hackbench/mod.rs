//! hackbench
