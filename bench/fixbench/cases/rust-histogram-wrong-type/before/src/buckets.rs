/// Upper bounds (inclusive, milliseconds) of the buckets; one more bucket holds everything slower.
pub const BOUNDS_MS: [u64; 10] = [1, 2, 5, 10, 25, 50, 100, 250, 500, 1000];

/// Index of the bucket that holds a sample of `ms` milliseconds.
pub fn bucket_of(ms: u64) -> usize {
    BOUNDS_MS.iter().position(|&bound| ms <= bound).unwrap_or(BOUNDS_MS.len())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bounds_are_inclusive() {
        assert_eq!(bucket_of(0), 0);
        assert_eq!(bucket_of(5), 2);
        assert_eq!(bucket_of(6), 3);
        assert_eq!(bucket_of(5000), BOUNDS_MS.len());
    }
}
