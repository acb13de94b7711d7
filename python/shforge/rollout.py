"""One rollout in one call, over any sandbox (:mod:`shforge.sandbox`).

The logic is written once, as coroutines over an :class:`AsyncSandbox`;
the synchronous :func:`rollout` and :func:`install` wrap a :class:`Sandbox`
in :class:`~shforge.sandbox.SyncAsAsync`, whose coroutines never suspend,
and drive them without an event loop. The host-side steps (writing the
session, reading the snapshot) run the ``shforge`` CLI synchronously in both
forms: a few tens of milliseconds each.
"""

from __future__ import annotations

import os
import shlex
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Awaitable, Callable, Dict, List, Optional, Sequence, Tuple

from ._files import StrPath, extract_untrusted
from .errors import (
    NoSessionDataError,
    RolloutError,
    SandboxError,
    SandboxTimeoutError,
    ShforgeError,
)
from .harness import Api, Mode, Session
from .sandbox import AsyncSandbox, ExecResult, Sandbox, SyncAsAsync, drive, is_root
from .supervisor import Receipt, Seconds

#: Exit statuses of a generated installer (SPEC section 5), for messages.
INSTALLER_EXITS = {
    2: "usage",
    3: "lock timeout",
    4: "download failed (an artifact is missing or unreadable)",
    5: "digest mismatch or no sha256 tool",
    6: "entry check or unpacking failed",
    7: "a needed musl library cannot be provided",
    8: "noexec: the prefix is on a mount that does not allow running programs",
}

#: The variable that marks every process of one rollout's launch
#: (``SHFORGE_ROLLOUT=ID`` in its environment), for the stop after a failure.
ROLLOUT_VAR = "SHFORGE_ROLLOUT"

_STEP_TIMEOUT = 120.0
_INSTALL_TIMEOUT = 900.0
_LAUNCH_MARGIN = 60.0
_DEFAULT_GRACE = 5.0

# The stop after a machinery failure: TERM the supervisor (marked with the
# rollout's ID, not with the harness's marker), wait for it to stop the
# harness, then KILL whatever still carries either. Plain POSIX sh, grep and
# kill: no bash, no ps (busybox and minbase images have these).
_STOP_SCRIPT = r"""
id=$1 marker=$2 grace=$3
pids() {
    for e in /proc/[0-9]*/environ; do
        p=${e#/proc/}; p=${p%/environ}
        [ "$p" = "$$" ] && continue
        if [ "$1" = term ]; then
            grep -qaF "SHFORGE_ROLLOUT=$id" "$e" 2>/dev/null || continue
            grep -qaF "NEMO_GYM_SUPERVISOR=$marker" "$e" 2>/dev/null && continue
        else
            grep -qaF -e "SHFORGE_ROLLOUT=$id" -e "NEMO_GYM_SUPERVISOR=$marker" "$e" 2>/dev/null || continue
        fi
        echo "$p"
    done
}
for p in $(pids term); do kill -TERM "$p" 2>/dev/null; done
i=0
while [ "$i" -lt "$((grace * 5))" ] && [ -n "$(pids all)" ]; do
    sleep 0.2 2>/dev/null || sleep 1
    i=$((i + 1))
done
for p in $(pids all); do kill -KILL "$p" 2>/dev/null; done
i=0
while [ "$i" -lt 10 ] && [ -n "$(pids all)" ]; do
    sleep 0.2 2>/dev/null || sleep 1
    i=$((i + 1))
done
[ -z "$(pids all)" ]
"""

# The first exec of a rollout or install (one round trip for the warm path):
# unpack the scripts (a tar stream on stdin) into the scratch dir as the
# rollout user, so they are its files; bootstrap; say the machine's arch and
# which bash the image has; with a bash 3.2+, try the installer's reuse check
# as the rollout user (it writes nothing when a complete install is there: a
# shared read-only prefix): "entry PATH" when it passed, else the
# installer's plan ("planrc N", then "plan: LINE" per line), so the install
# needs no exec of its own to ask. ``rm_reused=1`` (install): the scratch
# dir is removed on the way out when the install was reused.
_BOOTSTRAP_SCRIPT = r"""
d=$1 prefix=$2 installer=$3 rm_reused=$4
shift 4
# bash without the image's startup files or options (BASH_ENV, ENV,
# SHELLOPTS, BASHOPTS act before a script's first line; the scripts clear
# the rest themselves), as the launch runs it.
cbash() { env -u BASH_ENV -u ENV -u SHELLOPTS -u BASHOPTS "$b" --noprofile --norc "$@"; }
mkdir -p "$d" && cd "$d" && tar -x -f - && rm .shforge-complete || { echo "shforge-unpack-failed" >&2; exit 1; }
echo unpacked
sh "$d/bootstrap.sh" "$@" || exit $?
echo "arch $(uname -m)"
b=$(command -v bash 2>/dev/null) || exit 0
case $b in /*) ;; *) exit 0 ;; esac
v=$(cbash -c 'echo "$BASH_VERSION"' 2>/dev/null) || exit 0
echo "bash $b $v"
[ -n "$installer" ] || exit 0
case $v in [0-2].*|3.[01].*|3.[01]) exit 0 ;; esac
if out=$(cbash "$d/$installer" --prefix "$prefix" --source-dir "$d/artifacts" --quiet 2>/dev/null); then
    printf 'entry %s\n' "$(printf '%s\n' "$out" | tail -n 1)"
    [ "$rm_reused" = 1 ] && cd / && rm -rf "$d" 2>/dev/null && echo "shforge-removed" >&2
    exit 0
fi
out=$(cbash "$d/$installer" --plan --prefix "$prefix" 2>&1)
echo "planrc $?"
printf '%s\n' "$out" | sed 's/^/plan: /'
"""

# The launch, in one exec: unpack the session dir (a tar stream on stdin) as
# the rollout user, run the supervisor (its stdin /dev/null, its output into
# the scratch dir), end the preserved services when asked, send the receipt,
# the supervisor's output and the session dir back as one tar stream on
# stdout, remove the scratch dir, exit with the supervisor's status. ``ends``:
# the end-services command, shell-quoted (empty: leave them); ``keep``: the
# paths (relative to the scratch dir, one a line) of the session data the
# host reads (the logs, the capture), not the whole session dir (a harness's
# home holds caches the host never reads).
_LAUNCH_TAIL = r"""
"$@" </dev/null >"$d/launch.out" 2>"$d/launch.err"
rc=$?
echo "shforge-launched $rc" >&2
# A receipt whose services list is empty (its last two lines, as the
# supervisor writes it) needs no end-services run; any other: run it.
none='"services": [
]}'
if [ -n "$ends" ] && [ -s "$d/receipt.json" ] && [ "$(tail -n 2 "$d/receipt.json" 2>/dev/null)" != "$none" ]; then
    eval "$ends" </dev/null >/dev/null 2>&1
    echo "shforge-end-services $?" >&2
fi
cd "$d" || exit "$rc"
set -f
set -- launch.out launch.err
[ -e receipt.json ] && set -- "$@" receipt.json
IFS='
'
for p in $keep; do
    [ -e "$p" ] && set -- "$@" "$p"
done
tar -c -f - "$@" || echo "shforge-pack-failed" >&2
cd / && rm -rf "$d" 2>/dev/null && echo "shforge-removed" >&2
exit "$rc"
"""

