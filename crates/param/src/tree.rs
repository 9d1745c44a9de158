//! The parse tree: blocks, parameters and values, each with its source position.

use std::collections::HashMap;
use std::fmt;
use std::path::{Path, PathBuf};
use std::sync::Arc;

/// Where something was written: the file (as resolved through `source`) and its
/// 1-based line.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Position {
    pub file: Arc<PathBuf>,
    pub line: u32,
}

impl Position {
    pub fn file(&self) -> &Path {
        self.file.as_path()
    }
}

impl fmt::Display for Position {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}:{}", self.file.display(), self.line)
    }
}

/// A parameter value with the position of its first token.
#[derive(Clone, Debug, PartialEq)]
pub struct Value {
    pub kind: ValueKind,
    pub pos: Position,
}

#[derive(Clone, Debug, PartialEq)]
pub enum ValueKind {
    /// Decimal integer (`-?[0-9]+`).
    Int(i64),
    /// Hexadecimal integer (`-?0x[0-9a-fA-F]+`).
    Hex(i64),
    /// Float (`-?[0-9]+.[0-9]+` with optional `e±NN`).
    Float(f64),
    /// Any other word, e.g. a file name or `trackSwitchPlusRotation`.
    Word(String),
    /// `[ a, b, ... ]`, with `x1 .. x9` ranges already expanded.
    List(Vec<Value>),
    /// `TYPE { ... }` (anonymous) or `TYPE NAME { ... }` (a definition used as a value).
    Block(Block),
    /// `MODULE NAME [ children ]` inside a topology.
    Topology(TopologyNode),
}

impl Value {
    /// A short description of the value's kind, for error messages.
    pub fn kind_name(&self) -> &'static str {
        match self.kind {
            ValueKind::Int(_) => "an integer",
            ValueKind::Hex(_) => "a hex integer",
            ValueKind::Float(_) => "a float",
            ValueKind::Word(_) => "a word",
            ValueKind::List(_) => "a list",
            ValueKind::Block(_) => "a block",
            ValueKind::Topology(_) => "a topology",
        }
    }

    /// The value as an integer; floats are NOT accepted (DiskSim rejects them).
    pub fn as_int(&self) -> Option<i64> {
        match self.kind {
            ValueKind::Int(v) | ValueKind::Hex(v) => Some(v),
            _ => None,
        }
    }

    /// The value as a float; integers are converted, as DiskSim does.
    pub fn as_float(&self) -> Option<f64> {
        match self.kind {
            ValueKind::Int(v) | ValueKind::Hex(v) => Some(v as f64),
            ValueKind::Float(v) => Some(v),
            _ => None,
        }
    }

    pub fn as_word(&self) -> Option<&str> {
        match &self.kind {
            ValueKind::Word(w) => Some(w),
            _ => None,
        }
    }

    pub fn as_list(&self) -> Option<&[Value]> {
        match &self.kind {
            ValueKind::List(items) => Some(items),
            _ => None,
        }
    }

    pub fn as_block(&self) -> Option<&Block> {
        match &self.kind {
            ValueKind::Block(b) => Some(b),
            _ => None,
        }
    }
}

/// `NAME = VALUE` inside a block. `pos` is the position of the name's first word.
#[derive(Clone, Debug, PartialEq)]
pub struct Param {
    /// The name's words joined by single spaces.
    pub name: String,
    pub value: Value,
    pub pos: Position,
}

/// A block: `TYPE NAME { params }` defines type NAME; `TYPE { params }` is anonymous.
#[derive(Clone, Debug, PartialEq)]
pub struct Block {
    /// A module name (`disksim_disk`, `dm_disk`, ...) or an already-defined block name.
    pub type_name: String,
    pub name: Option<String>,
    /// In file order.
    pub params: Vec<Param>,
    /// Position of the type word.
    pub pos: Position,
}

impl Block {
    /// The parameter set in this block (not inherited ones) with exactly this name.
    pub fn get(&self, name: &str) -> Option<&Param> {
        self.params.iter().find(|p| p.name == name)
    }
}

/// `instantiate [ names ] as TYPE`.
#[derive(Clone, Debug, PartialEq)]
pub struct Instantiation {
    pub names: Vec<String>,
    pub type_name: String,
    pub pos: Position,
}

/// `MODULE NAME [ children ]` in a `topology` statement.
#[derive(Clone, Debug, PartialEq)]
pub struct TopologyNode {
    pub module: String,
    pub name: String,
    pub children: Vec<TopologyNode>,
    pub pos: Position,
}

impl TopologyNode {
    /// The chain of nodes from this one down to the node named `name`, if present.
    pub fn path_to(&self, name: &str) -> Option<Vec<&TopologyNode>> {
        if self.name == name {
            return Some(vec![self]);
        }
        self.children.iter().find_map(|child| {
            let mut path = child.path_to(name)?;
            path.insert(0, self);
            Some(path)
        })
    }
}

/// One top-level statement.
#[derive(Clone, Debug, PartialEq)]
pub enum Item {
    Block(Block),
    Instantiate(Instantiation),
    Topology(TopologyNode),
}

/// A parsed parameter file with everything it `source`d.
#[derive(Clone, Debug, PartialEq)]
pub struct ParamFile {
    /// Top-level statements in file order (includes spliced in where they occur).
    pub items: Vec<Item>,
    /// Every file read, in the order it was opened (the top file first).
    pub files: Vec<PathBuf>,
}

