//! The data behind a figure, written as CSV.
//!
//! Numbers are written with a fixed number of decimals so that the same run gives
//! byte-identical files (the reproducibility test compares them byte for byte).

use std::fmt::Write as _;

/// One cell: text (series names) or a number.
#[derive(Clone, Debug, PartialEq)]
pub enum Cell {
    Text(String),
    Integer(i64),
    /// Written with six decimals.
    Real(f64),
}

impl From<&str> for Cell {
    fn from(value: &str) -> Cell {
        Cell::Text(value.to_string())
    }
}
impl From<String> for Cell {
    fn from(value: String) -> Cell {
        Cell::Text(value)
    }
}
impl From<f64> for Cell {
    fn from(value: f64) -> Cell {
        Cell::Real(value)
    }
}
impl From<u64> for Cell {
    fn from(value: u64) -> Cell {
        Cell::Integer(i64::try_from(value).unwrap_or(i64::MAX))
    }
}
impl From<u32> for Cell {
    fn from(value: u32) -> Cell {
        Cell::Integer(i64::from(value))
    }
}
impl From<usize> for Cell {
    fn from(value: usize) -> Cell {
        Cell::Integer(i64::try_from(value).unwrap_or(i64::MAX))
    }
}

/// A rectangular table with named columns (units in the names, e.g. `head_time_ms`).
#[derive(Clone, Debug, Default)]
pub struct DataTable {
    columns: Vec<String>,
    rows: Vec<Vec<Cell>>,
}

impl DataTable {
    pub fn new(columns: &[&str]) -> DataTable {
        DataTable {
            columns: columns.iter().map(|c| c.to_string()).collect(),
            rows: Vec::new(),
        }
    }

    /// Append a row; it must have one cell per column.
    pub fn push(&mut self, row: Vec<Cell>) {
        assert_eq!(
            row.len(),
            self.columns.len(),
            "row has {} cells for {} columns",
            row.len(),
            self.columns.len()
        );
        self.rows.push(row);
    }

    pub fn rows(&self) -> usize {
        self.rows.len()
    }

    pub fn to_csv(&self) -> String {
        let mut out = String::new();
        out.push_str(&self.columns.join(","));
        out.push('\n');
        for row in &self.rows {
            let cells: Vec<String> = row.iter().map(csv_cell).collect();
            out.push_str(&cells.join(","));
            out.push('\n');
        }
        out
    }
}

fn csv_cell(cell: &Cell) -> String {
    match cell {
        Cell::Integer(value) => value.to_string(),
        Cell::Real(value) => {
            let mut text = String::new();
            let _ = write!(text, "{value:.6}");
            text
        }
        Cell::Text(text) if text.contains([',', '"', '\n']) => {
            format!("\"{}\"", text.replace('"', "\"\""))
        }
        Cell::Text(text) => text.clone(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    // Proves CSV output quotes commas and writes reals with fixed decimals.
    #[test]
    fn csv_is_stable_and_quoted() {
        let mut table = DataTable::new(&["series", "size_sectors", "time_ms"]);
        table.push(vec!["a,b".into(), 8u64.into(), 1.5f64.into()]);
        assert_eq!(
            table.to_csv(),
            "series,size_sectors,time_ms\n\"a,b\",8,1.500000\n"
        );
    }
}
