//! Convert a DiskSim `.parv` drive model into a spinstack catalog TOML file.
//!
//! ```text
//! cargo run -p spinstack-disk --example parv_to_toml -- \
//!     PATH.parv NAME "DESCRIPTION" [--note "TEXT"]... [--out FILE]
//! ```
//!
//! The model is read with `spinstack_disk::import::load_parv` (the same importer the
//! simulator uses); only its facts are carried over, in spinstack's own format. The
//! output opens with comments naming the source and the command that generated it;
//! each `--note` adds a comment line and a `provenance` entry (e.g. a paper figure).

use spinstack_disk::import::load_parv;
use spinstack_disk::spec::{DriveSpec, LayoutSpec};
use std::path::{Path, PathBuf};
use std::process::ExitCode;

struct Options {
    parv: PathBuf,
    name: String,
    description: String,
    notes: Vec<String>,
    out: Option<PathBuf>,
}

const USAGE: &str =
    "usage: parv_to_toml PATH.parv NAME \"DESCRIPTION\" [--note \"TEXT\"]... [--out FILE]";

fn parse_options(arguments: Vec<String>) -> Result<Options, String> {
    let mut positional = Vec::new();
    let mut notes = Vec::new();
    let mut out = None;
    let mut iter = arguments.into_iter();
    while let Some(argument) = iter.next() {
        match argument.as_str() {
            "--note" => notes.push(iter.next().ok_or("--note needs a value")?),
            "--out" => out = Some(PathBuf::from(iter.next().ok_or("--out needs a value")?)),
            _ => positional.push(argument),
        }
    }
    let [parv, name, description]: [String; 3] =
        positional.try_into().map_err(|_| USAGE.to_string())?;
    Ok(Options {
        parv: PathBuf::from(parv),
        name,
        description,
        notes,
        out,
    })
}

/// The comment block that opens the generated file.
fn header(options: &Options, spec: &DriveSpec, command: &str) -> String {
    let stem = file_name(&options.parv);
    let mut lines = vec![
        format!("{}: {}", spec.name, spec.description),
        String::new(),
        format!("GENERATED from the DIXtrac-extracted DiskSim 4.0 model `{stem}` (DiskSim"),
        "validation suite, Carnegie Mellon Parallel Data Lab) through spinstack's importer;".into(),
        "only the model's facts are carried over, in spinstack's own format. Regenerate with:"
            .into(),
        format!("  {command}"),
        String::new(),
        summary(spec),
    ];
    if !options.notes.is_empty() {
        lines.push(String::new());
        lines.push("Notes:".into());
        lines.extend(options.notes.iter().map(|note| format!("  {note}")));
    }
    let mut text: String = lines
        .iter()
        .map(|line| {
            if line.is_empty() {
                "#\n".to_string()
            } else {
                format!("# {line}\n")
            }
        })
        .collect();
    text.push('\n');
    text
}

/// One line of the drive's shape, for the reader of the file.
fn summary(spec: &DriveSpec) -> String {
    match &spec.layout {
        LayoutSpec::Zoned(zoned) => {
            let sizes = zoned.zones.iter().map(|zone| zone.sectors_per_track);
            format!(
                "{} RPM, {} surfaces x {} cylinders, {} zones, {}..{} sectors per track, zero-latency {}",
                spec.mechanics.rpm,
                zoned.surfaces,
                zoned.cylinders,
                zoned.zones.len(),
                sizes.clone().min().unwrap_or(0),
                sizes.max().unwrap_or(0),
                if spec.firmware.immediate_buffer_read { "yes" } else { "no" }
            )
        }
        LayoutSpec::Serpentine(serpentine) => format!(
            "{} RPM, serpentine, {} surfaces x {} cylinders",
            spec.mechanics.rpm, serpentine.surfaces, serpentine.cylinders
        ),
    }
}

fn file_name(path: &Path) -> String {
    path.file_name()
        .map(|name| name.to_string_lossy().into_owned())
        .unwrap_or_else(|| path.display().to_string())
}

