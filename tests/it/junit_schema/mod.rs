//! Validates JUnit XML against the JUnit schema files committed in `tests/data/junit/` (Jenkins
//! xUnit plugin's `junit-10.xsd`; see `PROVENANCE.md` there).
//!
//! No maintained Rust crate validates XML against an XSD without a system library, so this module
//! reads the schema file and enforces what it declares, for the subset of XSD those files use:
//! global and local `xs:element` (`name`, `ref`, `type`, `minOccurs`, `maxOccurs`), named and
//! anonymous `xs:complexType` (`mixed`), `xs:sequence` and `xs:choice` with occurrence bounds,
//! `xs:attribute` (`type`, `use`), and `xs:simpleType` restrictions of `xs:string` by
//! `xs:pattern`. Any other schema construct is refused, so a schema this reader does not fully
//! understand cannot pass a document by default. Documents are parsed with `roxmltree`.

use regex::Regex;
use roxmltree::{Document, Node};
use std::collections::{BTreeSet, HashMap};
use std::path::Path;

const XS: &str = "http://www.w3.org/2001/XMLSchema";

/// A simple type: any string, or strings matching every pattern (anchored, as XSD patterns are).
#[derive(Clone, Debug)]
enum Simple {
    String,
    Patterns(Vec<Regex>),
}

impl Simple {
    fn check(&self, value: &str, what: &str) -> Result<(), String> {
        match self {
            Simple::String => Ok(()),
            Simple::Patterns(patterns) => match patterns.iter().find(|p| !p.is_match(value)) {
                Some(p) => Err(format!("{what} = {value:?} does not match {}", p.as_str())),
                None => Ok(()),
            },
        }
    }
}

/// An attribute declaration.
#[derive(Clone, Debug)]
struct Attribute {
    name: String,
    required: bool,
    kind: Simple,
}

/// What an element may contain.
#[derive(Clone, Debug)]
enum Content {
    /// Text of a simple type, no attributes, no child elements.
    Simple(Simple),
    /// Attributes and a content model of child elements; text only when mixed.
    Complex {
        mixed: bool,
        attributes: Vec<Attribute>,
        particle: Option<Particle>,
    },
}

/// An element declaration: a local one carries its content, a reference names a global one.
#[derive(Clone, Debug)]
enum ElementTerm {
    Local(String, Box<Content>),
    Ref(String),
}

#[derive(Clone, Debug)]
enum Term {
    Element(ElementTerm),
    Sequence(Vec<Particle>),
    Choice(Vec<Particle>),
}

/// A term with its occurrence bounds (`max: None` is unbounded).
#[derive(Clone, Debug)]
struct Particle {
    min: usize,
    max: Option<usize>,
    term: Term,
}

/// A schema: global elements, and the named types they may refer to.
pub struct Schema {
    elements: HashMap<String, Content>,
}

/// Named types, while the schema is read.
struct Types<'a> {
    complex: HashMap<&'a str, Node<'a, 'a>>,
    simple: HashMap<&'a str, Node<'a, 'a>>,
}

fn xs_children<'a>(node: Node<'a, 'a>) -> impl Iterator<Item = Node<'a, 'a>> {
    node.children().filter(|n| n.is_element()).inspect(|n| {
        assert_eq!(
            n.tag_name().namespace(),
            Some(XS),
            "<{}> is not an XSD element",
            n.tag_name().name()
        )
    })
}

fn occurs(node: Node<'_, '_>, name: &str, default: usize) -> Option<usize> {
    match node.attribute(name) {
        None => Some(default),
        Some("unbounded") => None,
        Some(n) => Some(n.parse().expect("an occurrence bound")),
    }
}