_LAUNCH_SCRIPT = r"""
d=$1 s=$2 ends=$3 keep=$4
shift 4
mkdir -p "$s" && (cd "$s" && tar -x -f - && rm .shforge-complete) || { echo "shforge-unpack-failed" >&2; exit 1; }
""" + _LAUNCH_TAIL

#: Stands for the image's bash in the fast launch's argv and end-services
#: command: the script puts the bash it found in its place.
_BASH_SLOT = "/shforge-image-bash"

# The fast launch of a reused install, in one exec (the scripts and the
# session dir one tar stream on stdin): unpack, bootstrap, find the image's
# bash 3.2+, run the installer's reuse check as the rollout user; when it
# passed and named the entry the session was written for (``want``), the
# launch as _LAUNCH_TAIL, the image's bash put in place of _BASH_SLOT in the
# argv (and as "$b" in ``ends``). Anything else (no bash, an older one, no
# complete install, another entry, a bootstrap refusal): the session dir is
# removed, "shforge-fast-declined" said, exit 0; the host then takes the
# step-by-step path, which reports what went wrong. Nothing ran by then.
_FAST_LAUNCH_SCRIPT = r"""
d=$1 prefix=$2 installer=$3 want=$4 ends=$5 keep=$6 workdir=$7
shift 7
s=$d/session
# Declined: the scratch dir as the step-by-step path expects it (its own
# stream's end marker must be the one it finds).
decline() { rm -rf "$s" "$d/.shforge-complete" 2>/dev/null; echo "shforge-fast-declined" >&2; exit 0; }
cbash() { env -u BASH_ENV -u ENV -u SHELLOPTS -u BASHOPTS "$b" --noprofile --norc "$@"; }
# The end marker is only looked for (an rm would be one more process on the
# timed path); it goes with the scratch dir, never into the session dir.
mkdir -p "$d" && cd "$d" && tar -x -f - && [ -f .shforge-complete ] || { echo "shforge-unpack-failed" >&2; exit 1; }
sh "$d/bootstrap.sh" --workdir "$workdir" --session-dir "$s" >/dev/null 2>&1 || decline
b=$(command -v bash 2>/dev/null) || decline
case $b in /*) ;; *) decline ;; esac
v=$(cbash -c 'echo "$BASH_VERSION"' 2>/dev/null) || decline
case $v in [0-2].*|3.[01].*|3.[01]|'') decline ;; esac
out=$(cbash "$d/$installer" --prefix "$prefix" --source-dir "$d/artifacts" --quiet 2>/dev/null) || decline
[ "$(printf '%s\n' "$out" | tail -n 1)" = "$want" ] || decline
echo "shforge-fast-reused $b" >&2
n=$#
while [ "$n" -gt 0 ]; do
    a=$1
    shift
    [ "$a" = /shforge-image-bash ] && a=$b
    set -- "$@" "$a"
    n=$((n - 1))
done
cd "$workdir" || decline
""" + _LAUNCH_TAIL

# Can this user create the prefix and write in it, and write into the
# scratch dir's artifacts? (A shared read-only prefix: no; the rollout
# user's dirs for a root without capabilities: no.)
_WRITABLE_SCRIPT = r"""
mkdir -p "$1" 2>/dev/null || exit 1
for d in "$1/.shforge-write-check.$$" "$2/artifacts/.shforge-write-check.$$"; do
    mkdir "$d" 2>/dev/null || exit 1
    rmdir "$d"
done
"""

# The same, as root, in one exec with the question "is this root?" (exit 3:
# not root; 1: root, but it cannot write there).
_ROOT_WRITABLE_SCRIPT = '[ "$(id -u 2>/dev/null)" = 0 ] || exit 3\n' + _WRITABLE_SCRIPT

# The installer, then the scratch dir removed in the same exec (install()).
# The installer's stdout is held and printed last, so its last line (the
# entry) is the exec's last line even where a sandbox merges stderr into
# stdout (Harbor's exec does).
_INSTALL_THEN_REMOVE = r"""
d=$1
shift
out=$("$@")
rc=$?
cd / && rm -rf "$d" 2>/dev/null && echo "shforge-removed" >&2
[ -z "$out" ] || printf '%s
' "$out"
exit "$rc"
"""

# Can the carried bash run where it was uploaded? Else copy it into the
# prefix (``moved PATH``).
_CARRIED_EXEC_SCRIPT = r"""
chmod 755 "$1" 2>/dev/null
env -u BASH_ENV -u ENV "$1" --noprofile --norc -c : 2>/dev/null && exit 0
t=$2/.shforge-carried-$3
mkdir -p "$t" && cp "$1" "$t/bash" && chmod 755 "$t/bash" || exit 8
env -u BASH_ENV -u ENV "$t/bash" --noprofile --norc -c : || exit 8
echo "moved $t/bash"
"""

#: What the launch argv clears before bash starts (``shforge launch``):
#: the image's variables that act before a script's first line.
_BASH_STARTUP_VARS = ("BASH_ENV", "ENV", "SHELLOPTS", "BASHOPTS")


def _bash_argv(bash: str, script: str, *args: str) -> List[str]:
    """``bash script args`` as the launch runs bash: without the image's
    startup files and inherited options."""
    unset = [w for name in _BASH_STARTUP_VARS for w in ("-u", name)]
    return ["env", *unset, bash, "--noprofile", "--norc", script, *args]


_REMOVE_SCRIPT = r"""
rm -rf "$1" 2>/dev/null && exit 0
chmod -R u+rwx "$1" 2>/dev/null
rm -rf "$1"
"""


@dataclass(frozen=True)
class Installed:
    """A harness installed (or found installed) in the sandbox's prefix."""

    entry: str
    """The entry program (the installer's last line)."""
    prefix: str
    reused: bool
    """A complete install was already there: nothing was uploaded."""
    bash: str
    """The bash every later step runs with: the image's, or the carried one."""
    carried_bash: bool
    """The image had no bash 3.2+: the carried static bash was installed."""
    user: Optional[str]
    """The user the installer ran as (``"0"``: root)."""
    seconds: float


