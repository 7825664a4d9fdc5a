//! schedlab-workloads
