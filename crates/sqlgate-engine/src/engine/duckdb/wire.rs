//! The framing between sqlgate and its DuckDB worker process: requests one way, results the
//! other, each frame a little-endian `u32` length, a kind byte and its payload. Values are
//! written as `convert.rs` reads them (every [`Value`], [`PyValue`] and [`Cell`]), so a result
//! read by the worker is the same result in the parent.
//!
//! The worker is sqlgate's own executable, so its frames are trusted to be well formed; a frame
//! that is not (a worker that died mid-write is seen as an end of stream before that) is an
//! error, never a panic.

use super::convert::Cell;
use crate::engine::exec::{ExecError, Limits};
use crate::engine::pyvalue::{Date, Decimal, PyValue, TimeOfDay};
use crate::engine::value::Value;
use std::path::{Path, PathBuf};
use std::time::Duration;

/// The largest frame either side writes or reads (a row of the largest allowed result).
pub const MAX_FRAME: usize = 1 << 30;

/// Frame kinds of a request.
pub mod request {
    /// Run a query: the rows of [`crate::engine::exec::Engine::run`].
    pub const RUN: u8 = 1;
    /// The column names of a query, without running it.
    pub const COLUMNS: u8 = 2;
    /// Open a file read whole (Spider 2.0-DBT answers): only whether DuckDB opens it.
    pub const OPEN: u8 = 3;
    /// Read one relation of such a file with its declared types.
    pub const READ: u8 = 4;
}

/// Frame kinds of a response.
pub mod response {
    /// Column names (a `RUN` with columns, a `COLUMNS`, a `READ`).
    pub const NAMES: u8 = 1;
    /// One row of cells.
    pub const ROW: u8 = 2;
    /// The end of a successful answer.
    pub const END: u8 = 3;
    /// The request failed: an [`crate::engine::exec::ExecError`].
    pub const ERROR: u8 = 4;
    /// A `READ` column of a type the comparison does not read.
    pub const UNSUPPORTED: u8 = 5;
    /// A `READ` column DuckDB's Python client cannot convert.
    pub const UNCONVERTIBLE: u8 = 6;
    /// A `READ`'s declared column types (DuckDB type ids).
    pub const TYPES: u8 = 7;
}

/// A frame being written.
pub struct Writer {
    bytes: Vec<u8>,
}

impl Writer {
    /// A frame of `kind`.
    pub fn frame(kind: u8) -> Writer {
        Writer {
            bytes: vec![0, 0, 0, 0, kind],
        }
    }

    /// The frame's bytes, its length filled in.
    pub fn finish(mut self) -> Vec<u8> {
        let length = u32::try_from(self.bytes.len() - 4).unwrap_or(u32::MAX);
        self.bytes[..4].copy_from_slice(&length.to_le_bytes());
        self.bytes
    }

    /// Appends one byte.
    pub fn u8(&mut self, value: u8) -> &mut Self {
        self.bytes.push(value);
        self
    }

    /// Appends a `u32`.
    pub fn u32(&mut self, value: u32) -> &mut Self {
        self.bytes.extend_from_slice(&value.to_le_bytes());
        self
    }

    /// Appends a `u64`.
    pub fn u64(&mut self, value: u64) -> &mut Self {
        self.bytes.extend_from_slice(&value.to_le_bytes());
        self
    }

    /// Appends bytes with their length.
    pub fn bytes(&mut self, value: &[u8]) -> &mut Self {
        self.u64(value.len() as u64);
        self.bytes.extend_from_slice(value);
        self
    }

    /// Appends text with its length.
    pub fn text(&mut self, value: &str) -> &mut Self {
        self.bytes(value.as_bytes())
    }

    /// Appends a path (its bytes).
    pub fn path(&mut self, value: &Path) -> &mut Self {
        self.bytes(value.as_os_str().as_encoded_bytes())
    }

    /// Appends a list of texts.
    pub fn texts(&mut self, values: &[String]) -> &mut Self {
        self.u64(values.len() as u64);
        values.iter().for_each(|value| {
            self.text(value);
        });
        self
    }

    /// Appends the limits of a query.
    pub fn limits(&mut self, limits: &Limits) -> &mut Self {
        let micros = u64::try_from(limits.timeout.as_micros()).unwrap_or(u64::MAX);
        self.u64(micros)
            .u64(limits.max_rows as u64)
            .u64(limits.max_bytes as u64)
    }

    /// Appends an error.
    pub fn error(&mut self, error: &ExecError) -> &mut Self {
        let (tag, text) = match error {
            ExecError::Timeout(ms) => return self.u8(0).u64(*ms as u64),
            ExecError::Denied(text) => (1, text),
            ExecError::TooLarge(text) => (2, text),
            ExecError::Sql(text) => (3, text),
            ExecError::Open(text) => (4, text),
            ExecError::Fault(text) => (5, text),
        };
        self.u8(tag).text(text)
    }

