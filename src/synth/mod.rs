//! Generators of realistic synthetic captures for benchmarks and property tests.

pub mod kineto;
pub mod replicate;
pub mod slices;
pub mod xplane;
