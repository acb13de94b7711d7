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
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Dict, Optional, Sequence, Tuple

from ._files import StrPath
from .errors import (
    NoSessionDataError,
    RolloutError,
    SandboxError,
    SandboxTimeoutError,
    ShforgeError,
)
from .harness import Api, Mode, Session
from .sandbox import AsyncSandbox, ExecResult, Sandbox, SyncAsAsync, drive
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

# Bootstrap, then say which bash the image has and the machine's arch;
# with a bash 3.2+, try the installer's reuse check as the rollout user (it
# writes nothing when a complete install is there: a shared read-only
# prefix): "entry PATH" when it passed. One exec for the warm path.
_BOOTSTRAP_SCRIPT = r"""
d=$1 prefix=$2 installer=$3
shift 3
sh "$d/bootstrap.sh" "$@" || exit $?
echo "arch $(uname -m)"
b=$(command -v bash 2>/dev/null) || exit 0
case $b in /*) ;; *) exit 0 ;; esac
v=$("$b" -c 'echo "$BASH_VERSION"' 2>/dev/null) || exit 0
echo "bash $b $v"
[ -n "$installer" ] || exit 0
case $v in [0-2].*|3.[01].*|3.[01]) exit 0 ;; esac
out=$("$b" "$d/$installer" --prefix "$prefix" --source-dir "$d/artifacts" --quiet 2>/dev/null) || exit 0
printf 'entry %s\n' "$(printf '%s\n' "$out" | tail -n 1)"
"""

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
    """Scripts, artifacts and the session dir into the sandbox."""
    install: float
    """Bootstrap and installer runs (the reuse check included)."""
    launch_to_receipt: float
    """The supervised launch, until it returned with its receipt."""
    copy_back: float
    """Receipt and session data out of the sandbox."""


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


def _line(data: bytes, last: bool = True) -> str:
    lines = [ln for ln in data.decode("utf-8", "replace").splitlines() if ln.strip()]
    if not lines:
        return ""
    return lines[-1] if last else lines[0]


def _why(step: str, what: str, r: ExecResult) -> RolloutError:
    said = _line(r.stderr) or _line(r.stdout)
    cause = f"{what} exited {r.exit_code}"
    if said:
        cause += f": {said[:500]}"
    return RolloutError(step, cause, r.exit_code if r.exit_code > 0 else 1)


def _is_root(user: Optional[str]) -> bool:
    return user is not None and user.split(":")[0] in ("0", "root")


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

    async def exec(
        self,
        step: str,
        argv: "Sequence[str] | str",
        *,
        user: Optional[str] = None,
        timeout: float = _STEP_TIMEOUT,
        env: Optional[Dict[str, str]] = None,
        cwd: Optional[str] = None,
    ) -> ExecResult:
        try:
            return await self.sb.exec(argv, user=user, timeout=timeout, env=env, cwd=cwd)
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
            if self.user is None or _is_root(self.user):
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


def _default_artifacts() -> Path:
    return Path(os.environ.get("SHFORGE_ARTIFACTS", "/var/cache/shforge/artifacts"))


async def _bootstrap(run: _Run, workdir: Optional[str], session_dir: str, prefix: str,
                     artifacts: Path, has_bash_installer: bool,
                     harness: str) -> Tuple[str, bool, Optional[str]]:  # fmt: skip
    """Bootstrap and choose the bash: the image's own when 3.2+, else the
    carried static one, installed into the prefix; the entry when the
    installer's reuse check passed on the way."""
    dirs = [] if workdir is None else ["--workdir", workdir, "--session-dir", session_dir]
    r = await run.exec(
        "bootstrap",
        ["sh", "-c", _BOOTSTRAP_SCRIPT, "sh", run.scratch, prefix, f"installers/{harness}.sh", *dirs],
    )
    if r.exit_code != 0:
        raise _why("bootstrap", "bootstrap.sh", r)
    arch = ""
    image_bash: Optional[str] = None
    entry: Optional[str] = None
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
    if image_bash is not None:
        return image_bash, False, entry
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
        return bash, False, None
    # The carried bash installs itself into the prefix, reused after.
    iuser = await _install_user(run, prefix)
    r = await run.exec(
        "install",
        [carried, f"{run.scratch}/installers/bash.sh", "--prefix", prefix,
         "--source-dir", f"{run.scratch}/artifacts", "--quiet"],
        user=iuser, timeout=_INSTALL_TIMEOUT,
    )  # fmt: skip
    if r.exit_code != 0:
        raise _install_error("the carried bash's installer", r)
    return _line(r.stdout), True, None


