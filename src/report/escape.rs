//! The one escaping path for text sqlgate did not write: predictions, database values, file
//! names, provider replies, a fork's report artifact. In Markdown it renders as exactly its
//! characters (no HTML, mention, link, image, heading, math or reference can come from it); in
//! the GitHub Actions log it can never start a workflow command.
//!
//! Both start from the same step: CommonMark's line endings (`\r\n`, `\r`, `\n`) become `\n`,
//! since a bare `\r` ends a line for GitHub's renderer and for the Actions runner alike.

use std::borrow::Cow;

/// Invisible, non-breaking and not a word character: placed after `@`, `#` and `:` (and inside
/// `GH-`, `www.` and long hex runs) it ends every pattern GitHub turns into a mention, an issue,
/// commit or emoji reference, or a link.
pub const WORD_JOINER: char = '\u{2060}';

/// Longest run of hex digits left unbroken: GitHub links 7 or more as a commit.
const MAX_HEX_RUN: usize = 6;

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
fn is_invisible_control(c: char) -> bool {
    c.is_control()
        || matches!(c, '\u{200E}' | '\u{200F}' | '\u{061C}')
        || ('\u{202A}'..='\u{202E}').contains(&c)
        || ('\u{2066}'..='\u{2069}').contains(&c)
}

/// Inline Markdown that renders as `text`'s characters and nothing else, on one line, wherever
/// it is put: a line's start, a list item, a heading, a table cell, or the HTML of a
/// `<summary>` (so markup characters are written as character references, which both Markdown
/// and HTML show as the character itself, never as markup):
///
/// - blanks at either end dropped (HTML shows none; leading ones would make a code block,
///   trailing ones a hard break), line endings and tabs spaces, controls U+FFFD;
/// - `\\`, `` ` ``, `*`, `~`, `[`, `]`, `<`, `>`, `&`, `|`, `$` and `_` (unless between two
///   letters or digits, as in `snake_case`) as references (`&#42;`, `&lt;` ...), so no HTML,
///   entity, emphasis, code span, link, image, footnote, table cell or math can form; `-`, `+`, `=` and `#` at the start, and `.` or `)` after
///   leading digits, too, so no list, heading or setext underline starts;
/// - a [`WORD_JOINER`] after `@`, `#` or `:` followed by anything but a blank, after `GH-` and
///   every sixth digit of a hex run, and before the dot of `www.`, so that GitHub's filters,
///   which read the rendered text, find no mention, issue, commit or emoji reference, no heading
///   marker and no link.
pub fn markdown_inline(text: &str) -> String {
    let visible: String = normalize_line_endings(text)
        .chars()
        .map(|c| match c {
            '\n' | '\t' | '\u{2028}' | '\u{2029}' => ' ',
            c if is_invisible_control(c) => '\u{FFFD}',
            c => c,
        })
        .collect();
    let text = visible
        .trim_start_matches([' ', '\u{FEFF}'])
        .trim_end_matches(' ');
    let mut out = String::with_capacity(text.len() + text.len() / 4);
    let mut previous = ['\0'; 3];
    let mut hex_run = 0;
    let mut only_digits = true;
    let all: Vec<char> = text.chars().collect();
    for (at, c) in all.iter().copied().enumerate() {
        hex_run = if c.is_ascii_hexdigit() {
            hex_run + 1
        } else {
            0
        };
        if c == '.' && previous.iter().all(|p| p.eq_ignore_ascii_case(&'w')) {
            out.push(WORD_JOINER);
        }
        let as_reference = match c {
            '_' => !inside_word(&all, at),
            '\\' | '`' | '*' | '~' | '[' | ']' | '<' | '>' | '&' | '|' | '$' => true,
            '-' | '+' | '=' | '#' => out.is_empty(),
            '.' | ')' => only_digits && !out.is_empty(),
            _ => false,
        };
        match c {
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '&' => out.push_str("&amp;"),
            c if as_reference => out.push_str(&format!("&#{};", u32::from(c))),
            c => out.push(c),
        }
        let lower = |i: usize| previous[i].to_ascii_lowercase();
        let breaks = match c {
            '@' | '#' | ':' => all.get(at + 1).is_some_and(|next| !next.is_whitespace()),
            '-' => lower(1) == 'g' && lower(2) == 'h',
            _ => hex_run == MAX_HEX_RUN,
        };
        if breaks {
            out.push(WORD_JOINER);
            hex_run = 0;
        }
        only_digits &= c.is_ascii_digit();
        previous = [previous[1], previous[2], c];
    }
    out
}

