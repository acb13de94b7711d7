//! generated/bootstrap.sh under every POSIX shell of the matrix and every bash:
//! fake package managers on a private PATH (tests/fixtures/bootstrap/fakepm),
//! the overlap check on real directory trees, and, as root, a bash-less
//! busybox chroot and a musl chroot with a fake apk.

use crate::support;

use std::fs;
use std::os::unix::ffi::OsStrExt as _;
use std::os::unix::fs::{MetadataExt as _, PermissionsExt as _, symlink};
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use shforge::scripts::bootstrap::{BootstrapBuilder, PackageManager};
use support::chroot::{copy_with_libs, hide_glibc_loader};
use support::{Kind, Shell};

const MANAGERS: [&str; 6] = ["apk", "apt-get", "dnf", "microdnf", "yum", "zypper"];

fn script() -> PathBuf {
    support::root().join("generated/bootstrap.sh")
}

fn fixture(name: &str) -> PathBuf {
    support::root().join("tests/fixtures/bootstrap").join(name)
}

fn text(b: &[u8]) -> String {
    String::from_utf8_lossy(b).into_owned()
}

fn describe(shell: &Shell, out: &Output) -> String {
    format!(
        "under {}: status {:?}\nstdout: {}\nstderr: {}",
        shell.name,
        out.status.code(),
        text(&out.stdout),
        text(&out.stderr)
    )
}

/// A private world: `pm/` holds fake package managers, `bin/` what they
/// install (and what counts as already present), `tools/` the few external
/// programs the shells need (printf is not a builtin in mksh and posh).
struct World {
    _dir: tempfile::TempDir,
    root: PathBuf,
}

impl World {
    fn new() -> World {
        let dir = tempfile::tempdir().expect("tempdir");
        let root = dir.path().to_owned();
        for d in ["pm", "bin", "tools"] {
            fs::create_dir(root.join(d)).unwrap();
        }
        symlink("/usr/bin/printf", root.join("tools/printf")).unwrap();
        fs::write(root.join("log"), "").unwrap();
        World { _dir: dir, root }
    }

    /// Put these fake package managers on the PATH.
    fn managers(&self, names: &[&str]) {
        for n in names {
            symlink(fixture("fakepm"), self.root.join("pm").join(n)).unwrap();
            // apt-get comes with apt-cache.
            if *n == "apt-get" {
                symlink(fixture("fakepm"), self.root.join("pm/apt-cache")).unwrap();
            }
        }
    }

    /// The package names the fake apt-cache knows.
    fn index(&self, names: &[&str]) {
        let mut text = names.join("\n");
        text.push('\n');
        fs::write(self.root.join("index"), text).unwrap();
    }

    /// A command that is already installed.
    fn present(&self, cmd: &str) {
        let p = self.root.join("bin").join(cmd);
        fs::write(&p, "#!/bin/sh\nexit 0\n").unwrap();
        fs::set_permissions(&p, fs::Permissions::from_mode(0o755)).unwrap();
    }

    fn provides(&self, lines: &str) {
        fs::write(self.root.join("provides"), lines).unwrap();
    }

    fn log(&self) -> String {
        fs::read_to_string(self.root.join("log")).unwrap()
    }

    fn clear_log(&self) {
        fs::write(self.root.join("log"), "").unwrap();
    }

    fn clear_bin(&self) {
        fs::remove_dir_all(self.root.join("bin")).unwrap();
        fs::create_dir(self.root.join("bin")).unwrap();
    }

    fn command(&self, shell: &Shell, script: &Path, args: &[&str]) -> Command {
        let mut c = shell.command(script);
        c.args(args);
        c.env_clear()
            .env(
                "PATH",
                format!(
                    "{0}/pm:{0}/bin:{0}/tools",
                    self.root.to_str().expect("utf-8 temp dir")
                ),
            )
            .env("FAKEPM_LOG", self.root.join("log"))
            .env("FAKEPM_BIN", self.root.join("bin"))
            .env("FAKEPM_PROVIDES", self.root.join("provides"))
            .env("FAKEPM_INDEX", self.root.join("index"))
            .current_dir(&self.root);
        c
    }

    fn run(&self, shell: &Shell, args: &[&str]) -> Output {
        support::run(self.command(shell, &script(), args))
    }
}

fn expect_status(shell: &Shell, out: &Output, code: i32) {
    assert_eq!(out.status.code(), Some(code), "{}", describe(shell, out));
}

