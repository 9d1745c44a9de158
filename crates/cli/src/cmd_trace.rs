//! `spinstack trace`: look at a block trace (`info`) and turn it into fio's iolog
//! (`convert`). The trace options (`--format`, `--blkparse-action`, `--device`)
//! are shared with `spinstack simulate --trace`.

use anyhow::Context;
use serde::Serialize;
use spinstack_sim::request::Operation;
use spinstack_trace::fio::{self, IologVersion, IologWriter};
use spinstack_trace::{
    BlkparseAction, ReaderOptions, TraceFormat, TraceReader, TraceRecord, WriteError,
};
use std::collections::BTreeSet;
use std::path::PathBuf;

#[derive(clap::Args, Debug)]
pub struct Args {
    #[command(subcommand)]
    command: Command,
}

#[derive(clap::Subcommand, Debug)]
enum Command {
    /// Count a trace's records: read/write mix, request sizes, address span, duration.
    Info(InfoArgs),
    /// Write a trace as fio's iolog, for `fio --read_iolog`.
    Convert(ConvertArgs),
}

/// A trace format on the command line.
#[derive(clap::ValueEnum, Clone, Copy, Debug)]
pub(crate) enum FormatArg {
    /// MSR Cambridge CSV: Timestamp,Hostname,DiskNumber,Type,Offset,Size,ResponseTime.
    Msr,
    /// SPC / UMass: ASU,LBA,Size,Opcode,Timestamp.
    Spc,
    /// blkparse's default text output.
    Blkparse,
    /// DiskSim ASCII: arrival_ms devno blkno size_blocks flags.
    Disksim,
}

/// Which blkparse event stands for a request.
#[derive(clap::ValueEnum, Clone, Copy, Debug)]
pub(crate) enum ActionArg {
    /// Q: queued.
    Q,
    /// D: issued to the driver.
    D,
    /// C: completed.
    C,
}

/// The options that choose how a trace is read (shared with `simulate --trace`).
#[derive(clap::Args, Debug, Clone)]
pub(crate) struct TraceInput {
    /// The trace's format.
    #[arg(long, value_enum)]
    pub format: FormatArg,
    /// For blkparse: which event is the request (issue D, queue Q, complete C).
    #[arg(long, value_enum, default_value = "d")]
    pub blkparse_action: ActionArg,
    /// Keep only this device's records: a number (MSR DiskNumber, SPC ASU, DiskSim
    /// devno) or MAJOR,MINOR for blkparse.
    #[arg(long, value_parser = parse_device)]
    pub device: Option<u32>,
}

impl TraceInput {
    pub(crate) fn format(&self) -> TraceFormat {
        match self.format {
            FormatArg::Msr => TraceFormat::Msr,
            FormatArg::Spc => TraceFormat::Spc,
            FormatArg::Blkparse => TraceFormat::Blkparse,
            FormatArg::Disksim => TraceFormat::Disksim,
        }
    }

    pub(crate) fn open(
        &self,
        path: &std::path::Path,
    ) -> anyhow::Result<TraceReader<std::io::BufReader<std::fs::File>>> {
        let blkparse_action = match self.blkparse_action {
            ActionArg::Q => BlkparseAction::Queue,
            ActionArg::D => BlkparseAction::Issue,
            ActionArg::C => BlkparseAction::Complete,
        };
        Ok(TraceReader::open(
            path,
            self.format(),
            ReaderOptions { blkparse_action },
        )?)
    }
}

/// Why a trace gave a command no requests: it has none, or all are of other devices.
pub(crate) fn why_no_records(skipped_other_devices: u64) -> String {
    match skipped_other_devices {
        0 => "the trace holds no records".to_string(),
        skipped => format!("its {skipped} records are all of other devices"),
    }
}

/// A spinner on standard error counting records (hidden when stderr is not a
/// terminal): traces run to millions of lines.
pub(crate) fn record_progress(label: &str) -> indicatif::ProgressBar {
    let progress = indicatif::ProgressBar::new_spinner();
    progress.set_style(
        indicatif::ProgressStyle::with_template("{spinner} {msg}: {pos} records ({per_sec})")
            .expect("a fixed template"),
    );
    progress.set_message(label.to_string());
    progress
}

/// Records between two progress updates (a power of two).
const PROGRESS_EVERY: u64 = 1 << 14;

/// Whether the `count`th record updates the progress spinner.
pub(crate) fn progress_due(count: u64) -> bool {
    count & (PROGRESS_EVERY - 1) == 0
}

