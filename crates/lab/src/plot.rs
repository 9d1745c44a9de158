//! Figures: a small description of what to draw, rendered to SVG with `plotters`
//! and rasterised to PNG with `resvg`.
//!
//! The SVG needs no font (plotters estimates text extents and the SVG names the
//! generic `sans-serif` family). The PNG needs one: the system fonts are loaded at run
//! time and, when none is found, the PNG is skipped with a message naming the package
//! to install (`fonts-dejavu-core`) while the SVG is still written.

use plotters::coord::Shift;
use plotters::prelude::*;
use std::path::Path;

/// How a series is drawn.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Mark {
    /// A solid line with small markers at the points.
    Line,
    /// A dashed line (derived or secondary curves).
    Dashed,
    /// Markers only (sampled values).
    Markers,
    /// The paper's own numbers: large black outlined diamonds, drawn last.
    Paper,
}

#[derive(Clone, Debug)]
pub struct Series {
    pub name: String,
    pub mark: Mark,
    /// Index into the palette; series that belong together share a colour.
    pub color: usize,
    pub points: Vec<(f64, f64)>,
}

impl Series {
    pub fn new(name: &str, mark: Mark, color: usize, points: Vec<(f64, f64)>) -> Series {
        Series {
            name: name.to_string(),
            mark,
            color,
            points,
        }
    }
}

/// Horizontal bars: one row per category, one bar or segment per component.
#[derive(Clone, Debug)]
pub struct Bars {
    pub categories: Vec<String>,
    /// (component name, value per category), in drawing order.
    pub components: Vec<(String, Vec<f64>)>,
    /// Stacked left to right (parts of one whole) or side by side (to compare).
    pub stacked: bool,
}

#[derive(Clone, Debug)]
pub enum PanelContent {
    Lines(Vec<Series>),
    Bars(Bars),
}

/// Which corner of the plotting area holds the legend (chosen where no data is).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum LegendCorner {
    #[default]
    UpperRight,
    UpperLeft,
    LowerLeft,
    LowerRight,
}

/// One chart: axes with labels (units included) and its content.
#[derive(Clone, Debug)]
pub struct Panel {
    pub title: String,
    pub x_label: String,
    pub y_label: String,
    pub content: PanelContent,
    pub legend: LegendCorner,
}

fn legend_position(corner: LegendCorner) -> SeriesLabelPosition {
    match corner {
        LegendCorner::UpperRight => SeriesLabelPosition::UpperRight,
        LegendCorner::UpperLeft => SeriesLabelPosition::UpperLeft,
        LegendCorner::LowerLeft => SeriesLabelPosition::LowerLeft,
        LegendCorner::LowerRight => SeriesLabelPosition::LowerRight,
    }
}

/// A figure is one or more panels stacked vertically.
#[derive(Clone, Debug)]
pub struct Figure {
    pub panels: Vec<Panel>,
}

const PALETTE: [RGBColor; 8] = [
    RGBColor(0x1f, 0x77, 0xb4),
    RGBColor(0xd6, 0x27, 0x28),
    RGBColor(0x2c, 0xa0, 0x2c),
    RGBColor(0xff, 0x7f, 0x0e),
    RGBColor(0x94, 0x67, 0xbd),
    RGBColor(0x8c, 0x56, 0x4b),
    RGBColor(0x7f, 0x7f, 0x7f),
    RGBColor(0xbc, 0xbd, 0x22),
];
const WIDTH_PX: u32 = 960;
const PANEL_HEIGHT_PX: u32 = 540;

fn palette(index: usize) -> RGBColor {
    PALETTE[index % PALETTE.len()]
}

/// Render the figure to an SVG document.
pub fn render_svg(figure: &Figure) -> Result<String, String> {
    let mut svg = String::new();
    {
        let height = PANEL_HEIGHT_PX * figure.panels.len().max(1) as u32;
        let root = SVGBackend::with_string(&mut svg, (WIDTH_PX, height)).into_drawing_area();
        root.fill(&WHITE).map_err(|e| e.to_string())?;
        let areas = root.split_evenly((figure.panels.len().max(1), 1));
        for (panel, area) in figure.panels.iter().zip(areas.iter()) {
            match &panel.content {
                PanelContent::Lines(series) => draw_lines(area, panel, series)?,
                PanelContent::Bars(bars) => draw_bars(area, panel, bars)?,
            }
        }
        root.present().map_err(|e| e.to_string())?;
    }
    Ok(svg)
}

