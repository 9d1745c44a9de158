//! Claims: one number from the paper next to ours, and whether they agree.

use serde::{Deserialize, Serialize};

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

/// One quantitative statement of the paper and what spinstack measures for it.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct Claim {
    /// What is claimed, in words.
    pub claim: String,
    /// Where in the paper: section, figure or table.
    pub source: String,
    pub paper: f64,
    pub ours: f64,
    /// Unit of `paper` and `ours` (`ms`, `fraction`, `KB`, ...).
    pub unit: String,
    pub tolerance: Tolerance,
    pub within: bool,
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
            within: tolerance.accepts(paper, ours),
            explanation: String::new(),
        }
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
        if self.within {
            self
        } else {
            self.explain(text)
        }
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
}