fn shell_quote(argument: &str) -> String {
    if argument
        .chars()
        .all(|c| c.is_ascii_alphanumeric() || "-_./=".contains(c))
    {
        argument.to_string()
    } else {
        format!("'{}'", argument.replace('\'', r"'\''"))
    }
}

/// The command line, with the .parv path shown relative to the shared data folder.
fn command_line(options: &Options) -> String {
    let mut parts = vec![
        "cargo run -p spinstack-disk --example parv_to_toml --".to_string(),
        format!("../shared/disksim/params/{}", file_name(&options.parv)),
        shell_quote(&options.name),
        shell_quote(&options.description),
    ];
    for note in &options.notes {
        parts.push(format!("--note {}", shell_quote(note)));
    }
    if let Some(out) = &options.out {
        parts.push(format!("--out {}", out.display()));
    }
    parts.join(" ")
}

fn convert(options: &Options) -> Result<String, String> {
    let mut spec = load_parv(&options.parv).map_err(|error| error.to_string())?;
    spec.name = options.name.clone();
    spec.description = options.description.clone();
    let mut provenance = vec![
        format!(
            "DIXtrac-extracted DiskSim 4.0 model {} (DiskSim validation suite), converted by examples/parv_to_toml.rs",
            file_name(&options.parv)
        ),
    ];
    provenance.extend(options.notes.iter().cloned());
    provenance.append(&mut spec.provenance);
    spec.provenance = provenance;
    let body = toml::to_string(&spec).map_err(|error| format!("serializing: {error}"))?;
    let body = compact_seek_points(&one_provenance_item_per_line(&body, &spec.provenance));
    Ok(header(options, &spec, &command_line(options)) + &body)
}

/// The serializer writes `provenance` on one line; put one item on each line.
fn one_provenance_item_per_line(body: &str, provenance: &[String]) -> String {
    let mut out = String::new();
    for line in body.lines() {
        if line.starts_with("provenance = [") {
            out.push_str("provenance = [\n");
            for item in provenance {
                out.push_str(&format!("    {},\n", toml::Value::String(item.clone())));
            }
            out.push_str("]\n");
        } else {
            out.push_str(line);
            out.push('\n');
        }
    }
    out
}

/// The serializer writes each seek point as a four-line `[[mechanics.seek.points]]`
/// table; write them as one inline table per line instead (same TOML value).
fn compact_seek_points(body: &str) -> String {
    const HEADER: &str = "[[mechanics.seek.points]]";
    let mut out = String::new();
    let mut points: Vec<String> = Vec::new();
    let mut lines = body.lines().peekable();
    while let Some(line) = lines.next() {
        if line == HEADER {
            let mut fields = Vec::new();
            while let Some(field) = lines.next_if(|next| !next.is_empty() && !next.starts_with('['))
            {
                fields.push(field.to_string());
            }
            points.push(format!("    {{ {} }},", fields.join(", ")));
            continue;
        }
        if !points.is_empty() && !line.is_empty() {
            out.push_str(&format!("points = [\n{}\n]\n\n", points.join("\n")));
            points.clear();
        }
        if points.is_empty() {
            out.push_str(line);
            out.push('\n');
        }
    }
    if !points.is_empty() {
        out.push_str(&format!("points = [\n{}\n]\n", points.join("\n")));
    }
    out
}

fn main() -> ExitCode {
    let options = match parse_options(std::env::args().skip(1).collect()) {
        Ok(options) => options,
        Err(message) => {
            eprintln!("{message}");
            return ExitCode::from(2);
        }
    };
    let text = match convert(&options) {
        Ok(text) => text,
        Err(message) => {
            eprintln!("parv_to_toml: {message}");
            return ExitCode::FAILURE;
        }
    };
    let written = match &options.out {
        Some(path) => std::fs::write(path, text)
            .map_err(|error| format!("parv_to_toml: {}: {error}", path.display())),
        None => {
            print!("{text}");
            Ok(())
        }
    };
    match written {
        Ok(()) => ExitCode::SUCCESS,
        Err(message) => {
            eprintln!("{message}");
            ExitCode::FAILURE
        }
    }
}
