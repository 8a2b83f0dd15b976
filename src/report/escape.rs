//! The one escaping path for text sqlgate did not write: predictions, database values, file
//! names, provider replies, a fork's report artifact, in Markdown: it renders as exactly its
//! characters (no HTML, mention, link, image, heading, math or reference can come from it).
//! The log side of the same path (one line per value, no workflow command) is
//! [`crate::util::log`], so that stages before `report` use it too; both start from its
//! [`normalize_line_endings`].

use crate::util::log::{is_invisible_control, normalize_line_endings};

/// Invisible, non-breaking and not a word character: placed after `@`, `#` and `:` (and inside
/// `GH-`, `www.` and long hex runs) it ends every pattern GitHub turns into a mention, an issue,
/// commit or emoji reference, or a link.
pub const WORD_JOINER: char = '\u{2060}';

/// Longest run of hex digits left unbroken: GitHub links 7 or more as a commit.
const MAX_HEX_RUN: usize = 6;

/// Inline Markdown that renders as `text`'s characters and nothing else, on one line, wherever
/// it is put: a line's start, a list item, a heading, a table cell, or the HTML of a
/// `<summary>` (so markup characters are written as character references, which both Markdown
/// and HTML show as the character itself, never as markup):
///
/// - blanks at either end dropped (HTML shows none; leading ones would make a code block,
///   trailing ones a hard break), line endings and tabs spaces, controls U+FFFD;
/// - `\\`, `` ` ``, `*`, `~`, `[`, `]`, `<`, `>`, `&`, `|`, `$` and `_` (unless between two
///   ASCII letters or digits, as in `snake_case`) as references (`&#42;`, `&lt;` ...), so no HTML,
///   entity, emphasis, code span, link, image, footnote, table cell or math can form; `-`, `+`, `=` and `#` at the start, and `.` or `)` after
///   leading digits, too, so no list, heading or setext underline starts;
/// - a [`WORD_JOINER`] after `@`, `#` or `:` followed by anything but a blank, after `GH-` and
///   the sixth digit of a hex run that goes on (GitHub links 7), and before the dot of `www.`, so that GitHub's filters,
///   which read the rendered text, find no mention, issue, commit or emoji reference, no heading
///   marker and no link.
pub fn markdown_inline(text: &str) -> String {
    inline_at(text, true)
}

/// [`markdown_inline`] of `text`, which starts a line (where a list marker, a heading or a
/// numbered item could start) when `line_start`; a `#` that starts `text` is escaped either way
/// (a lone `#` word ending a heading would close it).
fn inline_at(text: &str, line_start: bool) -> String {
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
            '#' => out.is_empty(),
            '-' | '+' | '=' => out.is_empty() && line_start,
            '.' | ')' => only_digits && !out.is_empty() && line_start,
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
            _ => hex_run == MAX_HEX_RUN && all.get(at + 1).is_some_and(char::is_ascii_hexdigit),
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

/// A message sqlgate wrote around untrusted values (a verdict's headline, reason or note, an
/// error), as one line of Markdown for a heading, a list item or a paragraph (not a table cell,
/// [`markdown_cell`], nor the HTML of a `<summary>`, [`html_summary`]): what it quotes between
/// backticks becomes a code span, and so does every word a reader copies or GitHub would
/// otherwise link (one with a `/` or `\\`, a `:` inside, as `feature:join` or `:x:`, a hex run of
/// 7 or more, as a commit id, a mention `@x`, a reference `#1` or `GH-1`, a `www.` link), so a
/// copied path, hash or name is exactly its characters, with no invisible word joiner; a backtick
/// that quotes nothing or is never closed is code with what follows it (never `&#96;`). The rest
/// goes through [`markdown_inline`]'s rules, except that only the line's start escapes what
/// starts a list (`-`, `+`, `12.`), so the numbers and dashes of prose stay as written; a `#`
/// that starts a word is escaped everywhere (a lone one would close a heading). Inside a code
/// span GitHub forms no HTML, mention, reference or link, and a fence longer than any backtick
/// run inside means nothing closes it early.
pub fn markdown_message(text: &str) -> String {
    message_in(text, Target::Line)
}

/// [`markdown_message`] for a table cell: the same code spans, with each `|` written outside
/// them as `&#124;` (GitHub splits a row at every bare `|`, inside a code span too), so an
/// untrusted system, feature or item text can neither add a cell nor lose a character.
pub fn markdown_cell(text: &str) -> String {
    message_in(text, Target::Cell)
}

/// [`markdown_message`] for the title of a `<summary>`, which GitHub reads as HTML (no Markdown
/// code span forms there): what would be a code span is `<code>` with its text HTML-escaped.
pub fn html_summary(text: &str) -> String {
    message_in(text, Target::Summary)
}

/// Where an escaped message goes, which decides how its code is written.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Target {
    /// A heading, list item or paragraph: Markdown code spans.
    Line,
    /// A table cell: code spans with every `|` outside them.
    Cell,
    /// A `<summary>` title: HTML `<code>` elements.
    Summary,
}