#[test]
fn nothing_missing_runs_no_package_manager() {
    let shells = support::posix_shells();
    for shell in &shells {
        let w = World::new();
        w.managers(&MANAGERS);
        w.present("bash");
        w.present("python3");
        // Not musl here: --musl-lib must not install anything either.
        let out = w.run(
            shell,
            &[
                "--need",
                "bash",
                "--need=python3",
                "--need",
                "printf",
                "--musl-lib",
                "libstdc++",
                "--musl-lib=libgcc",
            ],
        );
        expect_status(shell, &out, 0);
        assert_eq!(
            w.log(),
            "",
            "a package manager ran {}",
            describe(shell, &out)
        );
        assert!(
            out.stdout.is_empty() && out.stderr.is_empty(),
            "{}",
            describe(shell, &out)
        );
        // And with no arguments at all.
        let out = w.run(shell, &[]);
        expect_status(shell, &out, 0);
        assert_eq!(w.log(), "");
    }
    support::report("nothing_missing_runs_no_package_manager", &shells);
}

#[test]
fn first_package_manager_found_wins_with_its_own_flags() {
    let shells = support::posix_shells();
    let expected = [
        "apk add --no-cache bash\n",
        "apt-get update DEBIAN_FRONTEND=noninteractive\n\
         apt-get install -y --no-install-recommends bash DEBIAN_FRONTEND=noninteractive\n",
        "dnf -y install bash\n",
        "microdnf -y install bash\n",
        "yum -y install bash\n",
        "zypper --non-interactive install bash\n",
    ];
    for shell in &shells {
        for (k, want) in expected.iter().enumerate() {
            let w = World::new();
            // Every manager from the k-th on is present: the k-th must be used.
            w.managers(&MANAGERS[k..]);
            let out = w.run(shell, &["--need", "bash"]);
            expect_status(shell, &out, 0);
            assert_eq!(
                &w.log(),
                want,
                "with {:?} {}",
                &MANAGERS[k..],
                describe(shell, &out)
            );
            assert!(w.root.join("bin/bash").exists());
        }
    }
    support::report(
        "first_package_manager_found_wins_with_its_own_flags",
        &shells,
    );
}

/// Functions exported to bash (which imports them also as sh), named like
/// the package manager and the builtins and tools the script runs, in both
/// forms (`BASH_FUNC_NAME%%`, and `NAME=() {` as bash 3.2.48 imports them):
/// none runs, under every shell of the matrix; the real (fake) dnf does.
/// bash in posix mode exits 2 before it reads a script when a function is
/// named like a special builtin: those names go to bash mode only.
#[test]
fn inherited_functions_never_run() {
    const NAMES: &[&str] = &[
        "dnf", "command", "printf", "echo", "test", "[", "cd", "rm", "mkdir", "ls", "uname",
        "compgen", "read",
    ];
    const SPECIAL: &[&str] = &["set", "unset", "exec", "eval", "export"];
    let shells = support::posix_shells();
    for shell in &shells {
        let w = World::new();
        w.managers(&["dnf"]);
        let mut c = w.command(shell, &script(), &["--need", "bash"]);
        let posix_mode = shell.argv.iter().any(|a| a == "--posix");
        let special = if posix_mode { &[][..] } else { SPECIAL };
        for name in NAMES.iter().chain(special) {
            c.env(
                format!("BASH_FUNC_{name}%%"),
                format!("() {{ echo hijacked-{name}; echo hijacked-{name} >&2; return 0; }}"),
            );
        }
        c.env("dnf", "() { echo hijacked-old-dnf; return 0; }");
        let out = support::run(c);
        expect_status(shell, &out, 0);
        assert_eq!(
            w.log(),
            "dnf -y install bash\n",
            "{}",
            describe(shell, &out)
        );
        assert!(
            w.root.join("bin/bash").exists(),
            "{}",
            describe(shell, &out)
        );
        let all = format!("{}{}", text(&out.stdout), text(&out.stderr));
        assert!(!all.contains("hijacked"), "{}", describe(shell, &out));
    }
    support::report("inherited_functions_never_run", &shells);
}

#[test]
fn only_missing_packages_and_apt_get_update_once() {
    let shells = support::posix_shells();
    for shell in &shells {
        let w = World::new();
        w.managers(&["apt-get", "dnf"]);
        w.provides("xz-utils xz\nprocps ps\n");
        w.present("python3");
        let args = [
            "--need", "python3", "--need", "bash", "--need", "xz", "--need", "bash", "--need", "ps",
        ];
        let out = w.run(shell, &args);
        expect_status(shell, &out, 0);
        let log = w.log();
        assert_eq!(
            log,
            "apt-get update DEBIAN_FRONTEND=noninteractive\n\
             apt-get install -y --no-install-recommends bash xz-utils procps DEBIAN_FRONTEND=noninteractive\n",
            "{}",
            describe(shell, &out)
        );
        assert_eq!(log.matches("apt-get update").count(), 1);
        for cmd in ["bash", "xz", "ps"] {
            assert!(w.root.join("bin").join(cmd).exists(), "{cmd} not installed");
        }
        // A second run finds everything and runs nothing.
        w.clear_log();
        let out = w.run(shell, &args);
        expect_status(shell, &out, 0);
        assert_eq!(w.log(), "", "second run {}", describe(shell, &out));
    }
    support::report("only_missing_packages_and_apt_get_update_once", &shells);
}

