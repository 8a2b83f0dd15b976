//! The one escaping path (`report::escape` and `util::log`), read the way GitHub reads it: escaped text parsed by
//! a real CommonMark parser with GitHub's extensions (comrak) yields text and code nodes only,
//! in every place the report puts it, and no mention, reference, emoji or link in its rendered
//! text; escaped log values are one line that the Actions runner never reads as a command.
//!
//! `SQLGATE_PROPTEST_CASES` raises the number of cases (default 512).

use crate::common;

use common::markdown::{
    assert_only, assert_sqlgate_markup_only, decode_html_text, nodes, reference_in, shown_texts,
    text_runs,
};
use proptest::prelude::*;
use sqlgate::ci::fork::WorkflowRun;
use sqlgate::report::escape::{
    html_summary, markdown_cell, markdown_code_block, markdown_inline, markdown_message,
};
use sqlgate::util::log::{
    is_workflow_command, log_block, log_value, workflow_message, workflow_property,
};

/// The report run's page the fork comment links.
const RUN_URL: &str = "https://github.com/acme/model/actions/runs/5";

/// Node kinds untrusted inline text may produce.
const INLINE: &[&str] = &["document", "paragraph", "text"];

/// Every place the report template puts escaped inline text, with the node kinds sqlgate's own
/// markup there produces: a paragraph, a list item, a table row (cells counted separately), a
/// level-4 heading, a `<summary>` line of an HTML block.
fn contexts(escaped: &str) -> Vec<(String, Vec<&'static str>)> {
    let base = INLINE.to_vec();
    vec![
        (escaped.to_string(), base.clone()),
        (format!("Error: {escaped}\n"), base.clone()),
        (
            format!("- {escaped}\n- x\n"),
            [base.as_slice(), &["list", "item"]].concat(),
        ),
        (
            format!("#### {escaped}: item 3 ({escaped})\n"),
            vec!["document", "heading", "text"],
        ),
        (
            format!("| a | b |\n|---|---|\n| {escaped} | {escaped} |\n"),
            vec!["document", "table", "table_row", "table_cell", "text"],
        ),
    ]
}

/// Panics unless `title` as the title of a `<summary>` stays inside its HTML block.
fn assert_stays_in_summary(title: &str) {
    let summary = format!("<details><summary>{title} (3)</summary>\n\nx\n\n</details>\n");
    let blocks: Vec<String> = nodes(&summary)
        .into_iter()
        .filter(|n| n.kind == "html_block")
        .map(|n| n.literal)
        .collect();
    let opening = format!("<details><summary>{title} (3)</summary>\n");
    assert_eq!(blocks, [opening, "</details>\n".to_string()]);
}

/// Panics unless `text`, escaped, renders as text in every context (in the HTML of a
/// `<summary>` too), keeps a table row at two cells, and renders exactly its characters (less
/// line breaks and controls).
fn assert_inert(text: &str) {
    let escaped = markdown_inline(text);
    assert!(!escaped.contains(['\n', '\r']), "{escaped:?}");
    for (markdown, allowed) in contexts(&escaped) {
        assert_only(&markdown, &allowed);
    }
    assert_stays_in_summary(&escaped);
    assert!(!escaped.contains(['<', '>']), "no tag in {escaped:?}");
    let shown = decode_html_text(&escaped);
    assert_eq!(reference_in(&shown), None, "in the summary {shown:?}");
    let table = format!("| a | b |\n|---|---|\n| {escaped} | {escaped} |\n");
    let cells = nodes(&table)
        .iter()
        .filter(|n| n.kind == "table_cell")
        .count();
    assert_eq!(cells, 4, "the row of {text:?} kept its two cells: {table}");
    let rendered: String = nodes(&escaped)
        .iter()
        .filter(|n| n.kind == "text")
        .map(|n| n.literal.as_str())
        .collect::<String>()
        .replace(['\u{2060}', '\u{FEFF}'], "");
    let expected = shown_characters(text);
    // CommonMark strips a paragraph's leading and trailing blanks.
    assert_eq!(
        rendered.trim_matches(' '),
        expected.trim_matches(' '),
        "{escaped:?}"
    );
}

