//! Grammar tests for spinstack-param: lexical classification, includes, ranges,
//! topology, and the errors each malformed construct produces (file and line).

use spinstack_param::{parse_file, parse_str, Item, ParseErrorKind, ValueKind};
use std::path::{Path, PathBuf};

fn parse(text: &str) -> spinstack_param::ParamFile {
    parse_str(Path::new("mem/test.parv"), text).unwrap_or_else(|e| panic!("{e}"))
}

fn parse_err(text: &str) -> spinstack_param::ParseError {
    match parse_str(Path::new("mem/test.parv"), text) {
        Ok(tree) => panic!("expected an error, got {tree:?}"),
        Err(e) => e,
    }
}

fn first_block(file: &spinstack_param::ParamFile) -> &spinstack_param::Block {
    match &file.items[0] {
        Item::Block(b) => b,
        other => panic!("expected a block, got {other:?}"),
    }
}

/// A scratch directory unique to one test.
fn scratch(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("spinstack-param-{}-{name}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

// Proves numbers are classified like libparam's flex rules: whole-word match,
// `1e5`/`.5`/`5.`/`10k` stay words, exponents need a sign.
#[test]
fn classifies_words_and_numbers() {
    let f = parse("t x { a = 42, b = -7, c = 0x1F, d = 0.0, e = 1.5e+3, f = 1e5, g = .5, h = 5., i = 10k, j = 2nd, k = -0x10 }");
    let b = first_block(&f);
    let kinds: Vec<&ValueKind> = b.params.iter().map(|p| &p.value.kind).collect();
    assert_eq!(kinds[0], &ValueKind::Int(42));
    assert_eq!(kinds[1], &ValueKind::Int(-7));
    assert_eq!(kinds[2], &ValueKind::Hex(31));
    assert_eq!(kinds[3], &ValueKind::Float(0.0));
    assert_eq!(kinds[4], &ValueKind::Float(1500.0));
    for (i, w) in [(5, "1e5"), (6, ".5"), (7, "5."), (8, "10k"), (9, "2nd")] {
        assert_eq!(kinds[i], &ValueKind::Word(w.into()));
    }
    assert_eq!(kinds[10], &ValueKind::Hex(-16));
}

// Proves multi-word names join with single spaces, keep punctuation, and lines count.
#[test]
fn names_join_and_positions_are_lines() {
    let f = parse("# comment\nt  x {\n  Segment   size (in blks) = 374,\n  Read hit over. after read = 0.184\n}\n");
    let b = first_block(&f);
    assert_eq!(b.params[0].name, "Segment size (in blks)");
    assert_eq!(b.params[0].pos.line, 3);
    assert_eq!(b.params[1].name, "Read hit over. after read");
    assert_eq!(b.params[1].value.pos.line, 4);
    assert_eq!(b.pos.line, 2);
}

// Proves nested anonymous blocks, definitions as values, lists of blocks and `[names] = v`.
#[test]
fn nested_blocks_lists_and_list_names() {
    let f = parse(
        "disksim_disk D { Model = dm_disk M { Zones = [ z { a = 1 }, z { a = 2 } ] }, [p, q] = 3 }",
    );
    let b = first_block(&f);
    let model = b.params[0].value.as_block().unwrap();
    assert_eq!(model.name.as_deref(), Some("M"));
    assert_eq!(model.params[0].value.as_list().unwrap().len(), 2);
    assert_eq!(b.params[1].name, "p");
    assert_eq!(b.params[2].name, "q");
    assert_eq!(b.params[2].value.as_int(), Some(3));
    assert!(
        f.definitions().contains_key("M"),
        "a named block used as a value is a definition"
    );
}

// Proves `a1 .. a3` expands and instantiate/topology parse into the tree.
#[test]
fn ranges_instantiate_and_topology() {
    let f = parse("instantiate [ disk0 .. disk2, x ] as T\ntopology disksim_iodriver d [ disksim_bus b [ disksim_disk disk1 [] ] ]");
    let Item::Instantiate(inst) = &f.items[0] else {
        panic!()
    };
    assert_eq!(inst.names, ["disk0", "disk1", "disk2", "x"]);
    assert_eq!(inst.type_name, "T");
    let topo = f.topologies().next().unwrap();
    let path = topo.path_to("disk1").unwrap();
    assert_eq!(
        path.iter().map(|n| n.name.as_str()).collect::<Vec<_>>(),
        ["d", "b", "disk1"]
    );
}

// Proves a trailing comma is an error at the comma's line, as in DiskSim.
#[test]
fn trailing_comma_is_an_error() {
    let e = parse_err("t x {\n a = 1,\n b = 2,\n}\n");
    assert_eq!(e.line, 3);
    assert!(e.to_string().contains("trailing ','"), "{e}");
    assert!(e.to_string().starts_with("mem/test.parv:3:"), "{e}");
}

// Proves a missing comma names the previous parameter and what was found.
#[test]
fn missing_comma_names_the_parameter() {
    let e = parse_err("t x {\n Blocks per track = 334\n Offset = 0 }");
    assert_eq!(e.line, 3);
    let text = e.to_string();
    assert!(
        text.contains("after parameter \"Blocks per track\""),
        "{text}"
    );
    let e = parse_err("t x {\n Blocks per track = 334 = 5 }");
    assert!(
        e.to_string()
            .contains("expected ',' or '}' after parameter \"Blocks per track\", found '='"),
        "{e}"
    );
}

// Proves truncated input, numeric name words and bad ranges are errors, not panics.
#[test]
fn malformed_inputs_are_errors() {
    let e = parse_err("t x {\n a = [ 1, 2\n");
    assert!(e.to_string().contains("end of input"), "{e}");
    let e = parse_err("t x { 10 = 1 }");
    assert!(matches!(e.kind, ParseErrorKind::Syntax(_)));
    let e = parse_err("instantiate [ a1 .. b3 ] as T");
    assert!(matches!(e.kind, ParseErrorKind::BadRange(_)), "{e}");
    let e = parse_err("t x { a = 99999999999999999999 }");
    assert!(matches!(e.kind, ParseErrorKind::NumberOutOfRange(_)), "{e}");
    let e = parse_err("t x { a = 1, a = 2 }");
    assert!(
        matches!(e.kind, ParseErrorKind::DuplicateParameter { .. }),
        "{e}"
    );
}

// Proves deep nesting is refused with an error instead of overflowing the stack.
#[test]
fn deep_nesting_is_bounded() {
    let text = format!(
        "t x {{ a = {}1{} }}",
        "[".repeat(10_000),
        "]".repeat(10_000)
    );
    let e = parse_err(&text);
    assert!(
        matches!(e.kind, ParseErrorKind::NestingTooDeep { .. }),
        "{e}"
    );
}

// Proves `source` is lexical (works inside a value), resolves relative to the
// including file's directory, and reports the included file's own lines.
#[test]
fn source_includes_relative_to_includer() {
    let dir = scratch("include");
    std::fs::create_dir_all(dir.join("sub")).unwrap();
    std::fs::write(
        dir.join("top.parv"),
        "disksim_disk D {\n Model = source sub/m.model,\n x = 1 }\n",
    )
    .unwrap();
    std::fs::write(
        dir.join("sub/m.model"),
        "dm_disk M {\n a = 1,\n b = source inner.txt\n}\n",
    )
    .unwrap();
    std::fs::write(dir.join("sub/inner.txt"), "\n\n 7.5").unwrap();
    let f = parse_file(&dir.join("top.parv")).unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(f.files.len(), 3);
    let disk = first_block(&f);
    let model = disk.params[0].value.as_block().unwrap();
    assert_eq!(model.pos.file().file_name().unwrap(), "m.model");
    let b = model.get("b").unwrap();
    assert_eq!(b.value.as_float(), Some(7.5));
    assert_eq!(
        (
            b.value.pos.file().file_name().unwrap().to_str().unwrap(),
            b.value.pos.line
        ),
        ("inner.txt", 3)
    );
    assert_eq!(
        disk.get("x").unwrap().pos.line,
        3,
        "lines resume in the includer"
    );
}

// Proves a missing include and an include cycle are errors naming the includer's line.
#[test]
fn include_errors() {
    let dir = scratch("include-errors");
    std::fs::write(dir.join("a.parv"), "t x {\n m = source nothere.model }\n").unwrap();
    let e = parse_file(&dir.join("a.parv")).unwrap_err();
    assert!(
        matches!(e.kind, ParseErrorKind::IncludeNotFound { .. }),
        "{e}"
    );
    assert_eq!(e.line, 2);
    assert!(
        e.to_string().contains("a.parv:2:") && e.to_string().contains("nothere.model"),
        "{e}"
    );
    std::fs::write(dir.join("b.parv"), "source c.parv\n").unwrap();
    std::fs::write(dir.join("c.parv"), "\nsource b.parv\n").unwrap();
    let e = parse_file(&dir.join("b.parv")).unwrap_err();
    assert!(matches!(e.kind, ParseErrorKind::IncludeCycle { .. }), "{e}");
    assert!(e.to_string().contains("c.parv:2:"), "{e}");
    std::fs::write(dir.join("self.parv"), "source self.parv\n").unwrap();
    assert!(matches!(
        parse_file(&dir.join("self.parv")).unwrap_err().kind,
        ParseErrorKind::IncludeCycle { .. }
    ));
}

// Proves inheritance: a block whose type is another definition inherits what it
// does not set, and base_type follows the chain.
#[test]
fn inheritance_helpers() {
    let f = parse("disksim_disk A { x = 1, y = 2 }\nA B { y = 3 }");
    let defs = f.definitions();
    assert_eq!(f.base_type(&defs, "B"), "disksim_disk");
    let b = defs["B"];
    let eff = f.effective_params(&defs, b);
    let get = |n: &str| eff.iter().find(|p| p.name == n).unwrap().value.as_int();
    assert_eq!((get("x"), get("y")), (Some(1), Some(3)));
}

// Proves every real DiskSim .parv in the shared folder parses, with its includes.
#[test]
fn parses_every_real_parv() {
    let Some(dir) = spinstack_testdata::disksim("params", "parse every real .parv") else {
        return;
    };
    let entries = std::fs::read_dir(&dir).unwrap_or_else(|e| panic!("{}: {e}", dir.display()));
    let mut count = 0;
    for entry in entries.flatten() {
        let path = entry.path();
        if path.extension().is_some_and(|e| e == "parv") {
            let f = parse_file(&path).unwrap_or_else(|e| panic!("{e}"));
            assert!(
                f.files.len() >= 3,
                "{}: includes not followed",
                path.display()
            );
            count += 1;
        }
    }
    assert_eq!(count, 11);
}

// Proves a long (acyclic) chain of includes stops at the depth limit with an error.
#[test]
fn include_depth_is_bounded() {
    let dir = scratch("include-depth");
    let n = spinstack_param::MAX_INCLUDE_DEPTH + 5;
    for i in 0..n {
        std::fs::write(
            dir.join(format!("f{i}.parv")),
            format!("source f{}.parv\n", i + 1),
        )
        .unwrap();
    }
    std::fs::write(dir.join(format!("f{n}.parv")), "t x { }\n").unwrap();
    let e = parse_file(&dir.join("f0.parv")).unwrap_err();
    assert!(
        matches!(e.kind, ParseErrorKind::IncludeTooDeep { .. }),
        "{e}"
    );
}

// Guards inputs finding 19: `source /tmp` and `source /dev/zero` said "cannot find
// included file '/tmp' (looked in)", with an empty list, although the path exists.
// Proves each is named for what it is, at the includer's line, and that a missing
// absolute path no longer shows an empty "(looked in)".
#[test]
fn an_include_that_is_not_a_file_says_what_it_is() {
    let dir = scratch("include-not-a-file");
    std::fs::create_dir_all(dir.join("sub")).unwrap();
    for (target, what) in [
        ("/tmp", "is a directory"),
        ("/dev/zero", "is a device"),
        ("sub", "is a directory"),
    ] {
        std::fs::write(
            dir.join("a.parv"),
            format!("t x {{\n m = source {target} }}\n"),
        )
        .unwrap();
        let e = parse_file(&dir.join("a.parv")).unwrap_err();
        let shown = e.to_string();
        assert!(
            matches!(e.kind, ParseErrorKind::IncludeNotAFile { .. }),
            "{target}: {shown}"
        );
        assert!(
            shown.contains("a.parv:2:") && shown.contains(what),
            "{target}: {shown}"
        );
    }
    std::fs::write(dir.join("a.parv"), "t x {\n m = source /no/such.model }\n").unwrap();
    let shown = parse_file(&dir.join("a.parv")).unwrap_err().to_string();
    assert!(
        shown.ends_with("cannot find included file '/no/such.model'"),
        "{shown}"
    );
}

// Guards inputs finding 19: a model cut just before its `] # Zones` failed three
// tokens into the includer without the "is it truncated?" hint other cuts get.
// Proves an included file that ends with blocks or lists still open is named, with
// the line it ends at, whatever token the error is found on.
#[test]
fn an_include_ending_inside_open_blocks_is_called_truncated() {
    let dir = scratch("include-unclosed");
    std::fs::write(
        dir.join("top.parv"),
        "disksim_disk D {\n Model = source m.model,\n Per-request overhead time = 0.0,\n x = 1 }\n",
    )
    .unwrap();
    std::fs::write(
        dir.join("m.model"),
        "dm_disk M {\n Layout = dm_layout_g1 {\n  Zones = [\n   zone { a = 1 },\n   zone { a = 2 }\n",
    )
    .unwrap();
    let shown = parse_file(&dir.join("top.parv")).unwrap_err().to_string();
    assert!(
        shown.starts_with(&format!("{}:3:", dir.join("top.parv").display())),
        "{shown}"
    );
    assert!(
        shown.contains("m.model:6 ended with 3 blocks or lists still open; is it truncated?"),
        "{shown}"
    );
}

// Guards inputs finding 25: a UTF-8 byte-order mark (as Windows editors write) made
// the first word of a .parv unreadable. Proves it is skipped at the start of the top
// file and of an included one, lines unchanged, and stays a word character elsewhere.
#[test]
fn a_byte_order_mark_at_the_start_is_skipped() {
    let dir = scratch("bom");
    std::fs::write(
        dir.join("top.parv"),
        "\u{feff}t x {\n m = source inc.txt }\n",
    )
    .unwrap();
    std::fs::write(dir.join("inc.txt"), "\u{feff}\n7").unwrap();
    let f = parse_file(&dir.join("top.parv")).unwrap_or_else(|e| panic!("{e}"));
    let block = first_block(&f);
    assert_eq!(block.type_name, "t");
    let m = block.get("m").unwrap();
    assert_eq!((m.value.as_int(), m.value.pos.line), (Some(7), 2));
    let from_text = parse("\u{feff}t x { a = 1 }");
    assert_eq!(first_block(&from_text).type_name, "t");
    let inside = parse("t x { a = b\u{feff} }");
    assert_eq!(
        first_block(&inside).get("a").unwrap().value.as_word(),
        Some("b\u{feff}")
    );
}