impl Types<'_> {
    fn simple(&self, name: &str) -> Simple {
        match name {
            "xs:string" => Simple::String,
            _ => {
                let node = self.simple.get(name);
                self.simple_body(*node.unwrap_or_else(|| panic!("unknown simple type {name}")))
            }
        }
    }

    /// An `xs:simpleType`: a restriction of `xs:string` by patterns.
    fn simple_body(&self, node: Node<'_, '_>) -> Simple {
        let restriction = xs_children(node).next().expect("a restriction");
        assert_eq!(restriction.tag_name().name(), "restriction", "unsupported");
        assert_eq!(
            restriction.attribute("base"),
            Some("xs:string"),
            "unsupported"
        );
        let patterns = xs_children(restriction)
            .map(|facet| {
                assert_eq!(facet.tag_name().name(), "pattern", "unsupported facet");
                let pattern = facet.attribute("value").expect("a pattern value");
                Regex::new(&format!("^(?:{pattern})$")).expect("a pattern regex can express")
            })
            .collect();
        Simple::Patterns(patterns)
    }

    /// The content of an `xs:element` declaration: its `type`, or its inline type.
    fn element_content(&self, node: Node<'_, '_>) -> Content {
        if let Some(name) = node.attribute("type") {
            return match self.complex.get(name) {
                Some(complex) => self.complex_body(*complex),
                None => Content::Simple(self.simple(name)),
            };
        }
        match xs_children(node).next() {
            Some(inline) if inline.tag_name().name() == "complexType" => self.complex_body(inline),
            Some(inline) if inline.tag_name().name() == "simpleType" => {
                Content::Simple(self.simple_body(inline))
            }
            Some(other) => panic!("unsupported <xs:{}> in an element", other.tag_name().name()),
            None => Content::Simple(Simple::String),
        }
    }

    /// An `xs:complexType`: attributes and at most one model group.
    fn complex_body(&self, node: Node<'_, '_>) -> Content {
        let mut attributes = Vec::new();
        let mut particle = None;
        for child in xs_children(node) {
            match child.tag_name().name() {
                "attribute" => attributes.push(Attribute {
                    name: child.attribute("name").expect("a named attribute").into(),
                    required: child.attribute("use") == Some("required"),
                    kind: self.simple(child.attribute("type").unwrap_or("xs:string")),
                }),
                "sequence" | "choice" => {
                    assert!(particle.is_none(), "two model groups");
                    particle = Some(self.particle(child));
                }
                other => panic!("unsupported <xs:{other}> in a complexType"),
            }
        }
        Content::Complex {
            mixed: node.attribute("mixed") == Some("true"),
            attributes,
            particle,
        }
    }

    fn particle(&self, node: Node<'_, '_>) -> Particle {
        let term = match node.tag_name().name() {
            "element" => Term::Element(match node.attribute("ref") {
                Some(name) => ElementTerm::Ref(name.into()),
                None => ElementTerm::Local(
                    node.attribute("name").expect("a named element").into(),
                    Box::new(self.element_content(node)),
                ),
            }),
            "sequence" => Term::Sequence(xs_children(node).map(|c| self.particle(c)).collect()),
            "choice" => Term::Choice(xs_children(node).map(|c| self.particle(c)).collect()),
            other => panic!("unsupported <xs:{other}> in a model group"),
        };
        Particle {
            min: occurs(node, "minOccurs", 1).expect("a finite minOccurs"),
            max: occurs(node, "maxOccurs", 1),
            term,
        }
    }
}

impl Schema {
    /// Reads a schema file.
    pub fn read(path: &Path) -> Schema {
        let text = std::fs::read_to_string(path).expect("the schema file");
        Schema::parse(&text)
    }