@dataclass(frozen=True)
class Timings:
    """Seconds spent in each phase of :func:`rollout`."""

    upload: float
    """The artifacts into the sandbox, and packing the session dir (the
    scripts travel on the bootstrap exec's stdin, the session dir on the
    launch's: their transfer is in ``install`` and ``launch_to_receipt``)."""
    install: float
    """Bootstrap and installer runs (the scripts' upload, the reuse check
    and the plan included: one exec when the install is reused). 0 after a
    fast launch: its bootstrap and reuse check are in ``launch_to_receipt``."""
    launch_to_receipt: float
    """The launch's one exec: the session dir in, the supervised run, the
    receipt and the session data out as one tar stream, the scratch dir
    removed (a fast launch: the scripts in, the bootstrap and the reuse
    check too)."""
    copy_back: float
    """Unpacking the receipt and the session data on the host, reading the
    receipt."""


@dataclass(frozen=True)
class Usage:
    """Tokens the harness recorded (the snapshot's ``summary.tokens``)."""

    input: int = 0
    output: int = 0
    reasoning: int = 0
    cache_read: int = 0
    cache_write: int = 0
    total: int = 0


@dataclass(frozen=True)
class Rollout:
    """What one rollout left."""

    receipt: Receipt
    exit_code: int
    """The supervisor's exit status (the harness's, 125 for its own failures)."""
    outcome: Dict[str, Any]
    """``shforge outcome``: why the rollout ended."""
    snapshot: Optional[Dict[str, Any]]
    """The session snapshot; None when the harness has no reader or left no data."""
    atif: Optional[Dict[str, Any]]
    """The ATIF trajectory; None only for a harness without a reader (or no data)."""
    usage: Usage
    timings: Timings
    installed: Installed
    marker: str
    """The supervisor's marker of this run (``NEMO_GYM_SUPERVISOR=MARKER``)."""
    end_services_exit: Optional[int] = None
    """``--end-services``' exit status when services were ended."""


#: What the in-sandbox scripts say on stderr for the host; a sandbox that
#: merges stderr into stdout (Harbor's) mixes them into stdout, in no fixed
#: order, so a result line is never read as one of these.
_OWN_WORDS = ("shforge-removed", "shforge-launched ", "shforge-end-services ",
              "shforge-unpack-failed", "shforge-pack-failed", "shforge-fast-")


def _line(data: bytes, last: bool = True) -> str:
    """The last (or first) non-blank line, less the scripts' own words."""
    lines = [ln for ln in data.decode("utf-8", "replace").splitlines()
             if ln.strip() and not ln.startswith(_OWN_WORDS)]
    if not lines:
        return ""
    return lines[-1] if last else lines[0]


def _why(step: str, what: str, r: ExecResult) -> RolloutError:
    said = _line(r.stderr) or _line(r.stdout)
    cause = f"{what} exited {r.exit_code}"
    if said:
        cause += f": {said[:500]}"
    return RolloutError(step, cause, r.exit_code if r.exit_code > 0 else 1)


class _Run:
    """One rollout's state in the sandbox: the scratch dir, the users."""

    def __init__(self, sb: AsyncSandbox, scratch: Optional[str]) -> None:
        self.sb = sb
        self.rid = os.urandom(8).hex()
        self.scratch = scratch or f"/tmp/shforge-{self.rid}"
        self.user = sb.user
        self.root_ok: Optional[bool] = None
        self.upload_s = 0.0
        self.made_scratch = False
        self.carried_copy: Optional[str] = None

    async def exec(
        self,
        step: str,
        argv: "Sequence[str] | str",
        *,
        user: Optional[str] = None,
        timeout: float = _STEP_TIMEOUT,
        env: Optional[Dict[str, str]] = None,
        cwd: Optional[str] = None,
        stdin: Optional[bytes] = None,
    ) -> ExecResult:
        try:
            return await self.sb.exec(argv, user=user, timeout=timeout, env=env, cwd=cwd, stdin=stdin)
        except SandboxTimeoutError as e:
            raise RolloutError(step, f"timed out after {timeout:g} s ({e.message})") from e
        except SandboxError as e:
            raise RolloutError(step, f"the sandbox failed: {e.message}") from e

    async def upload(self, step: str, src: StrPath, dst: str, *, user: Optional[str] = None) -> None:
        t = time.monotonic()
        try:
            await self.sb.upload(src, dst, user=user)
        except SandboxError as e:
            raise RolloutError(step, f"uploading {dst}: {e.message}") from e
        finally:
            self.upload_s += time.monotonic() - t

    async def root(self) -> bool:
        """Can this sandbox run commands as root (beside the rollout user)?"""
        if self.root_ok is None:
            if self.user is None or is_root(self.user):
                self.root_ok = False  # the rollout user already is the default one
            else:
                try:
                    r = await self.sb.exec(["id", "-u"], user="0", timeout=_STEP_TIMEOUT)
                    self.root_ok = r.exit_code == 0 and r.stdout.strip() == b"0"
                except SandboxError:
                    self.root_ok = False
        return self.root_ok

    async def remove_scratch(self) -> None:
        """Best effort: as the rollout user, then as root."""
        if self.carried_copy is not None:
            try:
                await self.sb.exec(["rm", "-rf", os.path.dirname(self.carried_copy)], timeout=60)
            except SandboxError:
                pass
            self.carried_copy = None
        if not self.made_scratch:
            return
        for user in (None, "0"):
            if user == "0" and not await self.root():
                break
            try:
                r = await self.sb.exec(["sh", "-c", _REMOVE_SCRIPT, "sh", self.scratch], user=user, timeout=60)
                if r.exit_code == 0:
                    return
            except SandboxError:
                return

    async def stop(self, marker: str, grace: float) -> None:
        """After a failure during the launch: stop every process of it. As
        the rollout user, whose processes they are: root in a container
        usually lacks CAP_SYS_PTRACE and cannot read another user's
        /proc/PID/environ."""
        user = None
        try:
            await self.sb.exec(
                ["sh", "-c", _STOP_SCRIPT, "sh", self.rid, marker, str(int(grace) + 1)],
                user=user,
                timeout=grace + 30,
            )
        except SandboxError:
            pass  # the sandbox is gone: nothing of it is left running


def _staged_scripts(host: Path, harness: str, installer: Optional[StrPath]) -> Tuple[Path, bool]:
    """The scripts this rollout needs, copied into ``host/up`` (uploaded as
    one directory); whether the carried bash's installer is among them."""
    import shutil

    from .scripts import BOOTSTRAP, RUNNER, SUPERVISOR, scripts_dir

    src = scripts_dir()
    up = host / "up"
    (up / "installers").mkdir(parents=True)
    (up / "artifacts").mkdir()
    for name in (BOOTSTRAP, SUPERVISOR, RUNNER):
        shutil.copy2(src / name, up / name)
    if installer is not None:
        shutil.copy2(installer, up / "installers" / f"{harness}.sh")
    else:
        theirs = src / "installers" / f"{harness}.sh"
        if not theirs.is_file():
            raise RolloutError("upload", f"no shipped installer installers/{harness}.sh (give installer=)", 2)
        shutil.copy2(theirs, up / "installers" / f"{harness}.sh")
    has_bash = (src / "installers" / "bash.sh").is_file()
    if has_bash and harness != "bash":
        shutil.copy2(src / "installers" / "bash.sh", up / "installers" / "bash.sh")
    return up, has_bash


