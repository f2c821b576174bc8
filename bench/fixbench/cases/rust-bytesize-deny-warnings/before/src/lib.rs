//! Parse and print human-readable byte sizes ("1.5 MiB", "200kB").
#![deny(warnings)]
#![deny(missing_docs)]

mod format;
mod parse;

pub use format::{format_binary, format_decimal};
pub use parse::{parse_size, ParseError};

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn round_trips_binary_units() {
        for bytes in [0, 1, 1023, 1024, 1536, 10 * 1024 * 1024] {
            let text = format_binary(bytes);
            let back = parse_size(&text).unwrap();
            assert!((back as f64 - bytes as f64).abs() / (bytes.max(1) as f64) < 0.01, "{text}");
        }
    }
}
