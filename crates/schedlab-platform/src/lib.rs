//! schedlab-platform
