//! Tokenizer with `source` includes resolved as the tokens are read (a lexical
//! include, as in libparam: `source FILE` may appear anywhere a token may).

use crate::error::{ParseError, ParseErrorKind};
use crate::tree::Position;
use std::path::{Path, PathBuf};
use std::sync::Arc;

/// Deepest chain of `source` includes accepted.
pub const MAX_INCLUDE_DEPTH: usize = 32;
/// Largest file read (a guard against `source /dev/...`-style accidents).
const MAX_FILE_BYTES: u64 = 64 * 1024 * 1024;

#[derive(Clone, Debug, PartialEq)]
pub enum Tok {
    LBrace,
    RBrace,
    LBracket,
    RBracket,
    Comma,
    Equals,
    Semicolon,
    Question,
    Colon,
    DotDot,
    Int(i64),
    Hex(i64),
    Float(f64),
    Word(String),
    Topology,
    Instantiate,
    As,
    Eof,
}

impl Tok {
    /// How the token reads in an error message.
    pub fn describe(&self) -> String {
        match self {
            Tok::LBrace => "'{'".into(),
            Tok::RBrace => "'}'".into(),
            Tok::LBracket => "'['".into(),
            Tok::RBracket => "']'".into(),
            Tok::Comma => "','".into(),
            Tok::Equals => "'='".into(),
            Tok::Semicolon => "';'".into(),
            Tok::Question => "'?'".into(),
            Tok::Colon => "':'".into(),
            Tok::DotDot => "'..'".into(),
            Tok::Int(v) | Tok::Hex(v) => format!("number {v}"),
            Tok::Float(v) => format!("number {v}"),
            Tok::Word(w) => format!("'{w}'"),
            Tok::Topology => "keyword 'topology'".into(),
            Tok::Instantiate => "keyword 'instantiate'".into(),
            Tok::As => "keyword 'as'".into(),
            Tok::Eof => "end of input".into(),
        }
    }
}

#[derive(Clone, Debug)]
pub struct Token {
    pub tok: Tok,
    pub pos: Position,
    /// Set on the first token after an included file ended: where it ended. A
    /// syntax error on such a token is often a truncated include, so messages
    /// mention it.
    pub after_include: Option<Position>,
}

/// One file being read.
struct Source {
    path: Arc<PathBuf>,
    /// Canonical path, for cycle detection (None for in-memory text).
    canonical: Option<PathBuf>,
    chars: Vec<char>,
    at: usize,
    line: u32,
    /// `{` and `[` read from this file minus `}` and `]`: a file that ends with
    /// some still open was most likely cut short.
    open: i64,
}

/// The UTF-8 byte-order mark, as a character.
const BOM: char = '\u{feff}';

impl Source {
    fn new(path: PathBuf, canonical: Option<PathBuf>, text: &str) -> Source {
        // A byte-order mark at the start is skipped, as every spinstack text input
        // skips it (Windows editors write one); anywhere else it is a word character.
        let text = text.strip_prefix(BOM).unwrap_or(text);
        Source {
            path: Arc::new(path),
            canonical,
            chars: text.chars().collect(),
            at: 0,
            line: 1,
            open: 0,
        }
    }

    fn peek(&self) -> Option<char> {
        self.chars.get(self.at).copied()
    }

    fn pos(&self) -> Position {
        Position {
            file: self.path.clone(),
            line: self.line,
        }
    }

    fn bump(&mut self) -> Option<char> {
        let c = self.peek()?;
        self.at += 1;
        if c == '\n' {
            self.line += 1;
        }
        Some(c)
    }
}

/// Blanks separate tokens. libparam's set is space, tab, form feed and newline;
/// carriage return is added so CRLF files read the same.
fn is_blank(c: char) -> bool {
    matches!(c, ' ' | '\t' | '\n' | '\r' | '\x0c')
}

/// Word characters: anything but blanks and `; { } , [ ] : ? =`. Note `#` only
/// starts a comment at the start of a token (flex prefers the longer word).
fn is_word_char(c: char) -> bool {
    !is_blank(c) && !matches!(c, ';' | '{' | '}' | ',' | '[' | ']' | ':' | '?' | '=')
}

