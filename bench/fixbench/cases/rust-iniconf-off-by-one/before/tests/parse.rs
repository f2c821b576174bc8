use iniconf::{parse, ErrorKind, ParseError};

const GOOD: &str = "\
# deploy settings
name = api

[server]
host = 0.0.0.0
port = 8080

; TLS is terminated upstream
[tls]
enabled = false
";

#[test]
fn reads_sections_and_keys() {
    let config = parse(GOOD).unwrap();
    assert_eq!(config.get("", "name"), Some("api"));
    assert_eq!(config.get("server", "port"), Some("8080"));
    assert_eq!(config.get("tls", "enabled"), Some("false"));
    assert_eq!(config.get("tls", "cert"), None);
}

#[test]
fn errors_name_the_line_an_editor_shows() {
    let err = parse("[server]\nhost = a\nport 8080\n").unwrap_err();
    assert_eq!(err, ParseError { line: 3, kind: ErrorKind::MissingEquals });
    assert_eq!(err.to_string(), "line 3: expected `key = value`");
}

#[test]
fn duplicate_keys_are_rejected() {
    let err = parse("[a]\nx = 1\n\nx = 2\n").unwrap_err();
    assert_eq!(err, ParseError { line: 4, kind: ErrorKind::DuplicateKey("x".into()) });
}
