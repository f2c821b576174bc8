const BINARY: [&str; 5] = ["B", "KiB", "MiB", "GiB", "TiB"];
const DECIMAL: [&str; 5] = ["B", "kB", "MB", "GB", "TB"];

fn format_with(bytes: u64, base: f64, units: &[&str]) -> String {
    let mut value = bytes as f64;
    let mut unit = 0;
    while value >= base && unit + 1 < units.len() {
        value /= base;
        unit += 1;
    }
    if unit == 0 {
        format!("{bytes} B")
    } else {
        format!("{value:.1} {}", units[unit])
    }
}

/// Formats with powers of 1024 ("1.5 KiB").
pub fn format_binary(bytes: u64) -> String {
    format_with(bytes, 1024.0, &BINARY)
}

/// Formats with powers of 1000 ("1.5 kB").
pub fn format_decimal(bytes: u64) -> String {
    format_with(bytes, 1000.0, &DECIMAL)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn small_sizes_stay_in_bytes() {
        assert_eq!(format_binary(512), "512 B");
        assert_eq!(format_decimal(999), "999 B");
    }

    #[test]
    fn picks_the_largest_unit_below_the_value() {
        assert_eq!(format_binary(1536), "1.5 KiB");
        assert_eq!(format_decimal(2_500_000), "2.5 MB");
    }
}