#[test]
fn package_names_come_from_the_rust_table() {
    // The script's names agree with the one table, for every manager.
    let shells = support::posix_shells();
    let shell = &shells[0];
    for (i, m) in MANAGERS.iter().enumerate() {
        let pm = PackageManager::ALL[i];
        assert_eq!(pm.command(), *m);
        for cmd in [
            "bash",
            "python3",
            "xz",
            "ps",
            "setsid",
            "flock",
            "unlisted-tool",
        ] {
            let w = World::new();
            w.managers(&[m]);
            w.provides(&format!(
                "{} {cmd}\n",
                shforge::scripts::bootstrap::package_for(cmd, pm)
            ));
            let out = w.run(shell, &["--need", cmd]);
            expect_status(shell, &out, 0);
            let log = w.log();
            let install = log.lines().last().unwrap_or("");
            let want = shforge::scripts::bootstrap::package_for(cmd, pm);
            assert!(
                install.split(' ').any(|w| w == want),
                "{m} {cmd}: wanted package {want}, log {log}"
            );
        }
    }
}

#[test]
fn exit_4_names_the_command_and_the_managers_tried() {
    let shells = support::posix_shells();
    for shell in &shells {
        // No package manager at all.
        let w = World::new();
        let out = w.run(shell, &["--need", "bash", "--need", "python3"]);
        expect_status(shell, &out, 4);
        let err = text(&out.stderr);
        for want in [
            "bootstrap: cannot provide command bash",
            "bootstrap: cannot provide command python3",
            "apk apt-get dnf microdnf yum zypper",
        ] {
            assert!(
                err.contains(want),
                "missing {want:?} {}",
                describe(shell, &out)
            );
        }

        // A PATH with nothing on it at all, not even printf (mksh and posh
        // have no printf builtin): the message still gets out.
        let w = World::new();
        let mut c = w.command(shell, &script(), &["--need", "bash"]);
        c.env("PATH", w.root.join("pm"));
        let out = support::run(c);
        expect_status(shell, &out, 4);
        assert!(
            text(&out.stderr).contains("bootstrap: cannot provide command bash"),
            "no message without printf on PATH {}",
            describe(shell, &out)
        );

        // The manager runs but the package does not provide the command.
        let w = World::new();
        w.managers(&["dnf", "zypper"]);
        let mut c = w.command(shell, &script(), &["--need", "bash"]);
        c.env("FAKEPM_BROKEN", "1");
        let out = support::run(c);
        expect_status(shell, &out, 4);
        let err = text(&out.stderr);
        assert!(
            err.contains("bootstrap: cannot provide command bash")
                && err.contains("package managers tried: dnf"),
            "{}",
            describe(shell, &out)
        );
        assert_eq!(w.log(), "dnf -y install bash\n");

        // The manager fails outright.
        let w = World::new();
        w.managers(&["apk"]);
        let mut c = w.command(shell, &script(), &["--need", "bash"]);
        c.env("FAKEPM_FAIL", "3");
        let out = support::run(c);
        expect_status(shell, &out, 4);
        let err = text(&out.stderr);
        assert!(
            err.contains("cannot provide command bash") && err.contains("apk exited with 3"),
            "{}",
            describe(shell, &out)
        );
    }
    support::report("exit_4_names_the_command_and_the_managers_tried", &shells);
}

#[test]
fn usage_errors_exit_2_and_install_nothing() {
    let shells = support::posix_shells();
    let cases: &[&[&str]] = &[
        &["--bogus"],
        &["--need"],
        &["--need", ""],
        &["--need", "a b"],
        &["--need", "-x"],
        &["--need", "x;y"],
        &["--need", "coreutils-"],
        &["--need", "python3.*"],
        &["--need", "pyth?n3"],
        &["--need", "!bash"],
        &["--need", "bash=5.2"],
        &["--need", "@core"],
        &["--musl-lib", "libfoo"],
        &["--workdir", "/tmp"],
        &["--session-dir", "/tmp"],
        &["--need", "bash", "stray"],
    ];
    for shell in &shells {
        let w = World::new();
        w.managers(&MANAGERS);
        for args in cases {
            let out = w.run(shell, args);
            expect_status(shell, &out, 2);
            assert!(
                text(&out.stderr).contains("bootstrap: "),
                "{args:?} {}",
                describe(shell, &out)
            );
            assert_eq!(w.log(), "", "{args:?}");
        }
        let out = w.run(shell, &["--help"]);
        expect_status(shell, &out, 0);
        assert!(text(&out.stdout).contains("--session-dir"));
    }
    support::report("usage_errors_exit_2_and_install_nothing", &shells);
}

