//! DiskSim parameter import: `.parv` → `.diskspecs` → `.model` → `.seek` into a
//! [`DriveSpec`].
//!
//! The `.parv` is parsed with `spinstack_param` (which follows the `source`
//! includes). The drive is the `disksim_disk` type that an `instantiate` statement
//! uses; its `Model` is the `dm_disk` block (layout and mechanics), and the bus
//! directly above the disk instance in the `topology` supplies the host-link block
//! times. Every parameter of the drive's blocks must be one DiskSim knows: an
//! unknown name is an error, as are type mismatches (a float where DiskSim wants an
//! integer) and values spinstack cannot model (unsupported sparing schemes and seek
//! types, non-zero "sneaky" hit flags). Parameters that do not affect timing are
//! accepted and ignored, but a time among them must still be a valid duration.
//! Every value is range-checked where it is read, so an error names the file and
//! line the value was written at (the `.model` or `.seek`, not the `.parv`), and
//! the layout's own checks name the zone's line. `Block count`, which DiskSim
//! overwrites with the capacity the zones give, is compared with that capacity:
//! 7 of DiskSim's 11 validated drives disagree, by up to 18%, so a disagreement
//! within a factor of 2 is a warning ([`DriveSpec::warnings`]) and one beyond it
//! an error.

mod fields;
mod firmware;
mod layout;
mod mechanics;
mod seek;

use crate::spec::{DriveSpec, FirmwareSpec, LayoutSpec, PowerSpec, WARNING_PREFIX};
use fields::{Fields, Schema};
use firmware::BusTimes;
use spinstack_param::{Block, ParamFile, ParseError, Position};
use std::collections::HashMap;
use std::fmt;
use std::path::{Path, PathBuf};

/// An import failure, naming the file, line and parameter.
#[derive(Debug, Clone, PartialEq)]
pub struct ImportError {
    /// The file the problem is in (line 0 when the file itself is the problem).
    pub file: PathBuf,
    pub line: u32,
    /// The DiskSim parameter concerned, when there is one.
    pub parameter: Option<String>,
    /// What is wrong.
    pub message: String,
}

impl ImportError {
    pub fn new(file: &Path, line: u32, parameter: Option<&str>, message: String) -> ImportError {
        ImportError {
            file: file.to_path_buf(),
            line,
            parameter: parameter.map(str::to_string),
            message,
        }
    }

    fn at(pos: &Position, parameter: Option<&str>, message: String) -> ImportError {
        ImportError::new(pos.file(), pos.line, parameter, message)
    }
}

impl fmt::Display for ImportError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}:{}: ", self.file.display(), self.line)?;
        if let Some(p) = &self.parameter {
            write!(f, "parameter \"{p}\": ")?;
        }
        f.write_str(&self.message)
    }
}

impl std::error::Error for ImportError {}

impl From<ParseError> for ImportError {
    fn from(e: ParseError) -> ImportError {
        ImportError {
            file: e.file,
            line: e.line,
            parameter: None,
            message: e.kind.to_string(),
        }
    }
}

const DM_DISK_SCHEMA: Schema = Schema {
    used: &[
        "Number of data surfaces",
        "Number of cylinders",
        "Block count",
        "Mechanical Model",
        "Layout Model",
    ],
    ignored: &[],
};

const BUS_SCHEMA: Schema = Schema {
    used: &["Read block transfer time", "Write block transfer time"],
    ignored: &[
        "type",
        "Arbitration type",
        "Arbitration time",
        "Print stats",
    ],
};

