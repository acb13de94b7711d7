//! The spec side of `shforge pin`: the layout check, `prepare.sh`'s table,
//! and the derived spec's text.

use std::collections::BTreeSet;
use std::process::{Command, Stdio};

use super::{Made, PinError, Plan, Relocate};
use crate::installer::InstallerSpec;
use crate::installer::spec::ArtifactSpec;

/// The install-relative files the spec runs, to be found in the new
/// archives.
pub(super) struct Layout {
    wanted: Vec<(String, &'static str)>,
}

impl Layout {
    pub(super) fn of(spec: &InstallerSpec) -> Layout {
        let mut wanted = Vec::new();
        let launcher_path = spec.launcher.as_ref().map(|l| l.path.clone());
        if launcher_path.as_deref() != Some(spec.entry.as_str()) {
            wanted.push((spec.entry.clone(), "the spec's entry"));
        }
        if let Some(l) = &spec.launcher {
            wanted.push((l.program.clone(), "the launcher's program"));
            for a in &l.args {
                wanted.push((a.clone(), "a launcher argument"));
            }
        }
        Layout { wanted }
    }

    /// Each wanted file that `a` installs (by its `dest` and `subdir`)
    /// must be in its new archive.
    pub(super) fn check(
        &self,
        a: &ArtifactSpec,
        m: &Made,
        name: &str,
        version: &str,
    ) -> Result<(), PinError> {
        for (p, what) in &self.wanted {
            let rel = match &a.dest {
                Some(d) => match p.strip_prefix(&format!("{d}/")) {
                    Some(r) => r.to_owned(),
                    None => continue,
                },
                None => p.clone(),
            };
            let member = match &a.subdir {
                Some(s) => format!("{s}/{rel}"),
                None => rel,
            };
            // A row without dest installs at the root, where a launcher or
            // another row's dest may provide the file instead: only a
            // member under the archive's own top dir is asked of it.
            if a.dest.is_none() && !member.starts_with("package/") {
                continue;
            }
            require_member(m, &member, name, version, what)?;
        }
        Ok(())
    }
}

/// One file of KIND's dir of the shipped installers/bundles, if any.
pub(super) fn bundle_file(kind: &str, file: &str) -> Option<&'static str> {
    let rel = format!("bundles/{kind}/{file}");
    crate::shipped::SCRIPT_FILES
        .iter()
        .find(|(r, _)| *r == rel)
        .map(|(_, t)| *t)
}

/// The member names of `m`'s tar.gz (`tar -tzf`), without a leading `./`.
pub(super) fn archive_names(m: &Made) -> Result<Vec<String>, PinError> {
    let got = Command::new("tar")
        .arg("-tzf")
        .arg(&m.file)
        .stdin(Stdio::null())
        .stderr(Stdio::null())
        .output()
        .map_err(|e| PinError::Failed(format!("tar: {e}")))?;
    if !got.status.success() {
        return Err(PinError::Failed(format!(
            "{}: not a readable tar.gz",
            m.path
        )));
    }
    Ok(String::from_utf8_lossy(&got.stdout)
        .lines()
        .map(|l| l.trim_start_matches("./").to_owned())
        .collect())
}

/// `member` must be a file of `m`'s archive, else a [`PinError::Layout`].
pub(super) fn require_member(
    m: &Made,
    member: &str,
    name: &str,
    version: &str,
    what: &str,
) -> Result<(), PinError> {
    let names: BTreeSet<String> = archive_names(m)?.into_iter().collect();
    if names.contains(member) {
        Ok(())
    } else {
        Err(PinError::Layout(format!(
            "{name}@{version}: {} has no {member} ({what}): the package's layout changed; \
             write this version's spec by hand; nothing written",
            m.path
        )))
    }
}

/// The key/value lines of the `[[artifact.relocate]]` table in
/// `prepare.sh`'s output.
pub(super) fn parse_relocate(printed: &str) -> Option<Relocate> {
    let mut in_table = false;
    let mut r = Relocate::default();
    for line in printed.lines() {
        let t = line.trim();
        if t == "[[artifact.relocate]]" {
            in_table = true;
            continue;
        }
        if !in_table || t.starts_with('#') || t.is_empty() {
            continue;
        }
        let (k, v) = t.split_once('=')?;
        r.fields.push((k.trim().to_owned(), v.trim().to_owned()));
    }
    (!r.fields.is_empty()).then_some(r)
}