#[test]
fn no_package_but_the_one_named_is_installed_or_removed() {
    // apt-get reads `NAME-` as "remove NAME", and a name with `.` or `+` as a
    // regular expression when no package has exactly that name: such a name
    // must name a package exactly, or it is refused (2) before any install.
    // apk reads NAME.apk as a file.
    let shells = support::posix_shells();
    for shell in &shells {
        let w = World::new();
        w.managers(&["apt-get"]);
        w.index(&[
            "coreutils",
            "policycoreutils-dev",
            "python3.11",
            "g++",
            "libstdc++6",
        ]);
        // An exact name with a dot or a plus: installed, after one lookup each.
        let out = w.run(shell, &["--need", "python3.11", "--need", "g++"]);
        expect_status(shell, &out, 0);
        assert_eq!(
            w.log(),
            "apt-get update DEBIAN_FRONTEND=noninteractive\n\
             apt-cache pkgnames python3.11\n\
             apt-cache pkgnames g++\n\
             apt-get install -y --no-install-recommends python3.11 g++ DEBIAN_FRONTEND=noninteractive\n",
            "{}",
            describe(shell, &out)
        );
        // A name apt-get would match as a pattern (coreutils. matches
        // policycoreutils-dev, python3.1 matches python3.11): refused, and
        // nothing else of the run is installed either.
        for pattern in ["coreutils.", "python3.1", "c++"] {
            w.clear_log();
            w.clear_bin();
            let out = w.run(shell, &["--need", "bash", "--need", pattern]);
            expect_status(shell, &out, 2);
            assert!(
                text(&out.stderr).contains(&format!("refusing package '{pattern}'")),
                "{}",
                describe(shell, &out)
            );
            assert!(
                !w.log().contains("apt-get install"),
                "{pattern}: {}",
                w.log()
            );
            assert!(!w.root.join("bin/bash").exists());
        }
        // A removal is never even asked for.
        w.clear_log();
        let out = w.run(shell, &["--need", "coreutils-"]);
        expect_status(shell, &out, 2);
        assert_eq!(w.log(), "");

        // apk: NAME.apk would be read as a package file.
        let w = World::new();
        w.managers(&["apk"]);
        let out = w.run(shell, &["--need", "evil.apk"]);
        expect_status(shell, &out, 2);
        assert_eq!(w.log(), "", "{}", describe(shell, &out));
        let out = w.run(shell, &["--need", "py3.11"]);
        expect_status(shell, &out, 0);
        assert_eq!(w.log(), "apk add --no-cache py3.11\n");
    }
    support::report(
        "no_package_but_the_one_named_is_installed_or_removed",
        &shells,
    );
}

/// The trees the overlap cases run in: names with blanks and newlines,
/// symlinks and `..`.
struct Tree {
    _w: World,
    base: PathBuf,
}

fn tree() -> Tree {
    let w = World::new();
    let base = w.root.join("o p\nq");
    for d in ["work dir/sub", "elsewhere", "trail\n", "work dir2", "other"] {
        fs::create_dir_all(base.join(d)).unwrap();
    }
    symlink(base.join("work dir"), base.join("link to work")).unwrap();
    symlink("../elsewhere", base.join("other/up")).unwrap();
    symlink(base.join("elsewhere"), base.join("link out")).unwrap();
    Tree { _w: w, base }
}

/// One (workdir, session dir) pair, given both ways round, absolute and
/// (as given) relative to the tree's base, under every POSIX shell: exit
/// `want` (3 for an overlap, refused before anything is installed; 0 when
/// the two are apart).
fn overlap_case(name: &str, wd: &str, sd: &str, want: i32) {
    let shells = support::posix_shells();
    for shell in &shells {
        let t = tree();
        t._w.managers(&["apk"]);
        for (a, b) in [(wd, sd), (sd, wd)] {
            let (pa, pb) = (t.base.join(a), t.base.join(b));
            let mut args = vec![
                "--workdir",
                pa.to_str().unwrap(),
                "--session-dir",
                pb.to_str().unwrap(),
            ];
            if want == 3 {
                args.extend(["--need", "bash"]);
            }
            let out = t._w.run(shell, &args);
            assert_eq!(
                out.status.code(),
                Some(want),
                "{a:?} {b:?} {}",
                describe(shell, &out)
            );
            if want == 3 {
                let err = text(&out.stderr);
                assert!(
                    err.starts_with("bootstrap: "),
                    "{a:?} {b:?} {}",
                    describe(shell, &out)
                );
                // Refused before anything is installed.
                assert_eq!(t._w.log(), "", "{a:?} {b:?}");
            }
        }
        let mut c =
            t._w.command(shell, &script(), &["--workdir", wd, "--session-dir", sd]);
        c.current_dir(&t.base);
        let out = support::run(c);
        assert_eq!(
            out.status.code(),
            Some(want),
            "relative {wd:?} {sd:?} {}",
            describe(shell, &out)
        );
    }
    support::report(name, &shells);
}

