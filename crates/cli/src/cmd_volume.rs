//! `spinstack volume`: create and maintain persistent arrays (a directory of member
//! files, see `spinstack_array`). Every command except `create` first asks the
//! server holding the array (its control socket); when none listens, it opens the
//! array itself ("at rest").

use anyhow::{bail, Context};
use clap::Subcommand;
use spinstack_array::control::{self, ControlRequest};
use spinstack_array::{
    Array, ArraySpec, AssemblyReport, BufferSpec, Level, TrackUnits, WritePolicy,
};
use spinstack_sim::units::Sectors;
use std::path::{Path, PathBuf};

#[derive(clap::Args)]
pub struct Args {
    #[command(subcommand)]
    command: VolumeCommand,
}

#[derive(Subcommand)]
enum VolumeCommand {
    /// Create an array in DIR (one file per member).
    Create {
        dir: PathBuf,
        /// single | raid0 | raid1 | raid10 | raid5 | raid5-track-aligned
        #[arg(long)]
        level: String,
        #[arg(long)]
        members: u32,
        /// Data size of each member, e.g. 64MiB.
        #[arg(long)]
        member_size: String,
        /// Chunk of raid0 / raid10 / raid5 (default 64KiB).
        #[arg(long)]
        chunk: Option<String>,
        /// Catalog drive (or .parv / .toml path), optionally with its host link
        /// (atlas10k@80MB/s): once for every member, or once per member.
        #[arg(long = "disk")]
        disks: Vec<String>,
        /// DMA-aligned buffer over the volume: BLOCK*BLOCKS, e.g. 128KiB*64.
        #[arg(long)]
        buffer: Option<String>,
        /// write-back or write-through (with --buffer).
        #[arg(long, default_value = "write-back", requires = "buffer")]
        buffer_policy: String,
        /// raid5-track-aligned: whole-track | smallest-track | largest-track.
        #[arg(long)]
        track_units: Option<String>,
    },
    /// Print the array's state (read-only at rest: nothing is resynced or written).
    Status {
        dir: PathBuf,
        #[arg(long)]
        json: bool,
    },
    /// Assemble an array that cannot start without members whose files are behind
    /// the others (old copies put back, or updates they missed), accepting their
    /// possibly stale data as md's `--assemble --force` does; then close it cleanly.
    /// Members the array survives without are still failed.
    ForceAssemble { dir: PathBuf },
    /// Mark a member failed.
    Fail {
        dir: PathBuf,
        #[arg(long)]
        member: u32,
    },
    /// Rebuild a failed member onto a fresh file (at rest: to completion).
    Rebuild {
        dir: PathBuf,
        #[arg(long)]
        member: u32,
    },
    /// The bad-block list for `mke2fs -l`: the file-system blocks that straddle a
    /// boundary of the volume's logical track map (single drive or track-aligned
    /// RAID-5). Works on a served volume (reads the superblocks only).
    Badblocks {
        dir: PathBuf,
        /// File-system block size in bytes.
        #[arg(long, default_value_t = 4096)]
        block_size: u64,
        /// Write the list here instead of standard output.
        #[arg(long)]
        out: Option<PathBuf>,
    },
    /// Compare parity or copies; with --repair, rewrite what disagrees.
    Scrub {
        dir: PathBuf,
        #[arg(long)]
        repair: bool,
        #[arg(long)]
        json: bool,
    },
}

fn size(text: &str, what: &str) -> anyhow::Result<Sectors> {
    spinstack_volume::config::parse_size(&toml::Value::String(text.to_string()))
        .map_err(|problem| anyhow::anyhow!("{what} {text:?}: {problem}"))
}

fn level(text: &str) -> anyhow::Result<Level> {
    let levels = [
        Level::Single,
        Level::Raid0,
        Level::Raid1,
        Level::Raid10,
        Level::Raid5,
        Level::Raid5TrackAligned,
    ];
    levels.into_iter().find(|l| l.name() == text).with_context(|| {
        format!("unknown level {text:?}; use single, raid0, raid1, raid10, raid5 or raid5-track-aligned")
    })
}

