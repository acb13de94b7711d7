//! `[[artifact.chmod]]`: the mode of a file inside an archive (Qwen Code
//! ships its vendored `rg` as 0644). An adapter's spec, run through
//! `shforge installer --spec`, installs a tar.gz made here under every bash
//! of the matrix; a path that is not a regular file of the artifact's own
//! tree is refused with exit 6 and nothing placed, a bad path or mode is
//! refused with exit 2 when the installer is generated.

use crate::support;
use support::sha256_hex;

use std::fs;
use std::io::Write as _;
use std::os::unix::fs::PermissionsExt as _;
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};

use support::{code, run_shforge as shforge, text};

const TOOL: &[u8] = b"#!/bin/sh\necho 'tool 1.0'\n";

/// One member of a test archive.
enum M<'a> {
    Dir(&'a str),
    File(&'a str, &'a [u8], u32),
    Sym(&'a str, &'a str),
}

/// A tar.gz of `members`, in order, with the modes given (the system tar
/// and umask play no part).
fn tgz(members: &[M]) -> Vec<u8> {
    let mut b = tar::Builder::new(Vec::new());
    for m in members {
        let mut h = tar::Header::new_ustar();
        let (name, data, link): (&str, &[u8], Option<&str>) = match m {
            M::Dir(n) => {
                h.set_entry_type(tar::EntryType::Directory);
                h.set_mode(0o755);
                (n, b"", None)
            }
            M::File(n, d, mode) => {
                h.set_entry_type(tar::EntryType::Regular);
                h.set_mode(*mode);
                (n, d, None)
            }
            M::Sym(n, t) => {
                h.set_entry_type(tar::EntryType::Symlink);
                h.set_mode(0o777);
                (n, b"", Some(t))
            }
        };
        h.set_path(name).unwrap();
        if let Some(t) = link {
            h.set_link_name(t).unwrap();
        }
        h.set_size(data.len() as u64);
        h.set_mtime(0);
        h.set_cksum();
        b.append(&h, data).unwrap();
    }
    let tar = b.into_inner().unwrap();
    let mut child = Command::new("gzip")
        .arg("-nc")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .spawn()
        .unwrap();
    let mut stdin = child.stdin.take().unwrap();
    let writer = std::thread::spawn(move || stdin.write_all(&tar).unwrap());
    let out = child.wait_with_output().unwrap();
    writer.join().unwrap();
    assert!(out.status.success());
    out.stdout
}

/// A test world: the archive in `src/`, the spec, and (when the spec is
/// accepted) the generated installer.
struct World {
    dir: tempfile::TempDir,
}

impl World {
    fn src(&self) -> PathBuf {
        self.dir.path().join("src")
    }
    fn prefix(&self) -> PathBuf {
        self.dir.path().join("prefix")
    }
    fn script(&self) -> PathBuf {
        self.dir.path().join("install_tool.sh")
    }
    /// What the prefix holds besides lock files.
    fn prefix_entries(&self) -> Vec<String> {
        let Ok(rd) = fs::read_dir(self.prefix()) else {
            return Vec::new();
        };
        let mut v: Vec<String> = rd
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .filter(|n| !n.ends_with(".lock") && !n.ends_with(".lockq"))
            .collect();
        v.sort();
        v
    }
}

/// Write the archive and a spec whose one artifact is it, with `extra`
/// appended to the `[[artifact]]` table and `chmod` tables after it; run
/// `shforge installer --spec` and return the world and its output.
fn generate(members: &[M], extra: &str, chmods: &[(&str, &str)]) -> (World, Output) {
    generate_with_entry("bin/tool", members, extra, chmods)
}

