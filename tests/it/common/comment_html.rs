//! A sticky comment as a reviewer sees it on the pull request: its Markdown rendered to HTML by
//! comrak with GitHub's extensions (tables, strikethrough, autolinks, task lists, footnotes,
//! alerts, math) and GitHub's handling of raw HTML (kept, so sqlgate's own
//! `<details>`, `<summary>` and `<sub>` work), inside a page styled like a timeline comment.
//! `.ci/screenshot-comments` photographs these pages with headless Chromium for docs/; the tests
//! check the rendering itself.

use comrak::{markdown_to_html, Options};
use std::collections::BTreeSet;
use std::path::Path;

/// The variable naming the folder where [`keep_for_screenshot`] writes the pages
/// (`.ci/screenshot-comments` sets it).
pub const SCREENSHOT_DIR: &str = "SQLGATE_COMMENT_HTML_DIR";

/// GitHub's rendering options for a comment.
fn github_comment_options() -> Options<'static> {
    let mut options = super::markdown::github_options();
    options.render.r#unsafe = true;
    options.render.github_pre_lang = true;
    options
}

/// The HTML body of `markdown`, as GitHub renders a comment.
pub fn comment_html(markdown: &str) -> String {
    markdown_to_html(markdown, &github_comment_options())
}

/// The element names of `html`'s start tags, once each.
pub fn tags(html: &str) -> BTreeSet<String> {
    let start_tag = regex::Regex::new(r"<([a-z][a-z0-9]*)[\s>/]").unwrap();
    start_tag
        .captures_iter(html)
        .map(|c| c[1].to_string())
        .collect()
}

/// The elements a sqlgate comment may render to: GitHub's Markdown output for sqlgate's own
/// markup, and the `<details>`, `<summary>` and `<sub>` it writes itself.
pub const COMMENT_ELEMENTS: &[&str] = &[
    "h2",
    "h3",
    "h4",
    "p",
    "ul",
    "ol",
    "li",
    "table",
    "thead",
    "tbody",
    "tr",
    "th",
    "td",
    "pre",
    "code",
    "strong",
    "em",
    "a",
    "blockquote",
    "details",
    "summary",
    "sub",
    "br",
];

/// A timeline comment by `github-actions[bot]` holding `markdown`, as a whole HTML page.
pub fn comment_page(markdown: &str, title: &str) -> String {
    format!(
        "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">\
         <title>{title}</title><style>{STYLE}</style></head><body>\
         <div class=\"comment\"><div class=\"header\"><span class=\"avatar\"></span>\
         <strong>github-actions</strong> <span class=\"bot\">bot</span> commented</div>\
         <div class=\"markdown-body\">\n{}</div></div></body></html>\n",
        comment_html(markdown)
    )
}

/// Writes [`comment_page`] of `markdown` as `<name>.html` in the folder [`SCREENSHOT_DIR`]
/// names (its `<details>` folded, as the reviewer first sees them); does nothing when the
/// variable is unset.
pub fn keep_for_screenshot(name: &str, markdown: &str) {
    let Some(dir) = std::env::var_os(SCREENSHOT_DIR) else {
        return;
    };
    let page = comment_page(markdown, name);
    std::fs::write(Path::new(&dir).join(format!("{name}.html")), page).unwrap();
}

/// A small stylesheet after GitHub's comment (Primer's light theme): system fonts at 14 px,
/// bordered tables, grey code blocks, the comment box with its header.
const STYLE: &str = "
body { margin: 0; padding: 16px; background: #ffffff; color: #1f2328;
  font-family: -apple-system, BlinkMacSystemFont, 'Segoe UI', 'Noto Sans', Helvetica, Arial,
  sans-serif, 'Noto Color Emoji'; font-size: 14px; line-height: 1.5; }
.comment { max-width: 1012px; border: 1px solid #d1d9e0; border-radius: 6px; }
.header { background: #f6f8fa; border-bottom: 1px solid #d1d9e0; padding: 8px 16px;
  color: #59636e; border-radius: 6px 6px 0 0; }
.header strong { color: #1f2328; }
.avatar { display: inline-block; width: 20px; height: 20px; border-radius: 4px;
  background: #2da44e; vertical-align: middle; margin-right: 6px; }
.bot { border: 1px solid #d1d9e0; border-radius: 2em; padding: 0 6px; font-size: 12px; }
.markdown-body { padding: 16px; word-wrap: break-word; }
.markdown-body > :first-child { margin-top: 0; }
h2 { font-size: 1.5em; font-weight: 600; padding-bottom: .3em; border-bottom: 1px solid #d1d9e0;
  margin: 24px 0 16px; }
h3 { font-size: 1.25em; font-weight: 600; margin: 24px 0 16px; }
p, ul, ol, table, pre, details, blockquote { margin: 0 0 16px; }
ul, ol { padding-left: 2em; }
table { border-collapse: collapse; display: block; overflow: auto; }
th, td { border: 1px solid #d1d9e0; padding: 6px 13px; }
th { font-weight: 600; }
tr:nth-child(2n) { background: #f6f8fa; }
code { font-family: ui-monospace, SFMono-Regular, 'SF Mono', Menlo, Consolas, 'DejaVu Sans Mono',
  monospace; font-size: 85%; background: rgba(175, 184, 193, 0.2); border-radius: 6px;
  padding: .2em .4em; }
pre { background: #f6f8fa; border-radius: 6px; padding: 16px; overflow: auto; line-height: 1.45; }
pre code { background: transparent; padding: 0; font-size: 85%; }
summary { cursor: pointer; }
sub { color: #59636e; }
a { color: #0969da; text-decoration: none; }
blockquote { color: #59636e; border-left: .25em solid #d1d9e0; padding: 0 1em; }
";