def _install_error(what: str, r: ExecResult) -> RolloutError:
    said = _line(r.stderr) or _line(r.stdout)
    meaning = INSTALLER_EXITS.get(r.exit_code)
    cause = f"{what} exited {r.exit_code}"
    if meaning:
        cause += f" ({meaning})"
    if said:
        cause += f": {said[:500]}"
    return RolloutError("install", cause, r.exit_code)


async def _install_user(run: _Run, prefix: str) -> Optional[str]:
    """Root when the sandbox allows it and root can write the prefix, else
    the rollout user."""
    if await run.root():
        try:
            r = await run.sb.exec(["sh", "-c", _WRITABLE_SCRIPT, "sh", prefix, run.scratch], user="0", timeout=_STEP_TIMEOUT)
            if r.exit_code == 0:
                return "0"
        except SandboxError:
            pass
    return None


async def _install(run: _Run, harness: str, bash: str, prefix: str, artifacts: Path,
                   carried: bool, probed: bool) -> Installed:
    t = time.monotonic()
    iuser = await _install_user(run, prefix)
    installer = f"{run.scratch}/installers/{harness}.sh"
    source = f"{run.scratch}/artifacts"
    if not probed:
        # A complete install already there is reused, nothing uploaded (the
        # installer's reuse check writes nothing: a shared read-only prefix).
        r = await run.exec(
            "install", [bash, installer, "--prefix", prefix, "--source-dir", source, "--quiet"],
            user=iuser, timeout=_INSTALL_TIMEOUT,
        )  # fmt: skip
        if r.exit_code == 0:
            return Installed(_line(r.stdout), prefix, True, bash, carried, iuser, time.monotonic() - t)
        if r.exit_code not in (4, 5, 6):
            raise _install_error(f"installers/{harness}.sh", r)
    plan = await run.exec("install", [bash, installer, "--plan", "--prefix", prefix], user=iuser)
    if plan.exit_code != 0:
        raise _install_error(f"installers/{harness}.sh --plan", plan)
    wanted = [ln.split(None, 1)[1] for ln in plan.stdout.decode().splitlines() if ln.startswith("artifact ")]
    up_s = run.upload_s
    for name in wanted:
        local = _artifact(artifacts, name, [harness])
        await run.upload("upload", local, f"{source}/{name}", user=iuser)
    uploaded = run.upload_s - up_s
    r = await run.exec(
        "install", [bash, installer, "--prefix", prefix, "--source-dir", source, "--quiet"],
        user=iuser, timeout=_INSTALL_TIMEOUT,
    )  # fmt: skip
    if r.exit_code != 0:
        raise _install_error(f"installers/{harness}.sh", r)
    return Installed(_line(r.stdout), prefix, False, bash, carried, iuser, time.monotonic() - t - uploaded)


