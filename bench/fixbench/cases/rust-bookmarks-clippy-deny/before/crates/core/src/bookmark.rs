#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Bookmark {
    pub url: String,
    pub title: String,
    pub tags: Vec<String>,
}

/// Reads `url<TAB>title<TAB>tag,tag` lines; blank lines and `#` comments are skipped.
pub fn parse_tsv(text: &str) -> Result<Vec<Bookmark>, String> {
    let mut out = Vec::new();
    for (index, line) in text.lines().enumerate() {
        if line.trim().is_empty() || line.starts_with('#') {
            continue;
        }
        let mut fields = line.split('\t');
        let (Some(url), Some(title)) = (fields.next(), fields.next()) else {
            return Err(format!("line {}: expected url<TAB>title[<TAB>tags]", index + 1));
        };
        let tags = fields
            .next()
            .map(|t| t.split(',').map(str::trim).filter(|t| !t.is_empty()).map(String::from).collect())
            .unwrap_or_default();
        out.push(Bookmark { url: url.to_string(), title: title.to_string(), tags });
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_tags_and_skips_comments() {
        let marks = parse_tsv("# mine\nhttps://doc.rust-lang.org\tRust docs\trust, docs\n").unwrap();
        assert_eq!(marks.len(), 1);
        assert_eq!(marks[0].tags, ["rust", "docs"]);
    }
}