/// One test per (workdir, session dir) pair: `overlap!(name: wd, sd => exit)`.
macro_rules! overlap {
    ($($name:ident: $wd:expr, $sd:expr => $want:expr;)*) => {
        $(
            #[test]
            fn $name() {
                overlap_case(stringify!($name), $wd, $sd, $want);
            }
        )*
    };
}

// Paths are relative to the tree's base (see `tree`).
overlap! {
    overlap_same_dir: "work dir", "work dir" => 3;
    overlap_same_dir_with_slash: "work dir", "work dir/" => 3;
    overlap_session_inside: "work dir", "work dir/sub" => 3;
    overlap_hidden_session_inside: "work dir", "work dir/.shforge" => 3;
    overlap_session_inside_not_yet_made: "work dir", "work dir/not/yet/there" => 3;
    overlap_workdir_inside: "work dir/sub", "work dir" => 3;
    overlap_dot_workdir: ".", "work dir/new" => 3;
    overlap_session_is_link_to_workdir: "work dir", "link to work" => 3;
    overlap_session_under_link_to_workdir: "work dir", "link to work/new session" => 3;
    overlap_workdir_under_link: "link to work/sub", "work dir/sub/new" => 3;
    overlap_dotdot_back_in: "work dir", "other/../work dir/s" => 3;
    overlap_dotdot_out_of_missing: "work dir", "missing/../work dir" => 3;
    overlap_dotdot_past_missing_and_newline: "work dir", "missing/../../o p\nq/work dir/x" => 3;
    overlap_dotdot_and_dot_inside: "work dir", "work dir/sub/../new/." => 3;
    // `..` out of a missing part, then a symlink: mkdir -p lands in work dir.
    overlap_missing_then_link: "work dir", "missing/../link to work" => 3;
    overlap_missing_twice_then_link: "work dir", "other/missing/../../link to work/z" => 3;
    overlap_through_link_up: "elsewhere", "other/up/s" => 3;
    overlap_link_out_is_elsewhere: "link out", "elsewhere" => 3;
    overlap_trailing_newline: "trail\n", "trail\n/s" => 3;
    apart_elsewhere: "work dir", "elsewhere" => 0;
    apart_name_prefix: "work dir", "work dir2" => 0;
    apart_name_prefix_inside: "work dir", "work dir2/s" => 0;
    apart_through_link_out: "work dir", "link out/s" => 0;
    apart_link_up: "work dir", "other/up" => 0;
    apart_sibling_by_dotdot: "work dir", "work dir/../sibling" => 0;
    apart_newline_is_part_of_the_name: "trail\n", "trail" => 0;
    apart_sub_and_subway: "work dir/sub", "work dir/subway" => 0;
    apart_link_to_sub_and_new: "link to work/sub", "work dir/new" => 0;
}

/// A session dir that is a symlink to nothing cannot be resolved (2); the
/// overlap message names the resolved directories, newline and all.
#[test]
fn overlap_messages_name_the_resolved_dirs() {
    let shells = support::posix_shells();
    for shell in &shells {
        let t = tree();
        t._w.managers(&["apk"]);
        symlink(t.base.join("nowhere"), t.base.join("dangling")).unwrap();
        let out = t._w.run(
            shell,
            &[
                "--workdir",
                t.base.join("work dir").to_str().unwrap(),
                "--session-dir",
                t.base.join("dangling/s").to_str().unwrap(),
            ],
        );
        assert_eq!(out.status.code(), Some(2), "{}", describe(shell, &out));
        assert!(text(&out.stderr).contains("symlink to nothing"));
        let out = t._w.run(
            shell,
            &[
                "--workdir",
                t.base.join("link to work").to_str().unwrap(),
                "--session-dir",
                t.base.join("work dir/s").to_str().unwrap(),
            ],
        );
        let want = format!(
            "bootstrap: the session dir {0}/work dir/s lies inside the workdir {0}/work dir\n",
            fs::canonicalize(&t.base).unwrap().to_str().unwrap()
        );
        assert_eq!(text(&out.stderr), want, "{}", describe(shell, &out));
    }
    support::report("overlap_messages_name_the_resolved_dirs", &shells);
}

#[test]
fn a_baked_variant_needs_what_the_builder_says() {
    let shells = support::posix_shells();
    let out = BootstrapBuilder::new()
        .need("python3")
        .unwrap()
        .need("bash")
        .unwrap()
        .script()
        .expect("the Codex variant generates");
    let dir = tempfile::tempdir().unwrap();
    let variant = dir.path().join("bootstrap_codex.sh");
    fs::write(&variant, &out.content).unwrap();
    assert!(shellcheck_clean(&variant));
    for shell in &shells {
        let w = World::new();
        w.managers(&["apk"]);
        w.present("bash");
        let o = support::run(w.command(shell, &variant, &[]));
        expect_status(shell, &o, 0);
        assert_eq!(
            w.log(),
            "apk add --no-cache python3\n",
            "{}",
            describe(shell, &o)
        );
        // Flags add to what is baked in.
        w.clear_log();
        w.clear_bin();
        let o = support::run(w.command(shell, &variant, &["--need", "git"]));
        expect_status(shell, &o, 0);
        assert_eq!(w.log(), "apk add --no-cache python3 bash git\n");
    }
    support::report("a_baked_variant_needs_what_the_builder_says", &shells);
}

