//! The streaming reader shared by every format: bounded line reading, line
//! numbers, the non-decreasing-time rule and error locations; each format
//! contributes only a line parser.

use crate::line::Line;
use crate::{blkparse, disksim, msr, spc};
use crate::{ReaderOptions, TraceError, TraceFormat, TraceRecord};
use spinstack_sim::units::Nanoseconds;
use std::io::BufRead;
use std::path::Path;

/// Longest line a reader accepts, in bytes (real trace lines are under 200).
pub const MAX_LINE_BYTES: usize = 64 * 1024;

/// The line parser of each format.
enum Parser {
    Msr(msr::Parser),
    Spc,
    Blkparse(blkparse::Parser),
    Disksim,
}

impl Parser {
    fn parse(&mut self, line: &str, number: u64) -> Result<Line, String> {
        match self {
            Parser::Msr(parser) => parser.parse(line, number),
            Parser::Spc => spc::parse(line),
            Parser::Blkparse(parser) => parser.parse(line),
            Parser::Disksim => disksim::parse(line),
        }
    }
}

/// The records of one trace, read line by line: an iterator of
/// `Result<TraceRecord, TraceError>` that stops after the first error.
pub struct TraceReader<R> {
    input: R,
    file: String,
    /// Line number of the line read last (so of the record returned last).
    line: u64,
    parser: Parser,
    last_arrival: Option<Nanoseconds>,
    finished: bool,
    buffer: Vec<u8>,
}

impl TraceReader<std::io::BufReader<std::fs::File>> {
    /// Open `path` as a trace of `format`.
    pub fn open(
        path: &Path,
        format: TraceFormat,
        options: ReaderOptions,
    ) -> Result<Self, TraceError> {
        let file = std::fs::File::open(path).map_err(|error| TraceError {
            file: path.display().to_string(),
            line: 0,
            problem: format!("cannot open the trace: {error}"),
        })?;
        Ok(TraceReader::new(
            std::io::BufReader::new(file),
            path.display().to_string(),
            format,
            options,
        ))
    }
}

impl<R: BufRead> TraceReader<R> {
    /// Read `input` as a trace of `format`; `file` names it in errors.
    pub fn new(input: R, file: String, format: TraceFormat, options: ReaderOptions) -> Self {
        let parser = match format {
            TraceFormat::Msr => Parser::Msr(msr::Parser::default()),
            TraceFormat::Spc => Parser::Spc,
            TraceFormat::Blkparse => {
                Parser::Blkparse(blkparse::Parser::new(options.blkparse_action))
            }
            TraceFormat::Disksim => Parser::Disksim,
        };
        TraceReader {
            input,
            file,
            line: 0,
            parser,
            last_arrival: None,
            finished: false,
            buffer: Vec::new(),
        }
    }

    /// The file name errors carry.
    pub fn file(&self) -> &str {
        &self.file
    }

    /// The line number of the record returned last (one-based).
    pub fn line(&self) -> u64 {
        self.line
    }

    /// An error at the current line.
    pub fn error_here(&self, problem: String) -> TraceError {
        TraceError {
            file: self.file.clone(),
            line: self.line,
            problem,
        }
    }

    /// Read the next line into `buffer` (without its `\n`); false at the end.
    fn read_line(&mut self) -> Result<bool, String> {
        self.buffer.clear();
        loop {
            let available = self
                .input
                .fill_buf()
                .map_err(|error| format!("cannot read the trace: {error}"))?;
            if available.is_empty() {
                return Ok(!self.buffer.is_empty());
            }
            let newline = available.iter().position(|&byte| byte == b'\n');
            let chunk = &available[..newline.unwrap_or(available.len())];
            if self.buffer.len() + chunk.len() > MAX_LINE_BYTES {
                return Err(format!(
                    "the line is longer than {MAX_LINE_BYTES} bytes: not a trace line"
                ));
            }
            self.buffer.extend_from_slice(chunk);
            let used = chunk.len() + usize::from(newline.is_some());
            self.input.consume(used);
            if newline.is_some() {
                return Ok(true);
            }
        }
    }

    /// The next record, `None` at the end, or the problem (without its location).
    fn next_record(&mut self) -> Result<Option<TraceRecord>, String> {
        loop {
            self.line += 1;
            if !self.read_line()? {
                return Ok(None);
            }
            let text = std::str::from_utf8(&self.buffer)
                .map_err(|_| "the line is not UTF-8 text".to_string())?;
            let text = text.strip_suffix('\r').unwrap_or(text);
            let text = match self.line {
                1 => spinstack_sim::input_file::strip_bom(text),
                _ => text,
            };
            let record = match self.parser.parse(text, self.line)? {
                Line::Record(record) => record,
                Line::Skip => continue,
            };
            if let Some(previous) = self.last_arrival {
                if record.arrival < previous {
                    return Err(format!(
                        "time goes backwards: this request arrives at {} ns, before the previous \
                         request's {} ns (records must be in time order; sort the trace first)",
                        record.arrival.0, previous.0
                    ));
                }
            }
            self.last_arrival = Some(record.arrival);
            return Ok(Some(record));
        }
    }
}

impl<R: BufRead> Iterator for TraceReader<R> {
    type Item = Result<TraceRecord, TraceError>;

    fn next(&mut self) -> Option<Self::Item> {
        if self.finished {
            return None;
        }
        match self.next_record() {
            Ok(Some(record)) => Some(Ok(record)),
            Ok(None) => {
                self.finished = true;
                None
            }
            Err(problem) => {
                self.finished = true;
                Some(Err(self.error_here(problem)))
            }
        }
    }
}
