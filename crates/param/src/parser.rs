//! Recursive-descent parser for the libparam grammar:
//!
//! ```text
//! file     := { blockdef | "topology" topospec | "instantiate" list "as" WORD }
//! blockdef := WORD WORD "{" [ exps ] "}"
//! blockval := WORD "{" [ exps ] "}"
//! exps     := exp { "," exp }                  (no trailing comma)
//! exp      := name "=" value | list "=" value  (list form: one value, several names)
//! name     := WORD { WORD }
//! value    := INT | HEX | FLOAT | WORD | list | blockval | blockdef | topospec
//! list     := "[" [ item { "," item } ] "]"
//! item     := value | WORD ".." WORD
//! topospec := WORD WORD list
//! ```

use crate::error::{ParseError, ParseErrorKind};
use crate::lexer::{error, syntax, Lexer, Tok, Token};
use crate::tree::{
    Block, Instantiation, Item, Param, ParamFile, Position, TopologyNode, Value, ValueKind,
};

/// Deepest nesting of blocks, lists and topology entries accepted.
pub const MAX_NESTING_DEPTH: usize = 64;
/// Most names one `a1 .. aN` range may expand to.
pub const MAX_RANGE_LENGTH: u64 = 100_000;

pub struct Parser {
    lexer: Lexer,
    peeked: Option<Token>,
    depth: usize,
    /// The last token consumed, for annotating errors.
    last: Option<Token>,
}

impl Parser {
    pub fn new(lexer: Lexer) -> Parser {
        Parser {
            lexer,
            peeked: None,
            depth: 0,
            last: None,
        }
    }

    fn next(&mut self) -> Result<Token, ParseError> {
        let t = match self.peeked.take() {
            Some(t) => t,
            None => self.lexer.next()?,
        };
        self.last = Some(t.clone());
        Ok(t)
    }

    /// A syntax error on the first token after an include ended usually means the
    /// included file was cut short: say where it ended. So does any syntax error
    /// after an included file that ended inside a block or list it opened (a
    /// model cut just before its `] # Zones` fails a few tokens later, in the
    /// includer).
    fn annotate(&self, mut e: ParseError) -> ParseError {
        let ParseErrorKind::Syntax(text) = &mut e.kind else {
            return e;
        };
        let just_after = self.last.as_ref().and_then(|last| {
            let end = last.after_include.as_ref()?;
            (e.file == last.pos.file.as_path() && e.line == last.pos.line).then_some(end)
        });
        if let Some(end) = just_after {
            text.push_str(&format!(
                " (just after the end of included file {end}; is it truncated?)"
            ));
        } else if let Some(unclosed) = &self.lexer.unclosed_include {
            let open = unclosed.open;
            let things = if open == 1 {
                "a block or list"
            } else {
                "blocks or lists"
            };
            text.push_str(&format!(
                " (included file {} ended with {open} {things} still open; is it truncated?)",
                unclosed.end
            ));
        }
        e
    }

    fn peek(&mut self) -> Result<&Tok, ParseError> {
        if self.peeked.is_none() {
            self.peeked = Some(self.lexer.next()?);
        }
        Ok(&self.peeked.as_ref().expect("just filled").tok)
    }

    fn expect(&mut self, want: Tok, context: &str) -> Result<Token, ParseError> {
        let t = self.next()?;
        if t.tok == want {
            Ok(t)
        } else {
            Err(syntax(
                &t.pos,
                format!(
                    "expected {} {context}, found {}",
                    want.describe(),
                    t.tok.describe()
                ),
            ))
        }
    }

    fn expect_word(&mut self, context: &str) -> Result<(String, Position), ParseError> {
        let t = self.next()?;
        match t.tok {
            Tok::Word(w) => Ok((w, t.pos)),
            other => Err(syntax(
                &t.pos,
                format!("expected a name {context}, found {}", other.describe()),
            )),
        }
    }

    fn enter(&mut self, pos: &Position) -> Result<(), ParseError> {
        self.depth += 1;
        if self.depth > MAX_NESTING_DEPTH {
            return Err(error(
                pos,
                ParseErrorKind::NestingTooDeep {
                    limit: MAX_NESTING_DEPTH,
                },
            ));
        }
        Ok(())
    }

    fn leave(&mut self) {
        self.depth -= 1;
    }

    /// Parse the whole input.
    pub fn parse_file(mut self) -> Result<ParamFile, ParseError> {
        match self.items() {
            Ok(items) => Ok(ParamFile {
                items,
                files: self.lexer.files,
            }),
            Err(e) => Err(self.annotate(e)),
        }
    }

