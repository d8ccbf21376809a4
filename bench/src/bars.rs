//! A hand-written SVG chart of horizontal bars in panels: one panel per
//! measured case, one bar per server, each panel scaled to its own
//! largest value (the `peers` scenario's `--plot`).

use std::fmt::Write as _;

/// One panel: a case and each server's value in it.
#[derive(Debug, Clone, PartialEq)]
pub struct Panel {
    /// What was measured, e.g. `CPU per request, /bytes/13 × 64`.
    pub title: String,
    /// The unit printed after each value, e.g. `µs`.
    pub unit: String,
    /// `(server, value)`, in the order drawn.
    pub bars: Vec<(String, f64)>,
}

/// Panels under one title.
#[derive(Debug, Clone, PartialEq)]
pub struct BarChart {
    /// Title above the panels.
    pub title: String,
    /// A line under the title (how it was measured).
    pub subtitle: String,
    /// The panels, top to bottom.
    pub panels: Vec<Panel>,
}

const PALETTE: [&str; 6] = [
    "#1f77b4", "#d62728", "#2ca02c", "#ff7f0e", "#9467bd", "#8c564b",
];

fn escape(s: &str) -> String {
    s.replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
        .replace('"', "&quot;")
}

impl BarChart {
    /// Renders the chart as a standalone SVG document. A server keeps its
    /// colour in every panel (by its first appearance).
    pub fn to_svg(&self) -> String {
        let width = 760.0;
        let (label_w, value_w, bar_h, gap) = (110.0, 90.0, 16.0, 4.0);
        let bar_room = width - label_w - value_w - 20.0;
        let mut servers: Vec<&str> = Vec::new();
        for panel in &self.panels {
            for (server, _) in &panel.bars {
                if !servers.contains(&server.as_str()) {
                    servers.push(server);
                }
            }
        }
        let colour = |server: &str| {
            let i = servers.iter().position(|s| *s == server).unwrap_or(0);
            PALETTE[i % PALETTE.len()]
        };
        let mut body = String::new();
        let mut y = 64.0;
        for panel in &self.panels {
            let _ = writeln!(
                body,
                r#"<text x="10" y="{y}" font-weight="bold">{}</text>"#,
                escape(&panel.title)
            );
            y += 8.0;
            let most = panel
                .bars
                .iter()
                .map(|(_, v)| *v)
                .filter(|v| v.is_finite())
                .fold(0.0f64, f64::max);
            for (server, value) in &panel.bars {
                let length = if most > 0.0 && value.is_finite() {
                    (value / most * bar_room).max(1.0)
                } else {
                    0.0
                };
                let _ = writeln!(
                    body,
                    r#"<text x="{}" y="{}" text-anchor="end">{}</text>"#,
                    label_w - 6.0,
                    y + bar_h - 4.0,
                    escape(server)
                );
                let _ = writeln!(
                    body,
                    r#"<rect x="{label_w}" y="{y}" width="{length:.1}" height="{bar_h}" fill="{}"/>"#,
                    colour(server)
                );
                let _ = writeln!(
                    body,
                    r#"<text x="{:.1}" y="{}">{} {}</text>"#,
                    label_w + length + 6.0,
                    y + bar_h - 4.0,
                    format_value(*value),
                    escape(&panel.unit)
                );
                y += bar_h + gap;
            }
            y += 22.0;
        }
        let height = y;
        let mut svg = String::new();
        let _ = writeln!(
            svg,
            r#"<svg xmlns="http://www.w3.org/2000/svg" width="{width}" height="{height}" viewBox="0 0 {width} {height}" font-family="sans-serif" font-size="12">"#
        );
        let _ = writeln!(
            svg,
            r#"<rect width="{width}" height="{height}" fill="white"/>"#
        );
        let _ = writeln!(
            svg,
            r#"<text x="10" y="24" font-size="16">{}</text>"#,
            escape(&self.title)
        );
        let _ = writeln!(
            svg,
            r##"<text x="10" y="44" fill="#555">{}</text>"##,
            escape(&self.subtitle)
        );
        svg.push_str(&body);
        svg.push_str("</svg>\n");
        svg
    }
}

/// Three significant digits at most, no exponent.
fn format_value(v: f64) -> String {
    if !v.is_finite() {
        return "–".into();
    }
    if v >= 100.0 {
        format!("{v:.0}")
    } else if v >= 10.0 {
        format!("{v:.1}")
    } else {
        format!("{v:.2}")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn chart() -> BarChart {
        BarChart {
            title: "t <1>".into(),
            subtitle: "s".into(),
            panels: vec![
                Panel {
                    title: "cpu".into(),
                    unit: "µs".into(),
                    bars: vec![("a".into(), 10.0), ("b".into(), 5.0)],
                },
                Panel {
                    title: "memory".into(),
                    unit: "KiB".into(),
                    bars: vec![("b".into(), 2.0), ("a".into(), f64::NAN)],
                },
            ],
        }
    }

    #[test]
    fn bars_are_scaled_within_their_panel_and_servers_keep_their_colour() {
        let svg = chart().to_svg();
        assert!(svg.starts_with("<svg"));
        assert!(svg.trim_end().ends_with("</svg>"));
        assert!(svg.contains("t &lt;1&gt;"), "the title is escaped");
        // The largest bar of a panel spans the bar room, half the value
        // half of it.
        let room = 760.0 - 110.0 - 90.0 - 20.0;
        assert!(svg.contains(&format!(r#"width="{room:.1}""#)));
        assert!(svg.contains(&format!(r#"width="{:.1}""#, room / 2.0)));
        // `b` is the second server: the second colour in both panels.
        assert_eq!(svg.matches(PALETTE[1]).count(), 2);
        // A value that is not a number is shown as a dash, without a bar.
        assert!(svg.contains("– KiB"));
        assert!(svg.contains(r#"width="0.0""#));
    }

    #[test]
    fn values_get_three_digits_at_most() {
        assert_eq!(format_value(1234.5), "1234");
        assert_eq!(format_value(12.345), "12.3");
        assert_eq!(format_value(1.2345), "1.23");
    }
}