/// [`generate`] with another entry.
fn generate_with_entry(
    entry: &str,
    members: &[M],
    extra: &str,
    chmods: &[(&str, &str)],
) -> (World, Output) {
    let w = World {
        dir: tempfile::tempdir().unwrap(),
    };
    fs::create_dir_all(w.src()).unwrap();
    let bytes = tgz(members);
    fs::write(w.src().join("tool.tgz"), &bytes).unwrap();
    let mut spec = format!(
        "name = \"tool\"\nversion = \"1.0\"\nentry = \"{entry}\"\n\n[[artifact]]\n\
         path = \"tool.tgz\"\nsha256 = \"{}\"\nunpack = \"tar.gz\"\narch = \"any\"\nlibc = \"any\"\n{extra}",
        sha256_hex(&bytes)
    );
    for (path, mode) in chmods {
        spec.push_str(&format!(
            "\n[[artifact.chmod]]\npath = \"{path}\"\nmode = \"{mode}\"\n"
        ));
    }
    let spec_path = w.dir.path().join("tool.toml");
    fs::write(&spec_path, spec).unwrap();
    let o = shforge(&[
        "installer",
        "--spec",
        spec_path.to_str().unwrap(),
        "--out",
        w.script().to_str().unwrap(),
    ]);
    (w, o)
}

fn install(sh: &support::Shell, w: &World) -> Output {
    let mut c = sh.command(&w.script());
    c.arg("--prefix")
        .arg(w.prefix())
        .arg("--source-dir")
        .arg(w.src());
    c.env_remove("SHELLOPTS").env_remove("BASH_ENV");
    support::run(c)
}

fn mode_of(p: &Path) -> u32 {
    fs::symlink_metadata(p).unwrap().permissions().mode() & 0o7777
}

/// The archive every hostile case starts from: an entry that already runs
/// (0755), so the only reason to fail is the chmod.
const RUNNABLE: &[M<'static>] = &[
    M::Dir("bin/"),
    M::File("bin/tool", TOOL, 0o755),
    M::File("bin/data", b"x\n", 0o644),
    M::Dir("lib/"),
    M::File("lib/real", b"y\n", 0o644),
    M::Sym("bin/link", "data"),
    M::Sym("alias", "lib"),
];

/// Generation succeeds; under every bash the install is refused with exit
/// 6, a message naming the chmod path, and nothing in the prefix.
fn refused_at_install(chmod_path: &str, why: &str) {
    let (w, o) = generate(RUNNABLE, "", &[(chmod_path, "755")]);
    assert_eq!(code(&o), 0, "{}", text(&o));
    let shells = support::bashes();
    for sh in &shells {
        let o = install(sh, &w);
        let err = String::from_utf8_lossy(&o.stderr);
        assert_eq!(code(&o), 6, "{}: {}", sh.name, text(&o));
        assert!(
            err.contains(&format!("chmod {chmod_path}: ")) && err.contains(why),
            "{}: {}",
            sh.name,
            text(&o)
        );
        assert_eq!(
            w.prefix_entries(),
            Vec::<String>::new(),
            "{}: something was placed",
            sh.name
        );
    }
    support::report(&format!("installer_modes::refused({chmod_path})"), &shells);
}

/// Generation is refused with exit 2 naming `field`; no script is written.
fn refused_at_generation(chmod: (&str, &str), field: &str) {
    let (w, o) = generate(RUNNABLE, "", &[chmod]);
    assert_eq!(code(&o), 2, "{}", text(&o));
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(err.contains(field), "{}", text(&o));
    assert_eq!(err.lines().count(), 1, "one line: {}", text(&o));
    assert!(!w.script().exists());
}

