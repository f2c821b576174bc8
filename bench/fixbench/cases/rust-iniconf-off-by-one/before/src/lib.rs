//! A tiny INI reader: `[section]` headers, `key = value` pairs, `#` and `;` comments.

mod error;
mod parser;

pub use error::{ErrorKind, ParseError};
pub use parser::{parse, Config};
