//! The private glibc runtime: a real runtime built by
//! `installers/glibc-runtime/build.sh` from the pinned Debian packages, a
//! real C program prepared by `prepare.sh`, installed by a generated
//! installer with bash: relocation, the image-glibc comparison, bad
//! prefixes (2), tampered or relocated programs (5), a moved install, and a
//! musl-only root made from Debian's musl + busybox-static + bash-static in
//! which the program runs with nothing added to the image, while the
//! image's ld.so.preload, ld.so.cache and library directories are ignored.
//!
//! The .debs are fetched once with `apt-get download` into
//! `$CARGO_TARGET_TMPDIR/glibc-debs` (or taken from `SHFORGE_GLIBC_DEBS`);
//! without them the tests skip loudly (fail with SHFORGE_REQUIRE_SHELLS=1).

use crate::support;
use support::sha256_hex;

use std::fs;
use std::os::unix::fs::PermissionsExt as _;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};
use std::sync::OnceLock;

use shforge::installer::{Artifact, Installer, Libc, Relocation, Runtime};
use support::{Shell, code, text};

/// Run a command to its end, output captured (`support::run` for a borrowed one).
fn run(c: &mut Command) -> Output {
    c.stdin(std::process::Stdio::null())
        .output()
        .expect("the command starts")
}

fn sh(script: &str) -> Output {
    run(Command::new("sh").arg("-c").arg(script))
}

/// Where fetched .debs and built fixtures are kept between runs.
fn cache() -> PathBuf {
    let d = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join("relocate");
    fs::create_dir_all(&d).unwrap();
    d
}

fn debs_dir() -> PathBuf {
    std::env::var_os("SHFORGE_GLIBC_DEBS")
        .map(PathBuf::from)
        .unwrap_or_else(|| cache().join("glibc-debs"))
}

/// The runtime tarball, built once; None when it cannot be (no network,
/// no dpkg-deb).
fn runtime_tgz() -> Option<&'static Path> {
    static RT: OnceLock<Option<PathBuf>> = OnceLock::new();
    RT.get_or_init(|| {
        let out = cache().join("glibc-runtime.tar.gz");
        let debs = debs_dir();
        fs::create_dir_all(&debs).ok()?;
        let o = run(Command::new("sh")
            .arg(support::root().join("installers/glibc-runtime/build.sh"))
            .arg(&out)
            .arg("--debs")
            .arg(&debs));
        if !o.status.success() {
            support::loud(&format!("glibc runtime build failed: {}", text(&o)));
            return None;
        }
        Some(out)
    })
    .as_deref()
}

/// What prepare.sh printed for one program.
#[derive(Clone)]
struct Prepared {
    archive: PathBuf,
    sha256: String,
    interp: (u64, u64),
    rpath: (u64, u64),
    zeroed: String,
    glibc: String,
}

fn field(out: &str, key: &str) -> String {
    out.lines()
        .find_map(|l| l.strip_prefix(&format!("{key} = ")))
        .unwrap_or_else(|| panic!("no {key} in prepare.sh output:\n{out}"))
        .trim_matches('"')
        .to_owned()
}

