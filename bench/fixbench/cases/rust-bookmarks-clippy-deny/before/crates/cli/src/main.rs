use std::env;
use std::fs;
use std::process::ExitCode;

use marks_core::{parse_tsv, search};

fn main() -> ExitCode {
    let args: Vec<String> = env::args().skip(1).collect();
    let Some((file, query)) = args.split_first() else {
        eprintln!("usage: marks <bookmarks.tsv> [query words and #tags]");
        return ExitCode::from(2);
    };
    let text = match fs::read_to_string(file) {
        Ok(text) => text,
        Err(err) => {
            eprintln!("marks: {file}: {err}");
            return ExitCode::FAILURE;
        }
    };
    let bookmarks = match parse_tsv(&text) {
        Ok(b) => b,
        Err(err) => {
            eprintln!("marks: {file}: {err}");
            return ExitCode::FAILURE;
        }
    };
    for b in search(&bookmarks, &query.join(" ")) {
        println!("{}\t{}", b.title, b.url);
    }
    ExitCode::SUCCESS
}
