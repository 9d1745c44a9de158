//! The applications built on programs, on a fixed-service device: a copy
//! under FFS's cluster commit, a write larger than the cache read back,
//! and Postmark's steps.

mod common;

use spinstack_fs::cache::{PageCache, Replacement};
use spinstack_fs::flush::WritePolicy;
use spinstack_fs::postmark::{postmark, MetadataLayout, PostmarkConfig};
use spinstack_fs::program::{FileHandle, Program, ProgramSetup, Step};
use spinstack_fs::readahead::Policy;
use spinstack_fs::scan::ReadCost;
use spinstack_fs::{Allocator, AllocatorConfig, BlockNumber};
use spinstack_sim::driver::run;
use spinstack_sim::engine::{Engine, EngineOptions};
use spinstack_sim::fake::FixedServiceDevice;
use spinstack_sim::request::Operation;
use spinstack_sim::units::Nanoseconds;
use spinstack_trackmap::TrackMap;

fn setup(
    map: &TrackMap,
    config: AllocatorConfig,
    cache_pages: u64,
    writeback: WritePolicy,
) -> (Engine<FixedServiceDevice>, ProgramSetup<'_>) {
    let mut engine = Engine::new(EngineOptions::default());
    let device = engine.add_device(FixedServiceDevice::new(
        map.capacity(),
        Nanoseconds::from_us(400),
        16,
    ));
    let block_bytes = config.block_size.bytes();
    let setup = ProgramSetup {
        device,
        map,
        allocator: Allocator::new(map, config).unwrap(),
        cache: PageCache::new(cache_pages * block_bytes, block_bytes, Replacement::Lru).unwrap(),
        writeback,
        read_ahead: Policy::ffs_unmodified(),
        cost: ReadCost::pentium3_buffered(),
    };
    (engine, setup)
}

// Proves a copy under FFS's cluster commit writes whole clusters as soon as
// they are complete, interleaved with the source's reads (two streams), and
// leaves the destination on disk page for page.
#[test]
fn a_copy_commits_whole_clusters_between_its_reads() {
    let map = common::map_of(&[64; 400]);
    let config = common::small(2000, None);
    let (mut engine, mut setup) = setup(&map, config, 64, WritePolicy::freebsd_ffs(8));
    let source = setup.allocator.create(0).unwrap();
    setup.allocator.allocate(source, 96).unwrap();
    let (from, to) = (FileHandle(0), FileHandle(1));
    let mut steps = vec![Step::Create { file: to, group: 0 }];
    for k in 0..24 {
        steps.push(Step::Read {
            file: from,
            first: 4 * k,
            pages: 4,
        });
        steps.push(Step::Write {
            file: to,
            first: 4 * k,
            pages: 4,
        });
    }
    let mut program = Program::new(setup, steps).with_existing(from, source);
    run(&mut engine, &mut program).unwrap();
    let requests = &program.report().requests;
    let writes: Vec<_> = requests
        .iter()
        .filter(|r| r.operation == Operation::Write)
        .collect();
    assert_eq!(writes.len(), 12, "96 pages in clusters of 8");
    assert!(writes.iter().all(|w| w.sectors.0 == 8 * 4));
    let first_write = requests
        .iter()
        .position(|r| r.operation == Operation::Write)
        .unwrap();
    let reads_after = requests[first_write..]
        .iter()
        .filter(|r| r.operation == Operation::Read)
        .count();
    assert!(reads_after > 0, "the reads go on between the writes");
    assert_eq!(
        spinstack_fs::program::on_disk_in_place(&program, to),
        Some(true)
    );
}

// Proves a file four times the cache, written and then read back, is read
// from the disk (its pages were evicted) and every page read is the one
// written to its block; the cache stays within its bound throughout.
#[test]
fn a_file_larger_than_the_cache_reads_back_what_was_written() {
    let map = common::map_of(&[64; 400]);
    let config = common::small_policies(2000)[2].1; // ext2-like
    let (mut engine, setup) = setup(&map, config, 16, WritePolicy::linux_2_6_16());
    let file = FileHandle(0);
    let mut steps = vec![Step::Create { file, group: 0 }];
    steps.extend((0..32).map(|k| Step::Write {
        file,
        first: 2 * k,
        pages: 2,
    }));
    steps.push(Step::Close { file });
    steps.push(Step::Sync);
    steps.extend((0..64).map(|first| Step::Read {
        file,
        first,
        pages: 1,
    }));
    let mut program = Program::new(setup, steps);
    run(&mut engine, &mut program).unwrap();
    let report = program.report();
    assert!(report.pages_read >= 48, "read {} pages", report.pages_read);
    assert_eq!(report.misread_pages, 0);
    assert!(report.most_cached_pages <= 16);
    assert!(report.throttled > Nanoseconds::ZERO, "the writer waited");
}

