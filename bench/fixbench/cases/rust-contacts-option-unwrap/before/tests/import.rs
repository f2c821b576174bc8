use crm_import::csv::parse_contacts;
use crm_import::domains::group_by_domain;

const EXPORT: &str = "\
name,email,company
Ada Byron,ada@Analytical.example,Analytical Engines
Charles B,charles@analytical.example,Analytical Engines
Grace H,grace@navy.example,US Navy
Front Desk,,Acme Hotels
";

#[test]
fn groups_contacts_by_lower_cased_domain() {
    let contacts = parse_contacts(EXPORT).unwrap();
    let groups = group_by_domain(&contacts);
    let names: Vec<&str> = groups["analytical.example"].iter().map(|c| c.name.as_str()).collect();
    assert_eq!(names, ["Ada Byron", "Charles B"]);
    assert_eq!(groups["navy.example"].len(), 1);
}

#[test]
fn contacts_without_email_are_kept_apart() {
    let contacts = parse_contacts(EXPORT).unwrap();
    let groups = group_by_domain(&contacts);
    assert_eq!(groups[""].len(), 1);
    assert_eq!(groups[""][0].company, "Acme Hotels");
}

#[test]
fn short_rows_name_their_line() {
    let err = parse_contacts("name,email,company\nA,a@x.example,X\nB,b@x.example\n").unwrap_err();
    assert_eq!(err.line, 3);
}