def _artifact(artifacts: Path, name: str, fetch_as: Sequence[str]) -> Path:
    """``artifacts/name``, fetched there first (``shforge fetch``) when missing."""
    from .tools import fetch

    path = artifacts / name
    if not path.is_file():
        try:
            fetch(list(fetch_as), into=artifacts)
        except ShforgeError as e:
            raise RolloutError("upload", f"artifact {name} is missing and fetching it failed: {e.message}") from e
        if not path.is_file():
            raise RolloutError("upload", f"artifact {name} is missing from {artifacts} (shforge fetch did not bring it)")
    return path


def _carried_bash_artifact(installer_text: str, arch: str) -> str:
    import re

    names: "list[str]" = sorted(set(re.findall(r"bash-static-[0-9A-Za-z.+~_-]*?-" + re.escape(arch) + r"\b", installer_text)))
    if not names:
        raise RolloutError("bootstrap", f"the image has no bash 3.2+ and no carried bash is pinned for {arch}", 4)
    return names[0]


#: The part of a capture dir a snapshot reader reads, by kind, where the
#: rest is large and never read (Codex's CODEX_HOME holds the skills it
#: unpacks on a first run, its sqlite logs): only that comes back. The
#: readers' layouts (``src/snapshot/codex.rs``: ``sessions``).
_CAPTURE_SUBS: Dict[str, Tuple[str, ...]] = {"codex": ("sessions",)}


def _predicted_entry(installer: Path, prefix: str) -> Optional[str]:
    """The entry a complete install by this installer has in ``prefix``
    (``PREFIX/NAME-VERSION/ENTRY``, from the pins at its top, as its last
    line says it); None when the installer does not pin them that way (the
    fast launch is then not tried)."""
    import re

    try:
        text = installer.read_text(encoding="utf-8", errors="replace")
    except OSError:
        return None
    pins = {}
    for key in ("name", "version", "entry"):
        m = re.search(r"^" + key + r"='([^'\n]+)'$", text, re.M)
        if m is None:
            return None
        pins[key] = m.group(1)
    if "final=$prefix/$name-$version" not in text or pins["entry"].startswith("/"):
        return None
    return f"{prefix.rstrip('/') or ''}/{pins['name']}-{pins['version']}/{pins['entry']}"


def _default_artifacts() -> Path:
    return Path(os.environ.get("SHFORGE_ARTIFACTS", "/var/cache/shforge/artifacts"))


@dataclass(frozen=True)
class _Boot:
    bash: str
    carried: bool
    entry: Optional[str]
    """The reuse check passed on the way: the install's entry."""
    plan: Optional[ExecResult]
    """The installer's ``--plan`` when the reuse check failed on the way."""


_COMPLETE = ".shforge-complete"


def _tar_bytes(path: Path, leave_out: Sequence[str] = ()) -> bytes:
    """``path``'s content as an uncompressed tar (names relative to it,
    owner 0 and no names: as root, tar keeps root's; as a user, it cannot,
    and the files are the user's), but the paths (relative) ``leave_out``
    names."""
    import io
    import tarfile

    def as_owner(info: tarfile.TarInfo) -> Optional[tarfile.TarInfo]:
        if info.name in leave_out:
            return None
        info.uid = info.gid = 0
        info.uname = info.gname = ""
        return info

    buf = io.BytesIO()
    with tarfile.open(fileobj=buf, mode="w", format=tarfile.GNU_FORMAT) as tar:
        for child in sorted(path.iterdir()):
            tar.add(str(child), arcname=child.name, filter=as_owner)
        # Last: the stream came whole when this is there (tar reads a stream
        # cut at a block boundary as its end, exit 0).
        end = tarfile.TarInfo(_COMPLETE)
        end.mode = 0o600
        tar.addfile(end, io.BytesIO(b""))
    return buf.getvalue()


async def _bootstrap(run: _Run, workdir: Optional[str], session_dir: str, prefix: str,
                     artifacts: Path, has_bash_installer: bool, harness: str,
                     scripts: bytes, rm_reused: bool) -> _Boot:  # fmt: skip
    """Unpack the scripts, bootstrap and choose the bash: the image's own
    when 3.2+, else the carried static one, installed into the prefix; the
    entry when the installer's reuse check passed on the way, else its
    plan."""
    dirs = [] if workdir is None else ["--workdir", workdir, "--session-dir", session_dir]
    run.made_scratch = True
    r = await run.exec(
        "bootstrap",
        ["sh", "-c", _BOOTSTRAP_SCRIPT, "sh", run.scratch, prefix, f"installers/{harness}.sh",
         "1" if rm_reused else "0", *dirs],
        stdin=scripts,
    )  # fmt: skip
    if b"shforge-removed" in r.stderr:
        run.made_scratch = False
    if b"shforge-unpack-failed" in r.stderr or b"unpacked" not in r.stdout.split(b"\n", 1)[0]:
        said = [ln if _COMPLETE not in ln else "the stream ended before its end marker (cut short)"
                for ln in r.stderr.decode("utf-8", "replace").splitlines() if "shforge-unpack" not in ln]
        raise RolloutError("upload", f"the scripts into {run.scratch}: tar -x exited {r.exit_code}"
                           + (f": {said[-1][:500]}" if said else ""), r.exit_code or 1)  # fmt: skip
    if r.exit_code != 0:
        raise _why("bootstrap", "bootstrap.sh", r)
    arch = ""
    image_bash: Optional[str] = None
    entry: Optional[str] = None
    planrc: Optional[int] = None
    plan: "list[str]" = []
    for ln in r.stdout.decode("utf-8", "replace").splitlines():
        words = ln.split()
        if words[:1] == ["arch"] and len(words) == 2:
            arch = words[1]
        if words[:1] == ["bash"] and len(words) >= 3:
            major, _, rest = words[2].partition(".")
            minor = rest.split(".")[0]
            if major.isdigit() and minor.isdigit() and (int(major), int(minor)) >= (3, 2):
                image_bash = words[1]
        if ln.startswith("entry /"):
            entry = ln[6:]
        if words[:1] == ["planrc"] and len(words) == 2 and words[1].isdigit():
            planrc = int(words[1])
        if ln.startswith("plan: "):
            plan.append(ln[6:])
    if image_bash is not None:
        planned = "\n".join(plan).encode()
        got = None if planrc is None else ExecResult(planrc, planned if planrc == 0 else b"", b"" if planrc == 0 else planned)
        return _Boot(image_bash, False, entry, got)
    if not has_bash_installer:
        raise RolloutError(
            "bootstrap",
            "the image has no bash 3.2 or later and this shforge carries none (installers/bash.sh is not shipped)",
            4,
        )
    from .scripts import scripts_dir

    text = (scripts_dir() / "installers" / "bash.sh").read_text(encoding="utf-8", errors="replace")
    name = _carried_bash_artifact(text, arch)
    local = _artifact(artifacts, name, ["bash"])
    carried = f"{run.scratch}/artifacts/{name}"
    await run.upload("upload", local, carried)
    # The scratch dir on a noexec mount (Docker's --tmpfs /tmp): the carried
    # bash runs from a copy in the prefix (an exec-able mount the
    # orchestrator provides), removed once its install is done.
    r = await run.exec("bootstrap", ["sh", "-c", _CARRIED_EXEC_SCRIPT, "sh", carried, prefix, run.rid])
    moved = next((ln[6:] for ln in r.stdout.decode("utf-8", "replace").splitlines() if ln.startswith("moved ")), None)
    if r.exit_code != 0:
        raise _why("bootstrap", f"the carried bash {carried} (no exec-able place for it)", r)
    if moved is not None:
        run.carried_copy = moved
        carried = moved
    bootstrap = (scripts_dir() / "bootstrap.sh").read_text(encoding="utf-8", errors="replace")
    bash = carried
    if "--carried-bash" in bootstrap:
        r = await run.exec(
            "bootstrap",
            ["sh", f"{run.scratch}/bootstrap.sh", *dirs, "--carried-bash", carried],
        )  # fmt: skip
        if r.exit_code != 0:
            raise _why("bootstrap", "bootstrap.sh --carried-bash", r)
        last = _line(r.stdout)
        if last.startswith("bash "):
            bash = last[5:]
    if bash != carried:
        return _Boot(bash, False, None, None)
    # The carried bash installs itself into the prefix, reused after.
    iuser = await _install_user(run, prefix)
    r = await run.exec(
        "install",
        _bash_argv(carried, f"{run.scratch}/installers/bash.sh", "--prefix", prefix,
                   "--source-dir", f"{run.scratch}/artifacts", "--quiet"),
        user=iuser, timeout=_INSTALL_TIMEOUT,
    )  # fmt: skip
    if r.exit_code != 0:
        raise _install_error("the carried bash's installer", r)
    return _Boot(_line(r.stdout), True, None, None)