    /// Appends one cell.
    pub fn cell(&mut self, cell: &Cell) -> &mut Self {
        match cell {
            Cell::Value(value) => self.u8(0).value(value),
            Cell::List(cells) => {
                self.u8(1).u64(cells.len() as u64);
                cells.iter().for_each(|cell| {
                    self.cell(cell);
                });
                self
            }
            Cell::Uuid(bits) => self.u8(2).u64((bits >> 64) as u64).u64(*bits as u64),
        }
    }

    /// Appends one value.
    pub fn value(&mut self, value: &Value) -> &mut Self {
        match value {
            Value::Null => self.u8(0),
            Value::Int(int) => self.u8(1).u64(*int as u64),
            Value::Real(real) => self.u8(2).u64(real.to_bits()),
            Value::Text(text) => self.u8(3).text(text),
            Value::Blob(bytes) => self.u8(4).bytes(bytes),
            Value::Py(py) => self.u8(5).py(py),
        }
    }

    fn py(&mut self, value: &PyValue) -> &mut Self {
        match value {
            PyValue::Bool(bool) => self.u8(0).u8(u8::from(*bool)),
            PyValue::Decimal(decimal) => self.u8(1).text(&decimal.text),
            PyValue::Date(date) => self.u8(2).date(*date),
            PyValue::DateTime { date, time, offset } => {
                self.u8(3).date(*date).time(*time);
                match offset {
                    Some(offset) => self.u8(1).u32(*offset as u32),
                    None => self.u8(0),
                }
            }
            PyValue::Time(time) => self.u8(4).time(*time),
            PyValue::TimeTz { time, offset } => self.u8(5).time(*time).u32(*offset as u32),
            PyValue::TimeDelta(micros) => self.u8(6).u64(*micros as u64),
        }
    }

    fn date(&mut self, date: Date) -> &mut Self {
        self.u32(date.year as u32)
            .u8(date.month as u8)
            .u8(date.day as u8)
    }

    fn time(&mut self, time: TimeOfDay) -> &mut Self {
        (self.u8(time.hour as u8).u8(time.minute as u8))
            .u8(time.second as u8)
            .u32(time.micro)
    }
}

/// A frame being read (its payload, after the kind byte).
pub struct Reader<'a> {
    rest: &'a [u8],
}

/// A frame that does not read as the writer wrote it.
#[derive(Debug)]
pub struct Malformed;

type Read<T> = Result<T, Malformed>;

impl From<Malformed> for ExecError {
    fn from(_: Malformed) -> ExecError {
        ExecError::Fault("the DuckDB worker sent a malformed frame".into())
    }
}

/// The error of a response frame of a kind the request does not expect.
pub fn unexpected(kind: u8) -> ExecError {
    ExecError::Fault(format!(
        "the DuckDB worker sent an unexpected frame (kind {kind})"
    ))
}

impl<'a> Reader<'a> {
    /// Reads `payload`.
    pub fn new(payload: &'a [u8]) -> Reader<'a> {
        Reader { rest: payload }
    }

    fn take(&mut self, count: usize) -> Read<&'a [u8]> {
        if count > self.rest.len() {
            return Err(Malformed);
        }
        let (head, tail) = self.rest.split_at(count);
        self.rest = tail;
        Ok(head)
    }

    /// One byte.
    pub fn u8(&mut self) -> Read<u8> {
        Ok(self.take(1)?[0])
    }

    /// A `u32`.
    pub fn u32(&mut self) -> Read<u32> {
        Ok(u32::from_le_bytes(
            self.take(4)?.try_into().map_err(|_| Malformed)?,
        ))
    }

    /// A `u64`.
    pub fn u64(&mut self) -> Read<u64> {
        Ok(u64::from_le_bytes(
            self.take(8)?.try_into().map_err(|_| Malformed)?,
        ))
    }

    /// Whether the whole frame has been read (a row is read up to there).
    pub fn is_empty(&self) -> bool {
        self.rest.is_empty()
    }

    /// The cells of a row frame.
    pub fn cells(&mut self) -> Read<Vec<Cell>> {
        std::iter::from_fn(|| (!self.is_empty()).then(|| self.cell())).collect()
    }

    /// The values of a row frame.
    pub fn values(&mut self) -> Read<Vec<Value>> {
        std::iter::from_fn(|| (!self.is_empty()).then(|| self.value())).collect()
    }

    /// A count of items each at least one byte long (so a count cannot outgrow the frame).
    fn count(&mut self) -> Read<usize> {
        let count = usize::try_from(self.u64()?).map_err(|_| Malformed)?;
        (count <= self.rest.len()).then_some(count).ok_or(Malformed)
    }

