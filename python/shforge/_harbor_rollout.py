"""One install and one rollout over an async sandbox (no Harbor import).

A shim for :mod:`shforge.harbor` until issue 38's ``shforge.install_async`` /
``shforge.rollout_async`` land on main: same sandbox protocol (async
``exec``/``upload``/``download``, attribute ``user``), smallest surface the
Harbor agent needs. What it does in the sandbox:

* install: the packaged scripts to ``PREFIX/scripts``, the harness's pinned
  artifacts for the sandbox's architecture (missing ones fetched into the
  host's artifacts dir first with ``shforge fetch``) to
  ``PREFIX/.artifacts``, then the generated installer
  (``--source-dir``: digest-checked, no network), artifacts removed after.
* rollout: a session dir written on the host (``shforge harness``), uploaded
  to ``PREFIX/runs/ID``; the supervised launch; the session dir downloaded;
  receipt, outcome, snapshot and ATIF read on the host.
* stop: TERM to the supervisor (its PID written by the launch wrapper), then
  wait for its receipt: the supervisor ends the harness's whole tree.

The API key never goes on an argv (Harbor's docker ``exec`` passes ``env``
as ``-e K=V`` on the host's ``docker`` argv, and its ``exec`` has no stdin):
it is written to a 0600 file on the host, uploaded into the session dir,
and the launch wrapper reads it into the one variable and deletes the file
before it execs the supervisor.
"""

from __future__ import annotations

import asyncio
import json
import os
import re
import shlex
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Dict, List, Optional, Union

from . import _cli
from .errors import RolloutError
from .harness import write_session
from .rollout import _bash_argv
from .sandbox import AsyncSandbox
from .scripts import RUNNER, SUPERVISOR, installer_path, scripts_dir
from .snapshot import snapshot
from .supervisor import launch_argv, read_receipt

#: The APIs each shipped harness speaks (harnesses/*.toml `apis`; the first
#: is its default). tests/harbor/test_catalog.py checks this table against
#: the checkout's harness specs.
HARNESS_APIS: Dict[str, List[str]] = {
    "claude-code": ["anthropic"],
    "cline": ["chat", "responses", "anthropic"],
    "codex": ["responses"],
    "continue-cli": ["chat"],
    "copilot-cli": ["chat", "responses"],
    "gemini-cli": ["gemini"],
    "hermes": ["chat"],
    "kilo": ["chat", "responses", "anthropic"],
    "kimi-cli": ["chat"],
    "mini-swe-agent": ["chat"],
    "mistral-vibe": ["chat"],
    "nooa": ["chat"],
    "openclaw": ["chat", "responses", "anthropic"],
    "opencode": ["chat", "responses", "anthropic"],
    "pi": ["chat", "responses", "anthropic"],
    "qwen-code": ["chat", "responses", "anthropic"],
    "stirrup": ["chat"],
}


def _text(data: Union[bytes, str]) -> str:
    return data.decode("utf-8", "replace") if isinstance(data, bytes) else data


def catalog() -> Dict[str, str]:
    """Shipped harness -> pinned version, from ``shforge list`` (its
    installers less the runtimes that are no harness: the carried bash)."""
    out = _cli.run(["list"]).decode()
    found = {}
    for line in out.splitlines():
        m = re.match(r"^installers/(\S+)\.sh\t\S+\tinstall \S+ (\S+) into", line)
        if m and m.group(1) in HARNESS_APIS:
            found[m.group(1)] = m.group(2)
    return found


def installer_artifacts(script: Path) -> List[tuple[str, str]]:
    """(file, arch) of every artifact a generated installer names."""
    text = script.read_text(encoding="utf-8")
    paths = dict(re.findall(r"^art_path\[(\d+)\]='([^']*)'$", text, re.M))
    arches = dict(re.findall(r"^art_arch\[(\d+)\]='([^']*)'$", text, re.M))
    return [(paths[i], arches.get(i, "any")) for i in sorted(paths, key=int)]


@dataclass
class Installed:
    harness: str
    entry: str
    prefix: str
    scripts: str
    seconds: float
    bash: str = "bash"
    reused: bool = False


