//! The reproduction harness: runs experiments and writes, for each one,
//! `DIR/ID/data.csv`, `plot.svg` (+ `plot.png` when a font is available),
//! `summary.md` and `summary.json`.

use crate::claim::{format_number, Claim, Tally};
use crate::plot::{render_svg, Figure, Rasteriser};
use crate::table::DataTable;
use crate::LabError;
use indicatif::ProgressBar;
use std::path::{Path, PathBuf};

/// How much work an experiment does per data point.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Scale {
    /// Random requests per (size, alignment, workload) point. The paper used 5,000.
    pub requests_per_point: usize,
    /// TPC-C transactions per site in the disaster-recovery experiments (dr-*):
    /// the paper generated 1,000,000.
    pub dr_transactions: u64,
    /// The dr-* experiments' whole grids and batch cycles (`reproduce
    /// --dr-full-size`); otherwise dr-power-highend simulates one energy cycle
    /// per point and its RTO 300 s series only at W = 160 (the W = 16 batches of
    /// RTO 300 s carry over ten times the log and cost most of the run).
    pub dr_full_grid: bool,
}

impl Scale {
    /// The disaster-recovery paper's transactions per configuration.
    pub const DR_PAPER_TRANSACTIONS: u64 = 1_000_000;

    /// What the paper did (dr-*: the paper's 1,000,000 transactions per site, so
    /// that even a 512 MB window fills twice per pass over the log; a smaller
    /// grid, see [`Scale::dr_full_grid`]).
    pub const PAPER: Scale = Scale {
        requests_per_point: 5000,
        dr_transactions: Scale::DR_PAPER_TRANSACTIONS,
        dr_full_grid: false,
    };
    /// For tests: enough to exercise every path, far too few for tight numbers.
    pub const SMOKE: Scale = Scale {
        requests_per_point: 60,
        dr_transactions: 20_000,
        dr_full_grid: false,
    };
}

/// What an experiment gets to run with.
pub struct RunContext<'a> {
    pub scale: Scale,
    /// Base seed; each series derives its own stream from it and its name.
    pub seed: u64,
    /// Advanced by the experiment as it goes (length set by the experiment).
    pub progress: &'a ProgressBar,
}

/// The fixed seed every published run uses.
pub const DEFAULT_SEED: u64 = 20_020_128; // FAST '02 opened on 28 January 2002.

/// What an experiment produces.
pub struct Outcome {
    pub data: DataTable,
    pub figure: Figure,
    pub claims: Vec<Claim>,
    /// Paragraphs for the summary: setup, definitions, assumptions.
    pub notes: Vec<String>,
}

/// One reproducible experiment (a paper figure, table or statement).
pub trait Experiment: Sync {
    fn id(&self) -> &'static str;
    /// One line: what the experiment shows, with the paper's figure number.
    fn title(&self) -> &'static str;
    fn run(&self, context: &RunContext) -> Result<Outcome, LabError>;
    /// How much work a point was, for the summary's run line (most experiments
    /// draw random requests per point; the dr-* ones generate TPC-C transactions).
    fn run_size(&self, scale: &Scale) -> String {
        format!("{} requests per point", scale.requests_per_point)
    }
}

/// Where an experiment's files went and how its claims came out.
#[derive(Debug)]
pub struct Written {
    pub id: String,
    pub directory: PathBuf,
    /// Checks within tolerance, checks, and the claims not counted.
    pub tally: Tally,
    pub png: bool,
}

fn write_file(path: &Path, contents: impl AsRef<[u8]>) -> Result<(), LabError> {
    std::fs::write(path, contents).map_err(|error| LabError::Io {
        path: path.to_path_buf(),
        error,
    })
}