    /// Bytes with their length.
    pub fn bytes(&mut self) -> Read<&'a [u8]> {
        let length = usize::try_from(self.u64()?).map_err(|_| Malformed)?;
        self.take(length)
    }

    /// Text with its length.
    pub fn text(&mut self) -> Read<String> {
        String::from_utf8(self.bytes()?.to_vec()).map_err(|_| Malformed)
    }

    /// A path.
    pub fn path(&mut self) -> Read<PathBuf> {
        use std::os::unix::ffi::OsStrExt;
        Ok(PathBuf::from(std::ffi::OsStr::from_bytes(self.bytes()?)))
    }

    /// A list of texts.
    pub fn texts(&mut self) -> Read<Vec<String>> {
        (0..self.count()?).map(|_| self.text()).collect()
    }

    /// The limits of a query.
    pub fn limits(&mut self) -> Read<Limits> {
        let timeout = Duration::from_micros(self.u64()?);
        let max_rows = usize::try_from(self.u64()?).unwrap_or(usize::MAX);
        let max_bytes = usize::try_from(self.u64()?).unwrap_or(usize::MAX);
        Ok(Limits {
            timeout,
            max_rows,
            max_bytes,
        })
    }

    /// An error.
    pub fn error(&mut self) -> Read<ExecError> {
        let tag = self.u8()?;
        if tag == 0 {
            return Ok(ExecError::Timeout(u128::from(self.u64()?)));
        }
        let text = self.text()?;
        Ok(match tag {
            1 => ExecError::Denied(text),
            2 => ExecError::TooLarge(text),
            3 => ExecError::Sql(text),
            4 => ExecError::Open(text),
            5 => ExecError::Fault(text),
            _ => return Err(Malformed),
        })
    }

    /// One cell.
    pub fn cell(&mut self) -> Read<Cell> {
        Ok(match self.u8()? {
            0 => Cell::Value(self.value()?),
            1 => Cell::List(
                (0..self.count()?)
                    .map(|_| self.cell())
                    .collect::<Read<_>>()?,
            ),
            2 => Cell::Uuid((u128::from(self.u64()?) << 64) | u128::from(self.u64()?)),
            _ => return Err(Malformed),
        })
    }

    /// One value.
    pub fn value(&mut self) -> Read<Value> {
        Ok(match self.u8()? {
            0 => Value::Null,
            1 => Value::Int(self.u64()? as i64),
            2 => Value::Real(f64::from_bits(self.u64()?)),
            3 => Value::Text(self.text()?),
            4 => Value::Blob(self.bytes()?.to_vec()),
            5 => Value::Py(Box::new(self.py()?)),
            _ => return Err(Malformed),
        })
    }

    fn py(&mut self) -> Read<PyValue> {
        Ok(match self.u8()? {
            0 => PyValue::Bool(self.u8()? != 0),
            1 => PyValue::Decimal(Decimal::parse(&self.text()?).ok_or(Malformed)?),
            2 => PyValue::Date(self.date()?),
            3 => {
                let (date, time) = (self.date()?, self.time()?);
                let offset = match self.u8()? {
                    0 => None,
                    _ => Some(self.u32()? as i32),
                };
                PyValue::DateTime { date, time, offset }
            }
            4 => PyValue::Time(self.time()?),
            5 => PyValue::TimeTz {
                time: self.time()?,
                offset: self.u32()? as i32,
            },
            6 => PyValue::TimeDelta(self.u64()? as i64),
            _ => return Err(Malformed),
        })
    }

    fn date(&mut self) -> Read<Date> {
        let year = self.u32()? as i32;
        let (month, day) = (u32::from(self.u8()?), u32::from(self.u8()?));
        Date::new(year, month, day).ok_or(Malformed)
    }

    fn time(&mut self) -> Read<TimeOfDay> {
        let (hour, minute, second) = (self.u8()?, self.u8()?, self.u8()?);
        let micro = self.u32()?;
        TimeOfDay::new(hour.into(), minute.into(), second.into(), micro).ok_or(Malformed)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_value_reads_back_as_written() {
        let date = Date::new(2024, 2, 29).unwrap();
        let time = TimeOfDay::new(23, 59, 1, 5).unwrap();
        let py = |value| Value::Py(Box::new(value));
        let cells = vec![
            Cell::Value(Value::Null),
            Cell::Value(Value::Int(-7)),
            Cell::Value(Value::Real(-0.5)),
            Cell::Value(Value::Text("é".into())),
            Cell::Value(Value::Blob(vec![0, 255])),
            Cell::Value(py(PyValue::Bool(true))),
            Cell::Value(py(PyValue::Decimal(Decimal::parse("1.50").unwrap()))),
            Cell::Value(py(PyValue::DateTime {
                date,
                time,
                offset: Some(-3600),
            })),
            Cell::Value(py(PyValue::TimeTz { time, offset: 60 })),
            Cell::Value(py(PyValue::TimeDelta(-1))),
            Cell::List(vec![Cell::Uuid(u128::MAX - 1), Cell::List(vec![])]),
        ];
        let mut writer = Writer::frame(response::ROW);
        cells.iter().for_each(|cell| {
            writer.cell(cell);
        });
        writer
            .error(&ExecError::Timeout(5))
            .error(&ExecError::Sql("x".into()));
        let bytes = writer.finish();
        assert_eq!(bytes[4], response::ROW);
        let mut reader = Reader::new(&bytes[5..]);
        let read: Vec<Cell> = cells.iter().map(|_| reader.cell().unwrap()).collect();
        assert_eq!(format!("{read:?}"), format!("{cells:?}"));
        assert_eq!(reader.error().unwrap(), ExecError::Timeout(5));
        assert_eq!(reader.error().unwrap(), ExecError::Sql("x".into()));
        assert!(reader.u8().is_err());
    }
}