fn shellcheck_clean(file: &Path) -> bool {
    let out = support::run({
        let mut c = Command::new("shellcheck");
        c.args(["-s", "sh"]).arg(file);
        c
    });
    if !out.status.success() {
        support::loud(&text(&out.stdout));
    }
    out.status.success()
}

#[test]
fn generated_script_is_clean() {
    let file = script();
    assert!(shellcheck_clean(&file), "shellcheck -s sh found problems");
    let out = support::run({
        let mut c = Command::new(support::shforge());
        c.args(["lint", "--dialect", "posix"]).arg(&file);
        c
    });
    assert!(out.status.success(), "{}", text(&out.stdout));
    // The builder with nothing baked in renders the catalog script; only the
    // header's "regenerate with" differs.
    let body = BootstrapBuilder::new().script().unwrap();
    let generated = fs::read_to_string(&file).unwrap();
    let skip_header = |t: &str| t.lines().skip(2).collect::<Vec<_>>().join("\n");
    assert_eq!(
        skip_header(&generated),
        skip_header(&body.content),
        "generated/ is stale"
    );
    let findings = crate::templates::template_lint_files(&["bootstrap.sh", "lib/musl.sh"]);
    assert!(findings.is_empty(), "{findings:?}");
    assert!(body.content.is_ascii());
    assert!(
        !body
            .content
            .lines()
            .any(|l| l.trim_start().starts_with("local ")),
        "ksh93 has no local"
    );
    assert!(body.content.trim_end().ends_with("main \"$@\""));
}

// ---- chroots (root) --------------------------------------------------------

/// Root, and what the chroots are made of: a static busybox at
/// /bin/busybox (Debian's busybox-static), Debian's bash-static as the "bash"
/// package, chroot, mknod and ldd. Anything missing skips the test loudly
/// (a failure under SHFORGE_REQUIRE_SHELLS=1), as a missing shell does.
fn chroot_tools(test: &str) -> bool {
    support::require_root(test)
        && ["/bin/busybox", "/bin/bash-static", "chroot", "mknod", "ldd"]
            .iter()
            .all(|t| support::require_tool(test, t))
        && static_busybox(test)
}

/// /bin/busybox must run without libraries inside the chroot.
fn static_busybox(test: &str) -> bool {
    let out = support::run({
        let mut c = Command::new("ldd");
        c.arg("/bin/busybox");
        c
    });
    let dynamic = out.status.success() && text(&out.stdout).contains("=>");
    support::require(test, !dynamic, "a static /bin/busybox (busybox-static)")
}

/// A bash-less image: Debian's static busybox as every applet and /bin/sh,
/// the fake apk, and the non-bash shells of the matrix with their libraries.
fn busybox_chroot(shells: &[Shell]) -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    for d in [
        "bin",
        "sbin",
        "usr/bin",
        "usr/sbin",
        "usr/lib",
        "etc",
        "tmp",
        "var/log",
        "var/cache/fake-apk",
    ] {
        fs::create_dir_all(root.join(d)).unwrap();
    }
    fs::copy("/bin/busybox", root.join("bin/busybox")).unwrap();
    // Every image has a /dev/null.
    fs::create_dir_all(root.join("dev")).unwrap();
    let st = support::run({
        let mut c = Command::new("mknod");
        c.args(["-m", "666"])
            .arg(root.join("dev/null"))
            .args(["c", "1", "3"]);
        c
    });
    assert!(st.status.success(), "mknod: {}", text(&st.stderr));
    // Every applet as a symlink, as busybox --install -s would make them
    // (which needs /proc inside the chroot).
    let list = support::run({
        let mut c = Command::new("/bin/busybox");
        c.arg("--list-full");
        c
    });
    assert!(list.status.success());
    for applet in text(&list.stdout).lines() {
        let link = root.join(applet);
        fs::create_dir_all(link.parent().unwrap()).unwrap();
        if fs::symlink_metadata(&link).is_err() {
            symlink("/bin/busybox", &link).unwrap();
        }
    }
    let _ = fs::remove_file(root.join("bin/sh"));
    symlink("busybox", root.join("bin/sh")).unwrap();
    fs::copy(fixture("chroot-apk"), root.join("sbin/apk")).unwrap();
    fs::set_permissions(root.join("sbin/apk"), fs::Permissions::from_mode(0o755)).unwrap();
    fs::copy(script(), root.join("bootstrap.sh")).unwrap();
    fs::write(root.join("var/log/fake-apk.log"), "").unwrap();
    // The "bash" package: Debian's bash-static as /bin/bash.
    fs::create_dir_all(root.join("var/cache/fake-apk/bash/bin")).unwrap();
    fs::copy(
        "/bin/bash-static",
        root.join("var/cache/fake-apk/bash/bin/bash"),
    )
    .unwrap();
    let mut copied = Vec::new();
    for s in shells.iter().filter(|s| {
        s.kind == Kind::Posix
            && !s.program().ends_with("/bash")
            && !s.program().ends_with("/busybox")
    }) {
        copy_with_libs(root, s.program());
        copied.push(PathBuf::from(s.program()));
    }
    // The matrix's shells are glibc programs: their loader goes to a path
    // of its own, so that the image shows what a busybox image shows (no
    // glibc loader; with /lib/ld-musl-*.so.1 added, musl is all it has).
    hide_glibc_loader(root, &copied);
    for bash in ["bin/bash", "usr/bin/bash", "usr/local/bin/bash"] {
        assert!(
            !root.join(bash).exists(),
            "the chroot must be bash-less: {bash}"
        );
    }
    dir
}