/// A C program that prints `hello-prepared`, its glibc version, and whether
/// it could dlopen the image's demo libraries (it must not). Built with the
/// host's gcc, packed as bin/hello in a tar.gz, and prepared.
fn prepared_hello() -> Option<&'static (PathBuf, Prepared)> {
    static P: OnceLock<Option<(PathBuf, Prepared)>> = OnceLock::new();
    P.get_or_init(|| {
        let d = cache().join("hello");
        let _ = fs::remove_dir_all(&d);
        fs::create_dir_all(d.join("tree/bin")).unwrap();
        fs::write(
            d.join("hello.c"),
            r#"#include <stdio.h>
#include <dlfcn.h>
#include <gnu/libc-version.h>
int main(void) {
    void *a = dlopen("libshforge-demo.so", RTLD_NOW);
    void *b = dlopen("libshforge-cached.so", RTLD_NOW);
    printf("hello-prepared glibc %s demo=%s cached=%s\n", gnu_get_libc_version(),
           a ? "loaded" : "absent", b ? "loaded" : "absent");
    return 0;
}
"#,
        )
        .unwrap();
        let o = sh(&format!(
            "cd '{}' && gcc -O1 -o tree/bin/hello hello.c && tar -czf hello.tgz -C tree bin",
            d.display()
        ));
        if !o.status.success() {
            support::loud(&format!("cannot build the C fixture: {}", text(&o)));
            return None;
        }
        let archive = d.join("hello-prepared.tar.gz");
        let o = run(Command::new("sh")
            .arg(support::root().join("installers/glibc-runtime/prepare.sh"))
            .arg(d.join("hello.tgz"))
            .arg("bin/hello")
            .arg(&archive));
        assert!(o.status.success(), "prepare.sh: {}", text(&o));
        let out = String::from_utf8_lossy(&o.stdout).into_owned();
        let num = |k: &str| field(&out, k).parse::<u64>().unwrap();
        let sha = out
            .lines()
            .find_map(|l| l.strip_prefix("# archive: sha256 = \""))
            .and_then(|r| r.split('"').next())
            .unwrap()
            .to_owned();
        let p = Prepared {
            archive: archive.clone(),
            sha256: sha,
            interp: (num("interp_offset"), num("interp_size")),
            rpath: (num("rpath_offset"), num("rpath_size")),
            zeroed: field(&out, "zeroed_sha256"),
            glibc: field(&out, "glibc"),
        };
        assert_eq!(sha256_hex(&fs::read(&archive).unwrap()), p.sha256);
        Some((d.join("hello.tgz"), p))
    })
    .as_ref()
}

/// The fixtures, or a loud skip.
fn fixtures(test: &str) -> Option<(&'static Path, &'static Path, &'static Prepared)> {
    if !support::require(test, std::env::consts::ARCH == "x86_64", "an x86_64 host") {
        return None;
    }
    for tool in ["gcc", "dpkg-deb", "python3", "readelf"] {
        if !support::require_tool(test, tool) {
            return None;
        }
    }
    let rt = runtime_tgz();
    if !support::require(test, rt.is_some(), "the glibc runtime (apt-get download)") {
        return None;
    }
    let (native, p) = prepared_hello()?;
    Some((rt.unwrap(), native.as_path(), p))
}

/// One test world: a source dir with the three artifacts and a script.
struct World {
    dir: tempfile::TempDir,
    script: PathBuf,
}

impl World {
    fn src(&self) -> PathBuf {
        self.dir.path().join("src")
    }
    fn prefix(&self) -> PathBuf {
        self.dir.path().join("prefix")
    }
    fn final_dir(&self) -> PathBuf {
        self.prefix().join("hello-1.0")
    }
}

/// The installer of `hello`: the native build for images whose glibc is at
/// least `needs` (default: what prepare.sh read), else the runtime and the
/// prepared build (whose archive `prepared` is, with `p`'s numbers).
fn world_with(
    rt: &Path,
    native: &Path,
    p: &Prepared,
    prepared: Option<&[u8]>,
    needs: Option<&str>,
) -> World {
    let dir = tempfile::tempdir().unwrap();
    let src = dir.path().join("src");
    fs::create_dir_all(&src).unwrap();
    fs::copy(rt, src.join("glibc-runtime.tar.gz")).unwrap();
    fs::copy(native, src.join("hello.tgz")).unwrap();
    let prepared_bytes = match prepared {
        Some(b) => b.to_vec(),
        None => fs::read(&p.archive).unwrap(),
    };
    fs::write(src.join("hello-prepared.tar.gz"), &prepared_bytes).unwrap();
    let inst = Installer::builder("hello", "1.0")
        .entry("bin/hello")
        .check(Vec::<String>::new(), "hello-prepared")
        .artifact(
            Artifact::tar_gz("hello.tgz", sha256_hex(&fs::read(native).unwrap()))
                .arch("x86_64")
                .libc(Libc::Glibc)
                .runtime(Runtime::Image),
        )
        .artifact(
            Artifact::tar_gz("glibc-runtime.tar.gz", sha256_hex(&fs::read(rt).unwrap()))
                .arch("x86_64")
                .libc(Libc::Glibc)
                .runtime(Runtime::Private)
                .dest("glibc"),
        )
        .artifact(
            Artifact::tar_gz("hello-prepared.tar.gz", sha256_hex(&prepared_bytes))
                .arch("x86_64")
                .libc(Libc::Glibc)
                .runtime(Runtime::Private)
                .relocate(Relocation::new(
                    "bin/hello",
                    p.interp,
                    p.rpath,
                    &p.zeroed,
                    needs.unwrap_or(&p.glibc),
                )),
        )
        .build()
        .unwrap();
    let script = dir.path().join("install_hello.sh");
    fs::write(&script, inst.script().unwrap()).unwrap();
    World { dir, script }
}

