#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Contact {
    pub name: String,
    pub email: String,
    pub company: String,
}

impl Contact {
    /// The part of the e-mail address after the `@`, lower-cased.
    pub fn email_domain(&self) -> Option<String> {
        self.email.rsplit_once('@').map(|(_, domain)| domain.to_ascii_lowercase())
    }
}