/// The shells that can run inside the chroot: its own busybox /bin/sh and
/// the copied non-bash shells (a bash-less image has no bash to run under).
fn chroot_shells(shells: &[Shell]) -> Vec<Shell> {
    let mut v = vec![Shell {
        name: "the chroot's /bin/sh (busybox)".into(),
        argv: vec!["/bin/sh".into()],
        kind: Kind::Posix,
    }];
    v.extend(
        shells
            .iter()
            .filter(|s| {
                s.kind == Kind::Posix
                    && !s.program().ends_with("/bash")
                    && !s.program().ends_with("/busybox")
            })
            .cloned(),
    );
    v
}

/// PATH inside the chroots (it also finds `chroot` itself on the host).
const CHROOT_PATH: &str = "/usr/local/bin:/usr/bin:/bin:/usr/sbin:/sbin";

fn in_chroot(root: &Path, shell: &Shell, args: &[&str], env: &[(&str, &str)]) -> Output {
    let mut c = Command::new("chroot");
    c.arg(root)
        .args(&shell.argv)
        .arg("/bootstrap.sh")
        .args(args)
        .env_clear()
        .env("PATH", CHROOT_PATH)
        .current_dir("/");
    for (k, v) in env {
        c.env(k, v);
    }
    support::run(c)
}

#[test]
fn bash_less_busybox_chroot_gets_a_working_bash() {
    if !chroot_tools("bash_less_busybox_chroot_gets_a_working_bash") {
        return;
    }
    let all = support::posix_shells();
    let dir = busybox_chroot(&all);
    let root = dir.path();
    let shells = chroot_shells(&all);
    for shell in &shells {
        let _ = fs::remove_file(root.join("bin/bash"));
        fs::write(root.join("var/log/fake-apk.log"), "").unwrap();
        let out = in_chroot(root, shell, &["--need", "bash"], &[]);
        assert_eq!(out.status.code(), Some(0), "{}", describe(shell, &out));
        let log = fs::read_to_string(root.join("var/log/fake-apk.log")).unwrap();
        assert_eq!(
            log,
            "apk add --no-cache bash\n",
            "{}",
            describe(shell, &out)
        );
        let v = support::run({
            let mut c = Command::new("chroot");
            c.arg(root)
                .args(["/bin/bash", "-c", "printf '%s' \"$BASH_VERSION\""])
                .env_clear()
                .env("PATH", CHROOT_PATH);
            c
        });
        assert!(
            v.status.success() && text(&v.stdout).starts_with(|c: char| c.is_ascii_digit()),
            "bash in the chroot does not run: {}",
            text(&v.stderr)
        );
        // A second run changes nothing.
        let before = fs::metadata(root.join("bin/bash")).unwrap();
        let out = in_chroot(root, shell, &["--need", "bash"], &[]);
        assert_eq!(out.status.code(), Some(0), "{}", describe(shell, &out));
        let after = fs::metadata(root.join("bin/bash")).unwrap();
        assert_eq!(
            fs::read_to_string(root.join("var/log/fake-apk.log")).unwrap(),
            log
        );
        assert_eq!(
            (before.ino(), before.mtime(), before.mtime_nsec()),
            (after.ino(), after.mtime(), after.mtime_nsec())
        );
        // Not musl (no ld-musl loader): --musl-lib installs nothing.
        let out = in_chroot(root, shell, &["--musl-lib", "libstdc++"], &[]);
        assert_eq!(out.status.code(), Some(0), "{}", describe(shell, &out));
        assert_eq!(
            fs::read_to_string(root.join("var/log/fake-apk.log")).unwrap(),
            log
        );
    }
    support::report("bash_less_busybox_chroot_gets_a_working_bash", &shells);
}