/// A device number, or MAJOR,MINOR (Linux's `major << 20 | minor`).
pub(crate) fn parse_device(text: &str) -> Result<u32, String> {
    let number = |word: &str, limit: u32| {
        word.trim()
            .parse::<u32>()
            .ok()
            .filter(|&value| value < limit)
            .ok_or_else(|| format!("expected a device number or MAJOR,MINOR, found {text:?}"))
    };
    match text.split_once(',') {
        Some((major, minor)) => Ok(number(major, 1 << 12)? << 20 | number(minor, 1 << 20)?),
        None => number(text, u32::MAX),
    }
}

/// A device number as the trace writes it (`8,16` for blkparse).
pub(crate) fn device_name(format: TraceFormat, device: u32) -> String {
    match format {
        TraceFormat::Blkparse => format!("{},{}", device >> 20, device & ((1 << 20) - 1)),
        _ => device.to_string(),
    }
}

#[derive(clap::Args, Debug)]
struct InfoArgs {
    file: PathBuf,
    #[command(flatten)]
    input: TraceInput,
    /// Print one JSON object instead of text.
    #[arg(long)]
    json: bool,
}

#[derive(clap::Args, Debug)]
struct ConvertArgs {
    file: PathBuf,
    #[command(flatten)]
    input: TraceInput,
    /// Output format (fio's iolog is the one there is).
    #[arg(long, value_enum, default_value = "fio-iolog")]
    to: ConvertTo,
    /// Where to write; standard output when absent.
    #[arg(long)]
    out: Option<PathBuf>,
    /// The file or device fio replays on, as written in the iolog.
    #[arg(long, default_value = "/dev/sdX")]
    device_file: String,
    /// iolog version: 2 (no times: fio issues as fast as its queue allows) or 3
    /// (every line stamped, microseconds since the start, so fio keeps the
    /// trace's timing).
    #[arg(long, default_value_t = 2, value_parser = clap::value_parser!(u32).range(2..=3))]
    iolog_version: u32,
    /// Fit the trace to a target of this size (e.g. an NBD export: `128MiB`): an
    /// address past it is taken modulo the size, as `simulate --wrap` does.
    #[arg(long)]
    wrap_to: Option<String>,
}

#[derive(clap::ValueEnum, Clone, Copy, Debug)]
enum ConvertTo {
    FioIolog,
}

pub fn run(args: Args) -> anyhow::Result<()> {
    match args.command {
        Command::Info(args) => info(args),
        Command::Convert(args) => convert(args),
    }
}

/// What `trace info` prints.
#[derive(Serialize, Debug, Default)]
struct Info {
    file: String,
    format: &'static str,
    records: u64,
    reads: u64,
    writes: u64,
    trims: u64,
    flushes: u64,
    /// Fraction of reads among reads and writes.
    read_fraction: f64,
    sectors_min: u64,
    sectors_mean: f64,
    sectors_max: u64,
    sectors_total: u64,
    /// Lowest LBN touched and one past the highest.
    lbn_first: u64,
    lbn_end: u64,
    first_arrival_seconds: f64,
    duration_seconds: f64,
    devices: Vec<String>,
    /// Records of other devices when `--device` is given.
    skipped_other_devices: u64,
}

fn info(args: InfoArgs) -> anyhow::Result<()> {
    let mut info = Info {
        file: args.file.display().to_string(),
        format: args.input.format().name(),
        sectors_min: u64::MAX,
        lbn_first: u64::MAX,
        ..Info::default()
    };
    let mut devices = BTreeSet::new();
    let (mut first, mut last) = (None, 0);
    let progress = record_progress("reading");
    for (index, record) in args.input.open(&args.file)?.enumerate() {
        let record = record?;
        if progress_due(index as u64) {
            progress.set_position(index as u64);
        }
        if args
            .input
            .device
            .is_some_and(|device| device != record.device)
        {
            info.skipped_other_devices += 1;
            continue;
        }
        devices.insert(record.device);
        first.get_or_insert(record.arrival.0);
        last = record.arrival.0;
        count(&mut info, &record);
    }
    progress.finish_and_clear();
    let data = info.reads + info.writes + info.trims;
    info.read_fraction = info.reads as f64 / ((info.reads + info.writes) as f64).max(1.0);
    info.sectors_mean = info.sectors_total as f64 / (data as f64).max(1.0);
    if data == 0 {
        (info.sectors_min, info.lbn_first) = (0, 0);
    }
    let first = first.unwrap_or(0);
    info.first_arrival_seconds = first as f64 / 1e9;
    info.duration_seconds = (last - first) as f64 / 1e9;
    let format = args.input.format();
    info.devices = devices.iter().map(|&d| device_name(format, d)).collect();
    if args.json {
        println!("{}", serde_json::to_string(&info)?);
        return Ok(());
    }
    println!("{} ({}): {} records", info.file, info.format, info.records);
    if info.records == 0 {
        // No sizes, span or duration to speak of.
        if info.skipped_other_devices > 0 {
            println!(
                "  skipped {} records of other devices",
                info.skipped_other_devices
            );
        }
        return Ok(());
    }
    println!(
        "  reads {}  writes {}  trims {}  flushes {}  (read fraction {:.3})",
        info.reads, info.writes, info.trims, info.flushes, info.read_fraction
    );
    println!(
        "  request sectors: min {}  mean {:.1}  max {}  total {} ({:.3} GiB)",
        info.sectors_min,
        info.sectors_mean,
        info.sectors_max,
        info.sectors_total,
        info.sectors_total as f64 * 512.0 / (1u64 << 30) as f64
    );
    println!("  LBN span: {} .. {}", info.lbn_first, info.lbn_end);
    println!(
        "  time: first arrival {:.6} s, duration {:.6} s",
        info.first_arrival_seconds, info.duration_seconds
    );
    println!("  devices: {}", info.devices.join(" "));
    if info.skipped_other_devices > 0 {
        println!(
            "  skipped {} records of other devices",
            info.skipped_other_devices
        );
    }
    Ok(())
}