/// The axis range covering every point, padded by 5% (and including 0 on y).
fn ranges(series: &[Series]) -> ((f64, f64), (f64, f64)) {
    let points = series.iter().flat_map(|s| s.points.iter());
    let (mut x_min, mut x_max, mut y_min, mut y_max) = (f64::MAX, f64::MIN, 0.0f64, f64::MIN);
    for &(x, y) in points.filter(|(x, y)| x.is_finite() && y.is_finite()) {
        x_min = x_min.min(x);
        x_max = x_max.max(x);
        y_min = y_min.min(y);
        y_max = y_max.max(y);
    }
    if x_min > x_max {
        return ((0.0, 1.0), (0.0, 1.0));
    }
    let x_pad = ((x_max - x_min) * 0.03).max(1e-9);
    let y_pad = ((y_max - y_min) * 0.08).max(1e-9);
    ((x_min.min(0.0), x_max + x_pad), (y_min, y_max + y_pad))
}

type Area<'a> = DrawingArea<SVGBackend<'a>, Shift>;

/// Pixels a legend entry takes (label font 14 px plus spacing), and the plotting
/// area's approximate height in a panel (panel less caption, margins, x labels).
const LEGEND_ENTRY_PX: f64 = 19.0;
const PLOT_AREA_PX: f64 = 420.0;

/// A y range whose top leaves room for an upper legend above the data, so that a
/// legend in an upper corner never covers a point.
fn with_legend_room(y: (f64, f64), corner: LegendCorner, entries: usize) -> (f64, f64) {
    let upper = matches!(corner, LegendCorner::UpperLeft | LegendCorner::UpperRight);
    if !upper {
        return y;
    }
    let share = ((entries as f64 * LEGEND_ENTRY_PX + 16.0) / PLOT_AREA_PX).min(0.6);
    (y.0, y.0 + (y.1 - y.0) / (1.0 - share))
}

fn draw_lines(area: &Area, panel: &Panel, series: &[Series]) -> Result<(), String> {
    let ((x0, x1), y) = ranges(series);
    let (y0, y1) = with_legend_room(y, panel.legend, series.len());
    let mut chart = ChartBuilder::on(area)
        .caption(&panel.title, ("sans-serif", 22))
        .margin(14)
        .x_label_area_size(48)
        .y_label_area_size(70)
        .build_cartesian_2d(x0..x1, y0..y1)
        .map_err(|e| e.to_string())?;
    chart
        .configure_mesh()
        .x_desc(&panel.x_label)
        .y_desc(&panel.y_label)
        .axis_desc_style(("sans-serif", 17))
        .label_style(("sans-serif", 14))
        .light_line_style(RGBColor(0xee, 0xee, 0xee))
        .draw()
        .map_err(|e| e.to_string())?;
    let (plain, paper): (Vec<&Series>, Vec<&Series>) =
        series.iter().partition(|s| s.mark != Mark::Paper);
    for one in plain.into_iter().chain(paper) {
        draw_series(&mut chart, one)?;
    }
    chart
        .configure_series_labels()
        .position(legend_position(panel.legend))
        .label_font(("sans-serif", 14))
        .background_style(WHITE.mix(0.85))
        .border_style(BLACK)
        .draw()
        .map_err(|e| e.to_string())
}

type LineChart<'a, 'b> = ChartContext<
    'a,
    SVGBackend<'b>,
    Cartesian2d<plotters::coord::types::RangedCoordf64, plotters::coord::types::RangedCoordf64>,
>;

