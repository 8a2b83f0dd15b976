//! The DuckDB worker process itself (`sqlgate duckdb-worker`, started by [`super::worker`]):
//! reads requests on stdin, runs them in-process ([`super::local`], [`super::tables`]) on the
//! databases it keeps open, and writes each answer on stdout, row by row, until stdin ends.

use super::local::{self, Databases, Sink};
use super::tables::{self, ReadError};
use super::wire::{request, response, Malformed, Reader, Writer, MAX_FRAME};
use super::Cell;
use crate::engine::exec::ExecError;
use crate::engine::value::Value;
use std::io::{BufReader, BufWriter, Read, Write};

/// Serves requests until stdin ends; each database is opened with DuckDB's `memory_limit` at
/// `memory_limit` bytes. An error is one of the pipes (the parent is gone).
pub fn serve(memory_limit: usize) -> std::io::Result<()> {
    let mut databases = Databases::new(memory_limit);
    let mut input = BufReader::new(std::io::stdin().lock());
    let mut output = BufWriter::with_capacity(64 << 10, std::io::stdout().lock());
    while let Some(frame) = read_frame(&mut input)? {
        let mut reader = Reader::new(&frame[1..]);
        let answered = match frame[0] {
            request::RUN => run(&mut databases, &mut reader, &mut output),
            request::COLUMNS => columns(&mut databases, &mut reader, &mut output),
            request::OPEN => open(&mut databases, &mut reader, &mut output),
            request::READ => read(&mut databases, &mut reader, &mut output),
            _ => Ok(Err(Malformed)),
        }?;
        if answered.is_err() {
            send(
                &mut output,
                Writer::frame(response::ERROR).error(&Malformed.into()),
            )?;
        }
        output.flush()?;
    }
    Ok(())
}

/// The next request frame (kind and payload); `None` at the end of stdin.
fn read_frame(input: &mut impl Read) -> std::io::Result<Option<Vec<u8>>> {
    let mut length = [0u8; 4];
    match input.read_exact(&mut length) {
        Err(error) if error.kind() == std::io::ErrorKind::UnexpectedEof => return Ok(None),
        other => other?,
    }
    let length = u32::from_le_bytes(length) as usize;
    if !(1..=MAX_FRAME).contains(&length) {
        return Err(std::io::Error::other("a request frame of a wrong length"));
    }
    let mut frame = vec![0u8; length];
    input.read_exact(&mut frame)?;
    Ok(Some(frame))
}

/// What a request handler returns: a pipe error, or whether the request read right.
type Answered = std::io::Result<Result<(), Malformed>>;

fn send(output: &mut impl Write, frame: &mut Writer) -> std::io::Result<()> {
    let frame = std::mem::replace(frame, Writer::frame(0));
    output.write_all(&frame.finish())
}

fn send_error(output: &mut impl Write, error: &ExecError) -> std::io::Result<()> {
    send(output, Writer::frame(response::ERROR).error(error))
}

/// Writes a result to the parent as it is read: one frame for the names, the types, each row.
struct Frames<'a, W: Write> {
    output: &'a mut W,
    /// Rows of cells (a relation read whole), else of values.
    whole: bool,
    /// The pipe's error, which ends the worker once the query is stopped.
    broken: Option<std::io::Error>,
}

impl<'a, W: Write> Frames<'a, W> {
    fn new(output: &'a mut W, whole: bool) -> Self {
        Frames {
            output,
            whole,
            broken: None,
        }
    }

    fn write(&mut self, frame: &mut Writer) -> Result<(), ExecError> {
        send(self.output, frame).map_err(|error| {
            self.broken = Some(error);
            ExecError::Fault("the parent is gone".into())
        })
    }

    /// The end of the answer: `result`'s end or error frame, or the pipe's error.
    fn end(mut self, result: Result<(), ExecError>) -> std::io::Result<()> {
        if let Some(broken) = self.broken.take() {
            return Err(broken);
        }
        match result {
            Ok(()) => send(self.output, &mut Writer::frame(response::END)),
            Err(error) => send_error(self.output, &error),
        }
    }
}

