use crate::post::Post;
use crate::slug::slugify;

fn escape(text: &str) -> String {
    text.replace('&', "&amp;").replace('<', "&lt;").replace('>', "&gt;")
}

pub fn render_feed(base_url: &str, posts: &[Post]) -> String {
    let mut xml = String::from("<?xml version=\"1.0\"?>\n<rss version=\"2.0\"><channel>\n");
    for post in posts {
        let link = format!("{base_url}/{}-{}.html", post.date, slugify(&post.title));
        xml.push_str(&format!(
            "<item><title>{}</title><link>{link}</link><pubDate>{}</pubDate></item>\n",
            escape(&post.title),
            post.date
        ));
    }
    xml.push_str("</channel></rss>\n");
    xml
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn links_point_at_the_rendered_pages() {
        let post = Post { title: "Q&A: builds".into(), date: "2024-05-01".into(), body: String::new() };
        let xml = render_feed("https://blog.test", &[post]);
        assert!(xml.contains("<link>https://blog.test/2024-05-01-q-a-builds.html</link>"), "{xml}");
        assert!(xml.contains("<title>Q&amp;A: builds</title>"), "{xml}");
    }
}