/// Run one experiment and write its files under `out/ID/`.
pub fn run_and_write(
    experiment: &dyn Experiment,
    context: &RunContext,
    out: &Path,
    rasteriser: Option<&Rasteriser>,
) -> Result<Written, LabError> {
    let outcome = experiment.run(context)?;
    let directory = out.join(experiment.id());
    std::fs::create_dir_all(&directory).map_err(|error| LabError::Io {
        path: directory.clone(),
        error,
    })?;
    write_file(&directory.join("data.csv"), outcome.data.to_csv())?;
    let svg = render_svg(&outcome.figure).map_err(|problem| LabError::Plot {
        id: experiment.id().to_string(),
        problem,
    })?;
    write_file(&directory.join("plot.svg"), &svg)?;
    let png = match rasteriser {
        Some(r) => match r.svg_to_png(&svg, &directory.join("plot.png")) {
            Ok(()) => true,
            Err(error) => {
                eprintln!("spinstack: {}: {error}", experiment.id());
                false
            }
        },
        None => false,
    };
    write_file(
        &directory.join("summary.md"),
        summary_markdown(experiment, &outcome, context, png),
    )?;
    let json = serde_json::to_string_pretty(&outcome.claims).expect("claims serialize");
    write_file(&directory.join("summary.json"), json + "\n")?;
    Ok(Written {
        id: experiment.id().to_string(),
        directory,
        tally: Tally::of(&outcome.claims),
        png,
    })
}

/// The heading that ends the claims section of `summary.md` (when the experiment has
/// setup notes); the report regenerates everything before it from `summary.json`.
pub const SETUP_HEADING: &str = "## Setup";
/// How the last line of `summary.md` starts (it ends the claims section when there
/// are no setup notes).
pub const RUN_LINE_PREFIX: &str = "Run: seed ";

/// The claims table as Markdown. Inputs, calibrations and rules show their verdict in
/// parentheses: it is not counted.
pub fn claims_table(claims: &[Claim]) -> String {
    let mut out = String::from("| claim | kind | paper | spinstack | tolerance | within? |\n");
    out.push_str("|---|---|---|---|---|---|\n");
    for claim in claims {
        let verdict = match (claim.is_check(), claim.within()) {
            (true, true) => "yes",
            (true, false) => "**no**",
            (false, true) => "(yes)",
            (false, false) => "(**no**)",
        };
        out.push_str(&format!(
            "| {} ({}) | {} | {} {} | {} {} | {} | {verdict} |\n",
            claim.claim,
            claim.source,
            claim.kind.word(),
            claim.paper_text(),
            claim.unit,
            format_number(claim.ours),
            claim.unit,
            claim.tolerance.describe(&claim.unit),
        ));
    }
    out
}

/// Everything `summary.md` says about the claims: the count, the table and the notes
/// on them, all derived from the claims themselves (the report calls this too, on
/// the claims it reads back, rather than copying a summary's verdicts).
pub fn claims_section(claims: &[Claim]) -> String {
    let mut out = format!("{}.\n\n", capitalise(&Tally::of(claims).describe()));
    out.push_str(&claims_table(claims));
    let explained: Vec<&Claim> = claims
        .iter()
        .filter(|c| !c.explanation.is_empty())
        .collect();
    if !explained.is_empty() {
        out.push_str("\n## Notes on the claims\n\n");
        for claim in explained {
            let verdict = if claim.within() {
                "within"
            } else {
                "NOT within"
            };
            let verdict = match claim.is_check() {
                true => verdict.to_string(),
                false => format!("{}, {verdict}, not counted", claim.kind.word()),
            };
            out.push_str(&format!(
                "- **{}** ({verdict}): {}\n",
                claim.claim, claim.explanation
            ));
        }
    }
    out
}

fn capitalise(text: &str) -> String {
    let mut characters = text.chars();
    match characters.next() {
        Some(first) => first.to_uppercase().chain(characters).collect(),
        None => String::new(),
    }
}

fn summary_markdown(
    experiment: &dyn Experiment,
    outcome: &Outcome,
    context: &RunContext,
    png: bool,
) -> String {
    let mut out = format!("# {}: {}\n\n", experiment.id(), experiment.title());
    out.push_str(&claims_section(&outcome.claims));
    if !outcome.notes.is_empty() {
        out.push_str(&format!("\n{SETUP_HEADING}\n\n"));
        for note in &outcome.notes {
            out.push_str(&format!("{note}\n\n"));
        }
    }
    let png_note = if png { ", `plot.png`" } else { "" };
    out.push_str(&format!(
        "\n{RUN_LINE_PREFIX}{}, {}. Files: `data.csv`, `plot.svg`{png_note}.\n",
        context.seed,
        experiment.run_size(&context.scale)
    ));
    out
}
