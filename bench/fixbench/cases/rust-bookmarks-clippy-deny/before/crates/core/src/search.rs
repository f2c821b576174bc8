use crate::bookmark::Bookmark;

/// Bookmarks whose title contains every word of the query (case-insensitive) or that carry a
/// `#tag` the query names.
pub fn search<'a>(bookmarks: &'a [Bookmark], query: &str) -> Vec<&'a Bookmark> {
    let (tags, words): (Vec<&str>, Vec<&str>) = query.split_whitespace().partition(|w| w.starts_with('#'));
    bookmarks
        .iter()
        .filter(|b| {
            let title = b.title.to_lowercase();
            words.iter().all(|w| title.contains(&w.to_lowercase()))
                && tags.iter().all(|t| b.tags.iter().any(|bt| bt == &t[1..]))
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn mark(title: &str, tags: &[&str]) -> Bookmark {
        Bookmark { url: format!("https://{title}.example"), title: title.into(), tags: tags.iter().map(|t| t.to_string()).collect() }
    }

    #[test]
    fn words_and_tags_must_all_match() {
        let marks = vec![mark("Rust Book", &["rust"]), mark("Go Tour", &["go"]), mark("Rust by Example", &["rust", "learn"])];
        let titles: Vec<&str> = search(&marks, "rust #learn").iter().map(|b| b.title.as_str()).collect();
        assert_eq!(titles, ["Rust by Example"]);
    }
}