fn count(info: &mut Info, record: &TraceRecord) {
    info.records += 1;
    match record.operation {
        Operation::Read => info.reads += 1,
        Operation::Write => info.writes += 1,
        Operation::Trim => info.trims += 1,
        Operation::Flush => {
            info.flushes += 1;
            return;
        }
    }
    let sectors = record.sectors.0;
    info.sectors_min = info.sectors_min.min(sectors);
    info.sectors_max = info.sectors_max.max(sectors);
    info.sectors_total = info.sectors_total.saturating_add(sectors);
    info.lbn_first = info.lbn_first.min(record.lbn.0);
    info.lbn_end = info.lbn_end.max(record.lbn.0 + sectors);
}

/// What a conversion wrote and passed over.
struct Converted {
    written: u64,
    skipped: u64,
    wrapped: u64,
    devices: BTreeSet<u32>,
}

/// The file `--out` is written to first, beside the target so the rename stays on
/// one file system: renamed over the target only once the whole trace converted,
/// so a failure leaves the target as it was (never an iolog of the trace's first
/// lines that fio would replay as if whole).
fn partial_path(out: &std::path::Path) -> PathBuf {
    let name = out
        .file_name()
        .map_or("iolog".into(), |name| name.to_string_lossy());
    out.with_file_name(format!(".{name}.partial-{}", std::process::id()))
}

/// Where `--out` is written. A regular file (or a new one) is written to
/// `partial` and renamed over `target` once whole; a symlink to one is followed,
/// so the rename replaces the file and keeps the link. Anything else that
/// exists (a device, a FIFO, /dev/stdout) is written in place, `partial` None:
/// renaming a file over it would replace the device node itself (run as root,
/// `--out /dev/null` replaced /dev/null with a regular file).
struct OutFile {
    target: PathBuf,
    partial: Option<PathBuf>,
}

impl OutFile {
    fn for_option(out: &std::path::Path) -> OutFile {
        match std::fs::metadata(out) {
            Ok(metadata) if !metadata.is_file() => OutFile {
                target: out.to_path_buf(),
                partial: None,
            },
            found => {
                let resolved = found.ok().and_then(|_| std::fs::canonicalize(out).ok());
                let target = resolved.unwrap_or_else(|| out.to_path_buf());
                OutFile {
                    partial: Some(partial_path(&target)),
                    target,
                }
            }
        }
    }

    /// Opens what is written first; errors name the option's path as given.
    fn open(&self, option: &std::path::Path) -> anyhow::Result<std::fs::File> {
        match &self.partial {
            Some(partial) => std::fs::File::create(partial).with_context(|| {
                format!(
                    "--out {}: cannot create the file it is written to first, {}",
                    option.display(),
                    partial.display()
                )
            }),
            None => std::fs::OpenOptions::new()
                .write(true)
                .open(&self.target)
                .with_context(|| format!("--out {}: cannot open", option.display())),
        }
    }
}

