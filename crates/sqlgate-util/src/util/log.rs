//! The log side of sqlgate's one escaping path: a text that came from a pull request, a
//! database or an artifact, printed to stdout or stderr, can never start a workflow command in
//! the GitHub Actions log (every such value is one line, every such print in Actions is wrapped
//! in `::stop-commands::<token>`). Here in `util` so that every stage (suites, providers,
//! scoring) prints its notes through it; the Markdown side is `report::escape`.
//!
//! Everything starts from the same step: CommonMark's line endings (`\r\n`, `\r`, `\n`) become
//! `\n`, since a bare `\r` ends a line for GitHub's renderer and for the Actions runner alike.

use std::borrow::Cow;

/// `text` with every CommonMark line ending (`\r\n`, `\r`, `\n`) as `\n`.
pub fn normalize_line_endings(text: &str) -> Cow<'_, str> {
    if text.contains('\r') {
        Cow::Owned(text.replace("\r\n", "\n").replace('\r', "\n"))
    } else {
        Cow::Borrowed(text)
    }
}

/// A character that draws nothing or moves other characters: controls (NUL included) and the
/// bidirectional overrides and isolates that make a line read differently from its bytes.
pub fn is_invisible_control(c: char) -> bool {
    c.is_control()
        || matches!(c, '\u{200E}' | '\u{200F}' | '\u{061C}')
        || ('\u{202A}'..='\u{202E}').contains(&c)
        || ('\u{2066}'..='\u{2069}').contains(&c)
}

/// One value for the Actions log (and any console): a single line whatever it holds, that no
/// runner reads as a workflow command. Line endings become `\n`, tab `\t`, a backslash `\\`,
/// other controls and invisible format characters `\u{..}`; a `[` after `##` becomes `\[` (the
/// runner's old `##[command]` form works anywhere in a line) and a `:` the value starts with
/// (after blanks) `\:` (a line starting with `::` is a command).
pub fn log_value(text: &str) -> String {
    let text = normalize_line_endings(text);
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        match c {
            '\n' => out.push_str("\\n"),
            '\t' => out.push_str("\\t"),
            '\\' => out.push_str("\\\\"),
            '[' if out.ends_with("##") => out.push_str("\\["),
            ':' if out.trim_start().is_empty() => out.push_str("\\:"),
            c if is_invisible_control(c) || is_format_or_separator(c) => {
                out.push_str(&format!("\\u{{{:04x}}}", u32::from(c)));
            }
            c => out.push(c),
        }
    }
    out
}

/// Characters that draw nothing (zero-width spaces and joiners, the byte order mark, soft
/// hyphen) or separate lines or paragraphs: shown by their code in the log, so that no comparison
/// that ignores them can see `##[` or `::` where the value has something else.
fn is_format_or_separator(c: char) -> bool {
    matches!(
        c,
        '\u{00AD}'
            | '\u{034F}'
            | '\u{180E}'
            | '\u{200B}'..='\u{200D}'
            | '\u{2028}'..='\u{2029}'
            | '\u{2060}'..='\u{2064}'
            | '\u{FEFF}'
            | '\u{FFF9}'..='\u{FFFB}'
    )
}

/// The message of a workflow command sqlgate writes (`::warning ...::<message>`): `%`, `\r` and
/// `\n` as `%25`, `%0D` and `%0A`, which the runner turns back, so the command stays one line;
/// `##[` (the runner's old command form, read anywhere in a line) as `## [`.
pub fn workflow_message(text: &str) -> String {
    text.replace('%', "%25")
        .replace('\r', "%0D")
        .replace('\n', "%0A")
        .replace("##[", "## [")
}

/// A property value of a workflow command sqlgate writes (`file=`, `title=`): as a message, and
/// `:` and `,` as `%3A` and `%2C`, so it cannot end the properties or add one.
pub fn workflow_property(text: &str) -> String {
    workflow_message(text)
        .replace(':', "%3A")
        .replace(',', "%2C")
}

/// Whether `line`, as the GitHub Actions runner reads it, is a workflow command: it starts with
/// `::` after leading blanks, or holds `##[` anywhere.
pub fn is_workflow_command(line: &str) -> bool {
    line.trim_start().starts_with("::") || line.contains("##[")
}

/// Text that came from a pull request, a database or an artifact, ready to print: in GitHub
/// Actions (`actions`), between `::stop-commands::<token>` and `::<token>::` with a random token
/// the text cannot hold, so that no line of it is read as a workflow command; elsewhere as it is.
/// `text` should already have its values escaped with [`log_value`].
pub fn log_block(text: &str, actions: bool) -> String {
    if !actions {
        return text.to_string();
    }
    let token = loop {
        let token = format!(
            "sqlgate-{:016x}{:016x}",
            fastrand::u64(..),
            fastrand::u64(..)
        );
        if !text.contains(&token) {
            break token;
        }
    };
    let newline = if text.ends_with('\n') { "" } else { "\n" };
    format!("::stop-commands::{token}\n{text}{newline}::{token}::\n")
}

/// Whether this process runs in GitHub Actions (`GITHUB_ACTIONS=true`), where its output is read
/// for workflow commands.
pub fn in_actions() -> bool {
    std::env::var("GITHUB_ACTIONS").as_deref() == Ok("true")
}

/// Prints one note of a stage to stderr as `sqlgate: <note>`: the note (which may hold a path,
/// key, SQL or error text a pull request chose) as one [`log_value`] line, inside a
/// [`log_block`] when running in GitHub Actions; on a line of its own, below a progress bar
/// being drawn (`progress::eprint_below_bar`).
pub fn note(text: &str) {
    crate::util::progress::eprint_below_bar(&log_block(
        &format!("sqlgate: {}\n", log_value(text)),
        in_actions(),
    ));
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn line_endings_are_normalised_first() {
        assert_eq!(normalize_line_endings("a\r\nb\rc\nd"), "a\nb\nc\nd");
        assert_eq!(log_value("a\r::error::x"), "a\\n::error::x");
    }

    #[test]
    fn log_values_stay_on_one_line_and_start_no_command() {
        assert_eq!(log_value("x\n::add-mask::y"), "x\\n::add-mask::y");
        assert_eq!(log_value("  ::error::y"), "  \\::error::y");
        assert_eq!(log_value("a ##[warning]b"), "a ##\\[warning]b");
        assert_eq!(log_value("#\u{200B}#[x"), "#\\u{200b}#[x");
        assert_eq!(log_value("a\\n"), "a\\\\n");
        for value in ["x\n::error::y", " ::x", "##[group]", "\r##[x"] {
            assert!(!is_workflow_command(&log_value(value)), "{value:?}");
        }
    }

    #[test]
    fn workflow_command_values_are_percent_escaped() {
        assert_eq!(workflow_property("a,b:c%\n"), "a%2Cb%3Ac%25%0A");
        assert_eq!(workflow_message("x\r\n::error::y"), "x%0D%0A::error::y");
        assert_eq!(workflow_message("###[x"), "### [x");
    }

    #[test]
    fn log_blocks_stop_commands_with_a_fresh_token() {
        assert_eq!(log_block("::error::x\n", false), "::error::x\n");
        let block = log_block("::error::x", true);
        let lines: Vec<&str> = block.lines().collect();
        let token = lines[0].strip_prefix("::stop-commands::").unwrap();
        assert_eq!(token.len(), "sqlgate-".len() + 32);
        assert_eq!(lines, [lines[0], "::error::x", &format!("::{token}::")]);
        assert_ne!(log_block("x", true), log_block("x", true));
    }
}
