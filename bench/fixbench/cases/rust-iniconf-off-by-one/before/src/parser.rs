use std::collections::BTreeMap;

use crate::error::{ErrorKind, ParseError};

/// Section name -> key -> value. Keys before any header live in the "" section.
#[derive(Debug, Default, PartialEq, Eq)]
pub struct Config {
    pub sections: BTreeMap<String, BTreeMap<String, String>>,
}

impl Config {
    pub fn get(&self, section: &str, key: &str) -> Option<&str> {
        self.sections.get(section)?.get(key).map(String::as_str)
    }
}

pub fn parse(text: &str) -> Result<Config, ParseError> {
    let mut config = Config::default();
    let mut section = String::new();
    let mut line_no = 0;
    for raw in text.lines() {
        line_no += 1;
        let line = raw.trim();
        if line.is_empty() || line.starts_with('#') || line.starts_with(';') {
            continue;
        }
        if let Some(rest) = line.strip_prefix('[') {
            let name = rest
                .strip_suffix(']')
                .ok_or(ParseError { line: line_no, kind: ErrorKind::UnclosedSection })?;
            section = name.trim().to_string();
            config.sections.entry(section.clone()).or_default();
            continue;
        }
        let (key, value) = line
            .split_once('=')
            .ok_or(ParseError { line: line_no, kind: ErrorKind::MissingEquals })?;
        let key = key.trim();
        if key.is_empty() {
            return Err(ParseError { line: line_no, kind: ErrorKind::EmptyKey });
        }
        let entries = config.sections.entry(section.clone()).or_default();
        if entries.insert(key.to_string(), value.trim().to_string()).is_some() {
            return Err(ParseError { line: line_no, kind: ErrorKind::DuplicateKey(key.to_string()) });
        }
    }
    Ok(config)
}