async def _must(sandbox: AsyncSandbox, step: str, command: str, timeout: Optional[float] = None) -> str:
    r = await sandbox.exec(command, timeout=timeout)
    if r.exit_code != 0:
        tail = (_text(r.stdout) + _text(r.stderr)).strip().splitlines()
        raise RolloutError(step, f"exit {r.exit_code}: {tail[-1] if tail else 'no output'}")
    return _text(r.stdout)


async def install_async(
    sandbox: AsyncSandbox,
    harness: str,
    *,
    prefix: str,
    artifacts: Union[str, Path],
    installer: Optional[Union[str, Path]] = None,
) -> Installed:
    """Install ``harness`` (or the installer script ``installer``) under
    ``prefix`` in the sandbox from the host's ``artifacts`` dir."""
    started = time.monotonic()
    artifacts = Path(artifacts)
    script = Path(installer) if installer is not None else installer_path(harness)
    arch = (await _must(sandbox, "install", "uname -m")).strip().splitlines()[-1]
    wanted = [f for f, a in installer_artifacts(script) if a in (arch, "any")]
    if not wanted:
        raise RolloutError("install", f"{harness} has no artifact for {arch}")
    if installer is None and any(not (artifacts / f).is_file() for f in wanted):
        try:
            _cli.run(["fetch", harness, "--into", str(artifacts)])
        except Exception as e:  # the CLI's one line
            raise RolloutError("install", "fetching the artifacts: " + str(e).strip().splitlines()[-1]) from None
    missing = [f for f in wanted if not (artifacts / f).is_file()]
    if missing:
        raise RolloutError("install", f"{artifacts / missing[0]} is missing and could not be fetched")
    p = prefix.rstrip("/")
    q = shlex.quote
    await _must(sandbox, "install", f"rm -rf {q(p + '/scripts')} {q(p + '/.artifacts')} && mkdir -p {q(p + '/.artifacts')}")
    await sandbox.upload(scripts_dir(), f"{p}/scripts")
    await sandbox.upload(script, f"{p}/.artifacts/install.sh")
    for f in wanted:
        await sandbox.upload(artifacts / f, f"{p}/.artifacts/{f}")
    # bash without the image's startup files and options, as the launch runs it.
    installer = shlex.join(
        _bash_argv("bash", f"{p}/.artifacts/install.sh", "--prefix", p, "--source-dir", f"{p}/.artifacts")
    )
    out = await _must(
        sandbox,
        "install",
        # stdout (the entry, last line) apart from stderr: Harbor's exec
        # merges the two, in no fixed order.
        f"e=$({installer} "
        f"2> {q(p + '/install.log')}); s=$?; rm -rf {q(p + '/.artifacts')}; "
        f"if [ $s -ne 0 ]; then tail -n 5 {q(p + '/install.log')}; exit $s; fi; "
        f"printf 'shforge-entry=%s\\n' \"$(printf '%s\\n' \"$e\" | tail -n 1)\"",
    )
    entries = [ln[len("shforge-entry="):] for ln in out.splitlines() if ln.startswith("shforge-entry=")]
    if not entries or not entries[-1].strip():
        raise RolloutError("install", f"the installer printed no entry: {out.strip()[-200:]}")
    entry = entries[-1].strip()
    return Installed(harness, entry, p, f"{p}/scripts", time.monotonic() - started)


@dataclass
class Rollout:
    receipt: Any
    outcome: Dict[str, Any]
    snapshot: Optional[Dict[str, Any]]
    atif: Optional[Dict[str, Any]]
    usage: Dict[str, int]
    timings: Dict[str, float]
    exit_code: Optional[int]
    host_dir: Path
    stopped: bool = False
    errors: List[str] = field(default_factory=list)


