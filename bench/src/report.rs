//! Results: a row per variant, printed as a table or as JSON lines, and a
//! hand-written SVG line chart with log–log axes.

use std::fmt::Write as _;

use serde_json::{json, Map, Value};

/// One measured variant of one scenario.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Row {
    /// Scenario name, as on the command line.
    pub scenario: String,
    /// Variant name.
    pub variant: String,
    /// Payload size, in bytes.
    pub bytes: usize,
    /// Median wall time of the whole operation, in seconds.
    pub seconds: f64,
    /// Median wall time of the drain phase alone, in seconds, if the
    /// scenario has one.
    pub drain_seconds: Option<f64>,
    /// Allocations made by one operation.
    pub allocations: usize,
    /// Reallocations made by one operation.
    pub reallocations: usize,
    /// Bytes requested from the allocator by one operation.
    pub bytes_allocated: usize,
    /// Peak heap above the baseline during one operation, in bytes.
    pub peak_heap_bytes: usize,
    /// Extra scenario-specific keys, appended to the JSON object in order.
    pub extra: Vec<(String, Value)>,
}

impl Row {
    /// The row of one variant from its median time and the counters of
    /// one counted run, with no drain phase and no extra keys yet.
    pub fn counted(
        scenario: &str,
        variant: &str,
        bytes: usize,
        seconds: f64,
        counted: &crate::alloc::Snapshot,
    ) -> Row {
        Row {
            scenario: scenario.into(),
            variant: variant.into(),
            bytes,
            seconds,
            drain_seconds: None,
            allocations: counted.allocations,
            reallocations: counted.reallocations,
            bytes_allocated: counted.bytes_allocated,
            peak_heap_bytes: counted.peak_above_baseline(),
            extra: Vec::new(),
        }
    }

    /// The extra key `key`, if the row has it.
    pub fn extra_value(&self, key: &str) -> Option<&Value> {
        self.extra.iter().find(|(k, _)| k == key).map(|(_, v)| v)
    }

    /// The extra key `key` as a number, if the row has it and it is one.
    pub fn extra_f64(&self, key: &str) -> Option<f64> {
        self.extra_value(key).and_then(Value::as_f64)
    }

    /// The row as one JSON object with the common keys (`scenario`,
    /// `variant`, `bytes`, `seconds`, `drain_seconds`, `allocations`,
    /// `reallocations`, `bytes_allocated`, `peak_heap_bytes`) then the
    /// extra ones.
    pub fn to_json(&self) -> Value {
        let mut map = Map::new();
        map.insert("scenario".into(), json!(self.scenario));
        map.insert("variant".into(), json!(self.variant));
        map.insert("bytes".into(), json!(self.bytes));
        map.insert("seconds".into(), json!(self.seconds));
        map.insert("drain_seconds".into(), json!(self.drain_seconds));
        map.insert("allocations".into(), json!(self.allocations));
        map.insert("reallocations".into(), json!(self.reallocations));
        map.insert("bytes_allocated".into(), json!(self.bytes_allocated));
        map.insert("peak_heap_bytes".into(), json!(self.peak_heap_bytes));
        for (k, v) in &self.extra {
            map.insert(k.clone(), v.clone());
        }
        Value::Object(map)
    }
}

/// Prints each row as one JSON object per line.
pub fn print_json(rows: &[Row]) {
    for row in rows {
        println!("{}", row.to_json());
    }
}

/// Prints rows as an aligned table. Ratios compare each row's median with
/// the row of variant `reference` at the same size (blank if absent).
pub fn print_table(rows: &[Row], reference: &str) {
    let header = [
        "variant",
        "bytes",
        "median s",
        "drain s",
        "x ref",
        "drain x ref",
        "allocs",
        "reallocs",
        "bytes alloc",
        "peak heap",
    ];
    let mut table: Vec<Vec<String>> = vec![header.iter().map(|s| s.to_string()).collect()];
    for row in rows {
        let reference = rows
            .iter()
            .find(|r| r.variant == reference && r.bytes == row.bytes);
        let ratio = reference.map(|r| format_ratio(row.seconds / r.seconds));
        let drain_ratio = reference.and_then(|r| match (row.drain_seconds, r.drain_seconds) {
            (Some(a), Some(b)) => Some(format_ratio(a / b)),
            _ => None,
        });
        table.push(vec![
            row.variant.clone(),
            row.bytes.to_string(),
            format_seconds(row.seconds),
            row.drain_seconds.map(format_seconds).unwrap_or_default(),
            ratio.unwrap_or_default(),
            drain_ratio.unwrap_or_default(),
            row.allocations.to_string(),
            row.reallocations.to_string(),
            row.bytes_allocated.to_string(),
            row.peak_heap_bytes.to_string(),
        ]);
    }
    print_grid(&table);
}

