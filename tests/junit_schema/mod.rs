//! A hand-written validator for the JUnit XML schema (Jenkins' `junit-10.xsd`, the schema CI
//! tools read): a small well-formedness parser, then the schema's elements, their order,
//! required and allowed attributes and attribute types, and the counts agreeing with the cases.

use std::collections::BTreeMap;

/// An element: name, attributes, children and text.
#[derive(Debug)]
struct Element {
    name: String,
    attributes: BTreeMap<String, String>,
    children: Vec<Element>,
    text: String,
}

fn unescape(text: &str) -> String {
    let mut out = String::new();
    let mut rest = text;
    while let Some(at) = rest.find('&') {
        out.push_str(&rest[..at]);
        let end = rest[at..].find(';').expect("an entity ends with `;`") + at;
        out.push_str(match &rest[at + 1..end] {
            "amp" => "&",
            "lt" => "<",
            "gt" => ">",
            "quot" => "\"",
            "apos" => "'",
            other => panic!("unknown entity &{other};"),
        });
        rest = &rest[end + 1..];
    }
    assert!(!rest.contains('<'), "raw `<` in text");
    out + rest
}

/// Parses one element starting at `xml[*at..]` (just at its `<`).
fn element(xml: &str, at: &mut usize) -> Element {
    let close = xml[*at..].find('>').expect("a tag ends with `>`") + *at;
    let tag = &xml[*at + 1..close];
    let empty = tag.ends_with('/');
    let tag = tag.trim_end_matches('/');
    let (name, mut rest) = tag.split_once(char::is_whitespace).unwrap_or((tag, ""));
    let mut attributes = BTreeMap::new();
    loop {
        rest = rest.trim_start();
        if rest.is_empty() {
            break;
        }
        let (key, after) = rest.split_once("=\"").expect("attribute=\"value\"");
        let (value, after) = after.split_once('"').expect("a closing quote");
        assert!(!value.contains('<'), "raw `<` in an attribute");
        assert!(
            attributes
                .insert(key.trim().to_string(), unescape(value))
                .is_none(),
            "attribute {key} twice"
        );
        rest = after;
    }
    *at = close + 1;
    let mut node = Element {
        name: name.to_string(),
        attributes,
        children: Vec::new(),
        text: String::new(),
    };
    if empty {
        return node;
    }
    loop {
        let next = xml[*at..].find('<').expect("an end tag") + *at;
        node.text.push_str(&unescape(&xml[*at..next]));
        *at = next;
        if xml[*at..].starts_with("</") {
            let end = xml[*at..].find('>').unwrap() + *at;
            assert_eq!(&xml[*at + 2..end], node.name, "mismatched end tag");
            *at = end + 1;
            return node;
        }
        node.children.push(element(xml, at));
    }
}

fn check_attributes(node: &Element, required: &[&str], allowed: &[&str], integers: &[&str]) {
    for key in required {
        assert!(
            node.attributes.contains_key(*key),
            "<{}> needs {key}",
            node.name
        );
    }
    for (key, value) in &node.attributes {
        assert!(
            required.contains(&key.as_str()) || allowed.contains(&key.as_str()),
            "<{}> may not have {key}",
            node.name
        );
        if integers.contains(&key.as_str()) {
            value.parse::<u64>().expect("an integer attribute");
        }
        if key == "time" {
            value.parse::<f64>().expect("a decimal time");
        }
    }
}

/// Checks children names against an ordered list of (name, may repeat).
fn check_order(node: &Element, sequence: &[(&str, bool)]) {
    let mut position = 0;
    let mut seen_here = 0;
    for child in &node.children {
        while position < sequence.len() && sequence[position].0 != child.name {
            position += 1;
            seen_here = 0;
        }
        assert!(
            position < sequence.len(),
            "<{}> inside <{}> is not allowed here",
            child.name,
            node.name
        );
        seen_here += 1;
        assert!(
            sequence[position].1 || seen_here == 1,
            "<{}> twice in <{}>",
            child.name,
            node.name
        );
    }
}

/// Validates a JUnit document; returns every test case as (name, failed).
pub fn validate(xml: &str) -> Vec<(String, bool)> {
    let body = xml
        .strip_prefix("<?xml version=\"1.0\" encoding=\"UTF-8\"?>")
        .expect("an XML declaration")
        .trim();
    let mut at = 0;
    let root = element(body, &mut at);
    assert!(body[at..].trim().is_empty(), "content after the root");
    assert_eq!(root.name, "testsuites");
    let counts = ["tests", "failures", "errors", "disabled"];
    check_attributes(
        &root,
        &[],
        &["name", "time", "tests", "failures", "errors", "disabled"],
        &counts,
    );
    check_order(&root, &[("testsuite", true)]);
    let mut cases = Vec::new();
    for suite in &root.children {
        check_attributes(
            suite,
            &["name", "tests"],
            &[
                "failures",
                "errors",
                "time",
                "disabled",
                "skipped",
                "timestamp",
                "hostname",
                "id",
                "package",
                "file",
                "log",
                "url",
                "version",
                "group",
            ],
            &["tests", "failures", "errors", "disabled", "skipped", "id"],
        );
        check_order(
            suite,
            &[
                ("properties", false),
                ("testcase", true),
                ("system-out", false),
                ("system-err", false),
            ],
        );
        let mut failures = 0;
        let mut tests = 0;
        for child in &suite.children {
            match child.name.as_str() {
                "properties" => {
                    check_order(child, &[("property", true)]);
                    for property in &child.children {
                        check_attributes(property, &["name", "value"], &[], &[]);
                    }
                }
                "testcase" => {
                    tests += 1;
                    check_attributes(
                        child,
                        &["name"],
                        &[
                            "assertions",
                            "time",
                            "classname",
                            "status",
                            "class",
                            "file",
                            "line",
                            "log",
                            "group",
                            "url",
                        ],
                        &["line"],
                    );
                    check_order(
                        child,
                        &[
                            ("skipped", false),
                            ("error", true),
                            ("failure", true),
                            ("system-out", true),
                            ("system-err", true),
                        ],
                    );
                    for outcome in &child.children {
                        check_attributes(outcome, &[], &["message", "type"], &[]);
                    }
                    let failed = child.children.iter().any(|c| c.name == "failure");
                    failures += usize::from(failed);
                    cases.push((child.attributes["name"].clone(), failed));
                }
                _ => {}
            }
        }
        assert_eq!(suite.attributes["tests"], tests.to_string());
        assert_eq!(suite.attributes["failures"], failures.to_string());
        assert!(suite.text.trim().is_empty(), "text inside <testsuite>");
    }
    cases
}
