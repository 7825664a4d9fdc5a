//! rtapp