/// Bound on walking `TYPE NAME` parent chains (a chain longer than this is a cycle).
const MAX_INHERITANCE_DEPTH: usize = 64;

impl ParamFile {
    /// Every named block definition (top-level or used as a value), first
    /// definition winning as in DiskSim (a redefinition is ignored; see
    /// [`ParamFile::conflicting_definition`] for the ones that must not be).
    pub fn definitions(&self) -> HashMap<&str, &Block> {
        let mut map = HashMap::new();
        for block in self.named_blocks() {
            if let Some(name) = &block.name {
                map.entry(name.as_str()).or_insert(block);
            }
        }
        map
    }

    /// The first later definition of a name that says something other than the
    /// name's first definition, with that first one: `(first, later)`. A
    /// repeated identical definition (the same file `source`d twice, or a copy
    /// of a block) is harmless, since the first wins and says the same. A
    /// different one is not: its values would be ignored without a word.
    pub fn conflicting_definition(&self) -> Option<(&Block, &Block)> {
        let mut first: HashMap<&str, &Block> = HashMap::new();
        for block in self.named_blocks() {
            let Some(name) = &block.name else { continue };
            match first.get(name.as_str()) {
                Some(earlier) if !same_block(earlier, block) => return Some((earlier, block)),
                Some(_) => {}
                None => {
                    first.insert(name, block);
                }
            }
        }
        None
    }

    /// Named blocks in file order, top-level ones and those used as values.
    fn named_blocks(&self) -> Vec<&Block> {
        let mut blocks = Vec::new();
        for item in &self.items {
            if let Item::Block(block) = item {
                collect_definitions(block, &mut blocks, 0);
            }
        }
        blocks
    }

    /// The module type a definition ultimately derives from, following parents.
    pub fn base_type<'a>(&'a self, defs: &HashMap<&str, &'a Block>, name: &'a str) -> &'a str {
        let mut current = name;
        for _ in 0..MAX_INHERITANCE_DEPTH {
            match defs.get(current) {
                Some(block) => current = &block.type_name,
                None => return current,
            }
        }
        current
    }

    /// The parameters of `block` including those inherited from its parent
    /// definitions; a block's own setting overrides its parent's. Own parameters
    /// come first, in file order, then inherited ones.
    pub fn effective_params<'a>(
        &'a self,
        defs: &HashMap<&str, &'a Block>,
        block: &'a Block,
    ) -> Vec<&'a Param> {
        let mut params: Vec<&Param> = block.params.iter().collect();
        let mut parent = defs.get(block.type_name.as_str()).copied();
        for _ in 0..MAX_INHERITANCE_DEPTH {
            let Some(p) = parent else { break };
            if std::ptr::eq(p, block) {
                break;
            }
            for param in &p.params {
                if !params.iter().any(|q| q.name == param.name) {
                    params.push(param);
                }
            }
            parent = defs.get(p.type_name.as_str()).copied();
        }
        params
    }

    /// `(instance name, type name, position)` for every `instantiate` statement.
    pub fn instances(&self) -> impl Iterator<Item = (&str, &str, &Position)> {
        self.items.iter().flat_map(|item| match item {
            Item::Instantiate(inst) => inst
                .names
                .iter()
                .map(|n| (n.as_str(), inst.type_name.as_str(), &inst.pos))
                .collect::<Vec<_>>(),
            _ => Vec::new(),
        })
    }

    pub fn topologies(&self) -> impl Iterator<Item = &TopologyNode> {
        self.items.iter().filter_map(|item| match item {
            Item::Topology(node) => Some(node),
            _ => None,
        })
    }
}

fn collect_definitions<'a>(block: &'a Block, blocks: &mut Vec<&'a Block>, depth: usize) {
    if depth > MAX_INHERITANCE_DEPTH {
        return;
    }
    if block.name.is_some() {
        blocks.push(block);
    }
    for param in &block.params {
        collect_value_definitions(&param.value, blocks, depth + 1);
    }
}

fn collect_value_definitions<'a>(value: &'a Value, blocks: &mut Vec<&'a Block>, depth: usize) {
    match &value.kind {
        ValueKind::Block(b) => collect_definitions(b, blocks, depth),
        ValueKind::List(items) if depth <= MAX_INHERITANCE_DEPTH => {
            for item in items {
                collect_value_definitions(item, blocks, depth + 1);
            }
        }
        _ => {}
    }
}

/// Whether two blocks say the same, wherever they are written (positions aside).
fn same_block(a: &Block, b: &Block) -> bool {
    a.type_name == b.type_name
        && a.name == b.name
        && a.params.len() == b.params.len()
        && a.params
            .iter()
            .zip(&b.params)
            .all(|(p, q)| p.name == q.name && same_value(&p.value, &q.value))
}

fn same_value(a: &Value, b: &Value) -> bool {
    use ValueKind::*;
    match (&a.kind, &b.kind) {
        (List(x), List(y)) => x.len() == y.len() && x.iter().zip(y).all(|(v, w)| same_value(v, w)),
        (Block(x), Block(y)) => same_block(x, y),
        (Topology(x), Topology(y)) => same_node(x, y),
        (x, y) => x == y,
    }
}

fn same_node(a: &TopologyNode, b: &TopologyNode) -> bool {
    a.module == b.module
        && a.name == b.name
        && a.children.len() == b.children.len()
        && a.children
            .iter()
            .zip(&b.children)
            .all(|(x, y)| same_node(x, y))
}