    fn items(&mut self) -> Result<Vec<Item>, ParseError> {
        let mut items = Vec::new();
        loop {
            let t = self.next()?;
            let item = match t.tok {
                Tok::Eof => break,
                Tok::Word(type_name) => {
                    let (name, _) =
                        self.expect_word(&format!("for the new block after '{type_name}'"))?;
                    Item::Block(self.block_def(type_name, Some(name), t.pos)?)
                }
                Tok::Topology => {
                    let (module, _) = self.expect_word("after 'topology'")?;
                    Item::Topology(self.topospec(module, t.pos)?)
                }
                Tok::Instantiate => Item::Instantiate(self.instantiate(t.pos)?),
                other => {
                    return Err(syntax(
                        &t.pos,
                        format!(
                            "expected a block definition, 'instantiate' or 'topology', found {}",
                            other.describe()
                        ),
                    ))
                }
            };
            items.push(item);
        }
        Ok(items)
    }

    fn instantiate(&mut self, pos: Position) -> Result<Instantiation, ParseError> {
        let open = self.expect(Tok::LBracket, "after 'instantiate'")?;
        let list = self.list_rest(open.pos)?;
        let names = words_of(&list, "instance names")?;
        self.expect(Tok::As, "after the instance list")?;
        let (type_name, _) = self.expect_word("after 'as'")?;
        Ok(Instantiation {
            names,
            type_name,
            pos,
        })
    }

    /// `{ [exps] }` after `TYPE [NAME]`.
    fn block_def(
        &mut self,
        type_name: String,
        name: Option<String>,
        pos: Position,
    ) -> Result<Block, ParseError> {
        let label = name.clone().unwrap_or_else(|| type_name.clone());
        self.expect(Tok::LBrace, &format!("to open block '{label}'"))?;
        self.enter(&pos)?;
        let params = self.block_body(&label)?;
        self.leave();
        Ok(Block {
            type_name,
            name,
            params,
            pos,
        })
    }

    fn block_body(&mut self, label: &str) -> Result<Vec<Param>, ParseError> {
        let mut params: Vec<Param> = Vec::new();
        if *self.peek()? == Tok::RBrace {
            self.next()?;
            return Ok(params);
        }
        loop {
            let new = self.exp()?;
            for p in new {
                if let Some(first) = params.iter().find(|q| q.name == p.name) {
                    let first_line = first.pos.line;
                    return Err(error(
                        &p.pos,
                        ParseErrorKind::DuplicateParameter {
                            name: p.name,
                            first_line,
                        },
                    ));
                }
                params.push(p);
            }
            let last = params.last().map(|p| p.name.clone()).unwrap_or_default();
            let t = self.next()?;
            match t.tok {
                Tok::RBrace => return Ok(params),
                Tok::Comma if *self.peek()? == Tok::RBrace => {
                    return Err(syntax(
                        &t.pos,
                        format!(
                        "trailing ',' after parameter \"{last}\" before '}}' of block '{label}'"
                    ),
                    ))
                }
                Tok::Comma => {}
                other => {
                    return Err(syntax(
                        &t.pos,
                        format!(
                            "expected ',' or '}}' after parameter \"{last}\", found {}",
                            other.describe()
                        ),
                    ))
                }
            }
        }
    }

    /// One `name = value` (or `[names] = value`), as one parameter per name.
    fn exp(&mut self) -> Result<Vec<Param>, ParseError> {
        let t = self.next()?;
        let (names, pos) = match t.tok {
            Tok::LBracket => {
                let list = self.list_rest(t.pos.clone())?;
                (words_of(&list, "parameter names")?, t.pos)
            }
            Tok::Word(first) => (vec![self.name_rest(first)?], t.pos),
            other => {
                return Err(syntax(
                    &t.pos,
                    format!("expected a parameter name, found {}", other.describe()),
                ))
            }
        };
        let joined = names.join(", ");
        self.expect(Tok::Equals, &format!("after parameter name \"{joined}\""))?;
        let value = self.value(&joined)?;
        Ok(names
            .into_iter()
            .map(|name| Param {
                name,
                value: value.clone(),
                pos: pos.clone(),
            })
            .collect())
    }

    fn name_rest(&mut self, first: String) -> Result<String, ParseError> {
        let mut name = first;
        while let Tok::Word(_) = self.peek()? {
            if let Tok::Word(w) = self.next()?.tok {
                name.push(' ');
                name.push_str(&w);
            }
        }
        Ok(name)
    }

    /// A value; `param` names the parameter it belongs to, for messages.
    fn value(&mut self, param: &str) -> Result<Value, ParseError> {
        let t = self.next()?;
        let pos = t.pos;
        let kind = match t.tok {
            Tok::Int(v) => ValueKind::Int(v),
            Tok::Hex(v) => ValueKind::Hex(v),
            Tok::Float(v) => ValueKind::Float(v),
            Tok::LBracket => ValueKind::List(self.list_rest(pos.clone())?),
            Tok::Word(w) => self.word_value(w, &pos, param)?,
            other => {
                return Err(syntax(
                    &pos,
                    format!(
                        "expected a value for parameter \"{param}\", found {}",
                        other.describe()
                    ),
                ))
            }
        };
        Ok(Value { kind, pos })
    }