/// Whether the run of `_` at `chars[at]` stands between two letters or digits (`snake_case`),
/// where CommonMark lets it neither open nor close emphasis.
fn inside_word(chars: &[char], at: usize) -> bool {
    let start = chars[..at].iter().rposition(|&c| c != '_').map(|i| i + 1);
    let end = chars[at..].iter().position(|&c| c != '_').map(|i| at + i);
    match (start, end) {
        (Some(start), Some(end)) => {
            chars[start - 1].is_alphanumeric() && chars[end].is_alphanumeric()
        }
        _ => false,
    }
}

/// A fenced code block holding `text` verbatim, that nothing inside can close: line endings
/// normalised, controls other than tab as U+FFFD, and a fence of backticks longer than any
/// run of backticks in the text. `info` is the fence's language (ASCII letters only).
pub fn markdown_code_block(text: &str, info: &str) -> String {
    let clean: String = normalize_line_endings(text)
        .chars()
        .map(|c| match c {
            '\n' | '\t' => c,
            c if is_invisible_control(c) => '\u{FFFD}',
            c => c,
        })
        .collect();
    let longest = clean.split(|c| c != '`').map(str::len).max().unwrap_or(0);
    let ticks = "`".repeat(longest.max(2) + 1);
    let info: String = info.chars().filter(char::is_ascii_alphabetic).collect();
    format!("{ticks}{info}\n{}\n{ticks}", clean.trim_end_matches('\n'))
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn line_endings_are_normalised_first() {
        assert_eq!(normalize_line_endings("a\r\nb\rc\nd"), "a\nb\nc\nd");
        assert_eq!(markdown_inline("a\rb"), "a b");
        assert_eq!(log_value("a\r::error::x"), "a\\n::error::x");
    }

    #[test]
    fn inline_text_escapes_markup_and_breaks_references() {
        assert_eq!(markdown_inline(" a|b, c. "), "a&#124;b, c.");
        assert_eq!(markdown_inline("- x - y"), "&#45; x - y");
        assert_eq!(markdown_inline("12. x."), "12&#46; x.");
        assert_eq!(markdown_inline("<b>&"), "&lt;b&gt;&amp;");
        assert_eq!(markdown_inline("a: b:c #"), "a: b:\u{2060}c #");
        assert_eq!(markdown_inline("@x"), "@\u{2060}x");
        assert_eq!(markdown_inline("#1 #2"), "&#35;\u{2060}1 #\u{2060}2");
        assert_eq!(markdown_inline("GH-1"), "GH-\u{2060}1");
        assert_eq!(markdown_inline("$5"), "&#36;5");
        assert_eq!(
            markdown_inline("a_b __c_ d__e_"),
            "a_b &#95;&#95;c&#95; d__e&#95;"
        );
        assert_eq!(markdown_inline("www.x"), "www\u{2060}.x");
        assert_eq!(markdown_inline("abcdef12"), "abcdef\u{2060}12");
        assert_eq!(markdown_inline("a\u{0}b\u{202E}"), "a\u{FFFD}b\u{FFFD}");
    }

    #[test]
    fn code_blocks_outlast_any_backtick_run() {
        let block = markdown_code_block("SELECT 1 -- ```\r````` </details>", "sql");
        assert_eq!(
            block,
            "``````sql\nSELECT 1 -- ```\n````` </details>\n``````"
        );
        assert_eq!(
            markdown_code_block("SELECT 1", "sql"),
            "```sql\nSELECT 1\n```"
        );
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