/// An included file that ended with blocks or lists still open: where it ended
/// and how many.
#[derive(Clone, Debug)]
pub struct UnclosedInclude {
    pub end: Position,
    pub open: i64,
}

pub struct Lexer {
    stack: Vec<Source>,
    /// End of the include that closed since the last token.
    closed_include: Option<Position>,
    /// The first included file that ended inside a block or list it opened.
    pub unclosed_include: Option<UnclosedInclude>,
    /// Every file opened, in order.
    pub files: Vec<PathBuf>,
}

impl Lexer {
    /// Lex the file at `path`.
    pub fn open(path: &Path) -> Result<Lexer, ParseError> {
        let text = read_file(path, None)?;
        let canonical = path.canonicalize().ok();
        Ok(Lexer {
            stack: vec![Source::new(path.to_path_buf(), canonical, &text)],
            closed_include: None,
            unclosed_include: None,
            files: vec![path.to_path_buf()],
        })
    }

    /// Lex in-memory text; `path` names it in messages and anchors relative includes.
    pub fn from_text(path: &Path, text: &str) -> Lexer {
        Lexer {
            stack: vec![Source::new(path.to_path_buf(), None, text)],
            closed_include: None,
            unclosed_include: None,
            files: vec![path.to_path_buf()],
        }
    }

    /// The next token, following includes; `Tok::Eof` once the top file ends.
    pub fn next(&mut self) -> Result<Token, ParseError> {
        loop {
            let Some(src) = self.stack.last_mut() else {
                return Ok(Token {
                    tok: Tok::Eof,
                    pos: Position {
                        file: Arc::new(self.files[0].clone()),
                        line: 0,
                    },
                    after_include: self.closed_include.take(),
                });
            };
            skip_blank(src);
            let pos = src.pos();
            let Some(c) = src.bump() else {
                if self.stack.len() == 1 {
                    let after_include = self.closed_include.take();
                    return Ok(Token {
                        tok: Tok::Eof,
                        pos,
                        after_include,
                    });
                }
                let closed = self.stack.pop().expect("the stack holds this source");
                if closed.open > 0 && self.unclosed_include.is_none() {
                    self.unclosed_include = Some(UnclosedInclude {
                        end: pos.clone(),
                        open: closed.open,
                    });
                }
                self.closed_include = Some(pos);
                continue;
            };
            let tok = match c {
                '{' | '[' => {
                    src.open += 1;
                    if c == '{' {
                        Tok::LBrace
                    } else {
                        Tok::LBracket
                    }
                }
                '}' | ']' => {
                    src.open -= 1;
                    if c == '}' {
                        Tok::RBrace
                    } else {
                        Tok::RBracket
                    }
                }
                ',' => Tok::Comma,
                '=' => Tok::Equals,
                ';' => Tok::Semicolon,
                '?' => Tok::Question,
                ':' => Tok::Colon,
                _ => {
                    let word = read_word(src, c);
                    if word == "source" {
                        self.include(&pos)?;
                        continue;
                    }
                    classify(word, &pos)?
                }
            };
            let after_include = self.closed_include.take();
            return Ok(Token {
                tok,
                pos,
                after_include,
            });
        }
    }

    /// Handle `source NAME`: read the name and push the file.
    fn include(&mut self, pos: &Position) -> Result<(), ParseError> {
        let src = self
            .stack
            .last_mut()
            .expect("include called with a file open");
        while src.peek().is_some_and(is_blank) {
            src.bump();
        }
        let name = match src.peek() {
            Some(c) if is_word_char(c) => {
                src.bump();
                read_word(src, c)
            }
            _ => {
                let found = src
                    .peek()
                    .map_or("end of file".to_string(), |c| format!("'{c}'"));
                return Err(syntax(
                    pos,
                    format!("expected a file name after 'source', found {found}"),
                ));
            }
        };
        if self.stack.len() >= MAX_INCLUDE_DEPTH {
            return Err(error(
                pos,
                ParseErrorKind::IncludeTooDeep {
                    limit: MAX_INCLUDE_DEPTH,
                },
            ));
        }
        let path = self.resolve(&name, pos)?;
        let canonical = path.canonicalize().ok();
        if let Some(c) = &canonical {
            if self.stack.iter().any(|s| s.canonical.as_ref() == Some(c)) {
                return Err(error(pos, ParseErrorKind::IncludeCycle { name, path }));
            }
        }
        let text = read_file(&path, Some(pos))?;
        self.files.push(path.clone());
        self.stack.push(Source::new(path, canonical, &text));
        Ok(())
    }