def _install_error(what: str, r: ExecResult) -> RolloutError:
    said = _line(r.stderr.replace(b"shforge-removed\n", b"")) or _line(r.stdout)
    meaning = INSTALLER_EXITS.get(r.exit_code)
    cause = f"{what} exited {r.exit_code}"
    if meaning:
        cause += f" ({meaning})"
    if said:
        cause += f": {said[:500]}"
    return RolloutError("install", cause, r.exit_code)


async def _install_user(run: _Run, prefix: str) -> Optional[str]:
    """Root when the sandbox allows it and root can write the prefix, else
    the rollout user (one exec as root asks both)."""
    if run.user is None or is_root(run.user) or run.root_ok is False:
        run.root_ok = False
        return None
    try:
        r = await run.sb.exec(["sh", "-c", _ROOT_WRITABLE_SCRIPT, "sh", prefix, run.scratch], user="0",
                              timeout=_STEP_TIMEOUT)  # fmt: skip
    except SandboxError:
        run.root_ok = False
        return None
    run.root_ok = r.exit_code in (0, 1)
    return "0" if r.exit_code == 0 else None


async def _install(run: _Run, harness: str, bash: str, prefix: str, artifacts: Path,
                   carried: bool, plan: Optional[ExecResult], remove_after: bool) -> Installed:  # fmt: skip
    """Upload what the plan names and install. ``plan``: the installer's
    ``--plan``, asked on the way by the bootstrap exec after its reuse check
    failed; None: check and ask here. ``remove_after``: the scratch dir is
    removed in the installer's exec (the last one of :func:`install`)."""
    t = time.monotonic()
    iuser = await _install_user(run, prefix)
    installer = f"{run.scratch}/installers/{harness}.sh"
    source = f"{run.scratch}/artifacts"
    if plan is None:
        # A complete install already there is reused, nothing uploaded (the
        # installer's reuse check writes nothing: a shared read-only prefix).
        r = await run.exec(
            "install", _bash_argv(bash, installer, "--prefix", prefix, "--source-dir", source, "--quiet"),
            user=iuser, timeout=_INSTALL_TIMEOUT,
        )  # fmt: skip
        if r.exit_code == 0:
            return Installed(_line(r.stdout), prefix, True, bash, carried, iuser, time.monotonic() - t)
        if r.exit_code not in (4, 5, 6):
            raise _install_error(f"installers/{harness}.sh", r)
        plan = await run.exec("install", _bash_argv(bash, installer, "--plan", "--prefix", prefix), user=iuser)
    if plan.exit_code != 0:
        raise _install_error(f"installers/{harness}.sh --plan", plan)
    wanted = [ln.split(None, 1)[1] for ln in plan.stdout.decode().splitlines() if ln.startswith("artifact ")]
    up_s = run.upload_s
    for name in wanted:
        local = _artifact(artifacts, name, [harness])
        await run.upload("upload", local, f"{source}/{name}", user=iuser)
    uploaded = run.upload_s - up_s
    argv = _bash_argv(bash, installer, "--prefix", prefix, "--source-dir", source, "--quiet")
    if remove_after:
        argv = ["sh", "-c", _INSTALL_THEN_REMOVE, "sh", run.scratch, *argv]
    r = await run.exec("install", argv, user=iuser, timeout=_INSTALL_TIMEOUT)
    if remove_after and b"shforge-removed" in r.stderr:
        run.made_scratch = False
    if r.exit_code != 0:
        raise _install_error(f"installers/{harness}.sh", r)
    return Installed(_line(r.stdout), prefix, False, bash, carried, iuser, time.monotonic() - t - uploaded)


class _TarEnd:
    """Fed a tar stream piece by piece: has its end (a zero header block)
    come? The launch's result is whole then, while the exec's tail (the
    scratch dir's removal) still runs."""

    def __init__(self) -> None:
        self.data = bytearray()
        self.pos = 0  # the offset of the next header in ``data``

    def __call__(self, chunk: bytes) -> bool:
        self.data += chunk
        while self.pos + 512 <= len(self.data):
            head = bytes(self.data[self.pos : self.pos + 512])
            if head == bytes(512):
                return True
            field = head[124:136]
            if field[0] & 0x80:  # base-256 (GNU, large sizes)
                size = int.from_bytes(field[1:], "big")
            else:
                try:
                    size = int(field.rstrip(b"\0 ").strip() or b"0", 8)
                except ValueError:
                    return False  # not a tar: wait for the exec's end
            self.pos += 512 + (size + 511) // 512 * 512
        return False


