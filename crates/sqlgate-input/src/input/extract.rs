//! Pulling the SQL out of raw model output (`predictions[].extract`): LLM answers hold the query
//! inside prose, Markdown fences or a `SQL:` line, and every harness writes its own regex. An
//! answer that holds text but no SQL is an extraction failure, told apart from a SQL error.

use serde::{Deserialize, Serialize};

/// How a prediction's text becomes its SQL.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
#[serde(expecting = "`extract`: `auto`, `markdown` or `none`")]
pub enum ExtractMode {
    /// The text is the SQL (the default).
    #[default]
    None,
    /// The last fenced block (a `sql` one first); no fence is a failure.
    Markdown,
    /// A fence as `markdown`, else the last `SQL:` line, else the text when it is a bare query.
    Auto,
}

impl ExtractMode {
    /// The name as written in the config.
    pub fn as_str(self) -> &'static str {
        match self {
            ExtractMode::None => "none",
            ExtractMode::Markdown => "markdown",
            ExtractMode::Auto => "auto",
        }
    }
}

/// Code-fence languages read as SQL; a fence in any other language (python, json) is not a query.
const SQL_LANGUAGES: [&str; 8] = [
    "sql",
    "sqlite",
    "sqlite3",
    "postgresql",
    "postgres",
    "psql",
    "mysql",
    "mariadb",
];

/// Words a bare query starts with, for `auto` on text without a fence or `SQL:` line.
const QUERY_STARTS: [&str; 4] = ["select", "with", "(", "values"];

/// The SQL of one raw answer under `mode`, or `Err` with why none could be found.
pub fn extract(text: &str, mode: ExtractMode) -> Result<String, String> {
    let found = match mode {
        ExtractMode::None => Some(text.trim().to_string()),
        ExtractMode::Markdown => last_fence(text),
        ExtractMode::Auto => last_fence(text)
            .or_else(|| last_sql_line(text))
            .or_else(|| bare_query(text)),
    };
    found.filter(|sql| !sql.is_empty()).ok_or_else(|| {
        let looked_for = match mode {
            ExtractMode::Markdown => "no fenced code block (```sql ... ```)",
            _ => "no fenced ```sql block, no `SQL:` line and no bare query",
        };
        format!(
            "no SQL could be extracted from the model output ({looked_for} in {} characters; `extract: {}`)",
            text.chars().count(),
            mode.as_str()
        )
    })
}

/// One fenced block: its language tag (lowercase) and its body.
struct Fence {
    language: String,
    body: String,
}

/// The body of the last `sql` fence, else of the last untagged fence; a fence left open at the
/// end (a cut-off answer) runs to the end of the text.
fn last_fence(text: &str) -> Option<String> {
    let fences = fences(text);
    let sql = fences
        .iter()
        .rev()
        .find(|f| SQL_LANGUAGES.contains(&f.language.as_str()));
    sql.or_else(|| fences.iter().rev().find(|f| f.language.is_empty()))
        .map(|f| f.body.trim().to_string())
}

/// Every fenced block (``` or ~~~, three or more, closed by the same run of at least that
/// length), in order.
fn fences(text: &str) -> Vec<Fence> {
    let mut fences = Vec::new();
    let mut open: Option<(char, usize, Fence)> = None;
    for line in text.lines() {
        let trimmed = line.trim_start();
        let marker = trimmed.chars().next().filter(|c| *c == '`' || *c == '~');
        let run = marker.map_or(0, |m| trimmed.chars().take_while(|c| *c == m).count());
        let closes = open.as_ref().is_some_and(|(m, length, _)| {
            marker == Some(*m) && run >= *length && trimmed[run..].trim().is_empty()
        });
        if closes {
            fences.extend(open.take().map(|(_, _, fence)| fence));
        } else if let Some((_, _, fence)) = &mut open {
            fence.body.push_str(line);
            fence.body.push('\n');
        } else if let Some(c) = marker.filter(|_| run >= 3) {
            let language = trimmed[run..].split_whitespace().next().unwrap_or("");
            let fence = Fence {
                language: language.to_ascii_lowercase(),
                body: String::new(),
            };
            open = Some((c, run, fence));
        }
    }
    fences.extend(open.map(|(_, _, fence)| fence));
    fences
}