/// Panics unless `text` as a message (a headline, reason or note) renders as text and code
/// spans only in a paragraph, a list item and the verdict's heading, as a table cell
/// ([`markdown_cell`], in a row that keeps its two cells) and as a `<summary>` title
/// ([`html_summary`], text and `<code>` only), with no reference in its text runs, and shows
/// exactly its characters in each (code included; the backticks that quote a span are its
/// delimiters) with no word joiner and no `&#96;`, so what a reader copies is exactly what was
/// written.
fn assert_message_inert(text: &str) {
    let escaped = markdown_message(text);
    assert!(!escaped.contains(['\n', '\r']), "{escaped:?}");
    for written in [&escaped, &markdown_cell(text), &html_summary(text)] {
        assert!(
            !written.contains("&#96;"),
            "a backtick as `&#96;` in {written:?}"
        );
    }
    let inline = [INLINE, &["code"]].concat();
    for (markdown, allowed) in [
        (escaped.clone(), inline.clone()),
        (
            format!("- {escaped}\n- x\n"),
            [inline.as_slice(), &["list", "item"]].concat(),
        ),
        (
            format!("## ✅ sqlgate {escaped}\n"),
            vec!["document", "heading", "text", "code"],
        ),
    ] {
        assert_only(&markdown, &allowed);
    }
    let expected = shown_characters(text).replace('`', "");
    assert_shows_exactly(&nodes(&escaped), text, &expected);
    let cell = markdown_cell(text);
    let table = format!("| a | b |\n|---|---|\n| {cell} | {cell} |\n");
    let table_kinds = ["table", "table_row", "table_cell", "text", "code"];
    assert_only(&table, &[&["document"], table_kinds.as_slice()].concat());
    let parsed = nodes(&table);
    let cells = parsed.iter().filter(|n| n.kind == "table_cell").count();
    assert_eq!(cells, 4, "the row of {text:?} kept its two cells: {table}");
    let last = parsed.iter().rposition(|n| n.kind == "table_cell").unwrap();
    assert_shows_exactly(&parsed[last..], text, &expected);
    assert_summary_inert(text, &expected);
}

/// Panics unless the `text` and `code` nodes of `parsed` show `expected` (less the backticks),
/// add no word joiner and hold no reference outside code.
fn assert_shows_exactly(parsed: &[common::markdown::Node], text: &str, expected: &str) {
    for node in parsed.iter().filter(|n| matches!(n.kind, "text" | "code")) {
        let added = node.literal.contains('\u{2060}') && !text.contains('\u{2060}');
        assert!(!added, "a word joiner in {:?} of {text:?}", node.literal);
    }
    for run in text_runs(parsed) {
        assert_eq!(reference_in(&run), None, "in {run:?} of {text:?}");
    }
    let rendered: String = parsed
        .iter()
        .filter(|n| matches!(n.kind, "text" | "code"))
        .map(|n| n.literal.as_str())
        .collect::<String>()
        .replace(['\u{2060}', '\u{FEFF}'], "");
    assert_eq!(
        rendered.replace('`', "").trim_matches(' '),
        expected.trim_matches(' '),
        "{text:?}"
    );
}

/// Panics unless `text` as a `<summary>` title stays inside its HTML block, holds no tag but
/// `<code>`, and shows `expected` (less the backticks) with no reference outside `<code>` and
/// no word joiner added.
fn assert_summary_inert(text: &str, expected: &str) {
    let title = html_summary(text);
    assert_stays_in_summary(&title);
    let tags = title.replace("<code>", "\u{1}").replace("</code>", "\u{2}");
    assert!(!tags.contains(['<', '>']), "no other tag in {title:?}");
    let added = title.contains('\u{2060}') && !text.contains('\u{2060}');
    assert!(!added, "a word joiner in the summary {title:?}");
    let outside_code: String = tags
        .split('\u{1}')
        .map(|part| part.split_once('\u{2}').map_or(part, |(_, after)| after))
        .collect::<Vec<_>>()
        .join(" ");
    assert_eq!(
        reference_in(&decode_html_text(&outside_code)),
        None,
        "{title:?}"
    );
    let shown = decode_html_text(&tags.replace(['\u{1}', '\u{2}'], ""));
    assert_eq!(
        shown
            .replace(['`', '\u{2060}', '\u{FEFF}'], "")
            .trim_matches(' '),
        expected.trim_matches(' '),
        "{title:?}"
    );
}

/// `text` as an escaper shows it: line breaks and tabs as spaces, controls and direction marks
/// as U+FFFD, no word joiner or byte-order mark.
fn shown_characters(text: &str) -> String {
    text.replace("\r\n", " ")
        .chars()
        .map(|c| match c {
            '\r' | '\n' | '\t' | '\u{2028}' | '\u{2029}' => ' ',
            c if c.is_control() => '\u{FFFD}',
            c if ('\u{202A}'..='\u{202E}').contains(&c)
                || ('\u{2066}'..='\u{2069}').contains(&c)
                || matches!(c, '\u{200E}' | '\u{200F}' | '\u{061C}') =>
            {
                '\u{FFFD}'
            }
            c => c,
        })
        .collect::<String>()
        .replace(['\u{2060}', '\u{FEFF}'], "")
}

