//! schedlab