fn install(sh: &Shell, w: &World, prefix: &Path, extra: &[&str]) -> Output {
    let mut c = sh.command(&w.script);
    c.arg("--prefix")
        .arg(prefix)
        .arg("--source-dir")
        .arg(w.src())
        .args(extra);
    run(&mut c)
}

/// The interpreter the kernel will load for FILE (readelf).
fn interpreter_of(file: &Path) -> String {
    let o = run(Command::new("readelf").arg("-lW").arg(file));
    let t = String::from_utf8_lossy(&o.stdout).into_owned();
    t.lines()
        .find_map(|l| l.split("interpreter: ").nth(1))
        .map(|s| s.trim_end_matches(']').to_owned())
        .unwrap_or_default()
}

fn run_entry(file: &Path) -> String {
    text(&run(&mut Command::new(file)))
}

#[test]
fn private_runtime_relocates_then_runs_and_is_reused() {
    let Some((rt, native, p)) = fixtures("private_runtime_relocates_then_runs_and_is_reused")
    else {
        return;
    };
    let w = world_with(rt, native, p, None, None);
    let shells = support::bashes();
    for sh in &shells {
        let _ = fs::remove_dir_all(w.prefix());
        let o = install(sh, &w, &w.prefix(), &["--glibc-runtime", "private"]);
        assert_eq!(code(&o), 0, "{}: {}", sh.name, text(&o));
        let entry = w.final_dir().join("bin/hello");
        assert_eq!(
            interpreter_of(&entry),
            format!("{}/glibc/ld-linux-x86-64.so.2", w.final_dir().display()),
            "{}",
            sh.name
        );
        let out = run_entry(&entry);
        assert!(out.contains("hello-prepared glibc 2.36"), "{out}");
        assert!(
            text(&o).contains("using the private glibc runtime"),
            "{}",
            text(&o)
        );
        // No byte but the two placeholders differs from the prepared file.
        let prepared = unpack_member(&p.archive, "bin/hello");
        let installed = fs::read(&entry).unwrap();
        assert_eq!(prepared.len(), installed.len());
        let (io, is) = (p.interp.0 as usize, p.interp.1 as usize);
        let (ro, rs) = (p.rpath.0 as usize, p.rpath.1 as usize);
        for (i, (a, b)) in prepared.iter().zip(&installed).enumerate() {
            if a != b {
                assert!(
                    (io..io + is).contains(&i) || (ro..ro + rs).contains(&i),
                    "byte {i} changed"
                );
            }
        }
        // Reused as it is: nothing is unpacked again.
        let again = install(sh, &w, &w.prefix(), &["--glibc-runtime", "private"]);
        assert_eq!(code(&again), 0, "{}", text(&again));
        assert!(!text(&again).contains("installed"), "{}", text(&again));
    }
    support::report("private_runtime_relocates_then_runs_and_is_reused", &shells);
}

fn unpack_member(archive: &Path, member: &str) -> Vec<u8> {
    let o = run(Command::new("tar")
        .arg("-xzOf")
        .arg(archive)
        .arg(format!("./{member}")));
    assert!(o.status.success(), "{}", text(&o));
    o.stdout
}

