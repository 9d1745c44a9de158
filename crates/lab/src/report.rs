//! `spinstack report`: one `REPORT.md` and one `report.html` over every experiment's
//! results in a directory, the page a reader opens first.
//!
//! Every verdict and count shown is derived here from each claim's paper number, our
//! number and tolerance as read from `summary.json`; the `within` field and the claims
//! section of `summary.md` are not trusted (only its setup notes and run line are
//! copied), so an edited or stale summary cannot show a verdict its numbers contradict.

use crate::claim::{format_number, Claim, Tally};
use crate::harness::{claims_section, RUN_LINE_PREFIX, SETUP_HEADING};
use crate::LabError;
use std::path::{Path, PathBuf};

/// One experiment's results as found on disk.
struct Found {
    id: String,
    /// summary.md's first (title) line, without the id.
    title: String,
    /// summary.md from its setup notes (or run line) on: what follows the claims.
    after_claims: String,
    claims: Vec<Claim>,
    has_png: bool,
}

fn read(path: &Path) -> Result<String, LabError> {
    std::fs::read_to_string(path).map_err(|error| LabError::Io {
        path: path.to_path_buf(),
        error,
    })
}

fn load(directory: &Path, id: &str) -> Result<Found, LabError> {
    let summary = read(&directory.join("summary.md"))?;
    let json_path = directory.join("summary.json");
    let claims: Vec<Claim> =
        serde_json::from_str(&read(&json_path)?).map_err(|e| LabError::BadResult {
            path: json_path.clone(),
            problem: e.to_string(),
        })?;
    let (first, rest) = summary.split_once('\n').unwrap_or((&summary, ""));
    Ok(Found {
        id: id.to_string(),
        title: {
            let title = first.trim_start_matches('#').trim();
            title
                .strip_prefix(&format!("{id}: "))
                .unwrap_or(title)
                .to_string()
        },
        after_claims: after_claims_section(rest).trim().to_string(),
        claims,
        has_png: directory.join("plot.png").exists(),
    })
}

/// The part of a summary.md body after its claims section: from the setup heading,
/// or the run line when there are no setup notes; empty when it has neither.
fn after_claims_section(body: &str) -> &str {
    let mut offset = 0;
    for line in body.split_inclusive('\n') {
        let text = line.trim_end();
        if text == SETUP_HEADING || text.starts_with(RUN_LINE_PREFIX) {
            return &body[offset..];
        }
        offset += line.len();
    }
    ""
}

/// Experiment directories under `out`: registry order first, then any others by name.
fn discover(out: &Path, known_order: &[&str]) -> Result<Vec<Found>, LabError> {
    let entries = std::fs::read_dir(out).map_err(|error| {
        // No directory is no results: say what to run, not only the OS error.
        if error.kind() == std::io::ErrorKind::NotFound {
            LabError::NoResults {
                path: out.to_path_buf(),
            }
        } else {
            LabError::Io {
                path: out.to_path_buf(),
                error,
            }
        }
    })?;
    let mut ids: Vec<String> = entries
        .filter_map(|e| e.ok())
        .filter(|e| e.path().join("summary.json").is_file())
        .filter_map(|e| e.file_name().into_string().ok())
        .collect();
    ids.sort_by_key(|id| {
        let rank = known_order
            .iter()
            .position(|k| k == id)
            .unwrap_or(usize::MAX);
        (rank, id.clone())
    });
    ids.iter().map(|id| load(&out.join(id), id)).collect()
}

/// Write `REPORT.md` and `report.html` into `out`; returns their paths.
pub fn write_report(out: &Path, known_order: &[&str]) -> Result<(PathBuf, PathBuf), LabError> {
    let found = discover(out, known_order)?;
    if found.is_empty() {
        return Err(LabError::NoResults {
            path: out.to_path_buf(),
        });
    }
    let markdown_path = out.join("REPORT.md");
    let html_path = out.join("report.html");
    write(&markdown_path, &markdown(&found))?;
    write(&html_path, &html(&found))?;
    Ok((markdown_path, html_path))
}

fn write(path: &Path, text: &str) -> Result<(), LabError> {
    std::fs::write(path, text).map_err(|error| LabError::Io {
        path: path.to_path_buf(),
        error,
    })
}

fn totals(found: &[Found]) -> Tally {
    Tally::of(found.iter().flat_map(|f| &f.claims))
}

