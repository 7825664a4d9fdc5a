//! schedlab-trace
