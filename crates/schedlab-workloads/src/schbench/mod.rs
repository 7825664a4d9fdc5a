//! schbench
