//! The smoke's result table (Markdown), one row per harness and mode, and
//! the details of every failed check below it.

use std::fmt::Write as _;
use std::time::Duration;

use super::Row;
use super::checks::NAMES;

fn secs(d: Duration) -> String {
    format!("{:.1} s", d.as_secs_f64())
}

/// Render the rows.
pub fn render(rows: &[Row]) -> String {
    let mut out = String::new();
    let _ = write!(out, "| harness | mode | install fresh / reused | rollout |");
    for n in NAMES {
        let _ = write!(out, " {n} |");
    }
    let _ = writeln!(out, " outside session dir |");
    let _ = write!(out, "| --- | --- | --- | --- |");
    for _ in NAMES {
        let _ = write!(out, " --- |");
    }
    let _ = writeln!(out, " --- |");
    let mut failures = Vec::new();
    for r in rows {
        let install = match &r.install {
            Ok((fresh, reused)) => format!("{} / {}", secs(*fresh), secs(*reused)),
            Err(e) => {
                let line = format!("{} install: {e}", r.harness);
                if !failures.contains(&line) {
                    failures.push(line);
                }
                "✗".to_owned()
            }
        };
        let rollout = r.rollout.map_or("—".to_owned(), secs);
        let _ = write!(
            out,
            "| {} | {} | {install} | {rollout} |",
            r.harness, r.mode
        );
        for n in NAMES {
            let cell = match r.checks.iter().find(|c| c.name == n) {
                Some(c) if c.ok => "✓",
                Some(c) => {
                    failures.push(format!("{} {} {n}: {}", r.harness, r.mode, c.detail));
                    "✗"
                }
                None => "—",
            };
            let _ = write!(out, " {cell} |");
        }
        let outside = if r.outside.is_empty() {
            "nothing".to_owned()
        } else {
            r.outside.join(", ")
        };
        let _ = writeln!(out, " {outside} |");
    }
    if !failures.is_empty() {
        let _ = writeln!(out);
        for f in failures {
            let _ = writeln!(out, "- ✗ {f}");
        }
    }
    out
}
