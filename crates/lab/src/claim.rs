//! Claims: one number from the paper next to ours, and whether they agree.
//!
//! Whether a claim is within its tolerance is never stored: [`Claim::within`] derives
//! it from `paper`, `ours` and `tolerance` every time it is asked. `summary.json`
//! carries a `within` field for its readers, but nothing here reads it back, so an
//! edited or stale summary cannot show a verdict its own numbers contradict.
//!
//! Only claims of kind [`ClaimKind::Check`] count in "N of M within": a claim whose
//! number we put into the model ourselves (an input), fitted to the paper (a
//! calibration) or decided by a rule of our own method (a rule: a refusal the planner
//! is built to make, a plan kept only when its trials held, requests cut at track
//! boundaries) agrees or disagrees by construction and proves nothing about the model.

use serde::{Deserialize, Serialize, Serializer};

/// How far `ours` may be from `paper` and still count as reproducing it.
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
#[serde(tag = "kind", content = "value", rename_all = "snake_case")]
pub enum Tolerance {
    /// |ours − paper| ≤ fraction · |paper|. The default is 10%.
    Relative(f64),
    /// |ours − paper| ≤ value, in the claim's unit. Used only where the paper's value
    /// is zero (a relative bound would be meaningless there) or a range (paper = its
    /// midpoint, value = its half-width).
    Absolute(f64),
    /// The paper states a direction, not a number: ours must exceed `paper` (the
    /// bound, e.g. a ratio of 1 for "improves").
    GreaterThan,
    /// Ours must stay below `paper`.
    LessThan,
}

impl Tolerance {
    /// The project's standard bound: within 10% relative of the paper.
    pub const STANDARD: Tolerance = Tolerance::Relative(0.10);

    pub fn accepts(self, paper: f64, ours: f64) -> bool {
        if !ours.is_finite() {
            return false;
        }
        match self {
            Tolerance::Relative(fraction) => (ours - paper).abs() <= fraction * paper.abs(),
            Tolerance::Absolute(bound) => (ours - paper).abs() <= bound,
            Tolerance::GreaterThan => ours > paper,
            Tolerance::LessThan => ours < paper,
        }
    }

    /// Short human form for tables: `±10%` or `±0.05 ms`.
    pub fn describe(self, unit: &str) -> String {
        match self {
            Tolerance::Relative(fraction) => format!("±{}%", format_number(fraction * 100.0)),
            Tolerance::Absolute(bound) => format!("±{} {unit}", format_number(bound)),
            Tolerance::GreaterThan => "above the bound".to_string(),
            Tolerance::LessThan => "below the bound".to_string(),
        }
    }
}

/// What a claim's agreement with the paper can prove.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ClaimKind {
    /// Ours is measured from the model and could disagree: counts in "N of M within".
    Check,
    /// Ours is a number we put into the model (a catalog entry built from it, a
    /// feature we switched off): it agrees by construction. Shown, not counted.
    Input,
    /// Ours was used to infer an unknown of the model (fitted to the paper): it
    /// agrees because we made it. Shown, not counted.
    Calibration,
    /// Ours is decided by a rule our method is built to keep (the planner's refusal
    /// of an RTO below spin-up plus spin-down, a plan accepted only once its failover
    /// trials held, member requests cut at track boundaries) or by arithmetic on
    /// inputs alone: no simulated behaviour could make it come out otherwise, only a
    /// bug (which tests look for). Shown, not counted.
    Rule,
}

impl ClaimKind {
    /// The word shown in the claims tables.
    pub fn word(self) -> &'static str {
        match self {
            ClaimKind::Check => "check",
            ClaimKind::Input => "input",
            ClaimKind::Calibration => "calibration",
            ClaimKind::Rule => "rule",
        }
    }
}

/// One quantitative statement of the paper and what spinstack measures for it.
///
/// Deserializing ignores a `within` field (see the module doc); `kind` is required,
/// so a summary written before kinds existed is refused rather than counted wrongly.
#[derive(Clone, Debug, Deserialize)]
pub struct Claim {
    /// What is claimed, in words.
    pub claim: String,
    /// Where in the paper: section, figure or table.
    pub source: String,
    pub paper: f64,
    /// NaN when the run could not measure it (no trial got that far): JSON
    /// writes that as `null`, which reads back as NaN, a miss.
    #[serde(deserialize_with = "number_or_null")]
    pub ours: f64,
    /// Unit of `paper` and `ours` (`ms`, `fraction`, `KB`, ...).
    pub unit: String,
    pub tolerance: Tolerance,
    pub kind: ClaimKind,
    /// For a miss: why, with evidence from the model. May also qualify a hit.
    pub explanation: String,
}

