//! Records in the binary a digest of the sources it was built from, so that
//! `shforge generate` and `shforge check`, run inside a shforge source tree,
//! can refuse to work from stale templates (see src/provenance.rs); and
//! writes the shipped tables from the directories that hold them (see
//! src/shipped.rs): a harness is its files, with no Rust to edit.

#[path = "src/source_digest.rs"]
mod source_digest;

use std::fmt::Write as _;
use std::path::{Path, PathBuf};

fn main() {
    let root =
        std::path::PathBuf::from(std::env::var_os("CARGO_MANIFEST_DIR").expect("cargo sets it"));
    for dir in source_digest::DIRS {
        println!("cargo:rerun-if-changed={dir}");
    }
    let digest = source_digest::digest(&root).expect("the source tree is readable");
    println!("cargo:rustc-env=SHFORGE_SOURCE_DIGEST={digest}");
    let out = PathBuf::from(std::env::var_os("OUT_DIR").expect("cargo sets it"));
    std::fs::write(out.join("shipped.rs"), shipped(&root)).expect("OUT_DIR is writable");
}

/// The variant names kept from before the table was generated, where the
/// file name's words are not the product's (`opencode` is OpenCode).
const VARIANTS: &[(&str, &str)] = &[("opencode", "OpenCode"), ("openclaw", "OpenClaw")];

/// `claude-code` → `ClaudeCode`.
fn variant(stem: &str) -> String {
    if let Some((_, v)) = VARIANTS.iter().find(|(s, _)| *s == stem) {
        return (*v).to_owned();
    }
    stem.split('-')
        .map(|w| {
            let mut c = w.chars();
            c.next()
                .map(|f| f.to_ascii_uppercase().to_string() + c.as_str())
                .unwrap_or_default()
        })
        .collect()
}

/// The `*.toml` files of `dir`, sorted by name: (stem, absolute path).
fn tomls(dir: &Path) -> Vec<(String, PathBuf)> {
    let mut v: Vec<(String, PathBuf)> = std::fs::read_dir(dir)
        .unwrap_or_else(|e| panic!("{}: {e}", dir.display()))
        .map(|e| e.expect("a readable directory").path())
        .filter_map(|p| {
            let stem = p.file_name()?.to_str()?.strip_suffix(".toml")?.to_owned();
            Some((stem, p))
        })
        .collect();
    v.sort();
    v
}

/// Every regular file under `dir`, sorted, as paths relative to `base`.
fn files_under(base: &Path, dir: &Path, out: &mut Vec<String>) {
    let mut entries: Vec<PathBuf> = std::fs::read_dir(dir)
        .unwrap_or_else(|e| panic!("{}: {e}", dir.display()))
        .map(|e| e.expect("a readable directory").path())
        .collect();
    entries.sort();
    for p in entries {
        let meta = std::fs::symlink_metadata(&p).expect("a readable entry");
        if meta.is_dir() {
            files_under(base, &p, out);
        } else if meta.is_file() {
            let rel = p.strip_prefix(base).expect("under base");
            out.push(rel.to_str().expect("UTF-8 names").to_owned());
        }
    }
}

/// The Rust text of src/shipped.rs's tables.
fn shipped(root: &Path) -> String {
    let mut s = String::new();
    let harnesses = tomls(&root.join("harnesses"));
    let mut installers_named = Vec::new();
    let mut variants = Vec::new();
    for (stem, path) in &harnesses {
        let text = std::fs::read_to_string(path).expect("a readable spec");
        let t: toml::Table = text
            .parse()
            .unwrap_or_else(|e| panic!("{}: not TOML: {e}", path.display()));
        let name = t.get("name").and_then(|v| v.as_str());
        assert_eq!(
            name,
            Some(stem.as_str()),
            "{}: name is not the file's",
            path.display()
        );
        let doc = t
            .get("description")
            .and_then(|v| v.as_str())
            .unwrap_or(stem);
        if let Some(i) = t.get("installer").and_then(|v| v.as_str()) {
            installers_named.push(i.to_owned());
        }
        variants.push((variant(stem), doc.to_owned(), path.clone()));
    }
    let n = variants.len();
    s.push_str("/// A shipped harness: one per `harnesses/NAME.toml`, in file-name order\n");
    s.push_str("/// (written by build.rs from that directory).\n");
    s.push_str("#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]\n");
    s.push_str("pub enum Harness {\n");
    for (v, doc, _) in &variants {
        let _ = writeln!(s, "    /// {}.\n    {v},", doc.replace('\n', " "));
    }
    s.push_str("}\n\n");
    s.push_str(
        "impl Harness {\n    /// Every harness, in a fixed order (the order of [`SHIPPED`]).\n",
    );
    let _ = writeln!(s, "    pub const ALL: [Harness; {n}] = [");
    for (v, _, _) in &variants {
        let _ = writeln!(s, "        Harness::{v},");
    }
    s.push_str("    ];\n}\n\n");
    s.push_str("/// The shipped harnesses and their spec files: the one table that names\n");
    s.push_str("/// them (the enum is only a typed handle on a row).\n");
    let _ = writeln!(s, "pub const SHIPPED: [(Harness, &str); {n}] = [");
    for (v, _, p) in &variants {
        let _ = writeln!(
            s,
            "    (Harness::{v}, include_str!({:?})),",
            p.to_str().unwrap()
        );
    }
    s.push_str("];\n\n");
    // Installer specs: those a harness names, then the others (runtimes).
    let mut harness_specs = String::new();
    let mut runtime_specs = String::new();
    for (stem, path) in tomls(&root.join("installers")) {
        let rel = format!("installers/{stem}.toml");
        let row = format!(
            "    ({stem:?}, include_str!({:?})),\n",
            path.to_str().unwrap()
        );
        if installers_named.contains(&rel) {
            harness_specs.push_str(&row);
        } else {
            runtime_specs.push_str(&row);
        }
    }
    s.push_str("/// The harness specs kept in the repository: (name, TOML text).\n");
    let _ = writeln!(
        s,
        "pub const HARNESS_SPECS: &[(&str, &str)] = &[\n{harness_specs}];\n"
    );
    s.push_str("/// The runtime specs kept in the repository that belong to no harness:\n");
    s.push_str("/// (name, TOML text). `bash` is the carried static bash, for images\n");
    s.push_str("/// without a bash of 3.2 or later (the bootstrap's `--carried-bash`).\n");
    let _ = writeln!(
        s,
        "pub const RUNTIME_SPECS: &[(&str, &str)] = &[\n{runtime_specs}];\n"
    );
    // The host-side recipes and their inputs: every file under installers/
    // but the specs and the README.
    let inst = root.join("installers");
    let mut files = Vec::new();
    files_under(&inst, &inst, &mut files);
    s.push_str("/// The host-side scripts and the inputs they read, as `installers/` holds\n");
    s.push_str("/// them (every file there but the specs and its README); written to\n");
    s.push_str("/// `STAGE/installers/` before a script source runs.\n");
    s.push_str("pub const SCRIPT_FILES: &[(&str, &str)] = &[\n");
    for rel in files {
        if (!rel.contains('/') && (rel.ends_with(".toml") || rel == "README.md"))
            || rel.ends_with("/README.md")
        {
            continue;
        }
        let _ = writeln!(
            s,
            "    ({rel:?}, include_str!({:?})),",
            inst.join(&rel).to_str().unwrap()
        );
    }
    s.push_str("];\n");
    s
}
