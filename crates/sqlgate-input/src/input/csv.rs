//! A bounded reader of Spider 2.0's gold result files that splits them into records and fields
//! as pandas' C tokenizer does with `pd.read_csv`'s defaults: comma-separated; a field opening
//! with `"` is quoted (`""` a quote, line ends kept inside; text after the closing quote joins
//! the field, `"x"y` is `xy`); a quote inside an unquoted field is text; `\n`, `\r\n` and a
//! bare `\r` end a record; blank lines and lines of spaces or tabs are skipped; a UTF-8
//! byte-order mark is dropped. The first record is the header. A record with fewer fields is
//! padded with empty fields (NaN to pandas); a first record with one field more than the header
//! makes the first field of every record the index (dropped). Cells stay text: typing them is
//! `engine::read_csv`'s business.
//!
//! What pandas refuses (no header, a record with more fields than the header, a quote never
//! closed, invalid UTF-8) is an `Ok(Err(reason))`: the official `try` scores the instance 0. Only
//! an unreadable or oversized file is an `InputError`.

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
    /// What pandas read its own way (short records padded, bare CR line ends, an index column).
    pub irregular: Vec<String>,
}

/// Reads a CSV file of at most [`MAX_CSV_BYTES`]; the inner `Err` is why pandas refuses it.
pub fn read_csv(path: &Path) -> Result<Result<CsvTable, String>, InputError> {
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
    let bytes = std::fs::read(path).map_err(|e| InputError::read(path, e))?;
    Ok(match String::from_utf8(bytes) {
        Ok(text) => parse_csv(&text),
        Err(e) => Err(format!("UnicodeDecodeError: {}", e.utf8_error())),
    })
}

/// Splits CSV text as pandas does; `Err` names the line of what pandas refuses.
pub fn parse_csv(text: &str) -> Result<CsvTable, String> {
    let text = text.strip_prefix('\u{feff}').unwrap_or(text);
    let mut tokenizer = Tokenizer {
        chars: text.chars().peekable(),
        line: 1,
        bare_cr: 0,
    };
    let (_, columns) = tokenizer
        .record()?
        .ok_or("EmptyDataError: No columns to parse from file")?;
    let mut records = Vec::new();
    while let Some(record) = tokenizer.record()? {
        records.push(record);
    }
    let index_column = records
        .first()
        .is_some_and(|(_, first)| first.len() == columns.len() + 1);
    let (mut rows, mut padded) = (Vec::with_capacity(records.len()), 0);
    for (line, mut fields) in records {
        if index_column && !fields.is_empty() {
            fields.remove(0);
        }
        if fields.len() > columns.len() {
            return Err(format!(
                "ParserError: Expected {} fields in line {line}, saw {}",
                columns.len() + usize::from(index_column),
                fields.len() + usize::from(index_column)
            ));
        }
        if fields.len() < columns.len() {
            padded += 1;
            fields.resize(columns.len(), String::new());
        }
        rows.push(fields);
    }
    let mut irregular = Vec::new();
    if padded > 0 {
        irregular.push(format!(
            "{padded} row(s) with fewer fields than the header, padded with NaN"
        ));
    }
    if tokenizer.bare_cr > 0 {
        irregular.push(format!(
            "{} bare CR line end(s) outside quotes, each ending a row",
            tokenizer.bare_cr
        ));
    }
    if index_column {
        irregular.push("the first field of every row is an index column (dropped)".into());
    }
    Ok(CsvTable {
        columns,
        rows,
        irregular,
    })
}

/// pandas' tokenizer states, one record at a time.
struct Tokenizer<'a> {
    chars: std::iter::Peekable<std::str::Chars<'a>>,
    line: usize,
    bare_cr: usize,
}

