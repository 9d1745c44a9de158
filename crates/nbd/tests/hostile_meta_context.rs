//! Hostile clients against the meta-context options, fuzzed with proptest (this is
//! the fuzzing of their parser): random, mutated and lying `LIST_META_CONTEXT` and
//! `SET_META_CONTEXT` data, mixed with `STRUCTURED_REPLY` and `INFO`, through
//! negotiation. Proves negotiation never panics or desynchronises (every option
//! gets its replies and exactly one final reply, in order, as an oracle written from
//! the protocol says for well-formed data; `GO` still works after them), and that
//! the context in force is the one the server's answers announced.

mod common;
use common::*;
use proptest::prelude::*;
use spinstack_nbd::meta_context::encode_meta_context_request;
use spinstack_nbd::negotiate::{negotiate, ExportInfo, Outcome};
use spinstack_nbd::wire::*;
use std::io::Cursor;

fn export() -> ExportInfo {
    ExportInfo {
        name: "spinstack".into(),
        description: String::new(),
        size_bytes: 1 << 20,
        transmission_flags: FLAG_HAS_FLAGS | FLAG_SEND_FLUSH,
        preferred_block_bytes: 4096,
        max_block_bytes: 64 * 1024,
    }
}

const NAMES: [&[u8]; 3] = [b"", b"spinstack", b"nope"];
/// Queries a client might send; the last three lack a namespace and a colon.
const QUERIES: [&[u8]; 9] = [
    b"base:",
    b"base:allocation",
    b"base:other",
    b"qemu:dirty-bitmap:a",
    b"base:allocation:",
    b"x-y:",
    b"base",
    b":allocation",
    b"",
];

/// One option of a hostile negotiation.
#[derive(Clone, Debug)]
enum Opt {
    Structured {
        with_data: bool,
    },
    /// A well-formed meta-context request, then possibly mutated.
    Meta {
        set: bool,
        name: usize,
        queries: Vec<usize>,
        mutation: Mutation,
    },
    /// Random data.
    Noise {
        set: bool,
        data: Vec<u8>,
    },
    /// A query count the data does not bear out.
    LyingCount {
        set: bool,
        count: u32,
        tail: Vec<u8>,
    },
    Info,
}

#[derive(Clone, Debug)]
enum Mutation {
    Keep,
    Flip(usize, u8),
    Cut(usize),
    Append(Vec<u8>),
}

fn hostile_option() -> impl Strategy<Value = Opt> {
    let mutation = prop_oneof![
        3 => Just(Mutation::Keep),
        1 => (any::<usize>(), any::<u8>()).prop_map(|(at, value)| Mutation::Flip(at, value)),
        1 => any::<usize>().prop_map(Mutation::Cut),
        1 => proptest::collection::vec(any::<u8>(), 1..8).prop_map(Mutation::Append),
    ];
    let meta = (
        any::<bool>(),
        0..NAMES.len(),
        proptest::collection::vec(0..QUERIES.len(), 0..4),
        mutation,
    )
        .prop_map(|(set, name, queries, mutation)| Opt::Meta {
            set,
            name,
            queries,
            mutation,
        });
    prop_oneof![
        1 => Just(Opt::Structured { with_data: true }),
        4 => Just(Opt::Structured { with_data: false }),
        8 => meta,
        2 => (any::<bool>(), proptest::collection::vec(any::<u8>(), 0..40))
            .prop_map(|(set, data)| Opt::Noise { set, data }),
        1 => (any::<bool>(), any::<u32>(), proptest::collection::vec(any::<u8>(), 0..24))
            .prop_map(|(set, count, tail)| Opt::LyingCount { set, count, tail }),
        1 => Just(Opt::Info),
    ]
}

fn meta_option(set: bool) -> u32 {
    if set {
        OPT_SET_META_CONTEXT
    } else {
        OPT_LIST_META_CONTEXT
    }
}

/// The option code and data `opt` sends, and for an unmutated meta request the
/// answer the protocol calls for: (`base:allocation` returned, final reply type).
fn encode(opt: &Opt, structured: bool) -> (u32, Vec<u8>, Option<(bool, u32)>) {
    match opt {
        Opt::Structured { with_data } => {
            let data = if *with_data { b"x".to_vec() } else { vec![] };
            let answer = if *with_data { REP_ERR_INVALID } else { REP_ACK };
            (OPT_STRUCTURED_REPLY, data, Some((false, answer)))
        }
        Opt::Meta {
            set,
            name,
            queries,
            mutation,
        } => {
            let queries: Vec<&[u8]> = queries.iter().map(|&index| QUERIES[index]).collect();
            let clean = encode_meta_context_request(NAMES[*name], &queries);
            let mut data = clean.clone();
            match mutation {
                Mutation::Keep => {}
                Mutation::Flip(at, value) => data[at % clean.len()] = *value,
                Mutation::Cut(at) => data.truncate(at % clean.len()),
                Mutation::Append(bytes) => data.extend_from_slice(bytes),
            }
            let oracle = (data == clean).then(|| meta_oracle(*set, *name, &queries, structured));
            (meta_option(*set), data, oracle)
        }
        Opt::Noise { set, data } => (meta_option(*set), data.clone(), None),
        Opt::LyingCount { set, count, tail } => {
            let mut data = vec![0, 0, 0, 0];
            data.extend_from_slice(&count.to_be_bytes());
            data.extend_from_slice(tail);
            (meta_option(*set), data, None)
        }
        Opt::Info => (OPT_INFO, vec![0, 0, 0, 0, 0, 0], Some((false, REP_ACK))),
    }
}

