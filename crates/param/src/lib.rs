//! # spinstack-param: DiskSim parameter files
//!
//! **What it models.** The grammar of DiskSim 4.0's libparam: `#` comments, words
//! that may contain spaces-free punctuation such as `.`, `(`, `/`, numbers classified
//! exactly as libparam's lexer does (`1e5` and `10k` are words, `0.0` is a float),
//! `source FILE` as a *lexical* include resolved against the including file's
//! directory (then `LP_PATH`), nested and anonymous blocks, lists with `a1 .. a9`
//! ranges, `instantiate [..] as T` and `topology` statements. The output is a tree
//! ([`ParamFile`]) whose every value carries its file and line.
//!
//! **Invariants.** Parsing never panics, whatever the input: include depth, block
//! and list nesting and range expansion are all bounded, and every failure is a
//! [`ParseError`] naming file, line and problem. An include that names a
//! directory or a device says so; an include that ends inside a block or list it
//! opened is named, with the line it ends at, in the next syntax error (a file cut
//! short). A UTF-8 byte-order mark at the start of any file is skipped. A trailing
//! comma is an error (as in DiskSim), and so is a parameter set twice in one block.
//!
//! **What it does not model.** Meaning. Which parameters a block accepts, their
//! types and units belong to the importer (`spinstack_disk::import`). Inheritance
//! between definitions is offered as a helper ([`ParamFile::effective_params`]), not
//! applied to the tree.

mod error;
mod lexer;
mod parser;
mod tree;

pub use error::{ParseError, ParseErrorKind};
pub use lexer::MAX_INCLUDE_DEPTH;
pub use parser::{MAX_NESTING_DEPTH, MAX_RANGE_LENGTH};
pub use tree::{
    Block, Instantiation, Item, Param, ParamFile, Position, TopologyNode, Value, ValueKind,
};

use std::path::Path;

/// Parse the parameter file at `path`, following its `source` includes.
pub fn parse_file(path: &Path) -> Result<ParamFile, ParseError> {
    parser::Parser::new(lexer::Lexer::open(path)?).parse_file()
}

/// Parse in-memory text. `path` names it in error messages, and `source` includes
/// are resolved relative to its directory.
pub fn parse_str(path: &Path, text: &str) -> Result<ParamFile, ParseError> {
    parser::Parser::new(lexer::Lexer::from_text(path, text)).parse_file()
}