#[test]
fn image_glibc_new_enough_keeps_the_native_artifact_older_gets_the_private() {
    let test = "image_glibc_new_enough_keeps_the_native_artifact_older_gets_the_private";
    let Some((rt, native, p)) = fixtures(test) else {
        return;
    };
    // The host's glibc (2.36 here) is at least what the program needs.
    let w = world_with(rt, native, p, None, None);
    let sh = &support::bashes()[0];
    let o = install(sh, &w, &w.prefix(), &[]);
    assert_eq!(code(&o), 0, "{}", text(&o));
    assert!(
        !w.final_dir().join("glibc").exists(),
        "native install has no runtime"
    );
    assert!(!text(&o).contains("private"), "{}", text(&o));
    assert!(
        !interpreter_of(&w.final_dir().join("bin/hello")).contains(&*w.prefix().to_string_lossy())
    );
    // A program recorded as needing a newer glibc than the image's.
    let w = world_with(rt, native, p, None, Some("9.99"));
    let o = install(sh, &w, &w.prefix(), &[]);
    assert_eq!(code(&o), 0, "{}", text(&o));
    assert!(
        text(&o).contains("older than the 9.99 needed"),
        "{}",
        text(&o)
    );
    assert!(w.final_dir().join("glibc/ld-linux-x86-64.so.2").is_file());
    // --glibc-runtime image forces the native artifact back.
    let w = world_with(rt, native, p, None, Some("9.99"));
    let o = install(sh, &w, &w.prefix(), &["--glibc-runtime", "image"]);
    assert_eq!(code(&o), 0, "{}", text(&o));
    assert!(!w.final_dir().join("glibc").exists());
}

#[test]
fn bad_prefixes_exit_2_before_anything_is_written() {
    let Some((rt, native, p)) = fixtures("bad_prefixes_exit_2_before_anything_is_written") else {
        return;
    };
    let w = world_with(rt, native, p, None, None);
    let long = w.dir.path().join("l".repeat(200)).join("x".repeat(60));
    let colon = w.dir.path().join("a:b");
    let shells = support::bashes();
    for sh in &shells {
        for (prefix, what) in [(&long, "too long"), (&colon, "':'")] {
            let o = install(sh, &w, prefix, &["--glibc-runtime", "private"]);
            assert_eq!(code(&o), 2, "{} {what}: {}", sh.name, text(&o));
            let err = String::from_utf8_lossy(&o.stderr);
            assert_eq!(err.lines().count(), 1, "one line: {err}");
            assert!(text(&o).contains(what), "{}", text(&o));
            assert!(
                !prefix.exists(),
                "{}: {} was created",
                sh.name,
                prefix.display()
            );
            assert!(!long.parent().unwrap().exists());
        }
        // The same prefixes are fine where the image's glibc is used.
        let o = install(sh, &w, &colon, &["--glibc-runtime", "image"]);
        assert_eq!(code(&o), 0, "{}", text(&o));
        fs::remove_dir_all(&colon).unwrap();
    }
    support::report("bad_prefixes_exit_2_before_anything_is_written", &shells);
}

/// The prepared archive with `edit` applied to bin/hello, packed again.
fn repacked(p: &Prepared, edit: impl Fn(&mut Vec<u8>)) -> Vec<u8> {
    let d = tempfile::tempdir().unwrap();
    let o = run(Command::new("tar")
        .arg("-xzf")
        .arg(&p.archive)
        .arg("-C")
        .arg(d.path()));
    assert!(o.status.success());
    let f = d.path().join("bin/hello");
    let mut bytes = fs::read(&f).unwrap();
    edit(&mut bytes);
    fs::write(&f, &bytes).unwrap();
    fs::set_permissions(&f, fs::Permissions::from_mode(0o755)).unwrap();
    let out = d.path().join("out.tgz");
    let o = run(Command::new("tar")
        .arg("-czf")
        .arg(&out)
        .arg("-C")
        .arg(d.path())
        .arg("bin"));
    assert!(o.status.success());
    fs::read(out).unwrap()
}