/// Load the drive described by a DiskSim `.parv` file (following its `source` chain).
pub fn load_parv(path: &Path) -> Result<DriveSpec, ImportError> {
    let file = spinstack_param::parse_file(path)?;
    refuse_conflicting_definitions(&file)?;
    let defs = file.definitions();
    let (disk, instance) = find_disk(&file, &defs, path)?;
    let disk_fields = Fields::new(
        disk,
        file.effective_params(&defs, disk),
        &firmware::DISK_SCHEMA,
    )?;
    let model = typed_block(&file, &defs, &disk_fields, "Model", "dm_disk")?;
    let model_fields = Fields::new(model, file.effective_params(&defs, model), &DM_DISK_SCHEMA)?;
    let mech = typed_block(
        &file,
        &defs,
        &model_fields,
        "Mechanical Model",
        "dm_mech_g1",
    )?;
    let lay = typed_block(&file, &defs, &model_fields, "Layout Model", "dm_layout_g1")?;
    let surfaces = positive(&model_fields, "Number of data surfaces")?;
    if surfaces > crate::spec_check::SURFACES_MAX {
        return Err(fields::bad(
            model_fields.need("Number of data surfaces")?,
            format!(
                "{surfaces} is too large: at most 1024 surfaces (a real drive has up to about 20)"
            ),
        ));
    }
    let geometry = layout::Geometry {
        surfaces,
        cylinders: positive(&model_fields, "Number of cylinders")?,
    };
    let mut provenance = vec![format!(
        "imported from DiskSim parameter files: {}",
        file.files
            .iter()
            .map(|f| relative_name(path, f))
            .collect::<Vec<_>>()
            .join(", ")
    )];
    let mech_fields = Fields::new(
        mech,
        file.effective_params(&defs, mech),
        &mechanics::MECH_SCHEMA,
    )?;
    let mechanics = mechanics::mechanics(&mech_fields, &mut provenance)?;
    let layout_fields = Fields::new(
        lay,
        file.effective_params(&defs, lay),
        &layout::LAYOUT_SCHEMA,
    )?;
    let imported = layout::layout(&file, &defs, &layout_fields, geometry)?;
    // The layout's own checks (overlaps, slips and defects against their zone,
    // ...), named at the zone's line, or the layout's when no zone is to blame.
    let built = crate::layout::Layout::new_zoned(&imported.spec).map_err(|problem| {
        let zone = problem.zone.and_then(|i| imported.zone_positions.get(i));
        match (zone, model_fields.get("Layout Model")) {
            (Some(pos), _) => ImportError::at(pos, Some("Zones"), problem.error.to_string()),
            (None, Some(p)) => fields::bad(p, problem.error.to_string()),
            (None, None) => ImportError::at(&model.pos, None, problem.error.to_string()),
        }
    })?;
    block_count(&model_fields, built.capacity().0, &mut provenance)?;
    let layout = imported.spec;
    let bus = bus_times(&file, &defs, instance, &mut provenance)?;
    let mut firmware = firmware::firmware(&file, &defs, &disk_fields, bus)?;
    immediate_reads_as_disksim_runs_them(&mut firmware, &mut provenance);
    let disk_name = disk.name.clone().unwrap_or_default();
    provenance.push(format!(
        "drive: disksim_disk '{disk_name}' ({}:{}), model dm_disk '{}'",
        relative_name(path, disk.pos.file()),
        disk.pos.line,
        model.name.as_deref().unwrap_or("(anonymous)")
    ));
    provenance.push("power: not in DiskSim parameters; generic defaults".into());
    let spec = DriveSpec {
        name: path
            .file_stem()
            .map(|s| s.to_string_lossy().into_owned())
            .unwrap_or_default(),
        description: format!("{disk_name} (DiskSim 4.0 parameter set)"),
        provenance,
        layout: LayoutSpec::Zoned(layout),
        mechanics,
        firmware,
        power: PowerSpec::default(),
    };
    // Every value is checked where it is read, naming its line; this backstop
    // catches a field added later without such a check, naming the field (and the
    // drive's block for a place).
    crate::spec_check::check_times(&spec)
        .and_then(|()| crate::spec_check::check_counts(&spec))
        .map_err(|error| ImportError::at(&disk.pos, None, error.to_string()))?;
    Ok(spec)
}

/// DiskSim's own validated runs do no zero-latency reads on the strength of
/// `Immediate buffer read` alone; only `Read any free blocks` gives them (it
/// restarts every read at the track's first LBN with immediate access,
/// disksim_diskctlr.c `disk_buffer_seekdone`). Evidence, from the one validated
/// drive that sets the flag without read-any-free-blocks (dec_rz26): DiskSim's
/// first responses #1 and #4 (disksim-notes §7) are plain rotational latency to
/// the microsecond, although the head lands inside the arc where a zero-latency
/// read would start early and, stepping LBN by LBN past the track's spare sector,
/// finish one sector (0.193 ms) sooner; and the whole trace replayed without the
/// flag gives a demerit of 0.34046 ms against DiskSim's 0.34058 (WD build) and
/// 0.34037 (4.0), where honouring it gives 0.438. The real drive agrees: its
/// measured response times are matched to DiskSim's figure only without zero
/// latency, as a 1993-era drive would be. The line that keeps DiskSim from the
/// immediate path was not found, so this is recorded as behaviour, not cited as
/// code; catalog drives (not imported) keep the flag's plain meaning.
fn immediate_reads_as_disksim_runs_them(firmware: &mut FirmwareSpec, provenance: &mut Vec<String>) {
    if firmware.immediate_buffer_read && !firmware.cache.read_any_free_blocks {
        firmware.immediate_buffer_read = false;
        provenance.push(
            "Immediate buffer read = 1 without Read any free blocks: not applied, as DiskSim's \
             own validated runs do no zero-latency reads for it (see import.rs)"
                .into(),
        );
    }
}

