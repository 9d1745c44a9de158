//! `spinstack report`: one `REPORT.md` and one `report.html` over every experiment's
//! results in a directory, the page a reader opens first.

use crate::claim::{format_number, Claim};
use crate::LabError;
use std::path::{Path, PathBuf};

/// One experiment's results as found on disk.
struct Found {
    id: String,
    /// summary.md without its first (title) line.
    title: String,
    body: String,
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
        body: rest.trim().to_string(),
        claims,
        has_png: directory.join("plot.png").exists(),
    })
}

/// Experiment directories under `out`: registry order first, then any others by name.
fn discover(out: &Path, known_order: &[&str]) -> Result<Vec<Found>, LabError> {
    let entries = std::fs::read_dir(out).map_err(|error| LabError::Io {
        path: out.to_path_buf(),
        error,
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

fn totals(found: &[Found]) -> (usize, usize) {
    let within = found
        .iter()
        .flat_map(|f| &f.claims)
        .filter(|c| c.within)
        .count();
    let total = found.iter().map(|f| f.claims.len()).sum();
    (within, total)
}

fn markdown(found: &[Found]) -> String {
    let (within, total) = totals(found);
    let mut out = String::from("# spinstack: paper results reproduced\n\n");
    out.push_str(&format!(
        "{within} of {total} claims are within tolerance. Each section below gives the \
         paper's number, spinstack's, and for every miss the reason found in the model.\n\n"
    ));
    out.push_str("| experiment | claims within | plot |\n|---|---|---|\n");
    for f in found {
        let inside = f.claims.iter().filter(|c| c.within).count();
        out.push_str(&format!(
            "| [{}](#{}) | {inside} / {} | [{}]({}/{}) |\n",
            f.id,
            f.id,
            f.claims.len(),
            plot_name(f),
            f.id,
            plot_name(f)
        ));
    }
    for f in found {
        out.push_str(&format!("\n## {}\n\n{}\n\n", f.id, f.title));
        out.push_str(&format!("![{}]({}/{})\n\n", f.id, f.id, plot_name(f)));
        out.push_str(&f.body);
        out.push('\n');
    }
    out
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
    let (within, total) = totals(found);
    let mut out = String::from(
        "<!doctype html>\n<html><head><meta charset=\"utf-8\"><title>spinstack report</title>\n\
         <style>body{font-family:sans-serif;max-width:1000px;margin:auto}\
         table{border-collapse:collapse}td,th{border:1px solid #ccc;padding:3px 6px}\
         .no{color:#b00;font-weight:bold}img{max-width:100%;border:1px solid #ddd}</style>\n\
         </head><body>\n<h1>spinstack: paper results reproduced</h1>\n",
    );
    out.push_str(&format!(
        "<p>{within} of {total} claims are within tolerance.</p>\n<ul>\n"
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
        "<table><tr><th>claim</th><th>paper</th><th>spinstack</th><th>tolerance</th>\
         <th>within?</th></tr>\n",
    );
    for c in claims {
        let verdict = if c.within {
            "yes"
        } else {
            "<span class=\"no\">no</span>"
        };
        out.push_str(&format!(
            "<tr><td>{} ({})</td><td>{} {}</td><td>{} {}</td><td>{}</td><td>{verdict}</td></tr>\n",
            escape(&c.claim),
            escape(&c.source),
            c.paper_text(),
            escape(&c.unit),
            format_number(c.ours),
            escape(&c.unit),
            escape(&c.tolerance.describe(&c.unit)),
        ));
        if !c.explanation.is_empty() {
            out.push_str(&format!(
                "<tr><td colspan=\"5\"><small>{}</small></td></tr>\n",
                escape(&c.explanation)
            ));
        }
    }
    out.push_str("</table>\n");
    out
}
