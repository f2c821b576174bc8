use std::fmt;

#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ErrorKind {
    MissingEquals,
    EmptyKey,
    UnclosedSection,
    DuplicateKey(String),
}

/// A parse error; `line` is 1-based, as editors show it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ParseError {
    pub line: usize,
    pub kind: ErrorKind,
}

impl fmt::Display for ParseError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let what = match &self.kind {
            ErrorKind::MissingEquals => "expected `key = value`".to_string(),
            ErrorKind::EmptyKey => "empty key".to_string(),
            ErrorKind::UnclosedSection => "section header is missing `]`".to_string(),
            ErrorKind::DuplicateKey(key) => format!("duplicate key `{key}`"),
        };
        write!(f, "line {}: {}", self.line, what)
    }
}

impl std::error::Error for ParseError {}