impl Tokenizer<'_> {
    /// Consumes a line end (`\n`, `\r\n` or a bare `\r`) if one comes next.
    fn line_end(&mut self) -> bool {
        match self.chars.peek() {
            Some('\n') => {
                self.chars.next();
            }
            Some('\r') => {
                self.chars.next();
                match self.chars.peek() {
                    Some('\n') => {
                        self.chars.next();
                    }
                    Some(_) => self.bare_cr += 1,
                    None => {}
                }
            }
            _ => return false,
        }
        self.line += 1;
        true
    }

    /// Skips blank lines and lines of spaces or tabs; false at the end of the text.
    fn skip_blank_lines(&mut self) -> bool {
        loop {
            let rest: String = self
                .chars
                .clone()
                .take_while(|c| matches!(c, ' ' | '\t'))
                .collect();
            let mut after = self.chars.clone().skip(rest.chars().count());
            match after.next() {
                None if rest.is_empty() => return false,
                None => return false,
                Some('\n' | '\r') => {
                    for _ in 0..rest.chars().count() {
                        self.chars.next();
                    }
                    self.line_end();
                }
                Some(_) => return true,
            }
        }
    }

    /// A quoted field's content, the opening quote already consumed, up to its end.
    fn quoted(&mut self, start: usize, field: &mut String) -> Result<(), String> {
        loop {
            match self.chars.next() {
                None => {
                    return Err(format!(
                        "ParserError: EOF inside string starting at row {start}"
                    ))
                }
                Some('"') if self.chars.peek() == Some(&'"') => {
                    self.chars.next();
                    field.push('"');
                }
                Some('"') => return Ok(()),
                Some(c) => {
                    if c == '\n' {
                        self.line += 1;
                    }
                    field.push(c);
                }
            }
        }
    }

    /// The next record with the line it starts on.
    fn record(&mut self) -> Result<Option<(usize, Vec<String>)>, String> {
        if !self.skip_blank_lines() {
            return Ok(None);
        }
        let start = self.line;
        let mut fields = Vec::new();
        loop {
            let mut field = String::new();
            if self.chars.peek() == Some(&'"') {
                self.chars.next();
                self.quoted(start, &mut field)?;
            }
            while let Some(&c) = self.chars.peek() {
                if matches!(c, ',' | '\n' | '\r') {
                    break;
                }
                field.push(c);
                self.chars.next();
            }
            fields.push(field);
            if self.chars.peek() == Some(&',') {
                self.chars.next();
                continue;
            }
            self.line_end();
            return Ok(Some((start, fields)));
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn quoted_fields_blank_lines_and_bom() {
        let table =
            parse_csv("\u{feff}a,b\r\n\"x,y\",\"l1\nl2\"\n\n  \n\"q\"\"u\",\n\"\",z").unwrap();
        assert_eq!(table.columns, ["a", "b"]);
        assert_eq!(
            table.rows,
            [
                vec!["x,y".to_string(), "l1\nl2".into()],
                vec!["q\"u".into(), "".into()],
                vec!["".into(), "z".into()]
            ]
        );
        assert!(table.irregular.is_empty());
    }

    #[test]
    fn text_after_a_closing_quote_and_quotes_inside_fields() {
        let table = parse_csv("a,b\n\"x\"y,a\"b\n\"x\" ,1\n").unwrap();
        assert_eq!(table.rows, [vec!["xy", "a\"b"], vec!["x ", "1"]]);
    }

    #[test]
    fn short_rows_and_bare_cr_as_pandas_reads_them() {
        let table = parse_csv("a,b,c\n1,2\r3\r\r4,5,6\n\"7\r\",8,9\n").unwrap();
        assert_eq!(
            table.rows,
            [
                vec!["1", "2", ""],
                vec!["3", "", ""],
                vec!["4", "5", "6"],
                vec!["7\r", "8", "9"]
            ]
        );
        assert_eq!(table.irregular.len(), 2, "{:?}", table.irregular);
    }

    #[test]
    fn an_index_column_when_the_first_row_is_one_longer() {
        let table = parse_csv("a,b\n1,2,3\n4,5,6\n").unwrap();
        assert_eq!(table.rows, [vec!["2", "3"], vec!["5", "6"]]);
    }

    #[test]
    fn what_pandas_refuses() {
        assert!(parse_csv("").unwrap_err().contains("No columns"));
        let ragged = parse_csv("a,b\n1,2\n\"3\n\",4,5\n").unwrap_err();
        assert!(
            ragged.contains("line 3") && ragged.contains("saw 3"),
            "{ragged}"
        );
        let open = parse_csv("a\n1\n\"never").unwrap_err();
        assert!(
            open.contains("row 3") && open.contains("EOF inside string"),
            "{open}"
        );
    }
}