/// The protocol's answer to a well-formed meta-context request.
fn meta_oracle(set: bool, name: usize, queries: &[&[u8]], structured: bool) -> (bool, u32) {
    let namespaced = |query: &[u8]| query.iter().position(|&b| b == b':').is_some_and(|c| c > 0);
    if !structured || !queries.iter().all(|&query| namespaced(query)) {
        return (false, REP_ERR_INVALID);
    }
    if NAMES[name] == b"nope" {
        return (false, REP_ERR_UNKNOWN);
    }
    let has = |wanted: &[u8]| queries.contains(&wanted);
    let found = if set {
        has(b"base:allocation")
    } else {
        queries.is_empty() || has(b"base:") || has(b"base:allocation")
    };
    (found, REP_ACK)
}

/// Reads the replies to one option up to its final one; returns whether
/// `base:allocation` was returned (with its ID) and the final reply type.
fn replies_to(replies: &mut Replies<'_>, option: u32) -> Result<(Option<u32>, u32), TestCaseError> {
    let mut context = None;
    loop {
        prop_assert_eq!(replies.take(8)?, &OPTION_REPLY_MAGIC.to_be_bytes()[..]);
        prop_assert_eq!(replies.u32()?, option, "a reply to another option");
        let reply_type = replies.u32()?;
        let length = replies.u32()? as usize;
        let data = replies.take(length)?;
        match reply_type {
            REP_META_CONTEXT => {
                prop_assert!(context.is_none(), "a context returned twice");
                prop_assert_eq!(&data[4..], b"base:allocation");
                context = Some(u32::from_be_bytes(data[0..4].try_into().unwrap()));
            }
            REP_INFO => {}
            _ => return Ok((context, reply_type)),
        }
    }
}

/// Runs `options` then `GO` through negotiation and checks every answer.
fn check_negotiation(options: &[Opt]) -> Result<(), TestCaseError> {
    let mut input = (CLIENT_FIXED_NEWSTYLE | CLIENT_NO_ZEROES)
        .to_be_bytes()
        .to_vec();
    let mut structured = false;
    let mut sent = Vec::new();
    for opt in options {
        let (option, data, oracle) = encode(opt, structured);
        if matches!(opt, Opt::Structured { with_data: false }) {
            structured = true;
        }
        input.extend_from_slice(&OPTION_MAGIC.to_be_bytes());
        input.extend_from_slice(&option.to_be_bytes());
        input.extend_from_slice(&(data.len() as u32).to_be_bytes());
        input.extend_from_slice(&data);
        sent.push((option, oracle));
    }
    input.extend_from_slice(&OPTION_MAGIC.to_be_bytes());
    input.extend_from_slice(&OPT_GO.to_be_bytes());
    input.extend_from_slice(&6u32.to_be_bytes());
    input.extend_from_slice(&[0; 6]);
    let mut stream = Duplex {
        input: Cursor::new(input),
        output: Vec::new(),
    };
    let outcome = negotiate(&mut stream, &export()).unwrap();
    let Outcome::Transmission(negotiated) = outcome else {
        return Err(TestCaseError::fail(format!(
            "negotiation ended: {outcome:?}"
        )));
    };
    let mut replies = Replies {
        bytes: &stream.output,
        at: 18,
    };
    let mut selected = None;
    for (option, oracle) in sent {
        let (context, final_type) = replies_to(&mut replies, option)?;
        prop_assert!(final_type == REP_ACK || final_type & (1 << 31) != 0);
        if let Some(expected) = oracle {
            prop_assert_eq!(
                (context.is_some(), final_type),
                expected,
                "option {}",
                option
            );
        }
        match option {
            OPT_SET_META_CONTEXT => selected = context.filter(|_| final_type == REP_ACK),
            OPT_LIST_META_CONTEXT => prop_assert!(context.is_none_or(|id| id == 0)),
            _ => {}
        }
    }
    let (_, go_answer) = replies_to(&mut replies, OPT_GO)?;
    prop_assert_eq!(go_answer, REP_ACK);
    prop_assert_eq!(replies.at, stream.output.len(), "bytes after GO's answer");
    prop_assert_eq!(negotiated.structured_replies, structured);
    prop_assert_eq!(
        negotiated.base_allocation,
        selected,
        "selection as answered"
    );
    let df = negotiated.transmission_flags & FLAG_SEND_DF != 0;
    prop_assert_eq!(df, structured);
    Ok(())
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 400, ..ProptestConfig::default() })]

    /// Hostile option sequences: every option gets its replies and exactly one final
    /// reply, in order, as the protocol calls for when the data is well formed;
    /// `GO` still works after them; the context in force is the one the last
    /// `SET_META_CONTEXT` answered, with the same ID.
    #[test]
    fn meta_context_options_never_desync(options in proptest::collection::vec(hostile_option(), 0..12)) {
        check_negotiation(&options)?;
    }
}