#[test]
fn musl_chroot_installs_exactly_the_missing_libraries() {
    if !chroot_tools("musl_chroot_installs_exactly_the_missing_libraries") {
        return;
    }
    let all = support::posix_shells();
    let dir = busybox_chroot(&all);
    let root = dir.path();
    fs::create_dir_all(root.join("lib")).unwrap();
    fs::write(root.join("lib/ld-musl-x86_64.so.1"), "").unwrap();
    // The path file: one directory per line, and a colon-separated line.
    fs::write(
        root.join("etc/ld-musl-x86_64.path"),
        "/opt/none\n/usr/local/lib:/opt/extra lib\n",
    )
    .unwrap();
    for (pkg, file) in [
        ("libstdc++", "usr/lib/libstdc++.so.6"),
        ("libgcc", "usr/lib/libgcc_s.so.1"),
    ] {
        let p = root.join("var/cache/fake-apk").join(pkg).join(file);
        fs::create_dir_all(p.parent().unwrap()).unwrap();
        fs::write(p, "").unwrap();
    }
    let log = root.join("var/log/fake-apk.log");
    let extra = root.join("opt/extra lib");
    let shells = chroot_shells(&all);
    let args = ["--musl-lib", "libstdc++", "--musl-lib", "libgcc"];
    let reset = |stdcxx_in_extra: bool, gcc_in_usr_lib: bool| {
        fs::write(&log, "").unwrap();
        let _ = fs::remove_dir_all(&extra);
        fs::create_dir_all(&extra).unwrap();
        let _ = fs::remove_file(root.join("usr/lib/libstdc++.so.6"));
        let _ = fs::remove_file(root.join("usr/lib/libgcc_s.so.1"));
        if stdcxx_in_extra {
            fs::write(extra.join("libstdc++.so.6"), "").unwrap();
        }
        if gcc_in_usr_lib {
            fs::write(root.join("usr/lib/libgcc_s.so.1"), "").unwrap();
        }
    };
    for shell in &shells {
        // Present in the extra directory of the path file, and in /usr/lib.
        reset(true, true);
        let out = in_chroot(root, shell, &args, &[]);
        assert_eq!(out.status.code(), Some(0), "{}", describe(shell, &out));
        assert_eq!(
            fs::read_to_string(&log).unwrap(),
            "",
            "{}",
            describe(shell, &out)
        );

        // One missing.
        reset(true, false);
        let out = in_chroot(root, shell, &args, &[]);
        assert_eq!(out.status.code(), Some(0), "{}", describe(shell, &out));
        assert_eq!(
            fs::read_to_string(&log).unwrap(),
            "apk add --no-cache libgcc\n"
        );
        assert!(root.join("usr/lib/libgcc_s.so.1").exists());

        // Both missing: one apk call for exactly those two.
        reset(false, false);
        let out = in_chroot(root, shell, &args, &[]);
        assert_eq!(out.status.code(), Some(0), "{}", describe(shell, &out));
        assert_eq!(
            fs::read_to_string(&log).unwrap(),
            "apk add --no-cache libstdc++ libgcc\n"
        );
        // ... and a second run changes nothing.
        fs::write(&log, "").unwrap();
        let out = in_chroot(root, shell, &args, &[]);
        assert_eq!(out.status.code(), Some(0), "{}", describe(shell, &out));
        assert_eq!(fs::read_to_string(&log).unwrap(), "");

        // apk does not provide it: exit 4 naming the library and apk.
        reset(true, false);
        let out = in_chroot(root, shell, &args, &[("FAKE_APK_BROKEN", "1")]);
        assert_eq!(out.status.code(), Some(4), "{}", describe(shell, &out));
        let err = text(&out.stderr);
        assert!(
            err.contains("bootstrap: cannot provide musl library libgcc")
                && err.contains("package managers tried: apk")
                && !err.contains("libstdc++"),
            "{}",
            describe(shell, &out)
        );
    }
    // A variant with the library baked in asks for it without flags.
    let variant = BootstrapBuilder::new()
        .musl_lib("libgcc")
        .unwrap()
        .script()
        .unwrap();
    fs::write(root.join("bootstrap.sh"), &variant.content).unwrap();
    for shell in &shells {
        reset(true, false);
        let out = in_chroot(root, shell, &[], &[]);
        assert_eq!(out.status.code(), Some(0), "{}", describe(shell, &out));
        assert_eq!(
            fs::read_to_string(&log).unwrap(),
            "apk add --no-cache libgcc\n"
        );
    }
    // A name with a byte the path file could split on stays one directory.
    assert!(extra.as_os_str().as_bytes().contains(&b' '));
    support::report(
        "musl_chroot_installs_exactly_the_missing_libraries",
        &shells,
    );
}
