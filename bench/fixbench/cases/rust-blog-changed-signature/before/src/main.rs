use std::env;
use std::fs;
use std::path::Path;
use std::process::ExitCode;

use quillpress::post::Post;
use quillpress::{feed, site};

fn main() -> ExitCode {
    let args: Vec<String> = env::args().collect();
    let (Some(src), Some(out)) = (args.get(1), args.get(2)) else {
        eprintln!("usage: quillpress <posts-dir> <out-dir>");
        return ExitCode::from(2);
    };
    let mut posts = Vec::new();
    for entry in fs::read_dir(src).expect("posts dir") {
        let path = entry.expect("dir entry").path();
        if path.extension().is_some_and(|e| e == "md") {
            let text = fs::read_to_string(&path).expect("read post");
            match Post::from_markdown(&text) {
                Some(post) => posts.push(post),
                None => eprintln!("skipping {}: no front matter", path.display()),
            }
        }
    }
    let out = Path::new(out);
    fs::create_dir_all(out).expect("out dir");
    for (name, html) in site::render_pages(&posts) {
        fs::write(out.join(name), html).expect("write page");
    }
    fs::write(out.join("feed.xml"), feed::render_feed("https://example.org", &posts)).expect("write feed");
    ExitCode::SUCCESS
}
