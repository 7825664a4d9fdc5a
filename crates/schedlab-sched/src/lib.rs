//! schedlab-sched