/// The shipped text with each derived row's lines replaced, dropped rows
/// left out, and `version`/`[check].expect` moved.
pub(super) fn rewrite(
    text: &str,
    spec: &InstallerSpec,
    plans: &[Plan],
    made: &[Option<Made>],
    old: &str,
    new: &str,
    name: &str,
) -> Result<String, PinError> {
    let lines: Vec<&str> = text.lines().collect();
    let mut out = format!(
        "# Pinned by `shforge pin {name}@{new}`, derived from the shipped spec of {old}:\n\
         # the rows of {old} made by `npm pack` (and prepare.sh from them) or\n\
         # by bundle.sh from a lock (locked again at {new}) were\n\
         # made again for {new}, with the digests and sizes of the new files;\n\
         # the runtime rows are the shipped ones. The comments below were\n\
         # written for {old}.\n"
    );
    let mut row: Option<usize> = None; // index of the current [[artifact]]
    let mut in_relocate = false;
    let mut section = String::new();
    let mut count = 0usize;
    let mut pending: Vec<String> = Vec::new(); // comments/blank lines
    let mut skipping = false;
    for l in lines {
        let t = l.trim();
        if t.starts_with('[') && !t.starts_with("[[artifact.") {
            // A new top-level table.
            section = t.to_owned();
            in_relocate = false;
            if t == "[[artifact]]" {
                row = Some(count);
                count += 1;
            } else {
                row = None;
            }
            skipping = row.is_some_and(|i| matches!(plans.get(i), Some(Plan::Drop)));
            if !skipping {
                for p in pending.drain(..) {
                    out.push_str(&p);
                    out.push('\n');
                }
                out.push_str(l);
                out.push('\n');
            } else {
                pending.clear();
            }
            continue;
        }
        if t.starts_with("[[artifact.") {
            in_relocate = t == "[[artifact.relocate]]";
            if !skipping {
                for p in pending.drain(..) {
                    out.push_str(&p);
                    out.push('\n');
                }
                out.push_str(l);
                out.push('\n');
            }
            continue;
        }
        if t.is_empty() || t.starts_with('#') {
            pending.push(l.to_owned());
            continue;
        }
        if skipping {
            pending.clear();
            continue;
        }
        for p in pending.drain(..) {
            out.push_str(&p);
            out.push('\n');
        }
        let key = key_of(l).unwrap_or_default();
        let line = match (row, &section) {
            (None, s) if s.is_empty() && key == "version" => format!("version = {}", q(new)),
            (None, s) if s == "[check]" && key == "expect" => l.replace(old, new),
            (Some(i), _) => match (&plans[i], &made[i]) {
                (p, Some(m)) if !matches!(p, Plan::Keep | Plan::Drop) => {
                    if in_relocate {
                        let r = m.relocate.as_ref();
                        match r.and_then(|r| r.fields.iter().find(|(k, _)| *k == key)) {
                            Some((k, v)) => format!("{k} = {v}"),
                            None => l.to_owned(),
                        }
                    } else {
                        match key.as_str() {
                            "path" => {
                                let mut s = format!("path = {}", q(&m.path));
                                if spec.artifacts[i].size.is_none() {
                                    s.push_str(&format!("\nsize = {}", m.size));
                                }
                                s
                            }
                            "size" => format!("size = {}", m.size),
                            "sha256" => format!("sha256 = {}", q(&m.sha256)),
                            "source" => l.replace(old, new),
                            _ => l.to_owned(),
                        }
                    }
                }
                _ => l.to_owned(),
            },
            _ => l.to_owned(),
        };
        out.push_str(&line);
        out.push('\n');
    }
    for p in pending.drain(..) {
        out.push_str(&p);
        out.push('\n');
    }
    Ok(out)
}

/// The key of a `key = value` line (none for a comment).
fn key_of(l: &str) -> Option<String> {
    let t = l.trim();
    if t.starts_with('#') {
        return None;
    }
    t.split_once('=').map(|(k, _)| k.trim().to_owned())
}

fn q(s: &str) -> String {
    format!("\"{s}\"")
}

/// The shipped harness spec with `installer = "installers/NAME.toml"`:
/// written as `OUT/harnesses/NAME.toml`, it names `OUT/installers/NAME.toml`
/// (a spec in a `harnesses` directory resolves its `installer` against that
/// directory's parent, as in a checkout).
pub(super) fn point_installer(text: &str, name: &str) -> Result<String, PinError> {
    let mut found = false;
    let mut out = String::new();
    for l in text.lines() {
        if !found && l.trim_start().starts_with("installer") && l.contains('=') {
            out.push_str(&format!("installer = \"installers/{name}.toml\"\n"));
            found = true;
        } else {
            out.push_str(l);
            out.push('\n');
        }
    }
    if found {
        Ok(out)
    } else {
        Err(PinError::Failed(format!(
            "{name}: the shipped harness spec has no installer line"
        )))
    }
}