impl<W: Write> Sink for Frames<'_, W> {
    fn names(&mut self, names: &[String]) -> Result<(), ExecError> {
        self.write(Writer::frame(response::NAMES).texts(names))
    }

    fn kinds(&mut self, kinds: &[libduckdb_sys::duckdb_type]) -> Result<(), ExecError> {
        let mut frame = Writer::frame(response::TYPES);
        kinds.iter().for_each(|&kind| {
            frame.u32(kind);
        });
        self.write(&mut frame)
    }

    fn row(&mut self, row: &[Cell]) -> Result<(), ExecError> {
        let mut frame = Writer::frame(response::ROW);
        for cell in row {
            match (self.whole, cell) {
                (true, cell) => frame.cell(cell),
                (false, Cell::Value(value)) => frame.value(value),
                // `ColumnReader::of` refuses LIST, ARRAY and UUID before any row.
                (false, _) => frame.value(&Value::Null),
            };
        }
        self.write(&mut frame)
    }
}

/// `RUN`: the column names, the rows, the end; or the error.
fn run(databases: &mut Databases, reader: &mut Reader<'_>, output: &mut impl Write) -> Answered {
    let (Ok((owner, db, sql, limits)), Ok(most_rows)) = (query(reader), reader.u64()) else {
        return Ok(Err(Malformed));
    };
    let most_rows = usize::try_from(most_rows).unwrap_or(usize::MAX);
    let mut frames = Frames::new(output, false);
    let result = local::run(
        databases,
        (owner, &db),
        &sql,
        (&limits, most_rows),
        &mut frames,
    );
    frames.end(result).map(Ok)
}

/// The owner, database, SQL and limits every query request starts with.
fn query(
    reader: &mut Reader<'_>,
) -> Result<(u64, std::path::PathBuf, String, crate::engine::exec::Limits), Malformed> {
    Ok((
        reader.u64()?,
        reader.path()?,
        reader.text()?,
        reader.limits()?,
    ))
}

/// `COLUMNS`: the column names; or the error.
fn columns(
    databases: &mut Databases,
    reader: &mut Reader<'_>,
    output: &mut impl Write,
) -> Answered {
    let Ok((owner, db, sql, limits)) = query(reader) else {
        return Ok(Err(Malformed));
    };
    match local::column_names(databases, (owner, &db), &sql, &limits) {
        Ok(names) => send(output, Writer::frame(response::NAMES).texts(&names))?,
        Err(error) => send_error(output, &error)?,
    }
    Ok(Ok(()))
}

/// `OPEN`: the end once the file is open; or the error.
fn open(databases: &mut Databases, reader: &mut Reader<'_>, output: &mut impl Write) -> Answered {
    let (Ok(owner), Ok(path)) = (reader.u64(), reader.path()) else {
        return Ok(Err(Malformed));
    };
    match databases.get(owner, &path) {
        Ok(_) => send(output, &mut Writer::frame(response::END))?,
        Err(error) => send_error(output, &error)?,
    }
    Ok(Ok(()))
}

/// `READ`: the type ids, the column names, the rows, the end; or why not.
fn read(databases: &mut Databases, reader: &mut Reader<'_>, output: &mut impl Write) -> Answered {
    let Ok((owner, path, query, limits)) = query(reader) else {
        return Ok(Err(Malformed));
    };
    let mut frames = Frames::new(output, true);
    let read = databases
        .get(owner, &path)
        .map_err(ReadError::Exec)
        .and_then(|database| tables::read_local(&database, &query, &limits, &mut frames));
    let (kind, why) = match read {
        Ok(()) => return frames.end(Ok(())).map(Ok),
        Err(ReadError::Exec(error)) => return frames.end(Err(error)).map(Ok),
        Err(ReadError::Unsupported(why)) => (response::UNSUPPORTED, why),
        Err(ReadError::Unconvertible(why)) => (response::UNCONVERTIBLE, why),
    };
    if let Some(broken) = frames.broken {
        return Err(broken);
    }
    send(output, Writer::frame(kind).text(&why)).map(Ok)
}
