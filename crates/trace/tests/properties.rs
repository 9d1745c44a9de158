//! Property tests. (1) No reader panics, whatever the bytes: arbitrary bytes,
//! token soup from the formats' alphabets, and random edits of the valid
//! fixtures, for every format. (2) Round trips: records written as text by
//! `write_record` read back identical, for every format. On failure proptest
//! prints the minimal failing input and records its seed in
//! `proptest-regressions/`.

use proptest::prelude::*;
use spinstack_sim::request::Operation;
use spinstack_sim::units::{Lbn, Nanoseconds, Sectors};
use spinstack_testdata::mutation::Mutator;
use spinstack_trace::{
    write_record, BlkparseAction, ReaderOptions, TraceFormat, TraceReader, TraceRecord,
};

/// Case count: `PROPTEST_CASES` when set (for long runs), else `default`.
fn cases(default: u32) -> u32 {
    std::env::var("PROPTEST_CASES")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(default)
}

fn fixtures() -> [(TraceFormat, &'static str); 4] {
    [
        (TraceFormat::Msr, include_str!("fixtures/msr.csv")),
        (TraceFormat::Spc, include_str!("fixtures/spc.csv")),
        (TraceFormat::Blkparse, include_str!("fixtures/blkparse.txt")),
        (TraceFormat::Disksim, include_str!("fixtures/disksim.trace")),
    ]
}

/// Read everything; every outcome is fine except a panic.
fn read_all(bytes: &[u8], format: TraceFormat, action: BlkparseAction) {
    let options = ReaderOptions {
        blkparse_action: action,
    };
    // The reader ends after an error, so taking the records up to it sees them all.
    for record in TraceReader::new(bytes, "fuzz".to_string(), format, options).map_while(Result::ok)
    {
        assert!(record.sectors.0 > 0 || record.operation == Operation::Flush);
        assert!(record.lbn.0.checked_add(record.sectors.0).is_some());
    }
}

const ACTIONS: [BlkparseAction; 3] = [
    BlkparseAction::Queue,
    BlkparseAction::Issue,
    BlkparseAction::Complete,
];

/// Bytes that matter to the parsers, so edits hit field boundaries often.
const MUTATOR: Mutator = Mutator {
    interesting: b",.+ \n\r\t0123456789xFDRWNQC-e\xff\x00",
    span_bytes_max: 32,
    oversized_numbers: true,
};

/// Records each format can hold, times at its resolution (MSR: 100 ns ticks).
fn records(format: TraceFormat) -> impl Strategy<Value = Vec<TraceRecord>> {
    let operation = match format {
        TraceFormat::Blkparse => prop_oneof![
            Just(Operation::Read),
            Just(Operation::Write),
            Just(Operation::Trim),
            Just(Operation::Flush)
        ]
        .boxed(),
        _ => prop_oneof![Just(Operation::Read), Just(Operation::Write)].boxed(),
    };
    let device = match format {
        TraceFormat::Blkparse => (0u32..4096, 0u32..(1 << 20))
            .prop_map(|(major, minor)| major << 20 | minor)
            .boxed(),
        _ => any::<u32>().boxed(),
    };
    let step = match format {
        TraceFormat::Msr => (0u64..1u64 << 30).prop_map(|ticks| ticks * 100).boxed(),
        _ => (0u64..1u64 << 40).boxed(),
    };
    let one = (step, device, operation, 0u64..(1 << 50), 1u64..(1 << 20));
    prop::collection::vec(one, 0..20).prop_map(move |steps| {
        let mut arrival = 0;
        let mut out = Vec::new();
        for (index, (gap, device, operation, lbn, sectors)) in steps.into_iter().enumerate() {
            // MSR's first record is the trace's start.
            arrival += if index == 0 && format == TraceFormat::Msr {
                0
            } else {
                gap
            };
            let (lbn, sectors) = if operation == Operation::Flush {
                (0, 0)
            } else {
                (lbn, sectors)
            };
            out.push(TraceRecord {
                arrival: Nanoseconds(arrival),
                device,
                operation,
                lbn: Lbn(lbn),
                sectors: Sectors(sectors),
            });
        }
        out
    })
}

fn round_trip(format: TraceFormat, records: &[TraceRecord]) {
    let mut text = Vec::new();
    for (index, record) in records.iter().enumerate() {
        write_record(format, record, index as u64, &mut text).unwrap();
    }
    let read: Result<Vec<_>, _> = TraceReader::new(
        &text[..],
        "rt".to_string(),
        format,
        ReaderOptions::default(),
    )
    .collect();
    assert_eq!(read.unwrap(), records, "{}", String::from_utf8_lossy(&text));
}

proptest! {
    #![proptest_config(ProptestConfig { cases: cases(256), ..ProptestConfig::default() })]

    // Arbitrary bytes, every format and blkparse action.
    #[test]
    fn arbitrary_bytes_never_panic(bytes in prop::collection::vec(any::<u8>(), 0..600)) {
        for format in TraceFormat::ALL {
            for action in ACTIONS {
                read_all(&bytes, format, action);
            }
        }
    }

    // Token soup built from the formats' field shapes reaches deep parser states.
    #[test]
    fn token_soup_never_panics(text in "((([0-9]{1,22}|[0-9]{1,3},[0-9]{1,3}|[0-9]+\\.[0-9]{0,12}|Read|Write|[rwRW]|[QDCGIP]|FWS|FN|WS|D|N|\\+|\\[x\\]|0x[0-9a-f]{1,9}|CPU0|Total|-1)[ ,]{1,2}){0,14}\n{1,2}){0,6}") {
        for format in TraceFormat::ALL {
            for action in ACTIONS {
                read_all(text.as_bytes(), format, action);
            }
        }
    }

    // Random edits of each valid fixture.
    #[test]
    fn mutated_fixtures_never_panic(
        edits in prop::collection::vec((any::<u8>(), any::<usize>(), any::<usize>(), any::<u8>()), 1..8),
    ) {
        for (format, text) in fixtures() {
            let damaged = MUTATOR.apply(text.as_bytes().to_vec(), &edits);
            for action in ACTIONS {
                read_all(&damaged, format, action);
            }
        }
    }

    #[test]
    fn msr_round_trip(records in records(TraceFormat::Msr)) { round_trip(TraceFormat::Msr, &records); }
    #[test]
    fn spc_round_trip(records in records(TraceFormat::Spc)) { round_trip(TraceFormat::Spc, &records); }
    #[test]
    fn blkparse_round_trip(records in records(TraceFormat::Blkparse)) { round_trip(TraceFormat::Blkparse, &records); }
    #[test]
    fn disksim_round_trip(records in records(TraceFormat::Disksim)) { round_trip(TraceFormat::Disksim, &records); }
}