fn buffer(text: &str, policy: &str) -> anyhow::Result<BufferSpec> {
    let (block, blocks) = text
        .split_once('*')
        .with_context(|| format!("--buffer {text:?}: expected BLOCK*BLOCKS, e.g. 128KiB*64"))?;
    let blocks: u32 = blocks
        .trim()
        .parse()
        .with_context(|| format!("--buffer {text:?}: {blocks:?} is not a block count"))?;
    let policy = match policy {
        "write-back" => WritePolicy::WriteBack,
        "write-through" => WritePolicy::WriteThrough,
        other => bail!("--buffer-policy {other:?}: use write-back or write-through"),
    };
    Ok(BufferSpec {
        block: size(block.trim(), "--buffer block")?,
        blocks,
        policy,
    })
}

fn track_units(text: &str) -> anyhow::Result<TrackUnits> {
    Ok(match text {
        "whole-track" => TrackUnits::WholeTrack,
        "smallest-track" => TrackUnits::SmallestTrack,
        "largest-track" => TrackUnits::LargestTrack,
        other => bail!("--track-units {other:?}: use whole-track, smallest-track or largest-track"),
    })
}

pub fn run(args: Args) -> anyhow::Result<()> {
    match args.command {
        VolumeCommand::Create {
            dir,
            level: lvl,
            members,
            member_size,
            chunk,
            disks,
            buffer: buf,
            buffer_policy,
            track_units: units,
        } => {
            let spec = ArraySpec {
                level: level(&lvl)?,
                members,
                member_size: size(&member_size, "--member-size")?,
                chunk: chunk.map(|c| size(&c, "--chunk")).transpose()?,
                disks,
                buffer: buf.map(|b| buffer(&b, &buffer_policy)).transpose()?,
                track_units: units.map(|u| track_units(&u)).transpose()?,
            };
            let array = Array::create(&dir, &spec)?;
            // A member's tail shorter than a chunk holds no data: say so.
            if let Some(chunk) = array.spec().chunk {
                let unused = Sectors(array.spec().member_size.0 % chunk.0);
                if unused.0 > 0 {
                    eprintln!(
                        "note: the last {} bytes of each member are unused (member size is \
                         not a multiple of the {}-byte chunk)",
                        unused.bytes(),
                        chunk.bytes()
                    );
                }
            }
            let status = array.status();
            array.close()?;
            println!(
                "created {} array of {} members in {}: {} bytes, volume id {}",
                status.level.name(),
                status.members,
                dir.display(),
                status.capacity_bytes,
                status.volume_id
            );
            Ok(())
        }
        VolumeCommand::Status { dir, json } => {
            // At rest the superblocks are read, not assembled: a status never resyncs,
            // marks the array in use or spends a generation.
            let value = match control::send(&dir, &ControlRequest::Status)? {
                Some(value) => value,
                None => {
                    let inspection = spinstack_array::inspect(&dir)?;
                    print_assembly_notes(&inspection.report);
                    if !inspection.clean {
                        eprintln!(
                            "note: not closed cleanly: the next open resyncs its dirty regions"
                        );
                    }
                    let mut value = serde_json::to_value(&inspection.status)?;
                    value["clean"] = serde_json::Value::Bool(inspection.clean);
                    value
                }
            };
            print_value(
                &value,
                json,
                &[
                    "state",
                    "failed",
                    "rebuilding",
                    "rebuild_progress",
                    "corrected_read_sectors",
                    "level",
                    "members",
                    "disks",
                    "capacity_bytes",
                    "generation",
                    "volume_id",
                    "clean",
                ],
            );
            Ok(())
        }
        VolumeCommand::ForceAssemble { dir } => {
            let (array, report) = Array::open_forced(&dir)?;
            print_assembly_notes(&report);
            let status = array.status();
            array.close()?;
            if report.accepted_behind.is_empty() {
                println!(
                    "{}: assembled ({}); no member needed forcing",
                    dir.display(),
                    status.state
                );
            } else {
                println!(
                    "{}: assembled ({}), accepting members {:?} behind the others: their \
                     data may be stale; `volume scrub` compares parity and copies",
                    dir.display(),
                    status.state,
                    report.accepted_behind
                );
            }
            Ok(())
        }
        VolumeCommand::Fail { dir, member } => {
            served_or_at_rest(&dir, &ControlRequest::Fail { member }, |array| {
                array.fail_member(member)?;
                Ok(serde_json::to_value(array.status())?)
            })?;
            // True whether this call failed it or it already was (failing is idempotent).
            println!("member {member} of {} is failed", dir.display());
            Ok(())
        }
        VolumeCommand::Rebuild { dir, member } => {
            let value = served_or_at_rest(&dir, &ControlRequest::Rebuild { member }, |array| {
                rebuild_at_rest(array, member)
            })?;
            // At rest the rebuild has run to the end; in a server it has started and
            // goes on in the background (`volume status` follows it).
            let state = value["state"].as_str().unwrap_or("unknown");
            println!("member {member} of {}: {state}", dir.display());
            Ok(())
        }
        VolumeCommand::Badblocks {
            dir,
            block_size,
            out,
        } => {
            let spec = spinstack_array::read_spec(&dir)?;
            let map = spinstack_array::tracks::logical_track_map(&dir, &spec)?;
            let list = spinstack_extract::export::bad_blocks_list(&map, block_size)
                .map_err(|problem| anyhow::anyhow!("--block-size {block_size}: {problem}"))?;
            match out {
                Some(path) => std::fs::write(&path, &list)
                    .with_context(|| format!("writing {}", path.display()))?,
                None => print!("{list}"),
            }
            Ok(())
        }
        VolumeCommand::Scrub { dir, repair, json } => {
            let value = served_or_at_rest(&dir, &ControlRequest::Scrub { repair }, |array| {
                Ok(serde_json::to_value(array.scrub(repair)?)?)
            })?;
            print_value(
                &value,
                json,
                &[
                    "mismatches",
                    "repaired",
                    "corrected_read_sectors",
                    "checked",
                    "skipped",
                ],
            );
            Ok(())
        }
    }
}