fn draw_series<'a>(chart: &mut LineChart<'a, 'a>, series: &Series) -> Result<(), String> {
    let color = palette(series.color);
    let points = series.points.clone();
    let annotation = match series.mark {
        Mark::Line => {
            chart
                .draw_series(LineSeries::new(points.clone(), color.stroke_width(2)))
                .map_err(|e| e.to_string())?;
            chart
                .draw_series(points.iter().map(|&p| Circle::new(p, 2, color.filled())))
                .map_err(|e| e.to_string())?
        }
        Mark::Dashed => chart
            .draw_series(DashedLineSeries::new(points, 6, 4, color.stroke_width(2)))
            .map_err(|e| e.to_string())?,
        Mark::Markers => chart
            .draw_series(
                points
                    .iter()
                    .map(|&p| Cross::new(p, 4, color.stroke_width(2))),
            )
            .map_err(|e| e.to_string())?,
        Mark::Paper => chart
            .draw_series(
                points
                    .iter()
                    .map(|&p| EmptyElement::at(p) + diamond_path(9, BLACK.stroke_width(2))),
            )
            .map_err(|e| e.to_string())?,
    };
    // One element type for every legend glyph: a polyline at the legend position.
    let glyph: Vec<(i32, i32)> = match series.mark {
        Mark::Paper => vec![(9, -6), (15, 0), (9, 6), (3, 0), (9, -6)],
        Mark::Markers => vec![(5, -4), (13, 4), (9, 0), (13, -4), (5, 4)],
        Mark::Line | Mark::Dashed => vec![(0, 0), (18, 0)],
    };
    let style = if series.mark == Mark::Paper {
        BLACK.stroke_width(2)
    } else {
        color.stroke_width(2)
    };
    // A series with no name stays out of the legend (e.g. the lower edge of a band).
    if !series.name.is_empty() {
        // One element type for every glyph: a dashed path whose dashes are either short
        // (dashed series) or longer than the glyph (solid).
        let (dash, gap) = if series.mark == Mark::Dashed {
            (4, 3)
        } else {
            (1000, 1)
        };
        annotation.label(&series.name).legend(move |(x, y)| {
            let points: Vec<(i32, i32)> = glyph.iter().map(|&(dx, dy)| (x + dx, y + dy)).collect();
            plotters::element::DashedPathElement::new(points, dash, gap, style)
        });
    }
    Ok(())
}

/// A closed diamond outline around (0, 0) in pixel offsets.
fn diamond_path(radius: i32, style: ShapeStyle) -> PathElement<(i32, i32)> {
    PathElement::new(
        vec![
            (0, -radius),
            (radius, 0),
            (0, radius),
            (-radius, 0),
            (0, -radius),
        ],
        style,
    )
}

fn draw_bars(area: &Area, panel: &Panel, bars: &Bars) -> Result<(), String> {
    let count = bars.categories.len();
    let total = (0..count)
        .map(|i| {
            let values = bars
                .components
                .iter()
                .map(|(_, v)| v[i])
                .filter(|v| v.is_finite());
            if bars.stacked {
                values.sum::<f64>()
            } else {
                values.fold(0.0, f64::max)
            }
        })
        .fold(0.0f64, f64::max);
    let longest = bars.categories.iter().map(|c| c.len()).max().unwrap_or(4) as u32;
    let mut chart = ChartBuilder::on(area)
        .caption(&panel.title, ("sans-serif", 22))
        .margin(14)
        .x_label_area_size(48)
        .y_label_area_size(30 + longest * 8)
        // Room on the right for the legend, which is about 40% of the width.
        .build_cartesian_2d(0.0..total * 1.8, -0.5..count as f64 - 0.5)
        .map_err(|e| e.to_string())?;
    let names = bars.categories.clone();
    let formatter = move |y: &f64| -> String {
        let index = y.round();
        if (y - index).abs() < 1e-6 && index >= 0.0 && (index as usize) < names.len() {
            names[index as usize].clone()
        } else {
            String::new()
        }
    };
    chart
        .configure_mesh()
        .x_desc(&panel.x_label)
        .y_desc(&panel.y_label)
        .y_labels(count * 2 + 1)
        .y_label_formatter(&formatter)
        .disable_y_mesh()
        .axis_desc_style(("sans-serif", 17))
        .label_style(("sans-serif", 14))
        .draw()
        .map_err(|e| e.to_string())?;
    for (index, (name, values)) in bars.components.iter().enumerate() {
        let color = palette(index);
        let rects = (0..count)
            .filter(|&bar| values[bar].is_finite())
            .map(|bar| {
                let (x0, y0, y1) = bar_box(bars, index, bar);
                Rectangle::new([(x0, y0), (x0 + values[bar], y1)], color.filled())
            });
        chart
            .draw_series(rects)
            .map_err(|e| e.to_string())?
            .label(name)
            .legend(move |(x, y)| Rectangle::new([(x, y - 5), (x + 14, y + 5)], color.filled()));
    }
    chart
        .configure_series_labels()
        .position(legend_position(panel.legend))
        .label_font(("sans-serif", 14))
        .background_style(WHITE.mix(0.85))
        .border_style(BLACK)
        .draw()
        .map_err(|e| e.to_string())
}