class _Run:
    """One started rollout: what stop and collect need."""

    def __init__(self, sandbox: AsyncSandbox, session_dir: str, harness: str, spec: Optional[str],
                 mounted: bool = False) -> None:
        self.sandbox = sandbox
        #: The session dir is the host's ``out`` through a bind mount:
        #: nothing to download.
        self.mounted = mounted
        self.sd = session_dir
        self.harness = harness
        self.spec = spec
        self.receipt = f"{session_dir}/receipt.json"
        self.pidfile = f"{session_dir}/launch.pid"

    async def stop(self, wait: float = 30.0) -> None:
        q = shlex.quote
        polls = int(wait * 4)
        await self.sandbox.exec(
            f"p=$(cat {q(self.pidfile)} 2>/dev/null) && kill -TERM \"$p\" 2>/dev/null; "
            f"i=0; while [ ! -s {q(self.receipt)} ] && [ $i -lt {polls} ]; do sleep 0.25; i=$((i+1)); done; "
            f"test -s {q(self.receipt)}",
            timeout=wait + 10,
        )

    async def collect(self, host: Path, exit_code: Optional[int], timings: Dict[str, float]) -> Rollout:
        errors: List[str] = []
        out = host / "out"
        try:
            if self.mounted:
                pass
            elif getattr(self.sandbox, "download_knows_dirs", False):
                await self.sandbox.download(self.sd, out, is_dir=True)  # type: ignore[call-arg]
            else:
                await self.sandbox.download(self.sd, out)
        except Exception as e:  # noqa: BLE001 - reported, not fatal
            errors.append(f"download: {e}")
        receipt = None
        outcome: Dict[str, Any] = {}
        if (out / "receipt.json").is_file():
            receipt = read_receipt(out / "receipt.json")
            args = ["outcome", "--receipt", str(out / "receipt.json"), "--harness", self.harness]
            cap = json.loads((out / "capture.json").read_text()) if (out / "capture.json").is_file() else {}
            local_cap = _local(cap.get("dir") or cap.get("db"), self.sd, out)
            if local_cap is not None and local_cap.exists():
                args += ["--capture", str(local_cap)]
            for flag, name in (("--events", "events.log"), ("--stderr", "stderr.log"), ("--stdout", "stdout.log")):
                if (out / name).is_file():
                    args += [flag, str(out / name)]
            try:
                outcome = json.loads(_cli.run(args).decode())
            except Exception as e:  # noqa: BLE001
                errors.append(f"outcome: {e}")
        else:
            errors.append("no receipt")
            cap = {}
            local_cap = None
        doc = atif = None
        kind = cap.get("kind")
        if kind and local_cap is not None and local_cap.exists():
            where = {"db": local_cap} if cap.get("db") else {"dir": local_cap}
            try:
                doc = snapshot(kind, **where)  # type: ignore[arg-type,unused-ignore]
                atif = snapshot(kind, format="atif", **where)  # type: ignore[arg-type,unused-ignore]
            except Exception as e:  # noqa: BLE001
                errors.append(f"snapshot: {e}")
        return Rollout(receipt, outcome, doc, atif, _usage(doc), timings, exit_code, host, errors=errors)


def _local(path: Optional[str], sd: str, out: Path) -> Optional[Path]:
    if not path:
        return None
    if path == sd or path.startswith(sd.rstrip("/") + "/"):
        return out / path[len(sd.rstrip("/")) + 1 :]
    return None


def _usage(doc: Optional[Dict[str, Any]]) -> Dict[str, int]:
    """Token totals from a snapshot's summary (whatever of them it has)."""
    usage = {"input": 0, "output": 0, "cache": 0}
    if not doc:
        return usage
    summary = doc.get("summary") or {}
    tokens = summary.get("tokens") if isinstance(summary, dict) else None
    if isinstance(tokens, dict):
        usage["input"] = int(tokens.get("input") or 0)
        usage["output"] = int(tokens.get("output") or 0)
        usage["cache"] = int(tokens.get("cache_read") or tokens.get("cached") or 0)
    return usage