    /// Look `name` up next to the including file, then in each `LP_PATH` directory.
    /// A path that exists but is not a regular file (a directory, a device) is
    /// named as such rather than reported missing.
    fn resolve(&self, name: &str, pos: &Position) -> Result<PathBuf, ParseError> {
        let here = pos.file.parent().map(Path::to_path_buf).unwrap_or_default();
        let mut dirs = vec![here];
        if let Some(lp_path) = std::env::var_os("LP_PATH") {
            dirs.extend(std::env::split_paths(&lp_path));
        }
        let mut not_a_file = None;
        for dir in &dirs {
            let candidate = dir.join(name);
            match std::fs::metadata(&candidate) {
                Ok(meta) if meta.is_file() => return Ok(candidate),
                Ok(meta) if not_a_file.is_none() => {
                    not_a_file = Some((candidate, kind_of_non_file(&meta)))
                }
                _ => {}
            }
        }
        if let Some((path, what)) = not_a_file {
            return Err(error(
                pos,
                ParseErrorKind::IncludeNotAFile {
                    name: name.to_string(),
                    path,
                    what,
                },
            ));
        }
        let searched = if Path::new(name).is_absolute() {
            Vec::new()
        } else {
            dirs
        };
        Err(error(
            pos,
            ParseErrorKind::IncludeNotFound {
                name: name.to_string(),
                searched,
            },
        ))
    }
}

/// What a path that is not a regular file is, in words.
fn kind_of_non_file(meta: &std::fs::Metadata) -> &'static str {
    use std::os::unix::fs::FileTypeExt;
    let kind = meta.file_type();
    if kind.is_dir() {
        "a directory"
    } else if kind.is_char_device() || kind.is_block_device() {
        "a device"
    } else if kind.is_fifo() {
        "a FIFO"
    } else if kind.is_socket() {
        "a socket"
    } else {
        "a special file"
    }
}

fn skip_blank(src: &mut Source) {
    while let Some(c) = src.peek() {
        if c == '#' {
            while src.peek().is_some_and(|c| c != '\n') {
                src.bump();
            }
        } else if is_blank(c) {
            src.bump();
        } else {
            break;
        }
    }
}

fn read_word(src: &mut Source, first: char) -> String {
    let mut word = String::from(first);
    while let Some(c) = src.peek().filter(|&c| is_word_char(c)) {
        word.push(c);
        src.bump();
    }
    word
}

/// Classify a whole word as libparam's flex rules do (longest match, and on a tie
/// the number rules win over the word rule).
fn classify(word: String, pos: &Position) -> Result<Tok, ParseError> {
    let unsigned = word.strip_prefix('-').unwrap_or(&word);
    let negative = unsigned.len() != word.len();
    let out_of_range = || error(pos, ParseErrorKind::NumberOutOfRange(word.clone()));
    if !unsigned.is_empty() && unsigned.bytes().all(|b| b.is_ascii_digit()) {
        return word
            .parse::<i64>()
            .map(Tok::Int)
            .map_err(|_| out_of_range());
    }
    if let Some(digits) = unsigned.strip_prefix("0x") {
        if !digits.is_empty() && digits.bytes().all(|b| b.is_ascii_hexdigit()) {
            let magnitude = i128::from_str_radix(digits, 16).map_err(|_| out_of_range())?;
            let value = if negative { -magnitude } else { magnitude };
            return i64::try_from(value)
                .map(Tok::Hex)
                .map_err(|_| out_of_range());
        }
    }
    if is_float(unsigned) {
        return Ok(Tok::Float(word.parse::<f64>().map_err(|_| out_of_range())?));
    }
    Ok(match word.as_str() {
        ".." => Tok::DotDot,
        "topology" => Tok::Topology,
        "instantiate" => Tok::Instantiate,
        "as" => Tok::As,
        _ => Tok::Word(word),
    })
}

