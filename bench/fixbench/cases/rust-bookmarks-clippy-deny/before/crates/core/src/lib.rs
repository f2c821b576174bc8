//! Bookmarks: a title, a URL and tags, read from and written to a tab-separated file.

mod bookmark;
mod search;

pub use bookmark::{parse_tsv, Bookmark};
pub use search::search;
