//! Parse errors: every error names the file and line it was found at.

use std::fmt;
use std::path::PathBuf;

/// What went wrong while reading a parameter file.
#[derive(Clone, Debug, PartialEq)]
pub enum ParseErrorKind {
    /// The token stream does not match the grammar; the text says what was
    /// expected and what was found.
    Syntax(String),
    /// A numeric literal that does not fit in 64 bits.
    NumberOutOfRange(String),
    /// A `a1 .. a9` range whose ends do not share a prefix, or that is too long.
    BadRange(String),
    /// `source NAME` named a file found neither next to the including file nor
    /// in `LP_PATH`.
    IncludeNotFound {
        name: String,
        searched: Vec<PathBuf>,
    },
    /// `source NAME` names something that exists but is not a regular file (a
    /// directory, a device); `what` says which.
    IncludeNotAFile {
        name: String,
        path: PathBuf,
        what: &'static str,
    },
    /// `source NAME` would include a file that is already being read.
    IncludeCycle { name: String, path: PathBuf },
    /// Includes nested deeper than the limit.
    IncludeTooDeep { limit: usize },
    /// Blocks or lists nested deeper than the limit.
    NestingTooDeep { limit: usize },
    /// A parameter set twice in one block.
    DuplicateParameter { name: String, first_line: u32 },
    /// The file could not be read.
    Io { path: PathBuf, message: String },
}

impl fmt::Display for ParseErrorKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ParseErrorKind::Syntax(text) => f.write_str(text),
            ParseErrorKind::NumberOutOfRange(text) => {
                write!(f, "number '{text}' does not fit in a 64-bit integer")
            }
            ParseErrorKind::BadRange(text) => write!(f, "bad range: {text}"),
            ParseErrorKind::IncludeNotFound { name, searched } => {
                write!(f, "cannot find included file '{name}'")?;
                // An absolute name is looked up nowhere else: no list to show.
                if searched.is_empty() {
                    return Ok(());
                }
                f.write_str(" (looked in")?;
                for (i, dir) in searched.iter().enumerate() {
                    let sep = if i == 0 { " " } else { ", " };
                    write!(f, "{sep}{}", dir.display())?;
                }
                f.write_str(")")
            }
            ParseErrorKind::IncludeNotAFile { name, path, what } => {
                write!(f, "included file '{name}'")?;
                // A relative name says where it was found.
                if path.as_path() != std::path::Path::new(name) {
                    write!(f, " ({})", path.display())?;
                }
                write!(f, " is {what}, not a parameter file")
            }
            ParseErrorKind::IncludeCycle { name, path } => write!(
                f,
                "include cycle: 'source {name}' would re-enter {}, which is already being read",
                path.display()
            ),
            ParseErrorKind::IncludeTooDeep { limit } => {
                write!(f, "'source' includes nested more than {limit} deep")
            }
            ParseErrorKind::NestingTooDeep { limit } => {
                write!(f, "blocks and lists nested more than {limit} deep")
            }
            ParseErrorKind::DuplicateParameter { name, first_line } => write!(
                f,
                "parameter \"{name}\" is set twice in one block (first at line {first_line})"
            ),
            ParseErrorKind::Io { path, message } => {
                write!(f, "cannot read {}: {message}", path.display())
            }
        }
    }
}

/// A parse failure at a file and line (line 0 when the file itself could not be read).
#[derive(Clone, Debug, PartialEq)]
pub struct ParseError {
    pub file: PathBuf,
    pub line: u32,
    pub kind: ParseErrorKind,
}

impl fmt::Display for ParseError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}:{}: {}", self.file.display(), self.line, self.kind)
    }
}

impl std::error::Error for ParseError {}