/// Panics unless `value` escaped is one log line that no runner reads as a workflow command,
/// alone, indented, or after a prefix.
fn assert_no_command(value: &str) {
    let escaped = log_value(value);
    assert!(!escaped.contains(['\n', '\r']), "{escaped:?}");
    for line in [
        escaped.clone(),
        format!("  {escaped}"),
        format!("x {escaped}"),
    ] {
        assert!(!is_workflow_command(&line), "{line:?} from {value:?}");
    }
}

#[test]
fn each_finding_of_the_issue_renders_as_text() {
    let findings = [
        "x\r<img src=https://evil.example/p.png>\r![i](https://evil.example/i.png)\r@octocat",
        "\\[x\\](https://evil.example)",
        "\\\\[x\\\\](https://evil.example) and \\![y](https://evil.example/y.png)",
        "see #1 and acme/other#2 and GH-3 and acme@0123456789abcdef",
        "## ✅ sqlgate passed: everything is fine",
        "[x]: https://evil.example\n[x]",
        "<details><summary>x</summary>",
        "&#64;octocat &lt;b&gt; :shipit: www.evil.example https://evil.example x@evil.example",
        "$\\href{https://evil.example}{x}$ and $$y$$",
        "> [!WARNING]\n> fake alert",
        "- [x] task\n1. list\n---\n===",
        "```\ncode\n``` | ~~~ | `code` | *em* _em_ ~~del~~ | \\",
        "x\u{0}y\u{202E}z\u{2028}w",
        // A `_` between a letter and a symbol Rust calls alphanumeric (found by the property
        // test below): CommonMark lets it open emphasis.
        "\u{c0e}_\u{1f130}_\u{9d7}",
        // A noncharacter in a word that is code (its word joiner makes it one), found by the
        // property test below: a `<summary>` title's `<code>` dropped it (as XML would).
        "gh\u{2060}\u{FFFF}",
    ];
    for finding in findings {
        assert_inert(finding);
        assert_message_inert(finding);
    }
}

#[test]
fn each_log_finding_stays_one_line_without_commands() {
    for value in [
        "x\n::error title=sqlgate::all green",
        "x\r::add-mask::secret",
        "x\r\n  ::notice::y",
        "rows ##[warning]fake",
        "#\u{200B}#[warning]zero width",
        "::stop-commands::abc",
        "\u{85}::error::after a next-line character",
        "\u{2028}::error::after a line separator",
    ] {
        assert_no_command(value);
    }
}

#[test]
fn code_blocks_hold_anything_verbatim() {
    for text in [
        "SELECT 1 -- ```\r```` x\r\n~~~\n<img src=x> @octocat #1",
        "````",
        "\n\n",
    ] {
        let block = markdown_code_block(text, "sql");
        let parsed = nodes(&block);
        let kinds: Vec<&str> = parsed.iter().map(|n| n.kind).collect();
        assert_eq!(kinds, ["document", "code_block"], "{block}");
        let normalised = text.replace("\r\n", "\n").replace('\r', "\n");
        assert_eq!(
            parsed[1].literal.trim_end_matches('\n'),
            normalised.trim_end_matches('\n')
        );
    }
}

/// Strings made of the pieces that matter to Markdown, GitHub's filters and the runner, mixed
/// with arbitrary characters.
fn hostile() -> impl Strategy<Value = String> {
    let pieces = prop::sample::select(vec![
        "\r",
        "\n",
        "\r\n",
        "\0",
        "\t",
        "`",
        "```",
        "~~~",
        "<",
        ">",
        "@",
        "#",
        "\\",
        "::",
        "##[",
        "[",
        "]",
        "(",
        ")",
        "!",
        "*",
        "_",
        "|",
        "$",
        "$$",
        ":",
        "/",
        "-",
        "=",
        "+",
        ".",
        "&",
        ";",
        "x",
        "octocat",
        "1",
        "42",
        "abcdef1234",
        "www",
        "https",
        "GH",
        "gh",
        " ",
        "    ",
        "<img",
        "<!--",
        "-->",
        "&#64;",
        "&amp;",
        "\u{2028}",
        "\u{202E}",
        "\u{200B}",
        "\u{2060}",
        "\u{85}",
        "\u{FEFF}",
        "é",
        "ǅ",
        "ｗ",
        "＠",
        "[!NOTE]",
        "- ",
        "1. ",
        "> ",
        "---",
        "===",
        "^",
        "\"",
        "'",
        "{",
        "}",
        "?",
        "%",
        "%0A",
        "::error::",
        "::stop-commands::",
        "a_b",
        "_x_",
        "__",
        "add-mask",
    ]);
    let mixed = prop_oneof![
        pieces.prop_map(str::to_string),
        any::<char>().prop_map(String::from)
    ];
    prop::collection::vec(mixed, 0..40).prop_map(|parts| parts.concat())
}