    /// Reads a schema document; panics on a construct outside the supported subset.
    pub fn parse(text: &str) -> Schema {
        let document = Document::parse(text).expect("a well-formed schema");
        let root = document.root_element();
        assert_eq!(root.tag_name().name(), "schema");
        let mut types = Types {
            complex: HashMap::new(),
            simple: HashMap::new(),
        };
        let mut globals = Vec::new();
        for child in xs_children(root) {
            let name = child.attribute("name").expect("a named global");
            match child.tag_name().name() {
                "complexType" => {
                    types.complex.insert(name, child);
                }
                "simpleType" => {
                    types.simple.insert(name, child);
                }
                "element" => globals.push((name, child)),
                other => panic!("unsupported global <xs:{other}>"),
            }
        }
        let elements = globals
            .into_iter()
            .map(|(name, node)| (name.to_string(), types.element_content(node)))
            .collect();
        Schema { elements }
    }

    /// Checks a document: its root is a global element and every element is valid.
    pub fn validate(&self, xml: &str) -> Result<(), String> {
        let document = Document::parse(xml).map_err(|e| format!("not well-formed: {e}"))?;
        let root = document.root_element();
        let name = root.tag_name().name();
        let content = self
            .elements
            .get(name)
            .ok_or_else(|| format!("<{name}> is not a global element of the schema"))?;
        self.element(root, content)
    }

    fn element(&self, node: Node<'_, '_>, content: &Content) -> Result<(), String> {
        let name = node.tag_name().name();
        let children: Vec<Node<'_, '_>> = node.children().filter(|n| n.is_element()).collect();
        let text: String = node
            .children()
            .filter(|n| n.is_text())
            .filter_map(|n| n.text())
            .collect();
        match content {
            Content::Simple(kind) => {
                if let Some(child) = children.first() {
                    return Err(format!("<{}> inside <{name}>", child.tag_name().name()));
                }
                if let Some(attribute) = node.attributes().next() {
                    return Err(format!("<{name}> may not have {}", attribute.name()));
                }
                kind.check(&text, name)
            }
            Content::Complex {
                mixed,
                attributes,
                particle,
            } => {
                if !mixed && !text.trim().is_empty() {
                    return Err(format!("text inside <{name}>"));
                }
                check_attributes(node, attributes)?;
                let names: Vec<&str> = children.iter().map(|c| c.tag_name().name()).collect();
                let ends = match particle {
                    Some(p) => self.ends(p, &names, 0),
                    None => BTreeSet::from([0]),
                };
                if !ends.contains(&names.len()) {
                    return Err(format!("<{name}> may not contain {names:?} in this order"));
                }
                for child in children {
                    let child_name = child.tag_name().name();
                    let declared = particle
                        .as_ref()
                        .and_then(|p| self.declaration(p, child_name))
                        .expect("a matched child is declared");
                    self.element(child, declared)?;
                }
                Ok(())
            }
        }
    }

    /// The content declared for child `name` in a content model.
    fn declaration<'s>(&'s self, particle: &'s Particle, name: &str) -> Option<&'s Content> {
        match &particle.term {
            Term::Element(ElementTerm::Local(local, content)) => (local == name).then_some(content),
            Term::Element(ElementTerm::Ref(global)) => {
                (global == name).then(|| &self.elements[global])
            }
            Term::Sequence(items) | Term::Choice(items) => {
                items.iter().find_map(|p| self.declaration(p, name))
            }
        }
    }

    /// Every position at which `particle` can end when it starts at `start` in `names`.
    fn ends(&self, particle: &Particle, names: &[&str], start: usize) -> BTreeSet<usize> {
        let mut result = BTreeSet::new();
        if particle.min == 0 {
            result.insert(start);
        }
        let limit = particle
            .max
            .unwrap_or(names.len() - start + particle.min.max(1));
        let mut current = BTreeSet::from([start]);
        for count in 1..=limit {
            let next: BTreeSet<usize> = current
                .iter()
                .flat_map(|&at| self.term_ends(&particle.term, names, at))
                .collect();
            if next.is_empty() {
                break;
            }
            if count >= particle.min {
                result.extend(&next);
            }
            current = next;
        }
        result
    }