    /// After a WORD in value position: a plain word, `TYPE { }`, `TYPE NAME { }`
    /// or `MODULE NAME [ ]`.
    fn word_value(
        &mut self,
        word: String,
        pos: &Position,
        param: &str,
    ) -> Result<ValueKind, ParseError> {
        match self.peek()? {
            Tok::LBrace => Ok(ValueKind::Block(self.block_def(word, None, pos.clone())?)),
            Tok::Word(_) => {
                let second = self.next()?;
                let Tok::Word(name) = second.tok else {
                    unreachable!("peeked a word")
                };
                match self.peek()? {
                    Tok::LBrace => Ok(ValueKind::Block(self.block_def(
                        word,
                        Some(name),
                        pos.clone(),
                    )?)),
                    Tok::LBracket => Ok(ValueKind::Topology(self.topospec_named(
                        word,
                        name,
                        pos.clone(),
                    )?)),
                    _ => Err(syntax(
                        &second.pos,
                        format!("expected ',' or '}}' after parameter \"{param}\", found '{name}'"),
                    )),
                }
            }
            _ => Ok(ValueKind::Word(word)),
        }
    }

    fn topospec(&mut self, module: String, pos: Position) -> Result<TopologyNode, ParseError> {
        let (name, _) = self.expect_word(&format!("for the '{module}' topology entry"))?;
        self.topospec_named(module, name, pos)
    }

    fn topospec_named(
        &mut self,
        module: String,
        name: String,
        pos: Position,
    ) -> Result<TopologyNode, ParseError> {
        let open = self.expect(
            Tok::LBracket,
            &format!("after topology entry '{module} {name}'"),
        )?;
        let items = self.list_rest(open.pos)?;
        let mut children = Vec::with_capacity(items.len());
        for item in items {
            match item.kind {
                ValueKind::Topology(node) => children.push(node),
                _ => {
                    return Err(syntax(
                        &item.pos,
                        format!(
                        "expected a topology entry (MODULE NAME [ ... ]) inside '{name}', found {}",
                        item.kind_name()
                    ),
                    ))
                }
            }
        }
        Ok(TopologyNode {
            module,
            name,
            children,
            pos,
        })
    }

    /// The rest of a list after its `[`.
    fn list_rest(&mut self, open: Position) -> Result<Vec<Value>, ParseError> {
        self.enter(&open)?;
        let mut items = Vec::new();
        if *self.peek()? == Tok::RBracket {
            self.next()?;
            self.leave();
            return Ok(items);
        }
        loop {
            let item = self.value("list item")?;
            if *self.peek()? == Tok::DotDot {
                let dots = self.next()?;
                let (end, _) = self.expect_word("after '..'")?;
                expand_range(&item, &end, &dots.pos, &mut items)?;
            } else {
                items.push(item);
            }
            let t = self.next()?;
            match t.tok {
                Tok::RBracket => break,
                Tok::Comma if *self.peek()? == Tok::RBracket => {
                    return Err(syntax(&t.pos, "trailing ',' before ']'".into()))
                }
                Tok::Comma => {}
                other => {
                    return Err(syntax(
                        &t.pos,
                        format!("expected ',' or ']' in list, found {}", other.describe()),
                    ))
                }
            }
        }
        self.leave();
        Ok(items)
    }
}

/// The names of a list whose items must all be plain words.
fn words_of(list: &[Value], what: &str) -> Result<Vec<String>, ParseError> {
    list.iter()
        .map(|v| match &v.kind {
            ValueKind::Word(w) => Ok(w.clone()),
            _ => Err(syntax(
                &v.pos,
                format!("expected {what} (words), found {}", v.kind_name()),
            )),
        })
        .collect()
}

/// Split `disk12` into (`disk`, 12).
fn split_number(word: &str) -> Option<(&str, u64)> {
    let digits = word.len() - word.bytes().rev().take_while(u8::is_ascii_digit).count();
    let (prefix, number) = word.split_at(digits);
    Some((prefix, number.parse().ok()?))
}

/// `a1 .. a9` → `a1, a2, ..., a9`.
fn expand_range(
    start: &Value,
    end: &str,
    pos: &Position,
    out: &mut Vec<Value>,
) -> Result<(), ParseError> {
    let bad = |text: String| error(pos, ParseErrorKind::BadRange(text));
    let ValueKind::Word(first) = &start.kind else {
        return Err(bad(format!(
            "a range must start with a word, found {}",
            start.kind_name()
        )));
    };
    let (Some((p1, n1)), Some((p2, n2))) = (split_number(first), split_number(end)) else {
        return Err(bad(format!(
            "'{first} .. {end}': both ends must end in a number"
        )));
    };
    if p1 != p2 || n1 > n2 || (n2 - n1).saturating_add(out.len() as u64) >= MAX_RANGE_LENGTH {
        return Err(bad(format!(
            "'{first} .. {end}': ends must share a prefix, ascend, and the list must stay under {MAX_RANGE_LENGTH} names"
        )));
    }
    out.extend((n1..=n2).map(|n| Value {
        kind: ValueKind::Word(format!("{p1}{n}")),
        pos: start.pos.clone(),
    }));
    Ok(())
}
