//! Unified diffs of several files, for a reviewer: a hunk that is identical
//! in several files is printed once, under the first of them, and its `@@`
//! line names the others. One change to a shared `templates/lib/` function
//! then reads as one hunk, not as one per installer.

use std::collections::HashMap;

/// One file's old and new text.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Change {
    /// The file's path (shown as `a/PATH` and `b/PATH`).
    pub path: String,
    /// The text on disk.
    pub old: String,
    /// The text it should have.
    pub new: String,
}

/// A hunk: its `@@ -a,b +c,d @@` line and the lines after it.
struct Hunk {
    header: String,
    body: String,
}

fn hunks(c: &Change) -> Vec<Hunk> {
    let diff = similar::TextDiff::from_lines(c.old.as_str(), c.new.as_str());
    diff.unified_diff()
        .iter_hunks()
        .map(|h| {
            let text = h.to_string();
            let (_, body) = text.split_once('\n').unwrap_or((&text, ""));
            Hunk {
                header: h.header().to_string(),
                body: body.to_owned(),
            }
        })
        .collect()
}

/// The unified diff of every change, in order, with identical hunks folded:
/// a hunk whose lines (context included) also appear as a hunk of later
/// files is printed once, its `@@` line followed by `also in: PATH, ...`
/// (line numbers are those of the file it is printed under), and skipped
/// in those files. A file left with no hunk of its own gets no header.
pub fn folded(changes: &[Change]) -> String {
    let per_file: Vec<Vec<Hunk>> = changes.iter().map(hunks).collect();
    // For each hunk body, the files that hold it, in order, once each.
    let mut holders: HashMap<&str, Vec<usize>> = HashMap::new();
    for (i, hs) in per_file.iter().enumerate() {
        for h in hs {
            let files = holders.entry(h.body.as_str()).or_default();
            if files.last() != Some(&i) {
                files.push(i);
            }
        }
    }
    let mut out = String::new();
    for (i, (change, hs)) in changes.iter().zip(&per_file).enumerate() {
        let mut headed = false;
        for h in hs {
            let files = &holders[h.body.as_str()];
            if files[0] != i {
                continue; // printed under an earlier file
            }
            if !headed {
                out.push_str(&format!("--- a/{0}\n+++ b/{0}\n", change.path));
                headed = true;
            }
            out.push_str(&h.header);
            if files.len() > 1 {
                let others: Vec<&str> = files[1..]
                    .iter()
                    .map(|&j| changes[j].path.as_str())
                    .collect();
                out.push_str(&format!(" also in: {}", others.join(", ")));
            }
            out.push('\n');
            out.push_str(&h.body);
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn change(path: &str, old: &str, new: &str) -> Change {
        Change {
            path: path.into(),
            old: old.into(),
            new: new.into(),
        }
    }

    #[test]
    fn a_hunk_shared_by_files_is_printed_once_naming_them() {
        let lib = |x: &str| format!("f() {{\n  1\n  2\n  {x}\n  3\n  4\n}}\n");
        let filler = "\n".repeat(10);
        let changes = [
            change(
                "one.sh",
                &format!("x\n{}", lib("a")),
                &format!("x\n{}", lib("b")),
            ),
            change(
                "two.sh",
                &format!("{}{filler}y\n", lib("a")),
                &format!("{}{filler}z\n", lib("b")),
            ),
            change("three.sh", &lib("a"), &lib("b")),
        ];
        let d = folded(&changes);
        assert_eq!(d.matches("-  a\n").count(), 1, "{d}");
        assert!(
            d.contains("--- a/one.sh\n+++ b/one.sh\n@@ -2,7 +2,7 @@ also in: two.sh, three.sh\n"),
            "{d}"
        );
        // two.sh keeps its own hunk; three.sh has none left.
        assert!(d.contains("--- a/two.sh\n+++ b/two.sh\n@@ "), "{d}");
        assert!(d.contains("-y\n+z\n"), "{d}");
        assert!(!d.contains("a/three.sh"), "{d}");
    }

    #[test]
    fn a_single_file_is_a_plain_unified_diff() {
        let c = change("f", "a\nb\n", "a\nc\n");
        let plain = similar::TextDiff::from_lines("a\nb\n", "a\nc\n")
            .unified_diff()
            .header("a/f", "b/f")
            .to_string();
        assert_eq!(folded(&[c]), plain);
    }
}