/// Prints `table` (its first row is the header) with aligned columns: the
/// first left-aligned, the others right-aligned, a rule under the header.
pub fn print_grid(table: &[Vec<String>]) {
    let columns = table.first().map_or(0, Vec::len);
    let widths: Vec<usize> = (0..columns)
        .map(|c| {
            table
                .iter()
                .map(|r| r.get(c).map_or(0, |cell| cell.chars().count()))
                .max()
                .unwrap_or(0)
        })
        .collect();
    for (i, line) in table.iter().enumerate() {
        let mut out = String::new();
        for (c, cell) in line.iter().enumerate() {
            let w = widths.get(c).copied().unwrap_or(0);
            if c == 0 {
                let _ = write!(out, "{cell:<w$}");
            } else {
                let _ = write!(out, "  {cell:>w$}");
            }
        }
        println!("{}", out.trim_end());
        if i == 0 {
            println!("{}", "-".repeat(out.trim_end().chars().count()));
        }
    }
}

/// Bytes per second, in GB/s (10^9 bytes); 0 when `seconds` is not
/// positive.
pub fn gbps(bytes: usize, seconds: f64) -> f64 {
    if seconds > 0.0 {
        bytes as f64 / seconds / 1e9
    } else {
        0.0
    }
}

/// A ratio such as `1.00x` or `2345x`.
pub fn format_ratio(r: f64) -> String {
    if r >= 100.0 {
        format!("{r:.0}x")
    } else {
        format!("{r:.2}x")
    }
}

/// Seconds with a unit scaled to the value: `12.3 µs`, `4.56 ms`, `1.23 s`.
pub fn format_seconds(s: f64) -> String {
    let (v, unit) = if s >= 1.0 {
        (s, "s")
    } else if s >= 1e-3 {
        (s * 1e3, "ms")
    } else if s >= 1e-6 {
        (s * 1e6, "µs")
    } else {
        (s * 1e9, "ns")
    };
    if v >= 100.0 || (v - v.round()).abs() < 1e-9 {
        format!("{v:.0} {unit}")
    } else if v >= 10.0 {
        format!("{v:.1} {unit}")
    } else {
        format!("{v:.2} {unit}")
    }
}

/// Bytes with a binary unit: `4 KiB`, `1.5 MiB`, `300 B`.
pub fn format_bytes(b: f64) -> String {
    let (v, unit) = if b >= 1024.0 * 1024.0 {
        (b / (1024.0 * 1024.0), "MiB")
    } else if b >= 1024.0 {
        (b / 1024.0, "KiB")
    } else {
        (b, "B")
    };
    if (v - v.round()).abs() < 1e-9 {
        format!("{v:.0} {unit}")
    } else {
        format!("{v:.1} {unit}")
    }
}

/// One line of a chart: a name for the legend and (x, y) points, x
/// increasing; points with non-positive coordinates are dropped.
#[derive(Debug, Clone)]
pub struct Series {
    /// Legend label.
    pub name: String,
    /// Data points.
    pub points: Vec<(f64, f64)>,
}

/// A line chart with logarithmic x and y axes.
#[derive(Debug, Clone)]
pub struct Chart {
    /// Title at the top.
    pub title: String,
    /// Label under the x axis.
    pub x_label: String,
    /// Label beside the y axis.
    pub y_label: String,
    /// Formats an x tick value.
    pub x_format: fn(f64) -> String,
    /// Formats a y tick value.
    pub y_format: fn(f64) -> String,
    /// Ticks on the x axis; decades of the data range if empty.
    pub x_ticks: Vec<f64>,
    /// The lines.
    pub series: Vec<Series>,
}