// Proves Postmark's steps follow its defaults: 500 files created first, 500
// transactions each making one create or delete, every file deleted at the
// end, two synchronous metadata writes per create and per delete; and that
// a run frees every block it allocated.
#[test]
fn postmark_creates_transacts_and_deletes_everything() {
    let layout = MetadataLayout {
        directory_block: BlockNumber(200),
        inode_table: BlockNumber(2),
        inodes_per_block: 64,
        group: 0,
        block_bytes: 8192,
    };
    let run_steps = postmark(PostmarkConfig::v1_11(), layout);
    let count = |f: &dyn Fn(&Step) -> bool| run_steps.steps.iter().filter(|s| f(s)).count();
    let creates = count(&|s| matches!(s, Step::Create { .. }));
    let deletes = count(&|s| matches!(s, Step::Delete { .. }));
    let metadata = count(&|s| matches!(s, Step::MetadataWrite { .. }));
    assert_eq!(creates, run_steps.files_created);
    assert_eq!(deletes, creates);
    assert_eq!(metadata, 2 * (creates + deletes));
    assert_eq!(count(&|s| matches!(s, Step::Mark)), 3);
    let marks: Vec<usize> = run_steps
        .steps
        .iter()
        .enumerate()
        .filter(|(_, s)| matches!(s, Step::Mark))
        .map(|(k, _)| k)
        .collect();
    let phase = &run_steps.steps[marks[0]..marks[1]];
    let changes = phase
        .iter()
        .filter(|s| matches!(s, Step::Create { .. } | Step::Delete { .. }))
        .count();
    assert_eq!(changes, 500, "one create or delete per transaction");
    assert_eq!(
        run_steps.steps[..marks[0]]
            .iter()
            .filter(|s| matches!(s, Step::Create { .. }))
            .count(),
        500
    );

    let map = common::map_of(&[64; 4000]);
    let config = AllocatorConfig {
        block_size: spinstack_fs::BlockSize::from_bytes(8192).unwrap(),
        ..common::small(4000, None)
    };
    let (mut engine, setup) = setup(&map, config, 4096, WritePolicy::freebsd_ffs(16));
    let free_before = setup.allocator.free_blocks();
    let mut program = Program::new(setup, run_steps.steps);
    run(&mut engine, &mut program).unwrap();
    assert!(program.is_done());
    assert_eq!(program.allocator().free_blocks(), free_before);
    assert_eq!(program.report().marks.len(), 3);
}

// Proves bad steps stop a program with an error naming the step, never a
// panic: a write leaving a hole, a read past the end, a file never created.
#[test]
fn bad_steps_are_errors_naming_the_step() {
    let map = common::map_of(&[64; 100]);
    let config = common::small(2000, None);
    let file = FileHandle(0);
    let cases = [
        (
            vec![
                Step::Create { file, group: 0 },
                Step::Write {
                    file,
                    first: 3,
                    pages: 1,
                },
            ],
            "step 1",
        ),
        (
            vec![
                Step::Create { file, group: 0 },
                Step::Write {
                    file,
                    first: 0,
                    pages: 2,
                },
                Step::Read {
                    file,
                    first: 1,
                    pages: 2,
                },
            ],
            "step 2",
        ),
        (
            vec![Step::Close {
                file: FileHandle(7),
            }],
            "step 0",
        ),
    ];
    for (steps, step) in cases {
        let (mut engine, setup) = setup(&map, config, 32, WritePolicy::linux_2_6_16());
        let mut program = Program::new(setup, steps);
        let error = run(&mut engine, &mut program).unwrap_err().to_string();
        assert!(error.contains(step), "{error}");
    }
}