/// The message `text` escaped for `target` (see [`markdown_message`]).
fn message_in(text: &str, target: Target) -> String {
    let line = markdown_line(text);
    let line = line
        .trim_start_matches([' ', '\u{FEFF}'])
        .trim_end_matches(' ');
    let parts: Vec<&str> = line.split('`').collect();
    let closed = if parts.len() % 2 == 0 {
        parts.len() - 1
    } else {
        parts.len()
    };
    let mut out = Spans::new(target);
    for (index, part) in parts.iter().enumerate() {
        if index % 2 == 0 {
            message_prose(part, &mut out);
            continue;
        }
        let touches = |next: usize| parts[next].is_empty() && next > 0 && next + 1 < parts.len();
        let quotes = index < closed && !part.trim().is_empty();
        if quotes && !touches(index - 1) && !touches(index + 1) {
            out.code(part);
            continue;
        }
        // A backtick that quotes nothing, is never closed or touches another quote: the rest
        // of the line is code, its backticks shown as written.
        out.code(&format!("`{}", parts[index..].join("`")));
        break;
    }
    out.finish()
}

/// A line of Markdown built of escaped text and code spans, where code spans that would touch
/// are one span (two fences side by side would read as one longer fence).
struct Spans {
    /// Where the line goes.
    target: Target,
    /// What is written so far.
    out: String,
    /// The code of the span being built, not yet written.
    code: String,
}

impl Spans {
    /// An empty line for `target`.
    fn new(target: Target) -> Self {
        Spans {
            target,
            out: String::new(),
            code: String::new(),
        }
    }

    /// Adds escaped text (nothing when empty).
    fn text(&mut self, escaped: &str) {
        if escaped.is_empty() {
            return;
        }
        self.flush();
        self.out.push_str(escaped);
    }

    /// Adds `code` to the code span being built.
    fn code(&mut self, code: &str) {
        self.code.push_str(code);
    }

    /// Whether nothing is written or pending yet: the next text starts the line.
    fn at_line_start(&self) -> bool {
        self.out.is_empty() && self.code.is_empty()
    }

    /// Writes the pending code span as the target wants it.
    fn flush(&mut self) {
        if self.code.is_empty() {
            return;
        }
        let code = std::mem::take(&mut self.code);
        match self.target {
            Target::Line => self.out.push_str(&code_span(&code)),
            Target::Cell => {
                let pieces: Vec<String> = code
                    .split('|')
                    .map(|piece| match piece.is_empty() {
                        true => String::new(),
                        false => code_span(piece),
                    })
                    .collect();
                self.out.push_str(&pieces.join("&#124;"));
            }
            Target::Summary => {
                self.out.push_str("<code>");
                self.out.push_str(&html_text(&code));
                self.out.push_str("</code>");
            }
        }
    }

    /// The line.
    fn finish(mut self) -> String {
        self.flush();
        self.out
    }
}

/// `text` escaped for an XML attribute or element (JUnit): `&`, `<`, `>` and quotes as
/// references; drops characters XML 1.0 cannot carry (controls but tab and line feed, U+FFFE,
/// U+FFFF).
pub fn xml_text(text: &str) -> String {
    markup_text(text, true)
}