def _host_tmp() -> Path:
    import tempfile

    return Path(tempfile.mkdtemp(prefix="shforge-rollout-"))


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
        await run.upload("upload", up, run.scratch)
        run.made_scratch = True
        arts = Path(artifacts) if artifacts is not None else _default_artifacts()
        t = time.monotonic()
        bash, carried, entry = await _bootstrap(run, None, f"{run.scratch}/session", prefix, arts, has_bash, harness)
        if entry is not None:
            return Installed(entry, prefix, True, bash, carried, None, time.monotonic() - t)
        inst = await _install(run, harness, bash, prefix, arts, carried, probed=not carried)
        if carried:
            inst = Installed(inst.entry, prefix, inst.reused, bash, True, inst.user, time.monotonic() - t)
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
        # upload: the scripts (one directory), into the scratch dir, as the rollout user.
        up, has_bash = _staged_scripts(host, harness, installer)
        await run.upload("upload", up, run.scratch)
        run.made_scratch = True
        # bootstrap + install
        t = time.monotonic()
        up_before = run.upload_s
        bash, carried, entry = await _bootstrap(run, workdir, session_dir, prefix, arts, has_bash, harness)
        if entry is not None:
            inst = Installed(entry, prefix, True, bash, carried, None, time.monotonic() - t)
        else:
            inst = await _install(run, harness, bash, prefix, arts, carried, probed=not carried)
        install_s = time.monotonic() - t - (run.upload_s - up_before)
        # session: written on the host, uploaded owned by the rollout user.
        try:
            session: Session = harness_mod.write_session(
                None if spec is not None else harness,  # type: ignore[arg-type]
                host / "session",
                session_dir=session_dir, workdir=workdir, entry=inst.entry, base_url=base_url,
                model=model, prompt=prompt, api=api, api_key_env=api_key_env, mode=mode,
                keep_env=keep_env, spec=spec,
            )  # fmt: skip
        except ShforgeError as e:
            raise RolloutError("session", e.message, e.code) from e
        await run.upload("upload", host / "session", session_dir)
        # launch: the key's value only in this exec's environment.
        receipt_path = f"{run.scratch}/receipt.json"
        argv = launch_argv(
            f"{run.scratch}/{SUPERVISOR}", receipt_path,
            [bash, "--noprofile", "--norc", f"{run.scratch}/{RUNNER}", session.params],
            deadline=deadline, grace=grace, marker=marker, bash=bash,
        )  # fmt: skip
        timeout = None if deadline_s is None else deadline_s + (grace_s or _DEFAULT_GRACE) + _LAUNCH_MARGIN
        t = time.monotonic()
        launched = True
        try:
            res = await sandbox.exec(argv, env={**key_env, ROLLOUT_VAR: run.rid}, cwd=workdir, timeout=timeout)
        except SandboxTimeoutError as e:
            raise RolloutError("launch", f"the supervisor did not return within {timeout:g} s: {e.message}") from e
        except SandboxError as e:
            raise RolloutError("launch", f"the sandbox failed: {e.message}") from e
        launch_s = time.monotonic() - t
        # copy-back
        t = time.monotonic()
        back = host / "back"
        back.mkdir()
        try:
            await sandbox.download(receipt_path, back / "receipt.json")
        except SandboxError as e:
            said = _line(res.stderr)
            raise RolloutError(
                "copy-back",
                f"no receipt (the launch exited {res.exit_code}{': ' + said[:300] if said else ''}): {e.message}",
            ) from e
        try:
            await sandbox.download(session_dir, back / "session")
        except SandboxError as e:
            raise RolloutError("copy-back", f"the session dir: {e.message}") from e
        try:
            receipt = read_receipt(back / "receipt.json")
        except ShforgeError as e:
            raise RolloutError("copy-back", e.message, e.code) from e
        copy_s = time.monotonic() - t
        capture = session.capture
        local_capture: Optional[Path] = None
        cap_path = capture.db if capture.db is not None else capture.dir
        if cap_path is not None and (cap_path + "/").startswith(session_dir + "/"):
            local_capture = back / "session" / os.path.relpath(cap_path, session_dir)
        snap: Optional[Dict[str, Any]] = None
        atif: Optional[Dict[str, Any]] = None
        if capture.kind is not None and local_capture is not None and local_capture.exists():
            from .snapshot import snapshot

            db = local_capture if capture.db is not None else None
            dir_ = None if capture.db is not None else local_capture
            try:
                snap = snapshot(capture.kind, db=db, dir=dir_)
                atif = snapshot(capture.kind, db=db, dir=dir_, format="atif")
            except NoSessionDataError:
                pass
            except ShforgeError as e:
                raise RolloutError("copy-back", f"reading the session data: {e.message}", e.code) from e
        from .tools import outcome

        def opt(name: str) -> Optional[Path]:
            p = back / "session" / name
            return p if p.is_file() else None

        try:
            why = outcome(
                receipt=back / "receipt.json", harness=capture.harness,
                capture=local_capture if local_capture is not None and local_capture.exists() else None,
                events=opt("events.log"), stderr=opt("stderr.log"), stdout=opt("stdout.log"),
            )  # fmt: skip
        except ShforgeError as e:
            raise RolloutError("copy-back", f"shforge outcome: {e.message}", e.code) from e
        tokens = (snap or {}).get("summary", {}).get("tokens") or {}
        usage = Usage(**{k: int(tokens.get(k, 0)) for k in Usage.__dataclass_fields__})
        end_exit: Optional[int] = None
        if end_services and receipt.services:
            r = await run.exec("copy-back", end_services_argv(f"{run.scratch}/{SUPERVISOR}", receipt_path, bash=bash))
            end_exit = r.exit_code
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