fn markdown(found: &[Found]) -> String {
    let totals = totals(found);
    let mut out = String::from("# spinstack: paper results reproduced\n\n");
    out.push_str(&format!(
        "{} of {} checks are within tolerance{}. Each section below gives the paper's \
         number, spinstack's, and for every miss the reason found in the model. Inputs \
         (numbers the model was built from), calibrations (numbers it was fitted to) and \
         rules (numbers a rule of our own method decides) are decided by construction and \
         are not counted.\n\n",
        totals.checks_within,
        totals.checks,
        not_counted_suffix(&totals),
    ));
    out.push_str("| experiment | checks within | not counted | plot |\n|---|---|---|---|\n");
    for f in found {
        let tally = Tally::of(&f.claims);
        out.push_str(&format!(
            "| [{}](#{}) | {} / {} | {} | [{}]({}/{}) |\n",
            f.id,
            f.id,
            tally.checks_within,
            tally.checks,
            tally.not_counted(),
            plot_name(f),
            f.id,
            plot_name(f)
        ));
    }
    for f in found {
        out.push_str(&format!("\n## {}\n\n{}\n\n", f.id, f.title));
        out.push_str(&format!("![{}]({}/{})\n\n", f.id, f.id, plot_name(f)));
        out.push_str(&claims_section(&f.claims));
        if !f.after_claims.is_empty() {
            out.push('\n');
            out.push_str(&f.after_claims);
            out.push('\n');
        }
    }
    out
}

/// ` (2 inputs, 1 calibration not counted)`, or nothing.
fn not_counted_suffix(tally: &Tally) -> String {
    let not_counted = tally.not_counted();
    if not_counted.is_empty() {
        not_counted
    } else {
        format!(" ({not_counted} not counted)")
    }
}

fn plot_name(found: &Found) -> &'static str {
    if found.has_png {
        "plot.png"
    } else {
        "plot.svg"
    }
}

fn escape(text: &str) -> String {
    text.replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
}

fn html(found: &[Found]) -> String {
    let totals = totals(found);
    let mut out = String::from(
        "<!doctype html>\n<html><head><meta charset=\"utf-8\"><title>spinstack report</title>\n\
         <style>body{font-family:sans-serif;max-width:1000px;margin:auto}\
         table{border-collapse:collapse}td,th{border:1px solid #ccc;padding:3px 6px}\
         .no{color:#b00;font-weight:bold}img{max-width:100%;border:1px solid #ddd}</style>\n\
         </head><body>\n<h1>spinstack: paper results reproduced</h1>\n",
    );
    out.push_str(&format!(
        "<p>{} of {} checks are within tolerance{}.</p>\n<ul>\n",
        totals.checks_within,
        totals.checks,
        escape(&not_counted_suffix(&totals))
    ));
    for f in found {
        out.push_str(&format!(
            "<li><a href=\"#{0}\">{0}</a>: {1}</li>\n",
            f.id,
            escape(&f.title)
        ));
    }
    out.push_str("</ul>\n");
    for f in found {
        out.push_str(&format!(
            "<h2 id=\"{0}\">{0}</h2>\n<p>{1}</p>\n",
            f.id,
            escape(&f.title)
        ));
        out.push_str(&format!(
            "<img src=\"{}/plot.svg\" alt=\"{} plot\">\n",
            f.id, f.id
        ));
        out.push_str(&claims_html(&f.claims));
        out.push_str(&format!(
            "<p>Details: <a href=\"{0}/summary.md\">summary.md</a>, \
             <a href=\"{0}/data.csv\">data.csv</a></p>\n",
            f.id
        ));
    }
    out.push_str("</body></html>\n");
    out
}

fn claims_html(claims: &[Claim]) -> String {
    let mut out = String::from(
        "<table><tr><th>claim</th><th>kind</th><th>paper</th><th>spinstack</th>\
         <th>tolerance</th><th>within?</th></tr>\n",
    );
    for c in claims {
        let verdict = match (c.is_check(), c.within()) {
            (true, true) => "yes",
            (true, false) => "<span class=\"no\">no</span>",
            (false, true) => "(yes, not counted)",
            (false, false) => "(no, not counted)",
        };
        out.push_str(&format!(
            "<tr><td>{} ({})</td><td>{}</td><td>{} {}</td><td>{} {}</td><td>{}</td><td>{verdict}</td></tr>\n",
            escape(&c.claim),
            escape(&c.source),
            c.kind.word(),
            c.paper_text(),
            escape(&c.unit),
            format_number(c.ours),
            escape(&c.unit),
            escape(&c.tolerance.describe(&c.unit)),
        ));
        if !c.explanation.is_empty() {
            out.push_str(&format!(
                "<tr><td colspan=\"6\"><small>{}</small></td></tr>\n",
                escape(&c.explanation)
            ));
        }
    }
    out.push_str("</table>\n");
    out
}
