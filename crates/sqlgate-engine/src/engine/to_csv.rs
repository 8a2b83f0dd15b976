//! The text `DataFrame.to_csv(index=False)` writes for a query result, the way Spider 2.0's
//! `evaluate.py` exports every predicted result before reading it back with `pd.read_csv`.
//!
//! pandas writes through Python's `csv.writer` (`QUOTE_MINIMAL`, delimiter `,`, quote `"`,
//! line terminator `\n`): a field holding `,`, `"` or `\n` is quoted (`"` doubled), a row of one
//! empty field is written `""`, anything else is written bare. CPython up to 3.12 (Spider 2.0's
//! documented environment is Python 3.11) does not quote a field for a `\r`, since `\r` is not in
//! the line terminator, so such a field comes back split at the CR (pandas ends a record at a
//! bare `\r`); CPython 3.13 quotes it. A bare line of spaces comes back as a blank line, which
//! pandas skips. [`changed_by_round_trip`] says when the round trip can differ from the cells
//! themselves (rarely: the caller then writes and reads the text), [`write_csv`] writes the text that shows how.

/// Whether Python's `csv.writer` quotes `field` (`QUOTE_MINIMAL`, line terminator `\n`).
fn quoted(field: &str) -> bool {
    field.contains([',', '"', '\n'])
}

/// Whether `pd.read_csv` of the exported text can read `fields` (the header, or one column's
/// cells, of a result `width` columns wide) otherwise than as written: a bare field with a `\r`,
/// a one-column line that is blank to pandas (spaces and tabs only), or a byte-order mark opening
/// the first field. Otherwise every record reads back as the texts that were written.
pub fn changed_by_round_trip(fields: &[String], width: usize) -> bool {
    let bare_cr = |field: &String| !quoted(field) && field.contains('\r');
    let blank = |field: &String| !field.is_empty() && field.chars().all(|c| c == ' ' || c == '\t');
    fields.first().is_some_and(|f| f.starts_with('\u{feff}'))
        || fields.iter().any(bare_cr)
        || (width == 1 && fields.iter().any(blank))
}

/// The CSV text of a header `names` and column-major `columns`, as `to_csv` writes it.
pub fn write_csv(names: &[String], columns: &[Vec<String>]) -> String {
    let mut text = String::new();
    write_record(&mut text, names.iter());
    let height = columns.first().map_or(0, Vec::len);
    for row in 0..height {
        write_record(&mut text, columns.iter().map(|column| &column[row]));
    }
    text
}

/// One record: fields joined by `,`, quoted when needed, ended by `\n`.
fn write_record<'a>(text: &mut String, fields: impl ExactSizeIterator<Item = &'a String>) {
    let lone = fields.len() == 1;
    for (number, field) in fields.enumerate() {
        if number > 0 {
            text.push(',');
        }
        if quoted(field) || (lone && field.is_empty()) {
            text.push('"');
            text.push_str(&field.replace('"', "\"\""));
            text.push('"');
        } else {
            text.push_str(field);
        }
    }
    text.push('\n');
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::input::csv::parse_csv;

    fn strings(texts: &[&str]) -> Vec<String> {
        texts.iter().map(|t| t.to_string()).collect()
    }

    #[test]
    fn quotes_as_python_3_11_csv_writer_does() {
        let names = strings(&["a", "b,c"]);
        let columns = vec![
            strings(&["x\"y", "", "p\rq"]),
            strings(&["l1\nl2", "", "5"]),
        ];
        assert_eq!(
            write_csv(&names, &columns),
            "a,\"b,c\"\n\"x\"\"y\",\"l1\nl2\"\n,\np\rq,5\n"
        );
        let lone = write_csv(&strings(&["a"]), &[strings(&["", " "])]);
        assert_eq!(lone, "a\n\"\"\n \n");
    }

    #[test]
    fn a_bare_cr_and_a_blank_line_change_what_pandas_reads() {
        let names = strings(&["a", "b", "c"]);
        let columns = vec![
            strings(&["4", "1"]),
            strings(&["alpha\r", "alpha"]),
            strings(&["5", "4"]),
        ];
        assert!(!changed_by_round_trip(&names, 3) && changed_by_round_trip(&columns[1], 3));
        // pandas 2.2.3 reads [[4, 'alpha', nan], [nan, '5', nan], [1, 'alpha', 4]].
        let table = parse_csv(&write_csv(&names, &columns)).unwrap();
        assert_eq!(
            table.rows,
            [
                vec!["4", "alpha", ""],
                vec!["", "5", ""],
                vec!["1", "alpha", "4"]
            ]
        );
        assert!(!changed_by_round_trip(&strings(&["a\r,b"]), 1));
        let blank = vec![strings(&["x", " ", "", "y"])];
        assert!(changed_by_round_trip(&blank[0], 1));
        let table = parse_csv(&write_csv(&strings(&["a"]), &blank)).unwrap();
        assert_eq!(table.rows, [vec!["x"], vec![""], vec!["y"]]);
        assert!(!changed_by_round_trip(&strings(&[" ", "\t"]), 2));
        assert!(changed_by_round_trip(&strings(&["\u{feff}a"]), 2));
    }
}