/// `text` escaped for an HTML element (a `<summary>`'s `<code>`), as [`xml_text`] but keeping
/// every character: HTML carries what XML cannot, and the prose around the code keeps them, so a
/// title shows every character of its message (dropping U+FFFF there lost it from a title only).
fn html_text(text: &str) -> String {
    markup_text(text, false)
}

/// `text` with `&`, `<`, `>` and quotes as references; with `xml`, without the characters XML
/// 1.0 cannot carry.
fn markup_text(text: &str, xml: bool) -> String {
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&#39;"),
            '\n' | '\t' => out.push(c),
            c if xml && (c.is_control() || c == '\u{fffe}' || c == '\u{ffff}') => {}
            c => out.push(c),
        }
    }
    out
}

/// `text` on one line: line endings and tabs as spaces, invisible controls as U+FFFD.
fn markdown_line(text: &str) -> String {
    normalize_line_endings(text)
        .chars()
        .map(|c| match c {
            '\n' | '\t' | '\u{2028}' | '\u{2029}' => ' ',
            c if is_invisible_control(c) => '\u{FFFD}',
            c => c,
        })
        .collect()
}

/// Prose between code spans, word by word, spaces kept: a word to copy exactly is a code span
/// (its leading `(` and trailing punctuation outside), any other through [`inline_at`]; only the
/// first word of a prose that starts the line is escaped as a line's start.
fn message_prose(text: &str, out: &mut Spans) {
    for (index, word) in text.split(' ').enumerate() {
        if index > 0 {
            out.text(" ");
        }
        let at_start = out.at_line_start();
        let core = word
            .trim_start_matches('(')
            .trim_end_matches([':', ',', ';', '.', ')', '\'', '"']);
        if core.is_empty() || !to_copy_exactly(core) {
            // What escaping would break with a word joiner only with its trailing punctuation
            // (`www.`, `x:.`) is code as a whole.
            let escaped = inline_at(word, at_start);
            match escaped.contains(WORD_JOINER) {
                true => out.code(word),
                false => out.text(&escaped),
            }
            continue;
        }
        let start = word.len() - word.trim_start_matches('(').len();
        let end = start + core.len();
        out.text(&inline_at(&word[..start], at_start));
        // Trailing punctuation that escaping would break with a word joiner (`x:.`) is code too.
        let tail = inline_at(&word[end..], false);
        match tail.contains(WORD_JOINER) {
            true => out.code(&word[start..]),
            false => {
                out.code(core);
                out.text(&tail);
            }
        }
    }
}

/// A path, a name with a `:` inside (`feature:join`), a word with a hex run GitHub would link as
/// a commit, or one it would turn into a mention (`@x`), an issue reference (`#1`, `GH-1`) or a
/// link (`www.x`): what [`markdown_inline`] would break with a word joiner.
fn to_copy_exactly(word: &str) -> bool {
    let longest_hex = word
        .split(|c: char| !c.is_ascii_hexdigit())
        .map(str::len)
        .max()
        .unwrap_or(0);
    let path = word.contains(['/', '\\']) && word.chars().any(char::is_alphanumeric);
    let lower = word.to_ascii_lowercase();
    let reference = word.contains('@')
        || (word.contains('#') && word.len() > 1)
        || lower.contains("gh-")
        || lower.contains("www.");
    path || reference || word.contains(':') || longest_hex > MAX_HEX_RUN
}

/// `text` as an inline code span: a fence longer than any backtick run inside, padded with a
/// space when `text` starts or ends with a backtick or a space (CommonMark strips one of each).
fn code_span(text: &str) -> String {
    let longest = text.split(|c| c != '`').map(str::len).max().unwrap_or(0);
    let fence = "`".repeat(longest + 1);
    // CommonMark strips a space at each end unless the span is only spaces.
    let only_spaces = text.chars().all(|c| c == ' ');
    let pad = if !only_spaces && (text.starts_with(['`', ' ']) || text.ends_with(['`', ' '])) {
        " "
    } else {
        ""
    };
    format!("{fence}{pad}{text}{pad}{fence}")
}