/// A name defined twice with different contents is refused, naming both
/// places: DiskSim keeps the first definition, so the second one's values would
/// be dropped without a word (two versions of a .diskspecs file `source`d, say).
/// The same definition repeated, as when one file is `source`d twice, is
/// harmless and accepted: DiskSim-format files are often assembled from shared
/// fragments, and the first definition says what the repeat says.
fn refuse_conflicting_definitions(file: &spinstack_param::ParamFile) -> Result<(), ImportError> {
    match file.conflicting_definition() {
        None => Ok(()),
        Some((first, later)) => Err(ImportError::at(
            &later.pos,
            None,
            format!(
                "\"{}\" is defined again, differently from its definition at {}; DiskSim \
                 would use the first and ignore this one: keep one of them",
                later.name.as_deref().unwrap_or_default(),
                first.pos
            ),
        )),
    }
}

/// `file` relative to the directory of the top `.parv`, so provenance does not
/// carry machine-specific paths.
fn relative_name(top: &Path, file: &Path) -> String {
    let dir = top.parent().unwrap_or(Path::new(""));
    file.strip_prefix(dir).unwrap_or(file).display().to_string()
}

fn positive(f: &Fields, name: &str) -> Result<u32, ImportError> {
    let v: u32 = f.count(name)?;
    if v == 0 {
        return Err(fields::bad(f.need(name)?, "must be positive".into()));
    }
    Ok(v)
}

/// How far `Block count` may stray from the capacity the zones give before the
/// file is refused: a factor of 2. DiskSim ignores the count (it overwrites it
/// with the zones' capacity), and 7 of its 11 validated drives state one that
/// disagrees, by up to 18% (hp_c3323a: 1743672 against 2056008); those load with a
/// warning. A count further off means the surfaces, cylinders or zones are not the
/// drive's (100 surfaces for atlas10k's 6 gives 17 times its count).
const BLOCK_COUNT_FACTOR_MAX: u64 = 2;

/// `Block count` against the capacity the zones give: equal, a warning (in the
/// provenance, see [`DriveSpec::warnings`]), or refused beyond
/// [`BLOCK_COUNT_FACTOR_MAX`].
fn block_count(f: &Fields, capacity: u64, provenance: &mut Vec<String>) -> Result<(), ImportError> {
    // Optional: the check is on what the file states.
    let Some(p) = f.get("Block count") else {
        return Ok(());
    };
    let stated: u64 = fields::ranged(p, fields::int_of(p)?, "a non-negative block count")?;
    if stated == capacity {
        return Ok(());
    }
    let far = |a: u64, b: u64| a > b.saturating_mul(BLOCK_COUNT_FACTOR_MAX);
    if far(stated, capacity) || far(capacity, stated) {
        return Err(fields::bad(
            p,
            format!(
                "is {stated}, but the zones give {capacity} blocks: more than a factor of \
                 {BLOCK_COUNT_FACTOR_MAX} apart, so the surfaces, cylinders or zones are not \
                 this drive's (DiskSim's own files differ by at most 18%)"
            ),
        ));
    }
    provenance.push(format!(
        "{WARNING_PREFIX}{}: Block count {stated} disagrees with the {capacity} blocks the \
         zones give ({:+.2}%); the zones' figure is used, as DiskSim does",
        p.value.pos,
        (capacity as f64 - stated as f64) * 100.0 / stated as f64
    ));
    Ok(())
}