impl Claim {
    /// A claim checked against the standard 10% relative tolerance.
    pub fn new(claim: &str, source: &str, unit: &str, paper: f64, ours: f64) -> Claim {
        Claim::with_tolerance(claim, source, unit, paper, ours, Tolerance::STANDARD)
    }

    pub fn with_tolerance(
        claim: &str,
        source: &str,
        unit: &str,
        paper: f64,
        ours: f64,
        tolerance: Tolerance,
    ) -> Claim {
        Claim {
            claim: claim.to_string(),
            source: source.to_string(),
            paper,
            ours,
            unit: unit.to_string(),
            tolerance,
            kind: ClaimKind::Check,
            explanation: String::new(),
        }
    }

    /// Whether ours is within the tolerance of the paper's number, derived afresh.
    pub fn within(&self) -> bool {
        self.tolerance.accepts(self.paper, self.ours)
    }

    /// Whether the claim counts in "N of M within".
    pub fn is_check(&self) -> bool {
        self.kind == ClaimKind::Check
    }

    /// Mark the claim an input: ours holds by construction (`why` names the catalog
    /// entry or parameter it comes from, and is put first in the explanation).
    pub fn input(self, why: impl Into<String>) -> Claim {
        self.of_kind(ClaimKind::Input, why.into())
    }

    /// Mark the claim a calibration: ours was used to infer an unknown of the model
    /// (`why` says which, and is put first in the explanation).
    pub fn calibration(self, why: impl Into<String>) -> Claim {
        self.of_kind(ClaimKind::Calibration, why.into())
    }

    /// Mark the claim a rule: ours is decided by a rule of our method or by
    /// arithmetic on inputs (`why` names the rule, and is put first in the
    /// explanation).
    pub fn rule(self, why: impl Into<String>) -> Claim {
        self.of_kind(ClaimKind::Rule, why.into())
    }

    fn of_kind(mut self, kind: ClaimKind, why: String) -> Claim {
        self.kind = kind;
        self.explanation = if self.explanation.is_empty() {
            why
        } else {
            format!("{why} {}", self.explanation)
        };
        self
    }

    /// The paper's side as printed in tables: its number, or "> bound" / "< bound"
    /// where the paper states a direction.
    pub fn paper_text(&self) -> String {
        match self.tolerance {
            Tolerance::GreaterThan => format!("> {}", format_number(self.paper)),
            Tolerance::LessThan => format!("< {}", format_number(self.paper)),
            _ => format_number(self.paper),
        }
    }

    /// Attach the explanation shown next to the claim (why it misses, or a caveat).
    pub fn explain(mut self, text: impl Into<String>) -> Claim {
        self.explanation = text.into();
        self
    }

    /// Attach `text` only when the claim misses its tolerance (a reason for a miss
    /// reads oddly next to a hit).
    pub fn explain_if_missed(self, text: impl Into<String>) -> Claim {
        if self.within() {
            self
        } else {
            self.explain(text)
        }
    }
}

/// A number, or `null` (what serde_json writes for NaN) as NaN.
fn number_or_null<'de, D: serde::Deserializer<'de>>(deserializer: D) -> Result<f64, D::Error> {
    Ok(Option::<f64>::deserialize(deserializer)?.unwrap_or(f64::NAN))
}

/// What `summary.json` holds for one claim: the claim's fields and, for readers, its
/// verdict as derived when written.
#[derive(Serialize)]
struct ClaimRecord<'a> {
    claim: &'a str,
    source: &'a str,
    paper: f64,
    ours: f64,
    unit: &'a str,
    tolerance: Tolerance,
    kind: ClaimKind,
    within: bool,
    explanation: &'a str,
}

impl Serialize for Claim {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        ClaimRecord {
            claim: &self.claim,
            source: &self.source,
            paper: self.paper,
            ours: self.ours,
            unit: &self.unit,
            tolerance: self.tolerance,
            kind: self.kind,
            within: self.within(),
            explanation: &self.explanation,
        }
        .serialize(serializer)
    }
}