fn cases() -> u32 {
    std::env::var("SQLGATE_PROPTEST_CASES")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(512)
}

proptest! {
    #![proptest_config(ProptestConfig {
        cases: cases(),
        failure_persistence: None,
        ..ProptestConfig::default()
    })]

    #[test]
    fn no_string_escapes_into_markdown_or_a_command(text in hostile()) {
        assert_inert(&text);
        assert_message_inert(&text);
        assert_no_command(&text);
        let block = markdown_code_block(&text, "text");
        let kinds: Vec<&str> = nodes(&block).iter().map(|n| n.kind).collect();
        prop_assert_eq!(kinds, ["document", "code_block"]);
    }

    #[test]
    fn an_annotation_stays_one_command(file in hostile(), title in hostile(), text in hostile()) {
        let line = format!(
            "::warning file={},title={}::{}",
            workflow_property(&file),
            workflow_property(&title),
            workflow_message(&text)
        );
        prop_assert_eq!(line.split(['\r', '\n']).count(), 1);
        prop_assert!(!line.contains("##["));
        let properties = line["::warning ".len()..].split("::").next().unwrap();
        prop_assert_eq!(properties.matches(',').count(), 1, "{}", properties);
    }

    #[test]
    fn a_fork_report_stays_inside_its_code_block(report in hostile(), failed in any::<bool>()) {
        let run = WorkflowRun {
            repository: "acme/model".into(),
            head_sha: "a".repeat(40),
            head_repository: "forker/model".into(),
            head_owner: "forker".into(),
            head_branch: "feature".into(),
            html_url: RUN_URL.into(),
            workflow_id: 42,
            conclusion: if failed { "failure" } else { "success" }.into(),
        };
        let body = run.body(Some(&report));
        let parsed = assert_sqlgate_markup_only(&body, &[RUN_URL]);
        let kinds: Vec<&str> = parsed.iter().map(|n| n.kind).collect();
        prop_assert_eq!(kinds.iter().filter(|k| **k == "heading").count(), 1);
        prop_assert_eq!(kinds.iter().filter(|k| **k == "code_block").count(), 1);
        let heading = kinds.iter().position(|k| *k == "heading").unwrap();
        let verdict = if failed { "❌ sqlgate failed" } else { "✅ sqlgate passed" };
        prop_assert_eq!(parsed[heading + 1].literal.as_str(), verdict);
        for text in shown_texts(&parsed) {
            prop_assert_eq!(reference_in(&text.replace(RUN_URL, "")), None, "{}", text);
        }
    }

    #[test]
    fn arbitrary_unicode_escapes_into_nothing(text in any::<String>()) {
        assert_inert(&text);
        assert_message_inert(&text);
        assert_no_command(&text);
    }

    #[test]
    fn a_log_block_keeps_every_line_inert(text in hostile()) {
        let block = log_block(&text, true);
        let lines: Vec<&str> = block.split(['\r', '\n']).collect();
        let token = lines[0].strip_prefix("::stop-commands::").unwrap();
        let resume = format!("::{token}::");
        let inside = &lines[1..lines.len() - 2];
        prop_assert!(inside.iter().all(|l| !l.contains(token)));
        prop_assert_eq!(lines[lines.len() - 2], resume.as_str());
        prop_assert_eq!(lines[lines.len() - 1], "");
    }
}

#[test]
fn the_text_checks_catch_what_github_renders() {
    assert_eq!(reference_in("hi @octocat").as_deref(), Some("@o"));
    assert_eq!(reference_in("acme/other#2").as_deref(), Some("#2"));
    assert_eq!(reference_in("a :shipit: b").as_deref(), Some(":s"));
    assert_eq!(
        reference_in("commit 0123456789ab").as_deref(),
        Some("0123456")
    );
    assert_eq!(text_runs(&nodes("a `b` c")), ["a ", " c"]);
    let raw = std::panic::catch_unwind(|| assert_only("<img src=x>", INLINE));
    assert!(raw.is_err(), "raw HTML is caught");
}