/// Asks the server of `dir`; if none listens, opens the array, runs `at_rest` and
/// closes it cleanly.
fn served_or_at_rest(
    dir: &Path,
    request: &ControlRequest,
    at_rest: impl FnOnce(&mut Array) -> anyhow::Result<serde_json::Value>,
) -> anyhow::Result<serde_json::Value> {
    if let Some(value) = control::send(dir, request)? {
        return Ok(value);
    }
    let (mut array, report) = Array::open(dir)?;
    print_assembly_notes(&report);
    let value = at_rest(&mut array);
    array.close()?;
    value
}

pub(crate) fn print_assembly_notes(report: &AssemblyReport) {
    let lists = [
        ("missing members", &report.missing),
        ("stale members (treated as failed)", &report.stale),
    ];
    for (what, members) in lists {
        if !members.is_empty() {
            eprintln!("note: {what}: {members:?}");
        }
    }
    if let Some(why) = &report.accepted_behind_why {
        eprintln!("note: {why}");
    }
    let notes = report
        .unusable
        .iter()
        .chain(&report.set_aside)
        .chain(&report.unreadable_slots);
    for note in notes {
        eprintln!("note: {}", note.note);
    }
    for name in &report.odd_names {
        eprintln!(
            "warning: {name} looks like a member file but is not named member-N.img \
             (N in plain decimal): ignored"
        );
    }
    if report.dirty_regions > 0 {
        eprintln!(
            "note: not closed cleanly: resynced {} dirty regions ({} units)",
            report.dirty_regions, report.units_resynced
        );
    }
    if !report.unverified_stripes.is_empty() {
        eprintln!(
            "warning: {} dirty stripes of a degraded RAID-5 could not be verified",
            report.unverified_stripes.len()
        );
    }
    if let Some(resumed) = &report.resumed_rebuild {
        eprintln!(
            "note: resuming the rebuild of member {} at unit {}",
            resumed.member, resumed.cursor
        );
    }
}

/// Starts (or resumes) the rebuild of `member` and runs it to the end with a
/// progress bar.
fn rebuild_at_rest(array: &mut Array, member: u32) -> anyhow::Result<serde_json::Value> {
    let status = array.status();
    if status.rebuilding != Some(member) {
        array.start_rebuild(member)?;
    }
    let bar = indicatif::ProgressBar::new(1000);
    bar.set_style(
        indicatif::ProgressStyle::with_template("rebuild member {msg} [{bar:40}] {percent}% {eta}")
            .expect("a valid template"),
    );
    bar.set_message(member.to_string());
    loop {
        let step = array.rebuild_step(256)?;
        bar.set_position((step.progress * 1000.0) as u64);
        if step.done {
            break;
        }
    }
    bar.finish_and_clear();
    Ok(serde_json::to_value(array.status())?)
}

/// JSON as is, or `key: value` lines of the named keys.
fn print_value(value: &serde_json::Value, json: bool, keys: &[&str]) {
    if json {
        println!("{value}");
        return;
    }
    for key in keys {
        if let Some(field) = value.get(key) {
            println!("{key}: {field}");
        }
    }
}
