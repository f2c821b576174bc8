use std::collections::{BTreeMap, BTreeSet};

use crate::normalize::Normalizer;

/// Tag -> ids of the notes that carry it.
#[derive(Debug, Default)]
pub struct TagIndex {
    notes_by_tag: BTreeMap<String, BTreeSet<u64>>,
    normalizer: Normalizer,
}

impl TagIndex {
    pub fn new() -> Self {
        Self::default()
    }

    pub fn tag(&mut self, note: u64, raw_tag: &str) {
        let tag = self.normalizer.normalize(raw_tag);
        if !tag.is_empty() {
            self.notes_by_tag.entry(tag).or_default().insert(note);
        }
    }

    /// Notes carrying every one of the tags.
    pub fn notes_with_all(&mut self, raw_tags: &[&str]) -> BTreeSet<u64> {
        let mut result: Option<BTreeSet<u64>> = None;
        for raw in raw_tags {
            let tag = self.normalizer.normalize(raw);
            let notes = self.notes_by_tag.get(&tag).cloned().unwrap_or_default();
            result = Some(match result {
                None => notes,
                Some(so_far) => so_far.intersection(&notes).copied().collect(),
            });
        }
        result.unwrap_or_default()
    }

    /// Tags and how many notes carry them, most used first, then by name.
    pub fn tag_counts(&self) -> Vec<(&str, usize)> {
        let mut counts: Vec<(&str, usize)> = self.notes_by_tag.iter().map(|(t, n)| (t.as_str(), n.len())).collect();
        counts.sort_by(|a, b| b.1.cmp(&a.1).then(a.0.cmp(b.0)));
        counts
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn finds_notes_with_every_tag() {
        let mut index = TagIndex::new();
        index.tag(1, "#rust");
        index.tag(1, "Async");
        index.tag(2, "rust");
        index.tag(3, "async");
        assert_eq!(index.notes_with_all(&["Rust", "#async"]), BTreeSet::from([1]));
        assert_eq!(index.tag_counts(), vec![("async", 2), ("rust", 2)]);
    }
}