#[test]
fn a_0644_entry_is_installed_0755() {
    let members = [
        M::Dir("bin/"),
        M::File("bin/tool", TOOL, 0o644),
        M::File("bin/notes", b"n\n", 0o600),
    ];
    // Without the chmod the entry cannot run: the entry check fails.
    let (plain, o) = generate(&members, "", &[]);
    assert_eq!(code(&o), 0, "{}", text(&o));
    let (w, o) = generate(&members, "", &[("bin/tool", "755"), ("bin/notes", "0640")]);
    assert_eq!(code(&o), 0, "{}", text(&o));
    let sc = support::run({
        let mut c = Command::new("shellcheck");
        c.arg(w.script());
        c
    });
    assert!(
        sc.status.success(),
        "the chmod code is shellcheck clean: {}",
        text(&sc)
    );
    let shells = support::bashes();
    for sh in &shells {
        let o = install(sh, &plain);
        assert_eq!(code(&o), 6, "{}: {}", sh.name, text(&o));
        assert!(String::from_utf8_lossy(&o.stderr).contains("entry check failed"));

        let o = install(sh, &w);
        assert_eq!(code(&o), 0, "{}: {}", sh.name, text(&o));
        let entry = w.prefix().join("tool-1.0/bin/tool");
        let last = String::from_utf8_lossy(&o.stdout)
            .lines()
            .last()
            .unwrap_or("")
            .to_owned();
        assert_eq!(Path::new(&last), entry, "{}", sh.name);
        assert_eq!(mode_of(&entry), 0o755, "{}", sh.name);
        assert_eq!(
            mode_of(&w.prefix().join("tool-1.0/bin/notes")),
            0o640,
            "{}",
            sh.name
        );
        fs::remove_dir_all(w.prefix()).unwrap();
    }
    support::report("installer_modes::a_0644_entry_is_installed_0755", &shells);
}

#[test]
fn chmod_paths_are_inside_the_kept_subdir_at_dest() {
    // Codex-like: only package/vendor/ is installed, at `x/`; the path is
    // relative to what is installed.
    let members = [
        M::Dir("package/"),
        M::File("package/README", b"r\n", 0o644),
        M::Dir("package/vendor/"),
        M::Dir("package/vendor/bin/"),
        M::File("package/vendor/bin/tool", TOOL, 0o644),
    ];
    let (w, o) = generate_with_entry(
        "x/bin/tool",
        &members,
        "subdir = \"package/vendor\"\ndest = \"x\"\n",
        &[("bin/tool", "755")],
    );
    assert_eq!(code(&o), 0, "{}", text(&o));
    let shells = support::bashes();
    for sh in &shells {
        let o = install(sh, &w);
        assert_eq!(code(&o), 0, "{}: {}", sh.name, text(&o));
        assert_eq!(
            mode_of(&w.prefix().join("tool-1.0/x/bin/tool")),
            0o755,
            "{}",
            sh.name
        );
        fs::remove_dir_all(w.prefix()).unwrap();
    }
    support::report(
        "installer_modes::chmod_paths_are_inside_the_kept_subdir_at_dest",
        &shells,
    );
}

#[test]
fn a_symlink_is_refused() {
    refused_at_install("bin/link", "is a symlink");
}

#[test]
fn a_directory_is_refused() {
    refused_at_install("lib", "is a directory");
}

#[test]
fn a_missing_path_is_refused() {
    refused_at_install("bin/nope", "no such file");
}

#[test]
fn a_path_through_a_symlink_is_refused() {
    refused_at_install("alias/real", "alias is a symlink");
}

#[test]
fn a_path_through_a_file_is_refused() {
    refused_at_install("bin/data/x", "bin/data is missing or not a directory");
}

#[test]
fn dot_dot_is_refused_at_generation() {
    refused_at_generation(("../outside", "755"), "artifact[0].chmod[0].path: ");
    refused_at_generation(("bin/../tool", "755"), "artifact[0].chmod[0].path: ");
    refused_at_generation(("/etc/passwd", "755"), "artifact[0].chmod[0].path: ");
}

#[test]
fn setuid_setgid_sticky_and_bad_modes_are_refused_at_generation() {
    for m in ["4755", "2755", "1755", "6755", "999", "75", "u+x", "07555"] {
        refused_at_generation(("bin/tool", m), "artifact[0].chmod[0].mode: ");
    }
}