def _untar(data: bytes, into: Path) -> None:
    """Unpack the launch's tar stream (:func:`extract_untrusted`). A
    truncated stream keeps what came whole."""
    import io
    import tarfile

    if not data:
        return
    try:
        with tarfile.open(fileobj=io.BytesIO(data), mode="r:") as tar:
            extract_untrusted(tar, into)
    except (tarfile.TarError, OSError):
        pass


#: The host's scratch for one rollout goes to this memory-backed dir when
#: it has this much room and TMPDIR is not set: a rollout makes and removes
#: some twenty dirs there, and on a busy disk each rmdir took 15-45 ms.
_HOST_SHM = "/dev/shm"
_HOST_SHM_ROOM = 512 << 20


def _host_tmp_base() -> Optional[str]:
    """Where :func:`_host_tmp` makes its dir (None: the default temp dir)."""
    if os.environ.get("TMPDIR"):
        return None
    try:
        st = os.statvfs(_HOST_SHM)
    except OSError:
        return None
    if st.f_bavail * st.f_frsize < _HOST_SHM_ROOM or not os.access(_HOST_SHM, os.W_OK | os.X_OK):
        return None
    return _HOST_SHM


def _host_tmp() -> Path:
    import tempfile

    return Path(tempfile.mkdtemp(prefix="shforge-rollout-", dir=_host_tmp_base()))


def _rmtree(path: Path) -> None:
    import shutil

    shutil.rmtree(path, ignore_errors=True)


async def install_async(
    sandbox: AsyncSandbox,
    harness: str,
    *,
    prefix: str = "/opt/shforge",
    artifacts: Optional[StrPath] = None,
    installer: Optional[StrPath] = None,
    scratch: Optional[str] = None,
) -> Installed:
    """As :func:`install`, over an :class:`~shforge.sandbox.AsyncSandbox`."""
    run = _Run(sandbox, scratch)
    host = _host_tmp()
    try:
        up, has_bash = _staged_scripts(host, harness, installer)
        scripts = _tar_bytes(up)
        arts = Path(artifacts) if artifacts is not None else _default_artifacts()
        t = time.monotonic()
        boot = await _bootstrap(run, None, f"{run.scratch}/session", prefix, arts, has_bash, harness, scripts, True)
        if boot.entry is not None:
            return Installed(boot.entry, prefix, True, boot.bash, boot.carried, None, time.monotonic() - t)
        inst = await _install(run, harness, boot.bash, prefix, arts, boot.carried, boot.plan, remove_after=True)
        if boot.carried:
            inst = Installed(inst.entry, prefix, inst.reused, boot.bash, True, inst.user, time.monotonic() - t)
        return inst
    finally:
        await run.remove_scratch()
        _rmtree(host)


def install(
    sandbox: Sandbox,
    harness: str,
    *,
    prefix: str = "/opt/shforge",
    artifacts: Optional[StrPath] = None,
    installer: Optional[StrPath] = None,
    scratch: Optional[str] = None,
) -> Installed:
    """Install ``harness`` into ``prefix`` in the sandbox (or find it
    installed there: then nothing is uploaded and nothing written).

    Uploads the bootstrap and the harness's installer into a scratch dir,
    bootstraps, asks the installer which artifacts this sandbox needs
    (``--plan``), uploads only those from ``artifacts`` (a host dir;
    missing ones are fetched into it with ``shforge fetch``; default
    ``$SHFORGE_ARTIFACTS`` or ``/var/cache/shforge/artifacts``) and runs it:
    as root when the sandbox allows it and root can write the prefix, else
    as the rollout user. ``installer`` is an adapter's own installer script
    (:func:`shforge.installer_script`) instead of the shipped one.
    Failures raise :class:`~shforge.errors.RolloutError`.
    """
    return drive(
        install_async(SyncAsAsync(sandbox), harness, prefix=prefix, artifacts=artifacts,
                      installer=installer, scratch=scratch)
    )  # fmt: skip


