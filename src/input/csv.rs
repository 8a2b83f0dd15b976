//! A strict, bounded reader of the CSV files pandas' `to_csv` writes (Spider 2.0's gold results):
//! comma-separated, `"`-quoted fields with `""` for a quote, LF or CRLF line ends, quoted fields
//! may span lines, a UTF-8 byte-order mark is dropped and blank lines are skipped (as
//! `pd.read_csv` does). The first record is the header; every other record must have as many
//! fields. Cells stay text: typing them is the comparison's business (`engine::spider2`).

use crate::util::error::InputError;
use std::path::Path;

/// The largest gold result file read: 64 MiB.
pub const MAX_CSV_BYTES: u64 = 64 << 20;

/// A CSV file's header and records, as text.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CsvTable {
    /// Column names (the header record).
    pub columns: Vec<String>,
    /// Records after the header, each with one text per column.
    pub rows: Vec<Vec<String>>,
}

/// Reads a CSV file of at most [`MAX_CSV_BYTES`].
pub fn read_csv(path: &Path) -> Result<CsvTable, InputError> {
    let size = std::fs::metadata(path)
        .map_err(|e| InputError::read(path, e))?
        .len();
    if size > MAX_CSV_BYTES {
        return Err(InputError::malformed(
            path,
            "size",
            format!("{size} bytes; gold result files are limited to {MAX_CSV_BYTES} bytes"),
        ));
    }
    let text = crate::util::error::read_utf8(path)?;
    parse_csv(path, &text)
}

/// Parses CSV text that came from `path` (named in messages with the line).
pub fn parse_csv(path: &Path, text: &str) -> Result<CsvTable, InputError> {
    let text = text.strip_prefix('\u{feff}').unwrap_or(text);
    let mut records = Records::new(text).peekable();
    let (_, columns) = records
        .next()
        .transpose()
        .map_err(|(line, message)| InputError::malformed(path, format!("line {line}"), message))?
        .ok_or_else(|| InputError::malformed(path, "line 1", "empty file: no header"))?;
    let mut rows = Vec::new();
    for record in records {
        let (line, fields) = record.map_err(|(line, message)| {
            InputError::malformed(path, format!("line {line}"), message)
        })?;
        if fields.len() != columns.len() {
            return Err(InputError::malformed(
                path,
                format!("line {line}"),
                format!(
                    "{} fields, but the header has {}",
                    fields.len(),
                    columns.len()
                ),
            ));
        }
        rows.push(fields);
    }
    Ok(CsvTable { columns, rows })
}

/// A record and the line it starts on, or an error: (line, message).
type Record = Result<(usize, Vec<String>), (usize, String)>;

/// The records of a CSV text with the line each starts on.
struct Records<'a> {
    chars: std::iter::Peekable<std::str::Chars<'a>>,
    line: usize,
}

impl<'a> Records<'a> {
    fn new(text: &'a str) -> Self {
        Records {
            chars: text.chars().peekable(),
            line: 1,
        }
    }

    /// Consumes a line end (`\n`, `\r\n` or `\r`) if one comes next.
    fn line_end(&mut self) -> bool {
        match self.chars.peek() {
            Some('\n') => {
                self.chars.next();
            }
            Some('\r') => {
                self.chars.next();
                if self.chars.peek() == Some(&'\n') {
                    self.chars.next();
                }
            }
            _ => return false,
        }
        self.line += 1;
        true
    }

    /// A quoted field's content, the opening quote already consumed.
    fn quoted(&mut self, start: usize) -> Result<String, (usize, String)> {
        let mut field = String::new();
        loop {
            match self.chars.next() {
                None => return Err((start, "a quoted field is never closed".into())),
                Some('"') if self.chars.peek() == Some(&'"') => {
                    self.chars.next();
                    field.push('"');
                }
                Some('"') => match self.chars.peek() {
                    None | Some(',' | '\n' | '\r') => return Ok(field),
                    Some(c) => {
                        return Err((self.line, format!("`{c}` after a closing quote")));
                    }
                },
                Some(c) => {
                    if c == '\n' {
                        self.line += 1;
                    }
                    field.push(c);
                }
            }
        }
    }

    /// The next record; blank lines are skipped.
    fn record(&mut self) -> Option<Record> {
        while self.line_end() {}
        self.chars.peek()?;
        let start = self.line;
        let mut fields = Vec::new();
        loop {
            let field = if self.chars.peek() == Some(&'"') {
                self.chars.next();
                match self.quoted(start) {
                    Ok(field) => field,
                    Err(e) => return Some(Err(e)),
                }
            } else {
                let mut field = String::new();
                while let Some(&c) = self.chars.peek() {
                    if matches!(c, ',' | '\n' | '\r') {
                        break;
                    }
                    field.push(c);
                    self.chars.next();
                }
                field
            };
            fields.push(field);
            if self.chars.peek() == Some(&',') {
                self.chars.next();
                continue;
            }
            self.line_end();
            return Some(Ok((start, fields)));
        }
    }
}

impl Iterator for Records<'_> {
    type Item = Record;

    fn next(&mut self) -> Option<Self::Item> {
        self.record()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse(text: &str) -> Result<CsvTable, String> {
        parse_csv(Path::new("g.csv"), text).map_err(|e| e.to_string())
    }

    #[test]
    fn quoted_fields_blank_lines_and_bom() {
        let table = parse("\u{feff}a,b\r\n\"x,y\",\"l1\nl2\"\n\n\"q\"\"u\",\n\"\",z").unwrap();
        assert_eq!(table.columns, ["a", "b"]);
        assert_eq!(
            table.rows,
            [
                vec!["x,y".to_string(), "l1\nl2".into()],
                vec!["q\"u".into(), "".into()],
                vec!["".into(), "z".into()]
            ]
        );
    }

    #[test]
    fn errors_name_the_line() {
        assert!(parse("").unwrap_err().contains("no header"));
        let ragged = parse("a,b\n1,2\n\"3\n\",4,5\n").unwrap_err();
        assert!(
            ragged.contains("line 3") && ragged.contains("3 fields"),
            "{ragged}"
        );
        let open = parse("a\n1\n\"never").unwrap_err();
        assert!(
            open.contains("line 3") && open.contains("never closed"),
            "{open}"
        );
        assert!(parse("a\n\"x\"y\n").unwrap_err().contains("line 2"));
    }
}