async def rollout_async(
    sandbox: AsyncSandbox,
    harness: str,
    installed: Installed,
    *,
    prompt: str,
    base_url: str,
    model: str,
    workdir: str,
    api: Optional[str] = None,
    api_key_env: Optional[str] = None,
    api_key: Optional[str] = None,
    deadline: Optional[float] = None,
    deadline_at: Optional[float] = None,
    mode: str = "events",
    spec: Optional[Union[str, Path]] = None,
    host_dir: Optional[Path] = None,
    on_start: Any = None,
    dirs_made: bool = False,
    mounted: Optional[str] = None,
) -> Rollout:
    """One supervised rollout. On an exception or cancellation the started
    rollout is stopped inside the sandbox before the exception goes on; the
    partial Rollout is attached to it as ``shforge_rollout``.

    ``dirs_made``: the runs' dir (beside the scripts) exists: no exec to
    make it (the launch wrapper makes ``workdir``). The key (if any) goes up inside
    the session dir, in the one upload.

    ``mounted``: ``host_dir``'s path in the sandbox (a bind mount, as
    Harbor's agent logs dir): the session dir is written straight into
    ``host_dir/out``, which the sandbox sees as ``MOUNTED/out``: no upload,
    no download, and the key file, read and removed by the launch wrapper,
    is removed on the host after the launch in any case."""
    timings: Dict[str, float] = {}
    t0 = time.monotonic()
    run_id = f"{int(time.time())}-{os.getpid()}-{os.urandom(3).hex()}"
    runs = installed.scripts.rsplit("/", 1)[0] + "/runs"  # beside the scripts
    sd = f"{runs}/{run_id}" if mounted is None else f"{mounted.rstrip('/')}/out"
    host = Path(host_dir) if host_dir is not None else Path(tempfile.mkdtemp(prefix="shforge-harbor-"))
    host.mkdir(parents=True, exist_ok=True)
    session = write_session(
        None if spec is not None else harness,  # type: ignore[arg-type]
        host / ("session" if mounted is None else "out"),
        session_dir=sd,
        workdir=workdir,
        entry=installed.entry,
        base_url=base_url,
        model=model,
        prompt=prompt,
        api=api,  # type: ignore[arg-type]
        api_key_env=api_key_env,
        mode=mode,  # type: ignore[arg-type]
        spec=spec,
    )
    q = shlex.quote
    if not dirs_made and mounted is None:
        await _must(sandbox, "upload", f"mkdir -p {q(runs)} {q(workdir)}")
    key_file = f"{sd}/.key"
    local_key = Path(session.path) / ".key"
    if api_key is not None and api_key_env:
        # 0600, in the session dir for its one upload, gone from the host
        # right after (the session dir stays in the trial's logs).
        fd = os.open(local_key, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
        with os.fdopen(fd, "w") as f:
            f.write(api_key)
    if mounted is None:
        try:
            await sandbox.upload(session.path, sd)
        finally:
            if local_key.exists():
                local_key.unlink()
    if api_key is not None and api_key_env:
        key_setup = (
            f'K=$(cat {q(key_file)}) && rm -f {q(key_file)} && {api_key_env}=$K && export {api_key_env} && unset K || exit 125; '
        )
    else:
        key_setup = ""
    marker = f"shforge-harbor-{run_id}"
    if deadline is None and deadline_at is not None:
        # An absolute deadline (time.monotonic()): what is left of it now.
        deadline = max(0.5, deadline_at - time.monotonic())
    argv = launch_argv(
        f"{installed.scripts}/{SUPERVISOR}",
        f"{sd}/receipt.json",
        [installed.bash, "--noprofile", "--norc", f"{installed.scripts}/{RUNNER}", session.params],
        deadline=deadline,
        marker=marker,
        bash=installed.bash,
    )
    wrapper = f'{key_setup}mkdir -p {q(workdir)} && cd {q(workdir)} || exit 125; echo $$ > {q(sd + "/launch.pid")}; exec "$@" > {q(sd + "/launch.out")} 2>&1 < /dev/null'
    command = "sh -c " + q(wrapper) + " sh " + " ".join(q(a) for a in argv)
    run = _Run(sandbox, sd, harness, str(spec) if spec else None, mounted=mounted is not None)
    timings["prepare"] = time.monotonic() - t0
    if on_start is not None:
        on_start(run)
    t1 = time.monotonic()
    try:
        r = await sandbox.exec(command, timeout=None)
    except BaseException as exc:
        local_key.unlink(missing_ok=True)
        # Harbor's timeout (CancelledError) or anything else: stop inside the
        # sandbox first, then let the exception through.
        timings["run"] = time.monotonic() - t1
        partial: Optional[Rollout] = None
        try:
            await asyncio.shield(run.stop())
            partial = await asyncio.shield(run.collect(host, None, timings))
            partial.stopped = True
        except BaseException as stop_exc:  # noqa: BLE001
            note = getattr(exc, "add_note", None)
            if note is not None:
                note(f"shforge: stopping the rollout failed: {stop_exc!r}")
        setattr(exc, "shforge_rollout", partial)
        raise
    local_key.unlink(missing_ok=True)
    timings["run"] = time.monotonic() - t1
    t2 = time.monotonic()
    result = await run.collect(host, r.exit_code, timings)
    timings["collect"] = time.monotonic() - t2
    return result