const PALETTE: [&str; 8] = [
    "#1f77b4", "#d62728", "#2ca02c", "#ff7f0e", "#9467bd", "#8c564b", "#e377c2", "#17becf",
];

fn escape(s: &str) -> String {
    s.replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
        .replace('"', "&quot;")
}

/// Powers of ten covering `[lo, hi]`.
fn decades(lo: f64, hi: f64) -> (f64, f64, Vec<f64>) {
    let a = lo.log10().floor();
    let b = hi.log10().ceil().max(a + 1.0);
    let ticks = (a as i32..=b as i32).map(|e| 10f64.powi(e)).collect();
    (10f64.powf(a), 10f64.powf(b), ticks)
}

impl Chart {
    /// Renders the chart as a standalone SVG document.
    pub fn to_svg(&self) -> String {
        let (w, h) = (820.0, 520.0);
        let (left, right, top, bottom) = (90.0, 190.0, 50.0, 70.0);
        let (pw, ph) = (w - left - right, h - top - bottom);

        let pts = || {
            self.series
                .iter()
                .flat_map(|s| s.points.iter().copied())
                .filter(|&(x, y)| x > 0.0 && y > 0.0 && x.is_finite() && y.is_finite())
        };
        let fold = |f: fn(&(f64, f64)) -> f64| {
            pts()
                .map(|p| f(&p))
                .fold((f64::MAX, f64::MIN), |(lo, hi), v| (lo.min(v), hi.max(v)))
        };
        let (mut x_lo, mut x_hi) = fold(|p| p.0);
        let (y_lo, y_hi) = fold(|p| p.1);
        let mut svg = String::new();
        let _ = writeln!(
            svg,
            r#"<svg xmlns="http://www.w3.org/2000/svg" width="{w}" height="{h}" viewBox="0 0 {w} {h}" font-family="sans-serif" font-size="12">"#
        );
        let _ = writeln!(svg, r#"<rect width="{w}" height="{h}" fill="white"/>"#);
        let _ = writeln!(
            svg,
            r#"<text x="{}" y="28" text-anchor="middle" font-size="16">{}</text>"#,
            left + pw / 2.0,
            escape(&self.title)
        );
        if x_lo > x_hi || y_lo > y_hi {
            svg.push_str("</svg>\n");
            return svg;
        }
        let x_ticks = if self.x_ticks.is_empty() {
            let (lo, hi, t) = decades(x_lo, x_hi);
            x_lo = lo;
            x_hi = hi;
            t
        } else {
            x_lo = x_lo.min(self.x_ticks.iter().copied().fold(f64::MAX, f64::min));
            x_hi = x_hi.max(self.x_ticks.iter().copied().fold(f64::MIN, f64::max));
            // A little margin so end points are not on the frame.
            x_lo /= 1.25;
            x_hi *= 1.25;
            self.x_ticks.clone()
        };
        let (y_lo, y_hi, y_ticks) = decades(y_lo, y_hi);
        let sx = |x: f64| left + (x.log10() - x_lo.log10()) / (x_hi.log10() - x_lo.log10()) * pw;
        let sy =
            |y: f64| top + ph - (y.log10() - y_lo.log10()) / (y_hi.log10() - y_lo.log10()) * ph;

        // Grid and ticks.
        for &t in &y_ticks {
            let y = sy(t);
            let _ = writeln!(
                svg,
                r##"<line x1="{left}" y1="{y:.1}" x2="{:.1}" y2="{y:.1}" stroke="#ddd"/>"##,
                left + pw
            );
            let _ = writeln!(
                svg,
                r#"<text x="{:.1}" y="{:.1}" text-anchor="end">{}</text>"#,
                left - 6.0,
                y + 4.0,
                escape(&(self.y_format)(t))
            );
        }
        for &t in &x_ticks {
            let x = sx(t);
            let _ = writeln!(
                svg,
                r##"<line x1="{x:.1}" y1="{top}" x2="{x:.1}" y2="{:.1}" stroke="#ddd"/>"##,
                top + ph
            );
            let _ = writeln!(
                svg,
                r#"<text x="{x:.1}" y="{:.1}" text-anchor="middle">{}</text>"#,
                top + ph + 18.0,
                escape(&(self.x_format)(t))
            );
        }
        let _ = writeln!(
            svg,
            r#"<rect x="{left}" y="{top}" width="{pw}" height="{ph}" fill="none" stroke="black"/>"#
        );
        let _ = writeln!(
            svg,
            r#"<text x="{:.1}" y="{:.1}" text-anchor="middle">{}</text>"#,
            left + pw / 2.0,
            h - 22.0,
            escape(&self.x_label)
        );
        let _ = writeln!(
            svg,
            r#"<text x="20" y="{:.1}" text-anchor="middle" transform="rotate(-90 20 {:.1})">{}</text>"#,
            top + ph / 2.0,
            top + ph / 2.0,
            escape(&self.y_label)
        );

        // Lines, markers and legend.
        for (i, s) in self.series.iter().enumerate() {
            let color = PALETTE[i % PALETTE.len()];
            let points: Vec<(f64, f64)> = s
                .points
                .iter()
                .copied()
                .filter(|&(x, y)| x > 0.0 && y > 0.0 && x.is_finite() && y.is_finite())
                .map(|(x, y)| (sx(x), sy(y)))
                .collect();
            let path: Vec<String> = points
                .iter()
                .map(|(x, y)| format!("{x:.1},{y:.1}"))
                .collect();
            let _ = writeln!(
                svg,
                r#"<polyline fill="none" stroke="{color}" stroke-width="2" points="{}"/>"#,
                path.join(" ")
            );
            for (x, y) in &points {
                let _ = writeln!(
                    svg,
                    r#"<circle cx="{x:.1}" cy="{y:.1}" r="3" fill="{color}"/>"#
                );
            }
            let ly = top + 10.0 + i as f64 * 20.0;
            let lx = left + pw + 15.0;
            let _ = writeln!(
                svg,
                r#"<line x1="{lx}" y1="{ly}" x2="{}" y2="{ly}" stroke="{color}" stroke-width="2"/>"#,
                lx + 24.0
            );
            let _ = writeln!(
                svg,
                r#"<text x="{}" y="{}">{}</text>"#,
                lx + 30.0,
                ly + 4.0,
                escape(&s.name)
            );
        }
        svg.push_str("</svg>\n");
        svg
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn json_has_common_and_extra_keys() {
        let row = Row {
            scenario: "s".into(),
            variant: "v".into(),
            bytes: 10,
            seconds: 1.5,
            drain_seconds: None,
            allocations: 1,
            reallocations: 2,
            bytes_allocated: 3,
            peak_heap_bytes: 4,
            extra: vec![("gbps".into(), json!(2.0))],
        };
        let v = row.to_json();
        for key in [
            "scenario",
            "variant",
            "bytes",
            "seconds",
            "drain_seconds",
            "allocations",
            "reallocations",
            "bytes_allocated",
            "peak_heap_bytes",
            "gbps",
        ] {
            assert!(v.get(key).is_some(), "{key}");
        }
        assert_eq!(v["drain_seconds"], Value::Null);
    }

    #[test]
    fn svg_has_one_polyline_per_series_and_escapes() {
        let chart = Chart {
            title: "a < b".into(),
            x_label: "size".into(),
            y_label: "time".into(),
            x_format: format_bytes,
            y_format: format_seconds,
            x_ticks: vec![4096.0, 40960.0],
            series: vec![
                Series {
                    name: "ring".into(),
                    points: vec![(4096.0, 1e-6), (40960.0, 1e-5)],
                },
                Series {
                    name: "other".into(),
                    points: vec![(4096.0, 1e-3), (40960.0, 0.0)],
                },
            ],
        };
        let svg = chart.to_svg();
        assert_eq!(svg.matches("<polyline").count(), 2);
        assert!(svg.contains("a &lt; b"));
        assert!(svg.contains("40 KiB"));
        assert!(svg.ends_with("</svg>\n"));
    }

    #[test]
    fn units() {
        assert_eq!(format_seconds(0.0123), "12.3 ms");
        assert_eq!(format_bytes(40960.0), "40 KiB");
        assert_eq!(format_bytes(4.0 * 1024.0 * 1024.0), "4 MiB");
        assert_eq!(format_ratio(1234.4), "1234x");
    }
}
