//! GitHub's reading of a comment: the Markdown parsed by a real CommonMark parser (comrak) with
//! GitHub's extensions, and the text filters GitHub runs on the rendered text (mentions, issue
//! and commit references, emoji, links), as checks that untrusted text rendered as text only.

use comrak::nodes::NodeValue;
use comrak::{parse_document, Arena, Options};

/// Every fenced block of `markdown` as (language, body), in order; none may be left open.
pub fn fenced_blocks(markdown: &str) -> Vec<(String, String)> {
    let mut blocks = Vec::new();
    let mut open: Option<(String, String)> = None;
    for line in markdown.lines() {
        match (&mut open, line.strip_prefix("```")) {
            (None, Some(language)) => open = Some((language.trim().to_string(), String::new())),
            (Some(_), Some("")) => blocks.extend(open.take()),
            (Some((_, body)), _) => {
                body.push_str(line);
                body.push('\n');
            }
            (None, None) => {}
        }
    }
    assert!(open.is_none(), "a fenced block is left open");
    blocks
}

/// One node of a parsed document, in document order.
#[derive(Debug, Clone)]
pub struct Node {
    /// comrak's name of the node type (`text`, `code`, `heading`, `link` ...).
    pub kind: &'static str,
    /// The text of a text, code, code block or HTML node; a link's or image's URL.
    pub literal: String,
    /// A heading's level, 0 for other nodes.
    pub level: u8,
}

/// GitHub's flavour: tables, strikethrough, autolinks, task lists, footnotes,
/// alerts and `$` math.
pub fn github_options() -> Options<'static> {
    let mut options = Options::default();
    let extension = &mut options.extension;
    extension.table = true;
    extension.strikethrough = true;
    extension.autolink = true;
    extension.tasklist = true;
    extension.footnotes = true;
    extension.alerts = true;
    extension.math_dollars = true;
    extension.math_code = true;
    options
}

/// Every node of `markdown` as GitHub parses it, in document order.
pub fn nodes(markdown: &str) -> Vec<Node> {
    let arena = Arena::new();
    let root = parse_document(&arena, markdown, &github_options());
    root.descendants()
        .map(|node| {
            let value = &node.data().value;
            let (literal, level) = match value {
                NodeValue::Text(text) => (text.to_string(), 0),
                NodeValue::Code(code) => (code.literal.clone(), 0),
                NodeValue::CodeBlock(block) => (block.literal.clone(), 0),
                NodeValue::HtmlBlock(html) => (html.literal.clone(), 0),
                NodeValue::HtmlInline(html) => (html.clone(), 0),
                NodeValue::Link(link) | NodeValue::Image(link) => (link.url.clone(), 0),
                NodeValue::Heading(heading) => (String::new(), heading.level),
                _ => (String::new(), 0),
            };
            Node {
                kind: value.xml_node_name(),
                literal,
                level,
            }
        })
        .collect()
}

/// The runs of rendered text GitHub's filters read: consecutive text nodes joined, any other
/// node ending a run.
pub fn text_runs(nodes: &[Node]) -> Vec<String> {
    let mut runs = vec![String::new()];
    for node in nodes {
        if node.kind == "text" {
            runs.last_mut().unwrap().push_str(&node.literal);
        } else if !runs.last().unwrap().is_empty() {
            runs.push(String::new());
        }
    }
    runs.retain(|r| !r.is_empty());
    runs
}

/// What GitHub would turn into something other than text in a run of rendered text, if
/// anything: a mention or email (`@x`), an issue reference (`#1`, `owner/repo#2`, `GH-3`), an
/// emoji or URL scheme (`:x`), a `www.` link, or a commit (7 hex digits).
pub fn reference_in(text: &str) -> Option<String> {
    let patterns = regex::Regex::new(r"(?i)[@#:][a-z0-9_+/-]|gh-[0-9]|www\.|[0-9a-f]{7}").unwrap();
    patterns.find(text).map(|m| m.as_str().to_string())
}