    fn term_ends(&self, term: &Term, names: &[&str], start: usize) -> BTreeSet<usize> {
        match term {
            Term::Element(element) => {
                let name = match element {
                    ElementTerm::Local(name, _) | ElementTerm::Ref(name) => name,
                };
                let here = names.get(start).is_some_and(|n| n == name);
                here.then_some(start + 1).into_iter().collect()
            }
            Term::Sequence(items) => items.iter().fold(BTreeSet::from([start]), |at, item| {
                at.iter()
                    .flat_map(|&position| self.ends(item, names, position))
                    .collect()
            }),
            Term::Choice(items) => items
                .iter()
                .flat_map(|item| self.ends(item, names, start))
                .collect(),
        }
    }
}

fn check_attributes(node: Node<'_, '_>, declared: &[Attribute]) -> Result<(), String> {
    let name = node.tag_name().name();
    for attribute in node.attributes() {
        let declaration = declared
            .iter()
            .find(|d| d.name == attribute.name() && attribute.namespace().is_none())
            .ok_or_else(|| format!("<{name}> may not have {}", attribute.name()))?;
        declaration
            .kind
            .check(attribute.value(), &format!("{name}@{}", attribute.name()))?;
    }
    match declared
        .iter()
        .find(|d| d.required && node.attribute(d.name.as_str()).is_none())
    {
        Some(missing) => Err(format!("<{name}> needs {}", missing.name)),
        None => Ok(()),
    }
}

/// The committed JUnit schemas: every version of `junit-10.xsd` sqlgate's output must satisfy.
pub fn junit_schemas() -> Vec<(String, Schema)> {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data/junit");
    ["junit-10.xsd", "junit-10-0c37522.xsd"]
        .iter()
        .map(|file| (file.to_string(), Schema::read(&dir.join(file))))
        .collect()
}

/// Validates sqlgate's JUnit document against every committed schema, then checks what the
/// schema cannot say: each suite's `tests` and `failures` agree with its cases. Returns every
/// test case as (name, failed).
pub fn validate(xml: &str) -> Vec<(String, bool)> {
    for (file, schema) in junit_schemas() {
        if let Err(e) = schema.validate(xml) {
            panic!("the JUnit output is invalid against {file}: {e}\n{xml}");
        }
    }
    let document = Document::parse(xml).unwrap();
    let mut cases = Vec::new();
    for suite in document
        .descendants()
        .filter(|n| n.has_tag_name("testsuite"))
    {
        let suite_cases: Vec<(String, bool)> = suite
            .children()
            .filter(|n| n.has_tag_name("testcase"))
            .map(|case| {
                let failed = case.children().any(|c| c.has_tag_name("failure"));
                (case.attribute("name").unwrap().to_string(), failed)
            })
            .collect();
        let failures = suite_cases.iter().filter(|(_, failed)| *failed).count();
        assert_eq!(
            suite.attribute("tests"),
            Some(&*suite_cases.len().to_string())
        );
        assert_eq!(suite.attribute("failures"), Some(&*failures.to_string()));
        cases.extend(suite_cases);
    }
    cases
}

#[cfg(test)]
mod tests {
    use super::*;

    const VALID: &str = r#"<?xml version="1.0" encoding="UTF-8"?>
<testsuites name="s" tests="1" failures="1" errors="0" time="0">
  <testsuite name="s" tests="1" failures="1" errors="0" skipped="0" time="1,234.5">
    <properties><property name="k" value="v"/></properties>
    <testcase name="c" classname="x" time="0">
      <failure message="m" type="regression">text</failure>
      <system-out>out</system-out>
    </testcase>
  </testsuite>
</testsuites>
"#;

    /// The error of `document` against every committed schema.
    fn errors(document: &str) -> Vec<String> {
        junit_schemas()
            .iter()
            .map(|(file, schema)| match schema.validate(document) {
                Ok(()) => panic!("{file} accepted:\n{document}"),
                Err(e) => e,
            })
            .collect()
    }