/// Whether the run of `_` at `chars[at]` stands between two ASCII letters or digits
/// (`snake_case`), where CommonMark lets it neither open nor close emphasis.
fn inside_word(chars: &[char], at: usize) -> bool {
    let start = chars[..at].iter().rposition(|&c| c != '_').map(|i| i + 1);
    let end = chars[at..].iter().position(|&c| c != '_').map(|i| at + i);
    match (start, end) {
        // ASCII only: CommonMark counts Unicode symbols (`🄰`) as punctuation, next to which a
        // `_` opens emphasis, while Rust's `is_alphanumeric` may call them letters.
        (Some(start), Some(end)) => {
            chars[start - 1].is_ascii_alphanumeric() && chars[end].is_ascii_alphanumeric()
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_message_keeps_paths_and_hashes_exact_and_quotes_as_code() {
        assert_eq!(
            markdown_message("cannot read /tmp/abcdef1234/C3.txt: `baseline.path` is @me #1"),
            "cannot read `/tmp/abcdef1234/C3.txt`: `baseline.path` is `@me` `#1`"
        );
        assert_eq!(
            markdown_message("commit 0123456789ab (see a`b``c)"),
            "commit `0123456789ab` (see a``` `b``c) ```"
        );
        assert_eq!(markdown_message("x ``` y"), "x ```` ``` y ````");
        assert_eq!(markdown_message("`` x"), "``` `` x ```");
        assert_eq!(markdown_message("<b>\nfile</b>"), "&lt;b&gt; `file</b>`");
        assert_eq!(code_span("a``b"), "```a``b```");
        assert_eq!(code_span("`x"), "`` `x ``");
    }

    #[test]
    fn message_prose_escapes_the_line_start_only_and_codes_what_is_copied() {
        assert_eq!(
            markdown_message("- m: ex 82.7 -> 81.9 (-0.8), p = 0.51 >= 0.05. 12. x #"),
            "&#45; m: ex 82.7 -&gt; 81.9 (-0.8), p = 0.51 &gt;= 0.05. 12. x &#35;"
        );
        assert_eq!(markdown_message("12. items"), "12&#46; items");
        assert_eq!(
            markdown_message("m: ex on feature:group_by, commit a23ae08b3b5e, see `gate.accept`"),
            "m: ex on `feature:group_by`, commit `a23ae08b3b5e`, see `gate.accept`"
        );
        assert_eq!(
            markdown_message("1 regressed / 0 fixed :shipit: a|b"),
            "1 regressed / 0 fixed `:shipit`: a&#124;b"
        );
        assert!(!markdown_message("x feature:join 0123456789abcdef").contains(WORD_JOINER));
        assert_eq!(markdown_cell("feature:join"), "`feature:join`");
        assert_eq!(markdown_cell("a:|b"), "`a:`&#124;`b`");
        assert_eq!(markdown_cell("extra"), "extra");
        assert_eq!(markdown_cell("x `a|b` y|z"), "x `a`&#124;`b` y&#124;z");
    }

    #[test]
    fn a_summary_title_writes_code_as_html() {
        assert_eq!(
            html_summary("see `gate.accept` on feature:join <b>, @me & a`b"),
            "see <code>gate.accept</code> on <code>feature:join</code> &lt;b&gt;, \
             <code>@me</code> &amp; a<code>`b</code>"
        );
        assert!(!html_summary("decade #1 GH-2 www.x 0123456789").contains(WORD_JOINER));
        // A noncharacter in code is kept, as in the prose around it (XML would drop it).
        assert_eq!(
            html_summary("gh\u{2060}\u{FFFF} \u{FFFF}"),
            "<code>gh\u{2060}\u{FFFF}</code> \u{FFFF}"
        );
        assert_eq!(xml_text("a\u{FFFF}\u{1}b"), "ab");
    }

    #[test]
    fn line_endings_are_normalised_first() {
        assert_eq!(normalize_line_endings("a\r\nb\rc\nd"), "a\nb\nc\nd");
        assert_eq!(markdown_inline("a\rb"), "a b");
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
}