/// How a set of claims came out: only checks are counted as within or not.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Tally {
    pub checks_within: usize,
    pub checks: usize,
    pub inputs: usize,
    pub calibrations: usize,
    pub rules: usize,
}

impl Tally {
    pub fn of<'a>(claims: impl IntoIterator<Item = &'a Claim>) -> Tally {
        let mut tally = Tally::default();
        for claim in claims {
            match claim.kind {
                ClaimKind::Check => {
                    tally.checks += 1;
                    tally.checks_within += usize::from(claim.within());
                }
                ClaimKind::Input => tally.inputs += 1,
                ClaimKind::Calibration => tally.calibrations += 1,
                ClaimKind::Rule => tally.rules += 1,
            }
        }
        tally
    }

    pub fn plus(self, other: Tally) -> Tally {
        Tally {
            checks_within: self.checks_within + other.checks_within,
            checks: self.checks + other.checks,
            inputs: self.inputs + other.inputs,
            calibrations: self.calibrations + other.calibrations,
            rules: self.rules + other.rules,
        }
    }

    /// `3 of 5 checks within tolerance` plus, when there are any, the claims not
    /// counted: `(1 input, 2 calibrations, 3 rules not counted)`.
    pub fn describe(&self) -> String {
        let mut text = format!(
            "{} of {} checks within tolerance",
            self.checks_within, self.checks
        );
        let not_counted = self.not_counted();
        if !not_counted.is_empty() {
            text.push_str(&format!(" ({not_counted} not counted)"));
        }
        text
    }

    /// `1 input, 2 calibrations, 3 rules`, or empty when every claim is a check.
    pub fn not_counted(&self) -> String {
        let plural = |n: usize, word: &str| format!("{n} {word}{}", if n == 1 { "" } else { "s" });
        let mut parts = Vec::new();
        if self.inputs > 0 {
            parts.push(plural(self.inputs, "input"));
        }
        if self.calibrations > 0 {
            parts.push(plural(self.calibrations, "calibration"));
        }
        if self.rules > 0 {
            parts.push(plural(self.rules, "rule"));
        }
        parts.join(", ")
    }
}

