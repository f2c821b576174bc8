//! A fixed-bucket latency histogram; one per route, so it has to stay small.

mod buckets;
mod histogram;

pub use buckets::BOUNDS_MS;
pub use histogram::Histogram;
