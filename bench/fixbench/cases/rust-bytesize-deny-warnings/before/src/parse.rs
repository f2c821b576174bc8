use std::fmt;
use std::num::ParseFloatError;

/// Why a size could not be read.
#[derive(Debug, PartialEq)]
pub enum ParseError {
    /// The text has no number in front.
    Empty,
    /// The number part is not a number.
    BadNumber(String),
    /// The unit is not one we know.
    UnknownUnit(String),
}

impl fmt::Display for ParseError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ParseError::Empty => write!(f, "empty size"),
            ParseError::BadNumber(n) => write!(f, "not a number: {n}"),
            ParseError::UnknownUnit(u) => write!(f, "unknown unit: {u}"),
        }
    }
}

impl std::error::Error for ParseError {}

impl From<ParseFloatError> for ParseError {
    fn from(err: ParseFloatError) -> Self {
        ParseError::BadNumber(err.to_string())
    }
}

fn multiplier(unit: &str) -> Option<u64> {
    Some(match unit.to_ascii_lowercase().as_str() {
        "" | "b" => 1,
        "kb" => 1_000,
        "mb" => 1_000_000,
        "gb" => 1_000_000_000,
        "kib" | "k" => 1 << 10,
        "mib" | "m" => 1 << 20,
        "gib" | "g" => 1 << 30,
        "tib" | "t" => 1 << 40,
        _ => return None,
    })
}

/// Parses "1.5 MiB", "200kB" or "42" into a byte count.
pub fn parse_size(text: &str) -> Result<u64, ParseError> {
    let text = text.trim();
    let split = text.find(|c: char| !(c.is_ascii_digit() || c == '.')).unwrap_or(text.len());
    let (number, unit) = text.split_at(split);
    if number.is_empty() {
        return Err(ParseError::Empty);
    }
    let value: f64 = number.parse()?;
    let unit = unit.trim();
    let factor = multiplier(unit).ok_or_else(|| ParseError::UnknownUnit(unit.to_string()))?;
    Ok((value * factor as f64).round() as u64)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_units_case_insensitively() {
        assert_eq!(parse_size("1.5 MiB"), Ok(1_572_864));
        assert_eq!(parse_size("200kB"), Ok(200_000));
        assert_eq!(parse_size("42"), Ok(42));
    }

    #[test]
    fn rejects_unknown_units() {
        assert_eq!(parse_size("3 parsecs"), Err(ParseError::UnknownUnit("parsecs".into())));
    }

    #[test]
    fn rejects_numbers_with_two_dots() {
        assert!(matches!(parse_size("1.2.3 MB"), Err(ParseError::BadNumber(_))));
    }
}