/// Panics unless every node of `markdown` is of a kind in `allowed` and no text run holds a
/// reference GitHub would render.
pub fn assert_only(markdown: &str, allowed: &[&str]) {
    let parsed = nodes(markdown);
    for node in &parsed {
        assert!(
            allowed.contains(&node.kind),
            "a {} node ({:?}) in {markdown:?}",
            node.kind,
            node.literal
        );
    }
    for run in text_runs(&parsed) {
        assert_eq!(
            reference_in(&run),
            None,
            "in the text {run:?} of {markdown:?}"
        );
    }
}

/// HTML text as a browser shows it: numeric character references and `&lt;`, `&gt;`, `&amp;`,
/// `&quot;` decoded.
pub fn decode_html_text(html: &str) -> String {
    let reference =
        regex::Regex::new(r"&#([0-9]+);|&#[xX]([0-9a-fA-F]+);|&(lt|gt|amp|quot);").unwrap();
    reference
        .replace_all(html, |found: &regex::Captures| {
            let code = match (found.get(1), found.get(2), found.get(3)) {
                (Some(decimal), _, _) => decimal.as_str().parse().ok(),
                (_, Some(hex), _) => u32::from_str_radix(hex.as_str(), 16).ok(),
                (_, _, Some(name)) => Some(match name.as_str() {
                    "lt" => 0x3C,
                    "gt" => 0x3E,
                    "amp" => 0x26,
                    _ => 0x22,
                }),
                _ => None,
            };
            code.and_then(char::from_u32)
                .unwrap_or('\u{FFFD}')
                .to_string()
        })
        .into_owned()
}

/// The node kinds a comment sqlgate writes is made of (its own markup: headings, lists, tables,
/// folded `<details>`, code, emphasis of its own words), links and images aside.
pub const COMMENT_KINDS: &[&str] = &[
    "document",
    "paragraph",
    "text",
    "softbreak",
    "heading",
    "list",
    "item",
    "table",
    "table_row",
    "table_cell",
    "code_block",
    "code",
    "html_block",
    "html_inline",
    "strong",
    "emph",
    "block_quote",
];

/// Panics unless `markdown`, a comment sqlgate wrote, holds only [`COMMENT_KINDS`] nodes, links to
/// `links` only, no image, and no HTML but sqlgate's own (its marker, `<details>`, `<summary>`,
/// `<sub>`) around text that decodes to no reference. Returns the parsed nodes.
pub fn assert_sqlgate_markup_only(markdown: &str, links: &[&str]) -> Vec<Node> {
    let parsed = nodes(markdown);
    let own_tags = own_tags();
    for node in &parsed {
        match node.kind {
            "link" => assert!(
                links.contains(&node.literal.as_str()),
                "link {}",
                node.literal
            ),
            "html_block" | "html_inline" => {
                let rest = own_tags.replace_all(&node.literal, "");
                assert!(
                    !rest.contains('<'),
                    "HTML not sqlgate's: {:?}",
                    node.literal
                );
            }
            kind => assert!(
                COMMENT_KINDS.contains(&kind),
                "a {kind} node ({:?}) in\n{markdown}",
                node.literal
            ),
        }
    }
    parsed
}

/// Every text GitHub's filters read in `nodes`: the text runs and the text of HTML nodes (less
/// sqlgate's own tags and what a `<code>` element holds, where GitHub links nothing).
pub fn shown_texts(nodes: &[Node]) -> Vec<String> {
    let code = regex::Regex::new(r"<code>[^<]*</code>").unwrap();
    let html = nodes
        .iter()
        .filter(|n| n.kind.starts_with("html"))
        .map(|n| code.replace_all(&n.literal, " "))
        .map(|html| decode_html_text(&own_tags().replace_all(&html, "")));
    text_runs(nodes).into_iter().chain(html).collect()
}

/// The HTML sqlgate itself writes: its marker, `<details>` (`<details open>` for the regressed
/// items), `<summary>`, `<sub>`.
fn own_tags() -> regex::Regex {
    regex::Regex::new(
        r"<!-- sqlgate:[0-9a-z-]+ -->|<details( open)?>|</details>|</?summary>|</?sub>|</?code>",
    )
    .unwrap()
}
