//! The DuckDB worker process itself (`sqlgate duckdb-worker`, started by [`super::worker`]):
//! reads requests on stdin, runs them in-process ([`super::local`], [`super::tables`]) on the
//! databases it keeps open, and writes each answer on stdout, row by row, until stdin ends.

use super::local::{self, Databases};
use super::tables::{self, ReadError};
use super::wire::{request, response, Malformed, Reader, Writer, MAX_FRAME};
use crate::engine::exec::ExecError;
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

/// `RUN`: the column names, the rows, the end; or the error.
fn run(databases: &mut Databases, reader: &mut Reader<'_>, output: &mut impl Write) -> Answered {
    let Ok((owner, db, sql, limits)) = query(reader) else {
        return Ok(Err(Malformed));
    };
    let (Ok(with_columns), Ok(most_rows)) = (reader.u8(), reader.u64()) else {
        return Ok(Err(Malformed));
    };
    let most_rows = usize::try_from(most_rows).unwrap_or(usize::MAX);
    let result = local::run(
        databases,
        (owner, &db),
        &sql,
        &limits,
        with_columns != 0,
        most_rows,
    );
    match result {
        Ok(table) => {
            send(output, Writer::frame(response::NAMES).texts(&table.columns))?;
            for row in &table.rows {
                let mut frame = Writer::frame(response::ROW);
                row.iter().for_each(|value| {
                    frame.value(value);
                });
                send(output, &mut frame)?;
            }
            send(output, &mut Writer::frame(response::END))?;
        }
        Err(error) => send_error(output, &error)?,
    }
    Ok(Ok(()))
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

/// `READ`: the column names, their type ids, the rows, the end; or why not.
fn read(databases: &mut Databases, reader: &mut Reader<'_>, output: &mut impl Write) -> Answered {
    let Ok((owner, path, query, limits)) = query(reader) else {
        return Ok(Err(Malformed));
    };
    let table = databases
        .get(owner, &path)
        .map_err(ReadError::Exec)
        .and_then(|database| tables::read_local(&database, &query, &limits));
    let table = match table {
        Ok(table) => table,
        Err(ReadError::Exec(error)) => return send_error(output, &error).map(Ok),
        Err(ReadError::Unsupported(why)) => {
            return send(output, Writer::frame(response::UNSUPPORTED).text(&why)).map(Ok)
        }
        Err(ReadError::Unconvertible(why)) => {
            return send(output, Writer::frame(response::UNCONVERTIBLE).text(&why)).map(Ok)
        }
    };
    send(output, Writer::frame(response::NAMES).texts(&table.names))?;
    let mut types = Writer::frame(response::TYPES);
    table.kinds.iter().for_each(|&kind| {
        types.u32(kind);
    });
    send(output, &mut types)?;
    for row in &table.rows {
        let mut frame = Writer::frame(response::ROW);
        row.iter().for_each(|cell| {
            frame.cell(cell);
        });
        send(output, &mut frame)?;
    }
    send(output, &mut Writer::frame(response::END)).map(Ok)
}