fn convert(args: ConvertArgs) -> anyhow::Result<()> {
    let ConvertTo::FioIolog = args.to;
    let version = match args.iolog_version {
        2 => IologVersion::V2,
        _ => IologVersion::V3,
    };
    // Checked before the output is created and the trace read: a bad name is a
    // mistake in the option, not in any record of the trace.
    fio::check_file_name(&args.device_file)
        .map_err(|problem| anyhow::anyhow!("--device-file {:?} {problem}", args.device_file))?;
    let out_file = args.out.as_deref().map(OutFile::for_option);
    let out: Box<dyn std::io::Write> = match (&out_file, &args.out) {
        (Some(out_file), Some(option)) => Box::new(std::io::BufWriter::new(out_file.open(option)?)),
        _ => Box::new(std::io::BufWriter::new(std::io::stdout().lock())),
    };
    let converted = write_iolog(&args, out, version);
    let partial = out_file
        .as_ref()
        .and_then(|out_file| out_file.partial.as_ref());
    let converted = match (converted, partial, &out_file) {
        (Ok(converted), Some(partial), Some(out_file)) if converted.written > 0 => {
            let target = &out_file.target;
            std::fs::rename(partial, target).with_context(|| {
                format!("cannot move {} to {}", partial.display(), target.display())
            })?;
            converted
        }
        (result, partial, _) => {
            if let Some(partial) = partial {
                let _ = std::fs::remove_file(partial);
            }
            result?
        }
    };
    let Converted {
        written,
        skipped,
        wrapped,
        devices,
    } = converted;
    if written == 0 {
        // An iolog of no I/Os gives fio nothing to do; no such file is left behind.
        anyhow::bail!(
            "{}: no I/Os to write ({})",
            args.file.display(),
            why_no_records(skipped)
        );
    }
    let target = args
        .out
        .as_ref()
        .map_or("standard output".to_string(), |p| p.display().to_string());
    eprintln!(
        "wrote {written} I/Os as fio iolog version {} for {} to {target}{}",
        version.number(),
        args.device_file,
        if skipped > 0 {
            format!(" (skipped {skipped} records of other devices)")
        } else {
            String::new()
        }
    );
    if wrapped > 0 {
        eprintln!("note: {wrapped} requests taken modulo --wrap-to");
    }
    if devices.len() > 1 {
        eprintln!(
            "note: the trace has {} devices, all written to {}; choose one with --device",
            devices.len(),
            args.device_file
        );
    }
    Ok(())
}

/// Converts the trace into `out`; what it wrote and passed over.
fn write_iolog(
    args: &ConvertArgs,
    out: Box<dyn std::io::Write>,
    version: IologVersion,
) -> anyhow::Result<Converted> {
    let wrap_to = args
        .wrap_to
        .as_deref()
        .map(|text| {
            spinstack_volume::config::parse_size(&toml::Value::String(text.to_string()))
                .map_err(|problem| anyhow::anyhow!("--wrap-to {text:?}: {problem}"))
        })
        .transpose()?;
    let mut wrapped = 0u64;
    // A failed write names where the iolog goes (not the trace line being
    // converted, which is not at fault).
    let out_name = args
        .out
        .as_ref()
        .map_or("standard output".to_string(), |path| {
            format!("--out {}", path.display())
        });
    let write_failed = |error: WriteError| anyhow::anyhow!("{out_name}: {error}");
    let mut writer = IologWriter::new(out, version, &args.device_file)?;
    let mut reader = args.input.open(&args.file)?;
    let (mut skipped, mut devices) = (0u64, BTreeSet::new());
    let progress = record_progress("converting");
    while let Some(record) = reader.next() {
        let record = record?;
        if progress_due(reader.line()) {
            progress.set_position(reader.line());
        }
        if args
            .input
            .device
            .is_some_and(|device| device != record.device)
        {
            skipped += 1;
            continue;
        }
        devices.insert(record.device);
        let mut record = record;
        if let Some(capacity) = wrap_to {
            let placed = record.placed(capacity, true).ok_or_else(|| {
                reader.error_here(format!(
                    "{} sectors do not fit --wrap-to ({} sectors)",
                    record.sectors.0, capacity.0
                ))
            })?;
            wrapped += u64::from(placed != record.lbn);
            record.lbn = placed;
        }
        writer.write(&record).map_err(|error| match error {
            WriteError::Io(_) => write_failed(error),
            WriteError::Unrepresentable { .. } => reader.error_here(error.to_string()).into(),
        })?;
    }
    progress.finish_and_clear();
    let written = writer.written();
    // With nothing written the writer is dropped unopened: no header-only iolog
    // reaches standard output before the error (inputs finding 25).
    if written > 0 {
        writer.finish().map_err(write_failed)?;
    }
    Ok(Converted {
        written,
        skipped,
        wrapped,
        devices,
    })
}
