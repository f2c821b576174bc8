use std::collections::BTreeMap;

use crate::contact::Contact;

/// Contacts grouped by e-mail domain, for matching them to company accounts.
/// Contacts without a usable address go under "".
pub fn group_by_domain(contacts: &[Contact]) -> BTreeMap<String, Vec<&Contact>> {
    let mut groups: BTreeMap<String, Vec<&Contact>> = BTreeMap::new();
    for contact in contacts {
        let domain = contact.email_domain().unwrap_or_default();
        groups.entry(domain).or_default().push(contact);
    }
    groups
}
