use crate::buckets::{bucket_of, BOUNDS_MS};

#[derive(Debug, Clone, Default)]
pub struct Histogram {
    counts: [usize; BOUNDS_MS.len() + 1],
}

impl Histogram {
    pub fn new() -> Self {
        Self::default()
    }

    pub fn record(&mut self, ms: u64) {
        self.counts[bucket_of(ms)] += 1;
    }

    pub fn total(&self) -> usize {
        self.counts.iter().sum()
    }

    /// Upper bound of the bucket holding the q-quantile (0 < q <= 1); None when empty or beyond the last bound.
    pub fn quantile_bound_ms(&self, q: f64) -> Option<u64> {
        let total = self.total();
        if total == 0 {
            return None;
        }
        let wanted = (q * total as f64).ceil() as usize;
        let mut seen = 0;
        for (i, count) in self.counts.iter().enumerate() {
            seen += count;
            if seen >= wanted {
                return BOUNDS_MS.get(i).copied();
            }
        }
        None
    }

    pub fn merge(&mut self, other: &Histogram) {
        for (mine, theirs) in self.counts.iter_mut().zip(other.counts.iter()) {
            *mine += theirs;
        }
    }
}
