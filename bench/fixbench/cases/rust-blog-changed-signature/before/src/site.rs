use crate::post::Post;
use crate::slug::slugify;

pub fn page_name(post: &Post) -> String {
    format!("{}-{}.html", post.date, slugify(&post.title))
}

pub fn render_pages(posts: &[Post]) -> Vec<(String, String)> {
    posts
        .iter()
        .map(|post| {
            let html = format!("<article><h1>{}</h1>\n<p>{}</p></article>\n", post.title, post.body);
            (page_name(post), html)
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn page_names_start_with_the_date() {
        let post = Post { title: "Why we moved off cron".into(), date: "2024-03-02".into(), body: String::new() };
        assert_eq!(page_name(&post), "2024-03-02-why-we-moved-off-cron.html");
    }
}