/// Where component `index` of category `bar` starts on x, and its extent on y.
fn bar_box(bars: &Bars, index: usize, bar: usize) -> (f64, f64, f64) {
    let centre = bar as f64;
    if bars.stacked {
        let start: f64 = bars.components[..index]
            .iter()
            .map(|(_, v)| v[bar])
            .filter(|v| v.is_finite())
            .sum();
        (start, centre - 0.3, centre + 0.3)
    } else {
        let height = 0.7 / bars.components.len() as f64;
        let top = centre - 0.35 + height * index as f64;
        (0.0, top, top + height * 0.9)
    }
}

/// Why no PNG was written.
#[derive(Debug, thiserror::Error)]
pub enum PngError {
    #[error("no usable system font found (install fonts-dejavu-core); wrote the SVG only")]
    NoFont,
    #[error("could not rasterise the SVG: {0}")]
    Render(String),
}

/// Loaded system fonts, kept for every PNG of a run (loading scans the disk).
pub struct Rasteriser {
    options: resvg::usvg::Options<'static>,
}

impl Rasteriser {
    /// Load the system fonts; `NoFont` when there is none.
    pub fn new() -> Result<Rasteriser, PngError> {
        let mut options = resvg::usvg::Options::default();
        let fonts = options.fontdb_mut();
        fonts.load_system_fonts();
        let family = preferred_sans_family(fonts).ok_or(PngError::NoFont)?;
        fonts.set_sans_serif_family(family);
        Ok(Rasteriser { options })
    }

    pub fn svg_to_png(&self, svg: &str, path: &Path) -> Result<(), PngError> {
        let tree = resvg::usvg::Tree::from_str(svg, &self.options)
            .map_err(|e| PngError::Render(e.to_string()))?;
        let size = tree.size().to_int_size();
        let mut pixmap = resvg::tiny_skia::Pixmap::new(size.width(), size.height())
            .ok_or_else(|| PngError::Render("empty image".to_string()))?;
        resvg::render(
            &tree,
            resvg::tiny_skia::Transform::identity(),
            &mut pixmap.as_mut(),
        );
        pixmap
            .save_png(path)
            .map_err(|e| PngError::Render(format!("{}: {e}", path.display())))
    }
}

/// DejaVu Sans when present (the font the CI installs), else any family with "Sans".
fn preferred_sans_family(fonts: &resvg::usvg::fontdb::Database) -> Option<String> {
    let families: Vec<String> = fonts
        .faces()
        .flat_map(|face| face.families.iter().map(|(name, _)| name.clone()))
        .collect();
    ["DejaVu Sans", "Liberation Sans", "Noto Sans"]
        .iter()
        .find(|wanted| families.iter().any(|f| f == *wanted))
        .map(|f| f.to_string())
        .or_else(|| families.iter().find(|f| f.contains("Sans")).cloned())
        .or_else(|| families.first().cloned())
}

#[cfg(test)]
mod tests {
    use super::*;

    // Proves an upper legend gets room above the data (the data's top stays below
    // the legend's bottom edge) and a lower legend leaves the range alone.
    #[test]
    fn upper_legend_gets_room_above_the_data() {
        let entries = 5;
        let (low, high) = with_legend_room((0.0, 1.0), LegendCorner::UpperLeft, entries);
        assert_eq!(low, 0.0);
        let legend_share = (entries as f64 * LEGEND_ENTRY_PX + 16.0) / PLOT_AREA_PX;
        assert!(1.0 <= high * (1.0 - legend_share) + 1e-9, "top {high}");
        assert_eq!(
            with_legend_room((0.0, 1.0), LegendCorner::LowerRight, entries),
            (0.0, 1.0)
        );
    }
}