/// Numbers in tables: up to four significant decimals, no trailing zeros.
pub fn format_number(value: f64) -> String {
    if !value.is_finite() {
        return format!("{value}");
    }
    let magnitude = value.abs();
    let decimals = if magnitude >= 100.0 {
        1
    } else if magnitude >= 1.0 {
        3
    } else {
        4
    };
    let text = format!("{value:.decimals$}");
    let text = if text.contains('.') {
        text.trim_end_matches('0').trim_end_matches('.').to_string()
    } else {
        text
    };
    if text == "-0" {
        "0".to_string()
    } else {
        text
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    // Proves the tolerance bounds are inclusive at 10% and reject NaN and misses.
    #[test]
    fn relative_and_absolute_tolerances() {
        assert!(Tolerance::STANDARD.accepts(10.0, 11.0));
        assert!(Tolerance::STANDARD.accepts(10.0, 9.0));
        assert!(!Tolerance::STANDARD.accepts(10.0, 11.2));
        assert!(!Tolerance::STANDARD.accepts(10.0, f64::NAN));
        assert!(Tolerance::Absolute(0.05).accepts(0.0, 0.04));
        assert!(!Tolerance::Absolute(0.05).accepts(0.0, 0.06));
        assert_eq!(format_number(0.73), "0.73");
        assert_eq!(format_number(13.9), "13.9");
        assert_eq!(format_number(1024.0), "1024");
        assert!(
            Tolerance::GreaterThan.accepts(1.0, 1.5) && !Tolerance::GreaterThan.accepts(1.0, 1.0)
        );
        assert!(
            Tolerance::LessThan.accepts(0.5, 0.2) && !Tolerance::LessThan.accepts(0.5, f64::NAN)
        );
    }

    fn miss() -> Claim {
        Claim::new("a number", "§1", "ms", 10.0, 20.0)
    }

    // Guards issue 12 §2 "the report reads `within` back from summary.json": a summary
    // whose stored verdict contradicts its own numbers (within: true, ours twice the
    // paper's) reads back as a miss, because the verdict is derived, never read.
    #[test]
    fn stored_within_is_ignored_when_read_back() {
        let mut json: serde_json::Value = serde_json::to_value(miss()).unwrap();
        assert_eq!(json["within"], serde_json::Value::Bool(false));
        json["within"] = serde_json::Value::Bool(true);
        let read: Claim = serde_json::from_value(json).unwrap();
        assert!(!read.within(), "a tampered `within: true` was believed");
        assert!(Tally::of([&read]).checks_within == 0);
    }

    // Guards the ext2-streams run in which no trial reached stream 130: its
    // reductions were NaN, summary.json held `null`, and the report then refused
    // the file ("invalid type: null, expected f64"). Unmeasured reads back as NaN,
    // a miss.
    #[test]
    fn unmeasured_number_reads_back_as_a_miss() {
        let unmeasured = Claim::new("a cut", "§1", "%", 30.0, f64::NAN);
        let json = serde_json::to_string(&unmeasured).unwrap();
        assert!(json.contains(r#""ours":null"#), "{json}");
        let read: Claim = serde_json::from_str(&json).unwrap();
        assert!(read.ours.is_nan());
        assert!(!read.within());
    }

    // Guards the review of 2026-11-28: claims decided by a rule of our own method (the
    // planner's refusal of a 30 s RTO, "0 failover violations" over plans kept only
    // when their trials held, 0% of member requests crossing a track when the volume
    // cuts them there) had been counted as checks; a rule is shown with its verdict,
    // agreeing or not, and never counted.
    #[test]
    fn rules_are_shown_not_counted() {
        let refused = Claim::with_tolerance(
            "refused",
            "§3.1",
            "yes=1",
            1.0,
            1.0,
            Tolerance::Absolute(0.0),
        )
        .rule("The planner refuses it.");
        let disagreeing = Claim::with_tolerance(
            "plotted",
            "Fig. 4",
            "yes=1",
            0.0,
            1.0,
            Tolerance::Absolute(0.0),
        )
        .rule("The planner refuses it; the paper plots a bar.");
        let claims = [
            Claim::new("hit", "§1", "ms", 10.0, 10.5),
            refused,
            disagreeing.clone(),
        ];
        let tally = Tally::of(&claims);
        assert_eq!((tally.checks_within, tally.checks, tally.rules), (1, 1, 2));
        assert_eq!(
            tally.describe(),
            "1 of 1 checks within tolerance (2 rules not counted)"
        );
        assert!(!disagreeing.within(), "a rule keeps its own verdict");
        let json = serde_json::to_value(&disagreeing).unwrap();
        assert_eq!(json["kind"], "rule");
        let read: Claim = serde_json::from_value(json).unwrap();
        assert_eq!(read.kind, ClaimKind::Rule);
    }

    // Guards issue 12 §2 "claims that hold by construction are not checks": inputs and
    // calibrations are written with their kind and left out of "N of M within", even
    // when they agree with the paper.
    #[test]
    fn only_checks_count() {
        let hit = Claim::new("hit", "§1", "ms", 10.0, 10.5);
        let input = Claim::new("input", "§1", "sectors", 1144.0, 1144.0).input("Built from it.");
        let calibration =
            Claim::new("fit", "§1", "ms", 2.2, 2.2).calibration("Zone width fitted to it.");
        let claims = [hit, miss(), input.clone(), calibration];
        let tally = Tally::of(&claims);
        assert_eq!(
            tally,
            Tally {
                checks_within: 1,
                checks: 2,
                inputs: 1,
                calibrations: 1,
                rules: 0,
            }
        );
        assert_eq!(
            tally.describe(),
            "1 of 2 checks within tolerance (1 input, 1 calibration not counted)"
        );
        let json = serde_json::to_value(&input).unwrap();
        assert_eq!(json["kind"], "input");
        assert_eq!(json["explanation"], "Built from it.");
        let summary_without_kind = r#"{"claim":"x","source":"s","paper":1.0,"ours":1.0,
            "unit":"ms","tolerance":{"kind":"relative","value":0.1},"within":true,
            "explanation":""}"#;
        assert!(serde_json::from_str::<Claim>(summary_without_kind).is_err());
    }
}