async def rollout_async(
    sandbox: AsyncSandbox,
    harness: str,
    *,
    prompt: str,
    base_url: str,
    model: str,
    workdir: str,
    prefix: str = "/opt/shforge",
    artifacts: Optional[StrPath] = None,
    api: Optional[Api] = None,
    api_key_env: Optional[str] = None,
    deadline: Optional[Seconds] = None,
    grace: Optional[Seconds] = None,
    mode: Mode = "events",
    keep_env: Sequence[str] = (),
    spec: Optional[StrPath] = None,
    installer: Optional[StrPath] = None,
    scratch: Optional[str] = None,
    end_services: bool = True,
) -> Rollout:
    """As :func:`rollout`, over an :class:`~shforge.sandbox.AsyncSandbox`."""
    import datetime
    from concurrent.futures import Future, ThreadPoolExecutor

    from . import harness as harness_mod
    from .scripts import RUNNER, SUPERVISOR
    from .supervisor import end_services_argv, launch_argv, read_receipt

    def secs(v: Optional[Seconds]) -> Optional[float]:
        if v is None:
            return None
        return v.total_seconds() if isinstance(v, datetime.timedelta) else float(v)

    deadline_s, grace_s = secs(deadline), secs(grace)
    key_env: Dict[str, str] = {}
    if api_key_env is not None:
        value = os.environ.get(api_key_env)
        if value is None:
            raise RolloutError("session", f"the host variable {api_key_env} (api_key_env) is not set")
        key_env[api_key_env] = value
    run = _Run(sandbox, scratch)
    host = _host_tmp()
    session_dir = f"{run.scratch}/session"
    marker = f"shforge-{run.rid}"
    launched = False
    arts = Path(artifacts) if artifacts is not None else _default_artifacts()
    try:
        up, has_bash = _staged_scripts(host, harness, installer)
        timeout = None if deadline_s is None else deadline_s + (grace_s or _DEFAULT_GRACE) + _LAUNCH_MARGIN

        def prepared(entry: str, bash: str, into: Path) -> Tuple[Session, List[str], str, List[str]]:
            """The session dir written on the host into ``into``; the
            launch argv, the end-services command, the paths to bring back.
            The three CLI runs are independent (the runner's argument is
            ``params.sh`` by its path): at once."""
            receipt_path = f"{run.scratch}/receipt.json"
            params = f"{session_dir.rstrip('/')}/params.sh"
            with ThreadPoolExecutor(max_workers=2) as pool:
                got_argv = pool.submit(
                    launch_argv, f"{run.scratch}/{SUPERVISOR}", receipt_path,
                    [bash, "--noprofile", "--norc", f"{run.scratch}/{RUNNER}", params],
                    deadline=deadline, grace=grace, marker=marker, bash=bash,
                )  # fmt: skip
                got_ends = (pool.submit(end_services_argv, f"{run.scratch}/{SUPERVISOR}", receipt_path, bash=bash)
                            if end_services else None)  # fmt: skip
                try:
                    session: Session = harness_mod.write_session(
                        None if spec is not None else harness,  # type: ignore[arg-type]
                        into,
                        session_dir=session_dir, workdir=workdir, entry=entry, base_url=base_url,
                        model=model, prompt=prompt, api=api, api_key_env=api_key_env, mode=mode,
                        keep_env=keep_env, spec=spec,
                    )  # fmt: skip
                except ShforgeError as e:
                    raise RolloutError("session", e.message, e.code) from e
                argv = got_argv.result()
                ends = shlex.join(got_ends.result()) if got_ends is not None else ""
            assert session.params == params
            cap = session.capture.db if session.capture.db is not None else session.capture.dir
            keep = ["session/" + n for n in ("events.log", "stderr.log", "stdout.log", "capture.json")]
            if cap is not None and (cap + "/").startswith(session_dir + "/"):
                rel = "session/" + os.path.relpath(cap, session_dir)
                subs = _CAPTURE_SUBS.get(session.capture.kind or "") if session.capture.db is None else None
                keep += [f"{rel}/{sub}" for sub in subs] if subs else [rel]
                if session.capture.db is not None:
                    keep += [keep[-1] + "-wal", keep[-1] + "-shm"]
            return session, argv, ends, keep

        def failed(e: SandboxError, limit: Optional[float]) -> RolloutError:
            if isinstance(e, SandboxTimeoutError):
                return RolloutError("launch", f"the supervisor did not return within {limit:g} s: {e.message}")
            return RolloutError("launch", f"the sandbox failed: {e.message}")

        async def launch(argv: List[str], env: Dict[str, str], cwd: Optional[str], stdin: bytes,
                         limit: Optional[float]) -> "Tuple[bytes, Callable[[], Awaitable[ExecResult]]]":  # fmt: skip
            """The launch's stdout once its tar stream is whole (a sandbox
            with ``exec_split``: the scratch dir's removal then runs while
            the host reads the result), and its end, to await."""
            split = getattr(sandbox, "exec_split", None)
            end: Callable[[], Awaitable[ExecResult]]
            try:
                if split is not None:
                    out, end = await split(argv, complete=_TarEnd(), env=env, cwd=cwd, timeout=limit, stdin=stdin)
                else:
                    r = await sandbox.exec(argv, env=env, cwd=cwd, timeout=limit, stdin=stdin)
                    out = r.stdout

                    async def end() -> ExecResult:
                        return r
            except SandboxError as e:
                raise failed(e, limit) from e

            async def finish() -> ExecResult:
                try:
                    return await end()
                except SandboxError as e:
                    raise failed(e, limit) from e

            return out, finish

        res: Optional[ExecResult] = None
        out = b""
        end: Optional[Callable[[], Awaitable[ExecResult]]] = None
        fast = False
        want = _predicted_entry(up / "installers" / f"{harness}.sh", prefix)
        if want is not None:
            # The fast path, for a reused install and the image's bash: the
            # session written for the entry the installer would name, the
            # scripts and the session dir one tar stream, bootstrap + reuse
            # check + launch one exec (_FAST_LAUNCH_SCRIPT).
            session, argv, ends, keep = prepared(want, _BASH_SLOT, up / "session")
            ends = ends.replace(_BASH_SLOT, '"$b"')
            t = time.monotonic()
            # Not the carried bash's installer: the fast path runs only on
            # the image's bash (the step-by-step path uploads it).
            both = _tar_bytes(up, leave_out=("installers/bash.sh",))
            run.upload_s += time.monotonic() - t
            t = time.monotonic()
            run.made_scratch = True
            launched = True
            out, end = await launch(
                ["sh", "-c", _FAST_LAUNCH_SCRIPT, "sh", run.scratch, prefix, f"installers/{harness}.sh", want,
                 ends, "\n".join(keep), workdir, *argv],
                {**key_env, ROLLOUT_VAR: run.rid}, None, both, None if timeout is None else timeout + _STEP_TIMEOUT,
            )  # fmt: skip
            launch_s = time.monotonic() - t
            fast, install_s = True, 0.0
            inst = Installed(want, prefix, True, "", False, None, 0.0)
            if not out:  # declined (nothing ran), or no result: the exec is over
                res, end = await end(), None
                if "shforge-fast-declined" in res.stderr.decode("utf-8", "replace").splitlines():
                    res, fast, launched = None, False, False
                    _rmtree(up / "session")
        if not fast:
            # Step by step: upload + bootstrap + reuse check (+ the plan) in
            # one exec, the scripts a tar stream on its stdin, unpacked as
            # the rollout user; the install; the launch.
            scripts = _tar_bytes(up)
            t = time.monotonic()
            boot = await _bootstrap(run, workdir, session_dir, prefix, arts, has_bash, harness, scripts, False)
            bash = boot.bash
            if boot.entry is not None:
                inst = Installed(boot.entry, prefix, True, bash, boot.carried, None, time.monotonic() - t)
            else:
                inst = await _install(run, harness, bash, prefix, arts, boot.carried, boot.plan, remove_after=False)
            install_s = time.monotonic() - t - run.upload_s
            # session: written on the host, sent as the launch's stdin.
            session, argv, ends, keep = prepared(inst.entry, bash, host / "session")
            t = time.monotonic()
            session_tar = _tar_bytes(host / "session")
            run.upload_s += time.monotonic() - t
            # launch, in one exec: the session dir unpacked from stdin, the
            # supervisor, the services ended, receipt + session data back as
            # a tar stream, the scratch dir removed. The key's value only in
            # this exec's environment. An image without bash: the harness's
            # shell tool (Claude Code's looks at $SHELL, then PATH) gets the
            # carried one.
            shell = {"SHELL": bash} if inst.carried_bash else {}
            t = time.monotonic()
            launched = True
            out, end = await launch(
                ["sh", "-c", _LAUNCH_SCRIPT, "sh", run.scratch, session_dir, ends, "\n".join(keep), *argv],
                {**key_env, **shell, ROLLOUT_VAR: run.rid}, workdir, session_tar, timeout,
            )  # fmt: skip
            launch_s = time.monotonic() - t
        capture = session.capture
        cap_path = capture.db if capture.db is not None else capture.dir
        # copy-back: the tar stream of the launch's stdout, read while the
        # exec's tail removes the scratch dir (``end``: awaited below, on
        # every way out).
        t = time.monotonic()
        try:
            back = host / "back"
            back.mkdir()
            _untar(out, back)
            got_receipt: Optional[Future[Receipt]] = None
            if (back / "receipt.json").is_file():
                (back / "session").mkdir(exist_ok=True)
                local_capture: Optional[Path] = None
                if cap_path is not None and (cap_path + "/").startswith(session_dir + "/"):
                    local_capture = back / "session" / os.path.relpath(cap_path, session_dir)
                    if capture.db is None and capture.kind in _CAPTURE_SUBS:
                        # Only its data subdir came back: the dir itself is there
                        # (the session dir made it), as when it came back whole.
                        local_capture.mkdir(parents=True, exist_ok=True)
                have_capture = local_capture is not None and local_capture.exists()

                def opt(name: str) -> Optional[Path]:
                    p = back / "session" / name
                    return p if p.is_file() else None

                # The host-side readers (the receipt, the snapshot, ATIF, the
                # outcome): independent CLI runs, at once.
                from .snapshot import snapshot
                from .tools import outcome

                db = local_capture if capture.db is not None else None
                dir_ = None if capture.db is not None else local_capture
                with ThreadPoolExecutor(max_workers=4) as pool:
                    got_receipt = pool.submit(read_receipt, back / "receipt.json")
                    got_snap: Optional[Future[Dict[str, Any]]] = None
                    got_atif: Optional[Future[Dict[str, Any]]] = None
                    if capture.kind is not None and have_capture:
                        got_snap = pool.submit(snapshot, capture.kind, db=db, dir=dir_)
                        got_atif = pool.submit(snapshot, capture.kind, db=db, dir=dir_, format="atif")
                    got_why = pool.submit(
                        outcome, receipt=back / "receipt.json", harness=capture.harness,
                        capture=local_capture if have_capture else None,
                        events=opt("events.log"), stderr=opt("stderr.log"), stdout=opt("stdout.log"),
                    )  # fmt: skip
        finally:
            if end is not None:
                res, end = await end(), None
        assert res is not None
        if fast:
            told = res.stderr.decode("utf-8", "replace").splitlines()
            reused = next((ln[20:] for ln in told if ln.startswith("shforge-fast-reused ")), "")
            inst = Installed(want or "", prefix, True, reused, False, None, 0.0)
        if b"shforge-removed" in res.stderr:
            run.made_scratch = False
        if b"shforge-unpack-failed" in res.stderr:
            what = "the session dir" if install_s else "the scripts and the session dir"
            raise RolloutError("upload", f"{what} into {run.scratch}: tar -x failed", 1)
        if got_receipt is None:
            said = _line((back / "launch.err").read_bytes()) if (back / "launch.err").is_file() else ""
            said = said or _line(res.stderr.replace(b"shforge-removed\n", b""))
            raise RolloutError(
                "copy-back",
                f"no receipt (the launch exited {res.exit_code}{': ' + said[:300] if said else ''})",
            )
        try:
            receipt = got_receipt.result()
        except ShforgeError as e:
            raise RolloutError("copy-back", e.message, e.code) from e
        copy_s = time.monotonic() - t
        end_exit: Optional[int] = None
        for ln in res.stderr.decode("utf-8", "replace").splitlines():
            if ln.startswith("shforge-end-services ") and receipt.services:
                end_exit = int(ln.split()[1])
        snap: Optional[Dict[str, Any]] = None
        atif: Optional[Dict[str, Any]] = None
        if got_snap is not None and got_atif is not None:
            try:
                snap = got_snap.result()
                atif = got_atif.result()
            except NoSessionDataError:
                pass
            except ShforgeError as e:
                raise RolloutError("copy-back", f"reading the session data: {e.message}", e.code) from e
        try:
            why = got_why.result()
        except ShforgeError as e:
            raise RolloutError("copy-back", f"shforge outcome: {e.message}", e.code) from e
        tokens = (snap or {}).get("summary", {}).get("tokens") or {}
        usage = Usage(**{k: int(tokens.get(k, 0)) for k in Usage.__dataclass_fields__})
        launched = False
        return Rollout(
            receipt=receipt,
            exit_code=res.exit_code,
            outcome=why,
            snapshot=snap,
            atif=atif,
            usage=usage,
            timings=Timings(upload=run.upload_s, install=install_s, launch_to_receipt=launch_s, copy_back=copy_s),
            installed=inst,
            marker=marker,
            end_services_exit=end_exit,
        )
    except BaseException:
        if launched:
            await run.stop(marker, grace_s if grace_s is not None else _DEFAULT_GRACE)
        raise
    finally:
        await run.remove_scratch()
        _rmtree(host)