/// The drive's `disksim_disk` definition and its instance name. As in DiskSim,
/// only what an `instantiate` statement names exists, and an `instantiate` of a
/// type no block defines is an error: a file whose disk is not instantiated, or
/// instantiated as a misspelt type, is refused (before, the file's only
/// `disksim_disk` block was used anyway: inputs finding 16).
fn find_disk<'a>(
    file: &'a ParamFile,
    defs: &HashMap<&str, &'a Block>,
    path: &Path,
) -> Result<(&'a Block, &'a str), ImportError> {
    let mut chosen: Option<(&str, &str)> = None;
    for (name, type_name, pos) in file.instances() {
        if !defs.contains_key(type_name) {
            return Err(ImportError::at(
                pos,
                None,
                format!("'{name}' is instantiated as '{type_name}', which no block defines"),
            ));
        }
        if file.base_type(defs, type_name) != "disksim_disk" {
            continue;
        }
        match chosen {
            Some((_, t)) if t != type_name => {
                return Err(ImportError::at(
                    pos,
                    None,
                    format!("a second disk type '{type_name}' is instantiated (already '{t}'); one drive per file is imported"),
                ))
            }
            Some(_) => {}
            None => chosen = Some((name, type_name)),
        }
    }
    if let Some((instance, type_name)) = chosen {
        return Ok((defs[type_name], instance));
    }
    let never = "is never instantiated: DiskSim builds only what an \
                 `instantiate [ NAME ] as TYPE` statement names";
    let mut disks = defs.values().filter(|b| b.type_name == "disksim_disk");
    match (disks.next(), disks.next()) {
        (Some(only), None) => Err(ImportError::at(
            &only.pos,
            None,
            format!(
                "disksim_disk block '{}' {never}",
                only.name.as_deref().unwrap_or_default()
            ),
        )),
        _ => Err(ImportError::new(
            path,
            0,
            None,
            format!("no disksim_disk type {never}"),
        )),
    }
}

/// The block a parameter holds (inline, or a word naming a definition), checked to
/// derive from `module`.
fn typed_block<'a>(
    file: &'a ParamFile,
    defs: &HashMap<&str, &'a Block>,
    f: &Fields<'a>,
    name: &str,
    module: &str,
) -> Result<&'a Block, ImportError> {
    let p = f.need(name)?;
    let block = match (&p.value.as_block(), p.value.as_word()) {
        (Some(b), _) => *b,
        (None, Some(w)) => defs
            .get(w)
            .copied()
            .ok_or_else(|| fields::bad(p, format!("no block named '{w}' is defined")))?,
        _ => {
            return Err(fields::bad(
                p,
                format!("expected a {module} block, found {}", p.value.kind_name()),
            ))
        }
    };
    let base = file.base_type(defs, &block.type_name);
    if base != module {
        return Err(fields::bad(
            p,
            format!(
                "expected a {module} block, found '{}' ({base})",
                block.type_name
            ),
        ));
    }
    Ok(block)
}

/// Block times of the bus directly above the disk instance in the topology.
fn bus_times(
    file: &ParamFile,
    defs: &HashMap<&str, &Block>,
    instance: &str,
    provenance: &mut Vec<String>,
) -> Result<BusTimes, ImportError> {
    let path = file.topologies().find_map(|t| t.path_to(instance));
    let Some(bus) = path.and_then(|p| p.into_iter().rev().find(|n| n.module == "disksim_bus"))
    else {
        provenance.push(
            "host link: the disk is on no bus in a topology; bus block times taken as 0".into(),
        );
        return Ok(BusTimes::default());
    };
    let type_name = file
        .instances()
        .find(|(n, _, _)| *n == bus.name)
        .map(|(_, t, _)| t)
        .ok_or_else(|| {
            ImportError::at(
                &bus.pos,
                None,
                format!("bus '{}' in the topology is never instantiated", bus.name),
            )
        })?;
    let block = defs.get(type_name).ok_or_else(|| {
        ImportError::at(
            &bus.pos,
            None,
            format!("bus type '{type_name}' is not defined"),
        )
    })?;
    let f = Fields::new(block, file.effective_params(defs, block), &BUS_SCHEMA)?;
    let times = BusTimes {
        read_ms: f.duration_ms("Read block transfer time")?,
        write_ms: f.duration_ms("Write block transfer time")?,
    };
    provenance.push(format!(
        "host link: bus '{}' ({type_name}) block times read {} ms, write {} ms",
        bus.name, times.read_ms, times.write_ms
    ));
    Ok(times)
}