/// `[0-9]+\.[0-9]+(e[+-][0-9]+)?`
fn is_float(s: &str) -> bool {
    let digits = |t: &str| !t.is_empty() && t.bytes().all(|b| b.is_ascii_digit());
    let (mantissa, exponent) = match s.split_once('e') {
        Some((m, e)) => (m, Some(e)),
        None => (s, None),
    };
    let mantissa_ok = mantissa
        .split_once('.')
        .is_some_and(|(int, frac)| digits(int) && digits(frac));
    let exponent_ok = match exponent {
        None => true,
        Some(e) => e
            .strip_prefix('+')
            .or_else(|| e.strip_prefix('-'))
            .is_some_and(digits),
    };
    mantissa_ok && exponent_ok
}

fn read_file(path: &Path, included_at: Option<&Position>) -> Result<String, ParseError> {
    let fail = |message: String| {
        let (file, line) = match included_at {
            Some(pos) => (pos.file.to_path_buf(), pos.line),
            None => (path.to_path_buf(), 0),
        };
        ParseError {
            file,
            line,
            kind: ParseErrorKind::Io {
                path: path.to_path_buf(),
                message,
            },
        }
    };
    let meta = std::fs::metadata(path).map_err(|e| fail(e.to_string()))?;
    if !meta.is_file() {
        return Err(fail("not a regular file".into()));
    }
    if meta.len() > MAX_FILE_BYTES {
        return Err(fail(format!("larger than {MAX_FILE_BYTES} bytes")));
    }
    let bytes = std::fs::read(path).map_err(|e| fail(e.to_string()))?;
    Ok(String::from_utf8_lossy(&bytes).into_owned())
}

pub fn error(pos: &Position, kind: ParseErrorKind) -> ParseError {
    ParseError {
        file: pos.file.to_path_buf(),
        line: pos.line,
        kind,
    }
}

pub fn syntax(pos: &Position, text: String) -> ParseError {
    error(pos, ParseErrorKind::Syntax(text))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn lex_all(text: &str) -> Vec<Tok> {
        let mut lexer = Lexer::from_text(Path::new("mem/t"), text);
        let mut out = Vec::new();
        loop {
            let t = lexer.next().unwrap_or_else(|e| panic!("{e}"));
            if t.tok == Tok::Eof {
                return out;
            }
            out.push(t.tok);
        }
    }

    // Proves the float rule is libparam's: digits '.' digits, exponent only with a sign.
    #[test]
    fn float_rule() {
        for yes in ["0.0", "1.5", "12.25e+3", "3.0e-7"] {
            assert!(is_float(yes), "{yes}");
        }
        for no in ["1e5", "1.0e5", ".5", "5.", "1.5E+3", "1..5", "", "1.5e+"] {
            assert!(!is_float(no), "{no}");
        }
    }

    // Proves punctuation splits words, `..` stands alone, keywords are whole words
    // only, `#` inside a word is part of it (as flex's longest match has it), and a
    // comment runs to the end of the line.
    #[test]
    fn tokens() {
        let toks = lex_all("a.b(c)/d=[x0 .. x3]; sourcex as# as #c\n topology:?");
        assert_eq!(
            toks,
            [
                Tok::Word("a.b(c)/d".into()),
                Tok::Equals,
                Tok::LBracket,
                Tok::Word("x0".into()),
                Tok::DotDot,
                Tok::Word("x3".into()),
                Tok::RBracket,
                Tok::Semicolon,
                Tok::Word("sourcex".into()),
                Tok::Word("as#".into()),
                Tok::As,
                Tok::Topology,
                Tok::Colon,
                Tok::Question,
            ]
        );
    }

    // Proves `source` without a file name is an error, not a panic or a hang.
    #[test]
    fn source_needs_a_name() {
        let mut lexer = Lexer::from_text(Path::new("mem/t"), "a = source ,");
        assert!(lexer.next().is_ok());
        assert!(lexer.next().is_ok());
        let e = lexer.next().unwrap_err();
        assert!(
            e.to_string()
                .contains("expected a file name after 'source'"),
            "{e}"
        );
    }
}