def rollout(
    sandbox: Sandbox,
    harness: str,
    *,
    prompt: str,
    base_url: str,
    model: str,
    workdir: str,
    prefix: str = "/opt/shforge",
    artifacts: Optional[StrPath] = None,
    api: Optional[Api] = None,
    api_key_env: Optional[str] = None,
    deadline: Optional[Seconds] = None,
    grace: Optional[Seconds] = None,
    mode: Mode = "events",
    keep_env: Sequence[str] = (),
    spec: Optional[StrPath] = None,
    installer: Optional[StrPath] = None,
    scratch: Optional[str] = None,
    end_services: bool = True,
) -> Rollout:
    """Run one rollout of ``harness`` in ``sandbox``, in one call.

    Steps, all through the sandbox: upload the scripts into ``scratch``
    (default ``/tmp/shforge-<random>``, owned by the rollout user);
    bootstrap (the image's bash 3.2+, else the carried static bash); install
    (:func:`install`: reused when complete); write the session dir on the
    host (``spec``: an adapter's own harness spec) and upload it; the
    supervised launch as the rollout user in ``workdir``, with ``deadline``
    and ``grace`` seconds, the API key's value (from the **host** variable
    ``api_key_env``) only in that exec's environment; copy the receipt and
    the session data back; snapshot, ATIF, outcome, usage; end the
    preserved services (``end_services``); remove the scratch dir.

    A rollout that times out returns normally (``receipt.timed_out``).
    A machinery failure raises :class:`~shforge.errors.RolloutError` naming
    the step (upload, bootstrap, install, session, launch, copy-back) and
    the cause; the host keeps nothing of the rollout, and, after the launch
    began, every process of it still alive in the sandbox is stopped.
    """
    return drive(
        rollout_async(
            SyncAsAsync(sandbox), harness, prompt=prompt, base_url=base_url, model=model,
            workdir=workdir, prefix=prefix, artifacts=artifacts, api=api, api_key_env=api_key_env,
            deadline=deadline, grace=grace, mode=mode, keep_env=keep_env, spec=spec,
            installer=installer, scratch=scratch, end_services=end_services,
        )
    )  # fmt: skip


__all__ = [
    "INSTALLER_EXITS",
    "ROLLOUT_VAR",
    "Installed",
    "Rollout",
    "Timings",
    "Usage",
    "install",
    "install_async",
    "rollout",
    "rollout_async",
]
