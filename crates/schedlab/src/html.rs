//! The HTML report: `schedlab reproduce --html DIR` (one page per scenario and an index) and
//! [`sweep_page`] for a sweep's long table.
//!
//! Pages are self-contained: the style sheet is inline, figures are SVG from
//! `schedlab-plot` embedded as `<img src="data:image/svg+xml;base64,…">`, nothing is loaded
//! from anywhere else (no script, no web font). The same inputs give the same bytes.

use crate::plots::{natural_cmp, ReproScenario, SweepRow};
use std::collections::BTreeMap;
use std::fmt::Write as _;

/// Escapes text for HTML element content and attribute values.
pub fn esc(s: &str) -> String {
    let mut o = String::with_capacity(s.len());
    for c in s.chars() {
        match c {
            '&' => o.push_str("&amp;"),
            '<' => o.push_str("&lt;"),
            '>' => o.push_str("&gt;"),
            '"' => o.push_str("&quot;"),
            '\'' => o.push_str("&#39;"),
            _ => o.push(c),
        }
    }
    o
}

/// Standard base64 (RFC 4648, with padding).
pub fn base64(bytes: &[u8]) -> String {
    const A: &[u8; 64] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    let mut o = String::with_capacity(bytes.len().div_ceil(3) * 4);
    for ch in bytes.chunks(3) {
        let b = [ch[0], *ch.get(1).unwrap_or(&0), *ch.get(2).unwrap_or(&0)];
        let n = (b[0] as u32) << 16 | (b[1] as u32) << 8 | b[2] as u32;
        for i in 0..4 {
            if i <= ch.len() {
                o.push(A[(n >> (18 - 6 * i) & 63) as usize] as char);
            } else {
                o.push('=');
            }
        }
    }
    o
}

/// An `<img>` of an SVG figure, inline.
pub fn svg_img(svg: &str, alt: &str) -> String {
    format!(
        "<img src=\"data:image/svg+xml;base64,{}\" alt=\"{}\">",
        base64(svg.as_bytes()),
        esc(alt)
    )
}