/// The query after the last `SQL:` label (any case, optionally bold): the rest of its line and
/// the lines after it up to a blank line.
fn last_sql_line(text: &str) -> Option<String> {
    let lines: Vec<&str> = text.lines().collect();
    let (start, rest) = lines.iter().enumerate().rev().find_map(|(number, line)| {
        let label = line.trim_start().trim_start_matches(['*', '#', ' ']);
        let head = label.get(..4)?;
        head.eq_ignore_ascii_case("sql:")
            .then(|| (number, label[4..].trim_start_matches('*').trim()))
    })?;
    let mut query = vec![rest];
    query.extend(
        lines[start + 1..]
            .iter()
            .take_while(|l| !l.trim().is_empty())
            .copied(),
    );
    Some(query.join("\n").trim().to_string())
}

/// The whole text when it reads as one query (it starts with SELECT, WITH, VALUES or `(`).
fn bare_query(text: &str) -> Option<String> {
    let trimmed = text.trim();
    let lower = trimmed
        .get(..trimmed.len().min(8))
        .unwrap_or("")
        .to_ascii_lowercase();
    QUERY_STARTS
        .iter()
        .any(|start| {
            lower.starts_with(start)
                && (*start == "("
                    || !lower[start.len()..]
                        .starts_with(|c: char| c.is_ascii_alphanumeric() || c == '_'))
        })
        .then(|| trimmed.to_string())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_last_sql_fence_wins_over_other_languages_and_earlier_fences() {
        let text = "First try:\n```sql\nSELECT 1\n```\nRun it with:\n```python\nrun(q)\n```\n\
                    Corrected:\n```SQL\nSELECT name\nFROM singer\n```\nDone.";
        assert_eq!(
            extract(text, ExtractMode::Markdown).unwrap(),
            "SELECT name\nFROM singer"
        );
        let untagged = "Answer:\n```\nSELECT 2\n```\n";
        assert_eq!(extract(untagged, ExtractMode::Auto).unwrap(), "SELECT 2");
        let cut_off = "```sql\nSELECT count(*) FROM t";
        assert_eq!(
            extract(cut_off, ExtractMode::Markdown).unwrap(),
            "SELECT count(*) FROM t"
        );
        let tilde = "~~~sqlite\nSELECT 3\n~~~";
        assert_eq!(extract(tilde, ExtractMode::Auto).unwrap(), "SELECT 3");
    }

    #[test]
    fn auto_falls_back_to_sql_lines_then_bare_queries() {
        let labelled = "Reasoning: join the tables.\nSQL: SELECT a\nFROM t\n\nThat's it.";
        assert_eq!(
            extract(labelled, ExtractMode::Auto).unwrap(),
            "SELECT a\nFROM t"
        );
        let bold = "**SQL:** SELECT b FROM u";
        assert_eq!(extract(bold, ExtractMode::Auto).unwrap(), "SELECT b FROM u");
        assert_eq!(
            extract("  with x as (select 1) select * from x ", ExtractMode::Auto).unwrap(),
            "with x as (select 1) select * from x"
        );
        assert!(extract("SQL: SELECT 1", ExtractMode::Markdown).is_err());
        assert!(extract("selection is hard", ExtractMode::Auto).is_err());
    }

    #[test]
    fn prose_without_sql_fails_naming_the_mode() {
        let error = extract(
            "I cannot answer this question from the schema.",
            ExtractMode::Auto,
        )
        .unwrap_err();
        assert!(
            error.starts_with("no SQL could be extracted") && error.contains("`extract: auto`"),
            "{error}"
        );
        assert!(extract("```python\nprint(1)\n```", ExtractMode::Markdown).is_err());
        assert!(extract("```sql\n```", ExtractMode::Markdown).is_err());
        assert_eq!(
            extract(" SELECT 1 ", ExtractMode::None).unwrap(),
            "SELECT 1"
        );
    }
}
