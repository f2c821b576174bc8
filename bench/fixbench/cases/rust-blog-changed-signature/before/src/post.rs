#[derive(Debug, Clone, PartialEq)]
pub struct Post {
    pub title: String,
    pub date: String,
    pub body: String,
}

impl Post {
    /// Reads "title: ...\ndate: ...\n---\nbody".
    pub fn from_markdown(text: &str) -> Option<Post> {
        let (front, body) = text.split_once("\n---\n")?;
        let mut title = None;
        let mut date = None;
        for line in front.lines() {
            match line.split_once(':') {
                Some(("title", v)) => title = Some(v.trim().to_string()),
                Some(("date", v)) => date = Some(v.trim().to_string()),
                _ => {}
            }
        }
        Some(Post { title: title?, date: date?, body: body.trim().to_string() })
    }
}