const STYLE: &str = "\
body{font-family:sans-serif;margin:2em auto;max-width:960px;padding:0 1em;color:#222;line-height:1.4}
h1{font-size:1.5em}h2{font-size:1.2em;margin-top:1.6em;border-bottom:1px solid #ddd}
table{border-collapse:collapse;margin:.5em 0;max-width:100%}
td,th{border:1px solid #ccc;padding:.2em .5em;overflow-wrap:anywhere}code{word-break:break-all}
th{background:#f3f3f3;text-align:left}td.n{text-align:right;font-variant-numeric:tabular-nums}
th,td.n,td.pass,td.miss{white-space:nowrap;overflow-wrap:normal}
.pass{color:#1a7f37;font-weight:bold}.miss{color:#c62828;font-weight:bold}
figure{margin:1em 0}figure img{max-width:100%;height:auto;border:1px solid #eee}
pre{background:#f7f7f7;padding:.6em;overflow-x:auto;font-size:.85em}
.meta{color:#555}footer{margin-top:2em;color:#888;font-size:.85em}";

fn page(title: &str, body: &str) -> String {
    format!(
        "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n\
         <meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n\
         <title>{}</title>\n<style>\n{STYLE}\n</style>\n</head>\n<body>\n{body}\
         <footer>schedlab {}</footer>\n</body>\n</html>\n",
        esc(title),
        env!("CARGO_PKG_VERSION")
    )
}

/// A number for a table: up to 6 significant digits, no exponent for everyday magnitudes.
pub fn num(v: f64) -> String {
    if !v.is_finite() {
        return v.to_string();
    }
    let a = v.abs();
    let s = if a == 0.0 {
        "0".to_string()
    } else if a >= 1e5 {
        format!("{v:.0}")
    } else {
        let digits = (5 - a.log10().floor() as i32).clamp(0, 9) as usize;
        format!("{v:.digits$}")
    };
    if s.contains('.') {
        s.trim_end_matches('0').trim_end_matches('.').to_string()
    } else {
        s
    }
}

fn opt_num(v: Option<f64>) -> String {
    v.map(num).unwrap_or_else(|| "–".into())
}

/// What a scenario page shows besides the results: from the scenario file.
#[derive(Debug, Clone, Default)]
pub struct ScenarioInfo {
    pub name: String,
    pub title: String,
    pub seed: String,
    pub platform: String,
    pub workloads: Vec<String>,
    /// (kernel or id, label) per variant.
    pub variants: Vec<(String, String)>,
    pub notes: Vec<String>,
}

/// One scenario's page: header, variants, targets (PASS/MISS), one published-vs-simulated
/// figure per metric with a published value (all metrics when none has one), the results
/// table per metric, the mechanism notes and the text report as `reproduce` prints it.
pub fn scenario_page(info: &ScenarioInfo, sc: &ReproScenario, text: &str) -> String {
    let mut b = String::new();
    let _ = writeln!(b, "<p><a href=\"index.html\">← all scenarios</a></p>");
    let _ = writeln!(b, "<h1>{}</h1>", esc(&info.title));
    let _ = writeln!(
        b,
        "<p class=\"meta\">scenario <b>{}</b> · platform <b>{}</b> · seed {} · {} run{} per variant{}</p>",
        esc(&info.name),
        esc(&info.platform),
        esc(&info.seed),
        sc.runs,
        if sc.runs == 1 { "" } else { "s" },
        if sc.quick { " · quick" } else { "" }
    );
    if !info.workloads.is_empty() {
        let _ = writeln!(
            b,
            "<p class=\"meta\">workloads: {}</p>",
            info.workloads
                .iter()
                .map(|w| format!("<code>{}</code>", esc(w)))
                .collect::<Vec<_>>()
                .join(", ")
        );
    }
    if !info.variants.is_empty() {
        b.push_str("<h2>Kernels</h2>\n<table>\n<tr><th>variant</th><th>kernel</th></tr>\n");
        for (k, l) in &info.variants {
            let _ = writeln!(
                b,
                "<tr><td>{}</td><td><code>{}</code></td></tr>",
                esc(l),
                esc(k)
            );
        }
        b.push_str("</table>\n");
    }
    let passed = sc.targets.iter().filter(|t| t.pass).count();
    let _ = writeln!(b, "<h2>Targets: {passed} of {} pass</h2>", sc.targets.len());
    if !sc.targets.is_empty() {
        b.push_str("<table>\n<tr><th>target</th><th>simulated</th><th>result</th></tr>\n");
        for t in &sc.targets {
            let (class, word) = if t.pass {
                ("pass", "PASS")
            } else {
                ("miss", "MISS")
            };
            let _ = writeln!(
                b,
                "<tr><td>{}</td><td class=\"n\">{}</td><td class=\"{class}\">{word}</td></tr>",
                esc(&t.description),
                opt_num(t.simulated)
            );
        }
        b.push_str("</table>\n");
    }
    let plotted = sc.plotted_metrics();
    if !plotted.is_empty() {
        b.push_str("<h2>Published vs simulated</h2>\n");
    }
    for m in &plotted {
        let mut bars = sc.bars(m);
        // the scenario's own names for its variants
        for b in &mut bars {
            if let Some((_, l)) = info.variants.iter().find(|(k, _)| *k == b.label) {
                b.label = l.clone();
            }
        }
        if bars.is_empty() {
            continue;
        }
        match schedlab_plot::published_vs_simulated(
            &format!("{}: {m}", sc.name),
            &sc.unit(m),
            &bars,
        ) {
            Ok(svg) => {
                let _ = writeln!(
                    b,
                    "<figure>{}</figure>",
                    svg_img(&svg, &format!("{m}: published and simulated per variant"))
                );
            }
            Err(e) => {
                let _ = writeln!(b, "<p>{}: no figure ({})</p>", esc(m), esc(&e.to_string()));
            }
        }
    }
    b.push_str("<h2>Results</h2>\n");
    for m in sc.metrics() {
        let unit = sc.unit(&m);
        let _ = writeln!(
            b,
            "<h3>{}{}</h3>",
            esc(&m),
            if unit.is_empty() {
                String::new()
            } else {
                format!(" ({})", esc(&unit))
            }
        );
        b.push_str("<table>\n<tr><th>variant</th><th>published</th><th>simulated (mean)</th><th>sd</th><th>simulated / published</th></tr>\n");
        for r in sc.rows.iter().filter(|r| r.metric == m) {
            let ratio = match (r.simulated, r.published) {
                (Some(s), Some(p)) if p != 0.0 => num(s / p),
                _ => "–".into(),
            };
            // the scenario's label of the variant, with its kernel when they differ
            let name = match info.variants.iter().find(|(k, _)| *k == r.variant) {
                Some((k, l)) if l != k => format!("{} <code>{}</code>", esc(l), esc(k)),
                _ => format!("<code>{}</code>", esc(&r.variant)),
            };
            let _ = writeln!(
                b,
                "<tr><td>{name}</td><td class=\"n\">{}</td><td class=\"n\">{}</td><td class=\"n\">{}</td><td class=\"n\">{ratio}</td></tr>",
                opt_num(r.published),
                opt_num(r.simulated),
                opt_num(r.simulated_stddev)
            );
        }
        b.push_str("</table>\n");
    }
    if !info.notes.is_empty() {
        b.push_str("<h2>Mechanism notes</h2>\n");
        for n in &info.notes {
            let _ = writeln!(b, "<p>{}</p>", esc(n));
        }
    }
    if !text.is_empty() {
        let _ = writeln!(
            b,
            "<h2>Text report</h2>\n<pre>{}</pre>",
            esc(text.trim_end())
        );
    }
    page(&format!("schedlab: {}", info.name), &b)
}

/// The index: one line per scenario page, with its title and targets passed.
pub fn index_page(entries: &[(ScenarioInfo, ReproScenario)]) -> String {
    let mut b = String::from("<h1>schedlab reproductions</h1>\n<table>\n<tr><th>scenario</th><th>title</th><th>platform</th><th>targets</th></tr>\n");
    for (info, sc) in entries {
        let passed = sc.targets.iter().filter(|t| t.pass).count();
        let class = if passed == sc.targets.len() {
            "pass"
        } else {
            "miss"
        };
        let _ = writeln!(
            b,
            "<tr><td><a href=\"{}.html\">{}</a></td><td>{}</td><td>{}</td><td class=\"{class}\">{passed} / {}</td></tr>",
            esc(&page_name(&info.name)),
            esc(&info.name),
            esc(&info.title),
            esc(&info.platform),
            sc.targets.len()
        );
    }
    b.push_str("</table>\n");
    page("schedlab reproductions", &b)
}

/// The file name (without `.html`) of a scenario's page: its name with anything but
/// letters, digits, `.`, `-`, `_` replaced by `_`.
pub fn page_name(scenario: &str) -> String {
    scenario
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || "._-".contains(c) {
                c
            } else {
                '_'
            }
        })
        .collect()
}

/// A sweep's report: per metric, the curves against the workload option that varies (when
/// there is one) and a table of mean ± sd over the seeds per configuration.
pub fn sweep_page(rows: &[SweepRow]) -> Result<String, String> {
    if rows.is_empty() {
        return Err("the sweep has no rows".into());
    }
    let mut metrics: Vec<&str> = Vec::new();
    for r in rows {
        if !metrics.contains(&r.metric.as_str()) {
            metrics.push(&r.metric);
        }
    }
    metrics.sort();
    let mut b = String::from("<h1>schedlab sweep</h1>\n");
    let count = |f: fn(&SweepRow) -> &str| {
        let mut v: Vec<&str> = rows.iter().map(f).collect();
        v.sort();
        v.dedup();
        v.len()
    };
    let _ = writeln!(
        b,
        "<p class=\"meta\">{} rows · {} platform(s) · {} kernel(s) · {} workload(s) · {} metric(s)</p>",
        rows.len(),
        count(|r| &r.platform),
        count(|r| &r.kernel),
        count(|r| &r.workload),
        metrics.len()
    );
    for m in metrics {
        let sel: Vec<SweepRow> = rows.iter().filter(|r| r.metric == m).cloned().collect();
        let unit = sel[0].unit.clone();
        let _ = writeln!(
            b,
            "<h2>{}{}</h2>",
            esc(m),
            if unit.is_empty() {
                String::new()
            } else {
                format!(" ({})", esc(&unit))
            }
        );
        if let Ok((opt, unit, curves)) = crate::plots::sweep_curves(&sel, m, None) {
            let y = if unit.is_empty() {
                m.to_string()
            } else {
                format!("{m} ({unit})")
            };
            if let Ok(svg) = schedlab_plot::curves(&format!("{m} against {opt}"), &opt, &y, &curves)
            {
                let _ = writeln!(
                    b,
                    "<figure>{}</figure>",
                    svg_img(&svg, &format!("{m} against {opt}"))
                );
            }
        }
        // configuration → values over seeds, shown in natural order (v6.6 before v6.18,
        // -g 2 before -g 16)
        let mut groups: BTreeMap<(&str, &str, &str, &str), Vec<f64>> = BTreeMap::new();
        for r in rows.iter().filter(|r| r.metric == m) {
            groups
                .entry((&r.platform, &r.kernel, &r.workload, &r.duration))
                .or_default()
                .push(r.value);
        }
        b.push_str("<table>\n<tr><th>platform</th><th>kernel</th><th>workload</th><th>duration</th><th>seeds</th><th>mean</th><th>sd</th></tr>\n");
        let mut groups: Vec<_> = groups.into_iter().collect();
        groups.sort_by(|a, b| {
            let (x, y) = (a.0, b.0);
            natural_cmp(x.0, y.0)
                .then(natural_cmp(x.1, y.1))
                .then(natural_cmp(x.2, y.2))
                .then(natural_cmp(x.3, y.3))
        });
        for ((p, k, w, d), v) in groups {
            let _ = writeln!(
                b,
                "<tr><td>{}</td><td><code>{}</code></td><td><code>{}</code></td><td>{}</td><td class=\"n\">{}</td><td class=\"n\">{}</td><td class=\"n\">{}</td></tr>",
                esc(p), esc(k), esc(w), esc(d), v.len(), num(crate::stats::amean(&v)), num(crate::stats::stddev(&v))
            );
        }
        b.push_str("</table>\n");
    }
    Ok(page("schedlab sweep", &b))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::plots::{ReproRow, ReproTarget};

    #[test]
    fn base64_rfc4648_vectors() {
        // RFC 4648 section 10
        for (i, o) in [
            ("", ""),
            ("f", "Zg=="),
            ("fo", "Zm8="),
            ("foo", "Zm9v"),
            ("foob", "Zm9vYg=="),
            ("fooba", "Zm9vYmE="),
            ("foobar", "Zm9vYmFy"),
        ] {
            assert_eq!(base64(i.as_bytes()), o);
        }
        assert_eq!(
            esc("<a href=\"x\">&'"),
            "&lt;a href=&quot;x&quot;&gt;&amp;&#39;"
        );
    }

    #[test]
    fn numbers() {
        assert_eq!(num(1506572.4), "1506572");
        assert_eq!(num(0.61234567), "0.612346");
        assert_eq!(num(12.5), "12.5");
        assert_eq!(num(0.0), "0");
    }

    fn scenario() -> (ScenarioInfo, ReproScenario) {
        let row = |v: &str, p: Option<f64>, s: f64| ReproRow {
            variant: v.into(),
            metric: "ops".into(),
            unit: "ops/s".into(),
            published: p,
            simulated: Some(s),
            simulated_stddev: Some(1.0),
        };
        (
            ScenarioInfo {
                name: "dd<x>".into(),
                title: "A & B".into(),
                seed: "000".into(),
                platform: "rpi5".into(),
                workloads: vec!["stress-ng --pipe 4".into()],
                variants: vec![("v6.6".into(), "6.6".into())],
                notes: vec!["the <reason>".into()],
            },
            ReproScenario {
                name: "dd<x>".into(),
                quick: true,
                runs: 2,
                rows: vec![row("v6.6", Some(200.0), 150.0), row("v6.12", None, 100.0)],
                targets: vec![
                    ReproTarget {
                        description: "a target".into(),
                        simulated: Some(0.5),
                        pass: true,
                    },
                    ReproTarget {
                        description: "another".into(),
                        simulated: None,
                        pass: false,
                    },
                ],
            },
        )
    }

    #[test]
    fn scenario_page_has_everything_escaped_and_no_external_resource() {
        let (info, sc) = scenario();
        let h = scenario_page(&info, &sc, "TEXT <report>");
        assert!(h.starts_with("<!DOCTYPE html>"));
        assert!(h.contains("<h1>A &amp; B</h1>"));
        assert!(h.contains("the &lt;reason&gt;") && h.contains("TEXT &lt;report&gt;"));
        assert!(h.contains(">PASS<") && h.contains(">MISS<") && h.contains("1 of 2 pass"));
        // one figure (ops has a published value), inline
        assert_eq!(
            h.matches("<img src=\"data:image/svg+xml;base64,").count(),
            1
        );
        // the table: 150 / 200 = 0.75
        assert!(h.contains(">150<") && h.contains(">200<") && h.contains(">0.75<"));
        // variants by their label (and kernel), or by the id the JSON has
        assert!(
            h.contains("<td>6.6 <code>v6.6</code></td>")
                && h.contains("<td><code>v6.12</code></td>")
        );
        assert!(!h.contains("http://") && !h.contains("https://") && !h.contains("<script"));
        assert_eq!(h, scenario_page(&info, &sc, "TEXT <report>"));
        let idx = index_page(&[(info, sc)]);
        assert!(idx.contains("href=\"dd_x_.html\"") && idx.contains("1 / 2"));
    }

    #[test]
    fn sweep_report() {
        let r = |k: &str, g: u32, seed: i64, v: f64| SweepRow {
            platform: "rpi5".into(),
            kernel: k.into(),
            workload: format!("hackbench -g {g}"),
            duration: "1s".into(),
            seed,
            metric: "time".into(),
            unit: "s".into(),
            value: v,
        };
        let rows = vec![
            r("v6.6", 1, 1, 1.0),
            r("v6.6", 1, 2, 3.0),
            r("v6.6", 2, 1, 4.0),
            r("v6.18", 1, 1, 2.0),
            r("v6.18", 2, 1, 5.0),
        ];
        let h = sweep_page(&rows).unwrap();
        assert_eq!(h.matches("data:image/svg+xml;base64,").count(), 1);
        // v6.6 at -g 1: seeds 1.0 and 3.0: mean 2, sd sqrt(2) = 1.41421
        assert!(
            h.contains("<td class=\"n\">2</td><td class=\"n\">2</td><td class=\"n\">1.41421</td>"),
            "{h}"
        );
        assert_eq!(h, sweep_page(&rows).unwrap());
        assert!(sweep_page(&[]).is_err());
    }
}