    #[test]
    fn a_valid_document_passes_every_schema() {
        for (file, schema) in junit_schemas() {
            assert_eq!(schema.validate(VALID), Ok(()), "{file}");
        }
        assert_eq!(validate(VALID), [("c".to_string(), true)]);
    }

    #[test]
    fn a_missing_required_attribute_fails() {
        for error in
            errors(&VALID.replace(r#"tests="1" failures="1" errors="0" skipped"#, "skipped"))
        {
            assert!(error.contains("<testsuite> needs tests"), "{error}");
        }
        for error in errors(&VALID.replace(r#"<property name="k" "#, "<property ")) {
            assert!(error.contains("<property> needs name"), "{error}");
        }
    }

    #[test]
    fn an_unknown_element_or_attribute_fails() {
        for error in errors(&VALID.replace("<system-out>", "<bogus/><system-out>")) {
            assert!(error.contains(r#""bogus""#), "{error}");
        }
        for error in errors(&VALID.replace(r#"classname="x""#, r#"flavour="x""#)) {
            assert!(error.contains("<testcase> may not have flavour"), "{error}");
        }
        for error in errors(
            &VALID
                .replace("<testsuites ", "<testsuitez ")
                .replace("</testsuites>", "</testsuitez>"),
        ) {
            assert!(error.contains("not a global element"), "{error}");
        }
    }

    #[test]
    fn wrong_order_and_wrong_nesting_fail() {
        // <testsuites> holds a sequence of <testsuite> only; <properties> belongs inside one.
        let outside = VALID.replace(
            "<testsuites name=\"s\" tests=\"1\" failures=\"1\" errors=\"0\" time=\"0\">",
            "<testsuites name=\"s\"><properties/>",
        );
        for error in errors(&outside) {
            assert!(error.contains("<testsuites> may not contain"), "{error}");
        }
        // junit-10.xsd's rerunType is the sequence stackTrace, system-out, system-err.
        let schema = &junit_schemas()[0].1;
        let rerun = |body: &str| {
            VALID.replace(
                "<system-out>out</system-out>",
                &format!("<rerunFailure type=\"t\">{body}</rerunFailure>"),
            )
        };
        let ordered = "<stackTrace>s</stackTrace><system-out>o</system-out>";
        assert_eq!(schema.validate(&rerun(ordered)), Ok(()));
        let reversed = "<system-out>o</system-out><stackTrace>s</stackTrace>";
        let error = schema.validate(&rerun(reversed)).unwrap_err();
        assert!(error.contains("<rerunFailure> may not contain"), "{error}");
        let twice = "<stackTrace>s</stackTrace><stackTrace>s</stackTrace>";
        assert!(schema.validate(&rerun(twice)).is_err());
    }

    #[test]
    fn types_and_text_are_checked() {
        // SUREFIRE_TIME: digits with thousands commas and an optional fraction, no unit.
        let schema = &junit_schemas()[0].1;
        let error = schema
            .validate(&VALID.replace(r#"time="1,234.5""#, r#"time="1.5s""#))
            .unwrap_err();
        assert!(error.contains("does not match"), "{error}");
        for error in errors(&VALID.replace("<properties>", "stray text<properties>")) {
            assert!(error.contains("text inside <testsuite>"), "{error}");
        }
        for error in errors(&VALID.replace("<system-out>out", "<system-out><b/>out")) {
            assert!(error.contains("<b> inside <system-out>"), "{error}");
        }
    }

    #[test]
    #[should_panic(expected = "unsupported")]
    fn a_schema_construct_outside_the_subset_is_refused() {
        Schema::parse(
            r#"<xs:schema xmlns:xs="http://www.w3.org/2001/XMLSchema">
                 <xs:element name="a"><xs:complexType><xs:all/></xs:complexType></xs:element>
               </xs:schema>"#,
        );
    }
}
