//! Typed indices into `Vec` arenas.
//!
//! Every simulated object (task, entity, runqueue, pipe…) lives in a `Vec` and is named by a
//! small integer wrapped in its own type, so a task id can never index the CPU table.

/// Declares `pub struct $name(u32)` with conversions to and from `usize`.
#[macro_export]
macro_rules! define_id {
    ($(#[$m:meta])* $name:ident) => {
        $(#[$m])*
        #[derive(Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Debug, Default)]
        pub struct $name(pub u32);
        impl $name {
            #[inline]
            pub const fn new(i: usize) -> Self {
                $name(i as u32)
            }
            #[inline]
            pub const fn index(self) -> usize {
                self.0 as usize
            }
        }
        impl ::std::fmt::Display for $name {
            fn fmt(&self, f: &mut ::std::fmt::Formatter<'_>) -> ::std::fmt::Result {
                write!(f, "{}", self.0)
            }
        }
    };
}
