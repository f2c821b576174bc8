use crate::contact::Contact;

#[derive(Debug, PartialEq, Eq)]
pub struct RowError {
    pub line: usize,
    pub reason: String,
}

/// Parses `name,email,company` rows after a header line. Fields hold no commas in this export.
pub fn parse_contacts(text: &str) -> Result<Vec<Contact>, RowError> {
    let mut contacts = Vec::new();
    for (index, row) in text.lines().enumerate().skip(1) {
        if row.trim().is_empty() {
            continue;
        }
        let fields: Vec<&str> = row.split(',').map(str::trim).collect();
        let [name, email, company] = fields[..] else {
            return Err(RowError { line: index + 1, reason: format!("expected 3 fields, got {}", fields.len()) });
        };
        contacts.push(Contact { name: name.to_string(), email: email.to_string(), company: company.to_string() });
    }
    Ok(contacts)
}