#[test]
fn tampered_or_relocated_programs_exit_5_and_nothing_is_placed() {
    let test = "tampered_or_relocated_programs_exit_5_and_nothing_is_placed";
    let Some((rt, native, p)) = fixtures(test) else {
        return;
    };
    let io = p.interp.0 as usize;
    let original = fs::read(&p.archive).unwrap();
    // The archive's digest is pinned for the changed bytes, so only the
    // relocation's own checks can catch them.
    let mut shifted = p.clone();
    shifted.rpath.0 += 1;
    let cases: Vec<(&str, Vec<u8>, Prepared)> = vec![
        // A byte outside the placeholders (in the ELF header padding).
        ("changed byte", repacked(p, |b| b[9] ^= 0x55), p.clone()),
        // Relocated already: the placeholder holds a path.
        (
            "relocated already",
            repacked(p, |b| {
                let path = b"/elsewhere/glibc/ld-linux-x86-64.so.2";
                b[io..io + 256].fill(0);
                b[io..io + path.len()].copy_from_slice(path);
            }),
            p.clone(),
        ),
        // The library path placeholder is not where the spec says.
        ("misplaced placeholder", original, shifted),
    ];
    let shells = support::bashes();
    for sh in &shells {
        for (what, bytes, prep) in &cases {
            let w = world_with(rt, native, prep, Some(bytes), None);
            let o = install(sh, &w, &w.prefix(), &["--glibc-runtime", "private"]);
            assert_eq!(code(&o), 5, "{} {what}: {}", sh.name, text(&o));
            let left: Vec<_> = fs::read_dir(w.prefix())
                .unwrap()
                .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
                .filter(|n| !n.ends_with(".lock") && !n.ends_with(".lockq"))
                .collect();
            assert!(left.is_empty(), "{} {what}: left {left:?}", sh.name);
        }
    }
    support::report(test, &shells);
}

#[test]
fn a_relocated_install_moved_elsewhere_is_reinstalled() {
    let test = "a_relocated_install_moved_elsewhere_is_reinstalled";
    let Some((rt, native, p)) = fixtures(test) else {
        return;
    };
    let w = world_with(rt, native, p, None, None);
    let sh = &support::bashes()[0];
    let o = install(sh, &w, &w.prefix(), &["--glibc-runtime", "private"]);
    assert_eq!(code(&o), 0, "{}", text(&o));
    // A copy elsewhere (the original stays, so the copy's program would
    // still start, with the loader of the original place).
    let other = w.dir.path().join("other");
    let o = sh_status(&format!(
        "mkdir '{0}' && cp -a '{1}' '{0}/'",
        other.display(),
        w.final_dir().display()
    ));
    assert!(o, "copy");
    let copied = other.join("hello-1.0/bin/hello");
    assert!(interpreter_of(&copied).starts_with(&*w.prefix().to_string_lossy()));
    let o = install(sh, &w, &other, &["--glibc-runtime", "private"]);
    assert_eq!(code(&o), 0, "{}", text(&o));
    assert!(text(&o).contains("replacing"), "{}", text(&o));
    assert_eq!(
        interpreter_of(&copied),
        format!("{}/hello-1.0/glibc/ld-linux-x86-64.so.2", other.display())
    );
}

fn sh_status(script: &str) -> bool {
    sh(script).status.success()
}

/// A musl-only root from Debian's musl, busybox-static and bash-static, as
/// the notes describe; None when the packages cannot be fetched.
fn musl_root(dir: &Path) -> Option<PathBuf> {
    let debs = debs_dir();
    let fetch = format!(
        "cd '{}' && for p in musl busybox-static bash-static; do ls ${{p}}_*.deb >/dev/null 2>&1 || apt-get download $p >/dev/null 2>&1 || exit 1; done",
        debs.display()
    );
    if !sh_status(&fetch) {
        return None;
    }
    let r = dir.join("root");
    let build = format!(
        r#"set -e
R='{r}'; D='{d}'
mkdir -p "$R"
for p in musl busybox-static bash-static; do dpkg-deb -x "$(ls "$D"/${{p}}_*.deb | head -n 1)" "$R"; done
rm -f "$R/lib/ld-musl-x86_64.so.1"
cp "$R/lib/x86_64-linux-musl/libc.so" "$R/lib/ld-musl-x86_64.so.1"
ln -s ld-musl-x86_64.so.1 "$R/lib/libc.musl-x86_64.so.1"
mv "$R/bin/bash-static" "$R/bin/bash"
for a in $("$R/bin/busybox" --list); do [ -e "$R/bin/$a" ] || ln -s busybox "$R/bin/$a"; done
mkdir -p "$R/tmp" "$R/dev" "$R/proc" "$R/root" "$R/src" "$R/inst"
chmod 1777 "$R/tmp"
echo 'root:x:0:0:root:/root:/bin/sh' > "$R/etc/passwd"
echo 'root:x:0:' > "$R/etc/group"
echo '127.0.0.1 localhost' > "$R/etc/hosts"
"#,
        r = r.display(),
        d = debs.display()
    );
    let o = sh(&build);
    assert!(o.status.success(), "musl root: {}", text(&o));
    Some(r)
}

