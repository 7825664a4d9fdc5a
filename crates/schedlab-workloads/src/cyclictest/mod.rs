//! cyclictest
