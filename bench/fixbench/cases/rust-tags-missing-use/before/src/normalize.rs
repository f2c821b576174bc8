/// Turns user-typed tags ("#Rust-Lang ", "rust_lang") into one canonical form ("rust-lang").
#[derive(Debug, Default)]
pub struct Normalizer;

impl Normalizer {
    pub fn new() -> Self {
        Normalizer
    }

    pub fn normalize(&mut self, raw: &str) -> String {
        raw.trim()
            .trim_start_matches('#')
            .chars()
            .map(|c| if c == '_' || c.is_whitespace() { '-' } else { c.to_ascii_lowercase() })
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn hashes_underscores_and_case_fold_away() {
        let mut n = Normalizer::new();
        assert_eq!(n.normalize("#Rust_Lang "), "rust-lang");
        assert_eq!(n.normalize("to do"), "to-do");
    }
}