/// Run ARGS in ROOT with its own mount and PID namespaces, /dev and /proc.
fn in_root(root: &Path, args: &[&str], strace: Option<&Path>) -> Output {
    let mut c = Command::new("unshare");
    c.args([
        "--mount",
        "--propagation",
        "private",
        "--fork",
        "--pid",
        "--kill-child",
    ]);
    c.arg("sh").arg("-c").arg(
        r#"R=$1; L=$2; shift 2
mount --rbind /dev "$R/dev" && mount -t proc proc "$R/proc" || exit 99
if [ -n "$L" ]; then exec strace -f -e trace=file -o "$L" chroot "$R" "$@"; fi
exec chroot "$R" "$@""#,
    );
    c.arg("sh").arg(root);
    c.arg(
        strace
            .map(|p| p.to_string_lossy().into_owned())
            .unwrap_or_default(),
    );
    c.args(args);
    c.env_clear().env("PATH", "/bin:/usr/bin:/sbin:/usr/sbin");
    run(&mut c)
}

/// Names, sizes and link targets under the root's system dirs.
fn system_snapshot(root: &Path) -> Vec<String> {
    let o = sh(&format!(
        "cd '{}' && find bin sbin lib lib64 usr etc var/lib 2>/dev/null | sort | while read -r f; do printf '%s %s\\n' \"$f\" \"$(ls -ld \"$f\" | awk '{{print $1, $5}}')\"; done",
        root.display()
    ));
    String::from_utf8_lossy(&o.stdout)
        .lines()
        .map(str::to_owned)
        .collect()
}

