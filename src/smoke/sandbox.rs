//! Where the smoke's commands run: on the host, or (`--root DIR`) inside a
//! given root directory with a mount and PID namespace of their own
//! (`unshare --mount --pid --fork`, then `chroot`).
//!
//! In a root, the work dir and the artifacts dir are bind-mounted at their
//! host paths, so every path the smoke writes means the same thing inside
//! and out; `/proc` is the namespace's own and `/dev` the host's. PID 1 of
//! the namespace is a small `sh` script that runs the command, then lists
//! every process of the namespace still alive (zombies aside) into a file:
//! the namespace ends with its PID 1, so that list is the only record of
//! leftovers (each with its state, parent, group, session and command line,
//! so that a leftover seen once can be told apart). The network is the host's: the fake server on 127.0.0.1 is
//! reachable.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::Command;

/// PID 1 of the namespace: `sh -c SCRIPT sh ROOT LEFT N BIND... ARGV...`.
const PID1: &str = r#"set -e
root=$1 left=$2 n=$3
shift 3
mount --make-rprivate /
while [ "$n" -gt 0 ]; do
    mkdir -p "$root$1"
    mount --bind "$1" "$root$1"
    shift
    n=$((n - 1))
done
mount -t proc proc "$root/proc"
mount --rbind /dev "$root/dev"
set +e
chroot "$root" "$@"
status=$?
: > "$left"
for p in "$root"/proc/[0-9]*; do
    pid=${p##*/}
    [ "$pid" = 1 ] && continue
    stat=
    read -r stat < "$p/stat" 2>/dev/null || continue
    rest=${stat##*) }
    case $rest in Z*) continue ;; esac
    # Already on its way out: exiting (PF_EXITING in the flags, field 9) or
    # with a KILL pending (bit 9 of SigPnd/ShdPnd): it runs no more code,
    # not a leftover. (A process that has taken its KILL shows neither for
    # a moment: the supervisor waits for its own timer and sleep to be gone,
    # since its timer's sleep was once listed here in that moment.)
    # The fields after comm are numbers and a state letter: split on purpose.
    set -- $rest
    case $7 in '' | *[!0-9]*) ;; *) [ $(($7 & 4)) -ne 0 ] && continue ;; esac
    pending=0
    while read -r key mask; do
        case $key:$mask in
        SigPnd:*[!0-9a-f]* | ShdPnd:*[!0-9a-f]*) ;;
        SigPnd:?* | ShdPnd:?*) [ $((0x$mask & 0x100)) -ne 0 ] && pending=1 ;;
        esac
    done < "$p/status" 2>/dev/null
    [ "$pending" = 1 ] && continue
    comm=${stat#* (}
    # Who it is, for the report: state, parent, group, session, command line.
    cmd=$(tr '\000' ' ' < "$p/cmdline" 2>/dev/null | cut -c 1-160)
    echo "$pid ${comm%%) *} (state $1, parent $2, group $3, session $4: $cmd)" >> "$left"
done
exit "$status"
"#;

/// Runs commands on the host or inside a root.
#[derive(Debug, Clone)]
pub struct Sandbox {
    root: Option<PathBuf>,
    binds: Vec<PathBuf>,
}

impl Sandbox {
    /// Commands run on the host.
    pub fn host() -> Self {
        Sandbox {
            root: None,
            binds: Vec::new(),
        }
    }

    /// Commands run in `root`, with `binds` mounted at their own paths.
    pub fn root(root: PathBuf, binds: Vec<PathBuf>) -> Self {
        Sandbox {
            root: Some(root),
            binds,
        }
    }

    /// Whether commands run in a root.
    pub fn in_root(&self) -> bool {
        self.root.is_some()
    }

    /// The system the commands see, as a host path: the root, or `/`.
    pub fn system(&self) -> &Path {
        self.root.as_deref().unwrap_or(Path::new("/"))
    }

    /// The `/tmp` the commands see, as a host path.
    pub fn tmp(&self) -> PathBuf {
        self.root
            .as_ref()
            .map_or_else(|| PathBuf::from("/tmp"), |r| r.join("tmp"))
    }

    /// A command running `argv`; in a root, leftovers are listed in `left`.
    pub fn command(&self, argv: &[String], left: &Path) -> Command {
        match &self.root {
            None => {
                let mut c = Command::new(&argv[0]);
                c.args(&argv[1..]);
                c
            }
            Some(root) => {
                let mut c = Command::new("unshare");
                c.args([
                    "--mount",
                    "--pid",
                    "--fork",
                    "--kill-child",
                    "--",
                    "sh",
                    "-c",
                    PID1,
                    "sh",
                ])
                .arg(root)
                .arg(left)
                .arg(self.binds.len().to_string())
                .args(&self.binds)
                .args(argv);
                c
            }
        }
    }
}

/// Every path of a root (relative, with a leading `/`) → its kind, size and
/// mtime.
pub type RootState = BTreeMap<String, String>;

impl Sandbox {
    /// The state of the root, skipping /proc, /dev, /sys and the bind
    /// mounts; `None` on the host.
    pub fn root_state(&self) -> Option<RootState> {
        let root = self.root.as_ref()?;
        let skip: Vec<PathBuf> = ["proc", "dev", "sys"]
            .iter()
            .map(|d| root.join(d))
            .chain(
                self.binds
                    .iter()
                    .map(|b| root.join(b.strip_prefix("/").unwrap_or(b))),
            )
            .collect();
        let mut out = RootState::new();
        let mut stack = vec![root.clone()];
        while let Some(dir) = stack.pop() {
            let Ok(entries) = std::fs::read_dir(&dir) else {
                continue;
            };
            for e in entries.flatten() {
                let p = e.path();
                if skip.contains(&p) {
                    continue;
                }
                let Ok(m) = std::fs::symlink_metadata(&p) else {
                    continue;
                };
                use std::os::unix::fs::MetadataExt as _;
                let rel = format!("/{}", p.strip_prefix(root).unwrap_or(&p).display());
                let kind = if m.is_dir() { "dir" } else { "file" };
                out.insert(
                    rel,
                    format!("{kind} {} {}.{}", m.len(), m.mtime(), m.mtime_nsec()),
                );
                if m.is_dir() {
                    stack.push(p);
                }
            }
        }
        Some(out)
    }
}

/// Paths created, changed or removed between two states; a new directory
/// stands for everything under it.
pub fn changed(before: &RootState, after: &RootState) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    for (k, v) in after {
        let what = match before.get(k) {
            None => "new",
            Some(b) if b != v && !v.starts_with("dir ") => "changed",
            _ => continue,
        };
        if out
            .iter()
            .any(|o| k.starts_with(&format!("{}/", o.split(' ').nth(1).unwrap_or(""))))
        {
            continue;
        }
        out.push(format!("{what} {k}"));
    }
    for k in before.keys() {
        if !after.contains_key(k) {
            out.push(format!("removed {k}"));
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn changes_in_a_root_are_listed_and_binds_skipped() {
        let d = tempfile::tempdir().unwrap();
        let root = d.path().to_path_buf();
        for p in ["tmp", "proc", "etc", "work"] {
            std::fs::create_dir(root.join(p)).unwrap();
        }
        std::fs::write(root.join("etc/keep"), "x").unwrap();
        let sb = Sandbox::root(root.clone(), vec![PathBuf::from("/work")]);
        let before = sb.root_state().unwrap();
        std::fs::create_dir(root.join("tmp/opencode")).unwrap();
        std::fs::write(root.join("tmp/opencode/x"), "1").unwrap();
        std::fs::write(root.join("etc/keep"), "changed").unwrap();
        std::fs::write(root.join("work/ignored"), "1").unwrap();
        std::fs::write(root.join("proc/ignored"), "1").unwrap();
        let after = sb.root_state().unwrap();
        assert_eq!(
            changed(&before, &after),
            ["changed /etc/keep", "new /tmp/opencode"]
        );
    }
}