#[test]
fn musl_only_root_runs_the_program_and_ignores_the_images_loader_files() {
    let test = "musl_only_root_runs_the_program_and_ignores_the_images_loader_files";
    let Some((rt, native, p)) = fixtures(test) else {
        return;
    };
    if !support::require_root(test) || !support::require_tool(test, "unshare") {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let Some(root) = musl_root(dir.path()) else {
        support::require(
            test,
            false,
            "Debian's musl, busybox-static, bash-static (apt-get download)",
        );
        return;
    };
    // Bait: a glibc library the program dlopens, in the image's /lib and
    // /usr/lib, named in the image's /etc/ld.so.preload (its constructor
    // would print PRELOADED), and another one only the image's ld.so.cache
    // knows (made by the host's ldconfig for that root).
    let lib_c = dir.path().join("demo.c");
    fs::write(
        &lib_c,
        "#include <stdio.h>\n__attribute__((constructor)) static void hi(void) { puts(\"PRELOADED\"); }\nint demo(void) { return 1; }\n",
    )
    .unwrap();
    let r = root.display();
    let bait = format!(
        r#"set -e
gcc -shared -fPIC -o '{r}/lib/libshforge-demo.so' '{c}'
mkdir -p '{r}/usr/lib' '{r}/opt/cached'
cp '{r}/lib/libshforge-demo.so' '{r}/usr/lib/'
cp '{r}/lib/libshforge-demo.so' '{r}/opt/cached/libshforge-cached.so'
echo /lib/libshforge-demo.so > '{r}/etc/ld.so.preload'
echo /opt/cached > '{r}/etc/ld.so.conf'
ldconfig -r '{r}'
test -s '{r}/etc/ld.so.cache'
"#,
        c = lib_c.display()
    );
    let o = sh(&bait);
    assert!(o.status.success(), "bait: {}", text(&o));
    let w = world_with(rt, native, p, None, None);
    support::copy_tree(&w.src(), &root.join("src"));
    fs::copy(&w.script, root.join("inst/install_hello.sh")).unwrap();
    let before = system_snapshot(&root);
    let o = in_root(
        &root,
        &[
            "/bin/bash",
            "/inst/install_hello.sh",
            "--prefix",
            "/opt/h",
            "--source-dir",
            "/src",
        ],
        None,
    );
    assert_eq!(code(&o), 0, "{}", text(&o));
    assert!(
        text(&o).contains("private glibc runtime: a musl system"),
        "{}",
        text(&o)
    );
    let trace = dir.path().join("trace");
    let o = in_root(&root, &["/opt/h/hello-1.0/bin/hello"], Some(&trace));
    assert_eq!(code(&o), 0, "{}", text(&o));
    assert_eq!(
        String::from_utf8_lossy(&o.stdout),
        "hello-prepared glibc 2.36 demo=absent cached=absent\n"
    );
    assert_eq!(
        system_snapshot(&root),
        before,
        "the image's system dirs changed"
    );
    // After chroot(), no library is opened outside the install.
    let t = fs::read_to_string(&trace).unwrap();
    let after = t.split_once("chroot(").map(|(_, a)| a).unwrap_or(&t);
    for l in after.lines() {
        if l.contains(".so") && (l.contains("open") || l.contains("access")) {
            assert!(
                l.contains("\"/opt/h/hello-1.0/") || l.contains("/dev/null/"),
                "{l}"
            );
        }
        assert!(!l.contains("ld.so.cache\""), "{l}");
    }
}

#[test]
fn the_images_glibc_version_is_read_from_its_files_without_running_them() {
    let test = "the_images_glibc_version_is_read_from_its_files_without_running_them";
    let Some((rt, native, p)) = fixtures(test) else {
        return;
    };
    if !support::require_root(test) || !support::require_tool(test, "unshare") {
        return;
    }
    // A root with no libc at all (static busybox and bash; no getconf),
    // given a libc.so.6 of each kind the installer reads.
    let cases = [
        (
            "link to libc-2.31.so",
            "ln -s libc-2.31.so libc.so.6 && : > libc-2.31.so",
            Some("glibc 2.31, older than the 2.34 needed"),
        ),
        (
            "release string 2.33",
            "printf 'x\\000GNU C Library (Debian GLIBC 2.33-1) stable release version 2.33.\\000y' > libc.so.6",
            Some("glibc 2.33, older than the 2.34 needed"),
        ),
        ("no libc.so.6", ":", Some("no glibc found")),
        (
            "release string 2.99",
            "printf 'x\\000GNU C Library stable release version 2.99.\\000' > libc.so.6",
            None,
        ),
    ];
    for (what, make, private) in cases {
        let dir = tempfile::tempdir().unwrap();
        let Some(root) = musl_root(dir.path()) else {
            support::require(test, false, "Debian's busybox-static and bash-static");
            return;
        };
        let setup = format!(
            "cd '{}' && rm -rf lib/ld-musl-x86_64.so.1 lib/libc.musl-x86_64.so.1 lib/x86_64-linux-musl && mkdir -p lib/x86_64-linux-gnu && cd lib/x86_64-linux-gnu && {make}",
            root.display()
        );
        assert!(sh_status(&setup), "{what}");
        let w = world_with(rt, native, p, None, Some("2.34"));
        support::copy_tree(&w.src(), &root.join("src"));
        fs::copy(&w.script, root.join("inst/install_hello.sh")).unwrap();
        let o = in_root(
            &root,
            &[
                "/bin/bash",
                "/inst/install_hello.sh",
                "--prefix",
                "/opt/h",
                "--source-dir",
                "/src",
            ],
            None,
        );
        let err = String::from_utf8_lossy(&o.stderr).into_owned();
        match private {
            Some(why) => {
                assert_eq!(code(&o), 0, "{what}: {}", text(&o));
                assert!(err.contains(why), "{what}: {err}");
                let o = in_root(&root, &["/opt/h/hello-1.0/bin/hello"], None);
                assert!(
                    text(&o).contains("hello-prepared glibc 2.36"),
                    "{what}: {}",
                    text(&o)
                );
            }
            None => {
                // The native build is chosen, and this root cannot run it.
                assert_eq!(code(&o), 6, "{what}: {}", text(&o));
                assert!(!err.contains("private"), "{what}: {err}");
            }
        }
    }
}
