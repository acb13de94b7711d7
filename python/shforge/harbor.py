"""shforge agents for Harbor 0.25 (``pip install shforge[harbor]``).

    harbor trial start -p TASK -e docker -a shforge.harbor:ShforgeAgent \\
        --agent-kwarg harness=codex -m MODEL --base-url URL --api-format openai_responses \\
        --api-key-name VAR

or one class per shipped harness (``shforge.harbor:Codex``,
``shforge.harbor:ClaudeCode``, ...). ``import shforge`` never imports this
module (nor Harbor). See docs/harbor.md.
"""

from __future__ import annotations

import asyncio
import json
import os
import shlex
import shutil
import sys
import tempfile
import time
from pathlib import Path
from typing import Any, Dict, Mapping, Optional, Sequence, Union

from harbor.agents.agent_auth_resolution import ModelConnectionSpec, ProviderAccess  # type: ignore[import-not-found,import-untyped,unused-ignore]
from harbor.agents.base import BaseAgent  # type: ignore[import-not-found,import-untyped,unused-ignore]
from harbor.agents.capabilities import AgentCapabilities  # type: ignore[import-not-found,import-untyped,unused-ignore]
from harbor.agents.installed.base import (  # type: ignore[import-not-found,import-untyped,unused-ignore]
    AgentAuthenticationError,
    ApiOverloadedError,
    ApiRateLimitError,
    ApiUsageLimitError,
    ContextWindowExceededError,
    ModelNotFoundError,
    NonZeroAgentExitCodeError,
)
from harbor.environments.base import BaseEnvironment  # type: ignore[import-not-found,import-untyped,unused-ignore]
from harbor.models.agent.context import AgentContext  # type: ignore[import-not-found,import-untyped,unused-ignore]
from harbor.models.model_api_format import ModelApiFormat  # type: ignore[import-not-found,import-untyped,unused-ignore]

from ._harbor_rollout import (
    HARNESS_APIS,
    Installed,
    _text,
    Rollout,
    catalog,
    install_async,
    rollout_async,
)
from ._files import StrPath
from .errors import SandboxError
from .sandbox import ExecResult

__all__ = [
    "HarborSandbox",
    "ShforgeAgent",
    "API_FORMATS",
    "ClaudeCode",
    "Cline",
    "Codex",
    "ContinueCli",
    "CopilotCli",
    "GeminiCli",
    "Hermes",
    "Kilo",
    "KimiCli",
    "MiniSweAgent",
    "MistralVibe",
    "Nooa",
    "OpenClaw",
    "OpenCode",
    "Pi",
    "QwenCode",
    "Stirrup",
]

#: Harbor's --api-format names -> shforge's API names.
API_FORMATS: Dict[str, str] = {
    ModelApiFormat.OPENAI_CHAT_COMPLETIONS.value: "chat",
    ModelApiFormat.OPENAI_RESPONSES.value: "responses",
    ModelApiFormat.ANTHROPIC_MESSAGES.value: "anthropic",
    ModelApiFormat.GOOGLE_GENERATE_CONTENT.value: "gemini",
}

#: shforge outcome causes -> the Harbor exceptions its --retry-include knows.
_CAUSE_ERRORS = {
    "rate_limited": ApiRateLimitError,
    "usage_limited": ApiUsageLimitError,
    "overloaded": ApiOverloadedError,
    "context_window": ContextWindowExceededError,
    "auth": AgentAuthenticationError,
    "model_not_found": ModelNotFoundError,
}

DEFAULT_PREFIX = "/opt/shforge"
DEFAULT_ARTIFACTS = "/var/cache/shforge/artifacts"
#: The scripts and the runs' session dirs inside the container.
DEFAULT_RUNDIR = "/tmp/shforge-harbor"


class HarborSandbox:
    """shforge's :class:`~shforge.sandbox.AsyncSandbox` over a Harbor
    ``BaseEnvironment``.

    ``exec`` takes a string (run by Harbor's ``bash -c``) or an argv (quoted
    with ``shlex.quote``). Harbor's exec has no stdin: ``stdin`` goes up as
    a file the command then reads (see ``_stdin_wrapper``). ``env`` is never handed to Harbor (its docker exec would put
    ``-e K=V`` on the host's ``docker`` argv, visible in ``ps``): the values
    go into a 0600 file uploaded into the sandbox, which a ``sh`` wrapper
    reads, deletes, and exports before it execs the command. Harbor merges
    stderr into stdout; ``stderr`` is then empty. A transport failure raises
    :class:`~shforge.errors.SandboxError`."""

    #: ``download(..., is_dir=True)`` skips Harbor's is_dir exec.
    download_knows_dirs = True

    def __init__(self, environment: BaseEnvironment, user: Optional[str] = None,
                 ops: Optional[Dict[str, float]] = None, mount: Optional["tuple[Path, str]"] = None) -> None:
        self.environment = environment
        self.user = user
        self.mount = mount
        #: Harbor calls made and the seconds they took (``exec``,
        #: ``exec_s``, ``upload``, ...): each is a ``docker compose`` run.
        self.ops: Dict[str, float] = ops if ops is not None else {}

    def _count(self, op: str, started: float) -> None:
        self.ops[op] = self.ops.get(op, 0) + 1
        self.ops[op + "_s"] = round(self.ops.get(op + "_s", 0.0) + time.monotonic() - started, 3)

    async def exec(
        self,
        command: Union[str, Sequence[str]],
        *,
        env: Optional[Mapping[str, str]] = None,
        cwd: Optional[str] = None,
        user: Optional[str] = None,
        timeout: Optional[float] = None,
        stdin: Optional[bytes] = None,
    ) -> ExecResult:
        text = command if isinstance(command, str) else " ".join(shlex.quote(a) for a in command)
        # Files written into the mount for this exec: removed on the host
        # after it, had the command not removed them (it never started).
        written: "list[Path]" = []
        if stdin is not None:
            text = await self._stdin_wrapper(stdin, text, written)
        if env:
            text = await self._env_wrapper(dict(env), text, written)
        sep = f"shforge-stderr-{os.urandom(8).hex()}"
        text = _stderr_apart(text, sep)
        started = time.monotonic()
        try:
            r = await self.environment.exec(
                text,
                cwd=cwd,
                timeout_sec=int(timeout) + 1 if timeout is not None else None,
                user=user if user is not None else self.user,
            )
        except (asyncio.CancelledError, KeyboardInterrupt):
            raise
        except Exception as e:  # noqa: BLE001 - the transport's failure, one line
            raise SandboxError(f"shforge: Harbor exec failed: {str(e).splitlines()[0] if str(e) else type(e).__name__}") from e
        finally:
            self._count("exec", started)
            for f in written:
                f.unlink(missing_ok=True)
        out, err = _split_stderr(r.stdout or "", sep)
        return ExecResult(r.return_code, out.encode(), (err + (r.stderr or "")).encode())

    def _host_file(self, prefix: str, mode: int, written: "list[Path]") -> "tuple[Path, str]":
        """A new file in the mount: (host path, sandbox path)."""
        assert self.mount is not None
        name = f".{prefix}-{os.urandom(8).hex()}"
        local = self.mount[0] / name
        fd = os.open(local, os.O_WRONLY | os.O_CREAT | os.O_EXCL, mode)
        os.close(fd)
        written.append(local)
        return local, f"{self.mount[1]}/{name}"

    async def _stdin_wrapper(self, data: bytes, command: str, written: "list[Path]") -> str:
        """Harbor's exec has no stdin: ``data`` is uploaded as a file in
        the sandbox's /tmp (readable by the command's user: what goes in
        here is scripts and session files, never a key), the command reads
        it as its stdin, and the file is removed after."""
        if self.mount is not None:
            host, remote = self._host_file("shforge-stdin", 0o644, written)
            host.write_bytes(data)
            q = shlex.quote(remote)
            return f"{{ {command}\n}} < {q}; rc=$?; rm -f {q}; exit $rc"
        remote = f"/tmp/.shforge-stdin-{os.urandom(8).hex()}"
        fd, local = tempfile.mkstemp(prefix="shforge-stdin-")
        try:
            with os.fdopen(fd, "wb") as f:
                f.write(data)
            os.chmod(local, 0o644)
            await self.upload(local, remote)
        finally:
            os.unlink(local)
        q = shlex.quote(remote)
        return f"{{ {command}\n}} < {q}; rc=$?; rm -f {q}; exit $rc"

    async def _env_wrapper(self, env: Dict[str, str], command: str, written: "list[Path]") -> str:
        for name in env:
            if not name.replace("_", "a").isalnum() or name[0].isdigit():
                raise SandboxError(f"shforge: {name!r} is not a variable name")
        body = "".join(f"export {k}={shlex.quote(v)}\n" for k, v in env.items())
        if self.mount is not None:
            host, remote = self._host_file("shforge-env", 0o600, written)
            host.write_text(body)
            q = shlex.quote(remote)
            return f". {q}; rm -f {q}; " + command
        remote = f"/tmp/.shforge-env-{os.urandom(8).hex()}"
        fd, local = tempfile.mkstemp(prefix="shforge-env-")
        try:
            with os.fdopen(fd, "w") as f:
                f.write(body)
            await self.upload(local, remote)
        finally:
            os.unlink(local)
        q = shlex.quote(remote)
        return f". {q}; rm -f {q}; " + command

    async def upload(self, src: StrPath, dst: str, *, user: Optional[str] = None) -> None:
        src = Path(src)
        started = time.monotonic()
        try:
            if src.is_dir():
                await self.environment.upload_dir(src, dst)
            else:
                await self.environment.upload_file(src, dst)
        except (asyncio.CancelledError, KeyboardInterrupt):
            raise
        except Exception as e:  # noqa: BLE001
            raise SandboxError(f"shforge: upload of {src} to {dst} failed: {e}") from e
        finally:
            self._count("upload", started)

    async def download(self, src: str, dst: StrPath, *, is_dir: Optional[bool] = None) -> None:
        """``is_dir`` when the caller knows it: no exec to ask Harbor."""
        started = time.monotonic()
        try:
            if is_dir if is_dir is not None else await self.environment.is_dir(src):
                await self.environment.download_dir(src, dst)
            else:
                await self.environment.download_file(src, dst)
        except (asyncio.CancelledError, KeyboardInterrupt):
            raise
        except Exception as e:  # noqa: BLE001
            raise SandboxError(f"shforge: download of {src} failed: {e}") from e
        finally:
            self._count("download", started)


def _stderr_apart(command: str, sep: str) -> str:
    """``command`` (in a subshell: its ``exit`` ends only that) with its
    stderr into a file of the sandbox's /tmp, printed after ``sep`` on a
    line of its own, then removed; when /tmp takes no file, merged as
    Harbor does."""
    e = f"/tmp/.{sep}"
    return (f"if ( : > {e} ) 2>/dev/null; then ( {command}\n) 2> {e}; else ( {command}\n); fi; rc=$?; "
            f"printf '\\n%s\\n' {sep}; cat {e} 2>/dev/null; rm -f {e}; exit $rc")


def _split_stderr(text: str, sep: str) -> "tuple[str, str]":
    """(stdout, stderr) of an exec wrapped by :func:`_stderr_apart`. No
    separator (the shell died first): all of it as stdout."""
    at = text.rfind("\n" + sep)
    if at < 0:
        # Empty stdout, the leading newline stripped by the transport.
        return ("", text[len(sep) + 1:]) if text.startswith(sep) else (text, "")
    err = text[at + 1 + len(sep):]
    return text[:at], err[1:] if err.startswith("\n") else err


def _mounted_logs(environment: BaseEnvironment, logs_dir: Path) -> "tuple[Optional[str], str]":
    """The agent logs dir's path in the sandbox when Harbor bind-mounts it
    there (docker): files written on the host are then in the sandbox, and
    back, with no ``docker compose cp``. Only for a root host process (a
    sandbox's files may be 0600 and owned by its user until Harbor's
    closing chown). None: uploads and downloads. With it, why (or why not)."""
    if os.environ.get("SHFORGE_HARBOR_MOUNT", "1") == "0":
        return None, "SHFORGE_HARBOR_MOUNT=0"
    if os.geteuid() != 0:
        return None, "the host process is not root"
    try:
        from harbor.models.trial.paths import EnvironmentPaths  # type: ignore[import-not-found,import-untyped,unused-ignore]

        agent_dir = EnvironmentPaths.for_os(environment.os).agent_dir
        if environment.is_path_mounted(agent_dir, logs_dir):
            return str(agent_dir), f"{logs_dir} is bind-mounted at {agent_dir}"
        return None, f"{logs_dir} is not bind-mounted at {agent_dir}"
    except Exception as e:  # noqa: BLE001 - another Harbor: no mount
        return None, f"{type(e).__name__}: {e}"


def _opt_float(name: str, value: Any) -> Optional[float]:
    if value is None or value == "":
        return None
    try:
        f = float(value)
    except (TypeError, ValueError):
        raise ValueError(f"shforge: --agent-kwarg {name}={value!r} is not a number of seconds") from None
    if f <= 0:
        raise ValueError(f"shforge: --agent-kwarg {name}={value!r} must be positive")
    return f


def _harbor_agent_timeout() -> Optional[float]:
    """The trial's agent timeout, read from the Harbor frame that awaits
    run() (Trial._run_agent_phase's ``timeout_sec``); None when not found
    (another Harbor version, or run() called by something else)."""
    frame = sys._getframe(1)
    while frame is not None:
        if frame.f_code.co_name == "_run_agent_phase":
            value = frame.f_locals.get("timeout_sec")
            return float(value) if isinstance(value, (int, float)) else None
        frame = frame.f_back  # type: ignore[assignment]
    return None


def _deadline_under(timeout: Optional[float]) -> Optional[float]:
    """Just under Harbor's timeout: the supervisor's deadline (and the
    harness's own receipt) comes first, Harbor's cancellation stays the
    backstop. 5 % of it, at least 3 s and at most 30 s, before."""
    if timeout is None:
        return None
    margin = max(3.0, min(30.0, timeout * 0.05))
    return max(1.0, timeout - margin)


class ShforgeAgent(BaseAgent):  # type: ignore[misc,unused-ignore]
    """Any shipped harness (``--agent-kwarg harness=NAME``), installed from pinned
    artifacts and run under shforge's supervisor."""

    capabilities = AgentCapabilities(atif=True, base_url=True)
    MODEL_CONNECTION = ModelConnectionSpec(
        default_provider=None,
        agent_provider_access=ProviderAccess(
            api_key_candidate_names=["SHFORGE_API_KEY"],
            base_url_candidate_names=["SHFORGE_BASE_URL"],
        ),
        supported_api_formats=[ModelApiFormat(f) for f in API_FORMATS],
        default_api_format_by_provider={},
    )
    #: Set by the per-harness subclasses.
    HARNESS: Optional[str] = None

    def __init__(
        self,
        logs_dir: Path,
        model_name: Optional[str] = None,
        *args: Any,
        harness: Optional[str] = None,
        artifacts: Optional[str] = None,
        prefix: Optional[str] = None,
        deadline: Any = None,
        mode: Optional[str] = None,
        version: Optional[str] = None,
        spec: Optional[str] = None,
        installer: Optional[str] = None,
        workdir: Optional[str] = None,
        engine: Optional[str] = None,
        rundir: Optional[str] = None,
        **kwargs: Any,
    ) -> None:
        super().__init__(logs_dir, model_name, *args, **kwargs)
        if self.HARNESS is not None:
            if harness is not None and harness != self.HARNESS:
                raise ValueError(f"shforge: {type(self).__name__} runs {self.HARNESS}, not --agent-kwarg harness={harness}")
            harness = self.HARNESS
        if harness is None:
            raise ValueError("shforge: name the harness: --agent-kwarg harness=NAME (" + ", ".join(sorted(HARNESS_APIS)) + ")")
        known = catalog()
        pinned: Optional[str]
        if spec is None:
            if harness not in known:
                raise ValueError(
                    f"shforge: unknown harness {harness!r}: the shipped ones are " + ", ".join(sorted(known))
                )
            pinned = known[harness]
            if version is not None and str(version) != pinned:
                raise ValueError(
                    f"shforge: {harness} version {version} is not in the catalog: the pinned one is {pinned} "
                    "(shforge never installs 'latest' from the internet)"
                )
            apis = HARNESS_APIS.get(harness, [])
        else:
            if not Path(spec).is_file():
                raise ValueError(f"shforge: --agent-kwarg spec={spec}: no such file")
            if installer is None or not Path(installer).is_file():
                raise ValueError("shforge: --agent-kwarg spec=FILE needs --agent-kwarg installer=SCRIPT (its generated installer)")
            pinned = str(version) if version is not None else None
            apis = []
        if engine not in (None, "package", "shim"):
            raise ValueError(f"shforge: --agent-kwarg engine={engine!r}: package or shim")
        self._engine = engine or "package"
        self._rundir = (rundir or DEFAULT_RUNDIR).rstrip("/") or "/"
        if mode not in (None, "events", "direct"):
            raise ValueError(f"shforge: --agent-kwarg mode={mode!r}: events or direct")
        self.harness = harness
        self._pinned = pinned
        self._spec = spec
        self._installer = installer
        self._artifacts = Path(artifacts or DEFAULT_ARTIFACTS)
        self._prefix = (prefix or DEFAULT_PREFIX).rstrip("/") or "/"
        self._deadline = _opt_float("deadline", deadline)
        self._mode = mode or "events"
        self._workdir = workdir
        connection = self.model_connection
        fmt = connection.model_api_format
        if fmt is not None:
            api: Optional[str] = API_FORMATS.get(str(fmt.value if hasattr(fmt, "value") else fmt))
            if api is None or (apis and api not in apis):
                raise ValueError(
                    f"shforge: {harness} does not speak --api-format {fmt}: it speaks "
                    + ", ".join(k for k, v in API_FORMATS.items() if v in apis)
                )
        else:
            api = None
        self._api = api
        self._key_name = connection.api_key_source_name
        self._key = connection.api_key
        self._url: Optional[str] = self._base_url or connection.resolved_base_url or connection.candidate_base_url
        self._installed: Optional[Installed] = None
        self._rollout: Optional[Rollout] = None
        #: setup() made RUNDIR/runs and the workdir.
        self._dirs_made = False
        #: The agent logs dir's path in the sandbox when bind-mounted
        #: (setup() finds out), else None.
        self._mount: Optional[str] = None
        #: Harbor calls per phase (HarborSandbox.ops), in context.metadata.
        self._ops: Dict[str, Dict[str, float]] = {"setup": {}, "run": {}}

    def _host_mount(self) -> "Optional[tuple[Path, str]]":
        return (self.logs_dir, self._mount) if self._mount is not None else None

    @staticmethod
    def name() -> str:
        return "shforge"

    def version(self) -> Optional[str]:
        return self._pinned

    @property
    def extra_env(self) -> Dict[str, str]:
        # The key's variable never goes into Harbor's per-exec environment
        # (it would be `-e K=V` on the host's docker argv).
        env: Dict[str, str] = dict(super().extra_env)
        if self._key_name:
            env.pop(self._key_name, None)
        return env

    def _model_id(self) -> str:
        connection = self.model_connection
        if not self.model_name:
            raise ValueError("shforge: no model: give -m MODEL")
        # An unqualified name (no provider Harbor knows) is passed as it is.
        return str(connection.model_id or self.model_name)

    async def setup(self, environment: BaseEnvironment) -> None:
        self.logs_dir.mkdir(parents=True, exist_ok=True)
        if not self._url:
            raise ValueError("shforge: no model server: give --base-url URL")
        self._model_id()
        self._mount, mount_why = _mounted_logs(environment, self.logs_dir)
        sandbox = HarborSandbox(environment, ops=self._ops["setup"], mount=self._host_mount())
        if self._engine == "shim":
            self._installed = await install_async(
                sandbox, self.harness, prefix=self._prefix, artifacts=self._artifacts, installer=self._installer
            )
        else:
            # issue 38's install: bootstrap (the image's bash, else the
            # carried one), a complete install reused with nothing uploaded,
            # missing artifacts fetched; then the scripts the launch needs.
            from .rollout import install_async as package_install
            from .scripts import scripts_dir

            t = time.monotonic()
            inst = await package_install(
                sandbox, self.harness, prefix=self._prefix, artifacts=self._artifacts, installer=self._installer
            )
            from .scripts import RUNNER, SUPERVISOR

            if self._mount is not None:
                # Harbor's agent logs dir is bind-mounted: the two scripts
                # the launch runs are host copies there (no Harbor call), and
                # run()'s session dir too.
                here = self.logs_dir / "shforge" / "scripts"
                here.mkdir(parents=True, exist_ok=True)
                for name in (SUPERVISOR, RUNNER):
                    shutil.copy2(scripts_dir() / name, here / name)
                scripts = f"{self._mount}/shforge/scripts"
            else:
                # The scripts and the runs' session dirs go to the run dir,
                # apart from the prefix, which may be a shared read-only
                # mount. One upload and no exec: RUNDIR/scripts and an empty
                # RUNDIR/runs staged on the host, copied in as RUNDIR
                # (Harbor's `compose cp SRC/. main:RUNDIR` makes it); run()
                # then needs no mkdir of its own.
                scripts = f"{self._rundir}/scripts"
                # Only the two scripts the launch runs (150 KB, not the
                # 1.7 MB of every installer).
                with tempfile.TemporaryDirectory(prefix="shforge-stage-") as stage:
                    (Path(stage) / "scripts").mkdir()
                    for name in (SUPERVISOR, RUNNER):
                        shutil.copy2(scripts_dir() / name, Path(stage) / "scripts" / name)
                    (Path(stage) / "runs").mkdir()
                    os.chmod(stage, 0o755)
                    await sandbox.upload(stage, self._rundir)
            self._dirs_made = True
            self._installed = Installed(self.harness, inst.entry, self._prefix, scripts,
                                        time.monotonic() - t, bash=inst.bash, reused=inst.reused)
        (self.logs_dir / "shforge-install.json").write_text(
            json.dumps({"harness": self.harness, "version": self._pinned, "entry": self._installed.entry,
                        "reused": self._installed.reused, "engine": self._engine,
                        "seconds": round(self._installed.seconds, 3),
                        "mount": self._mount, "mount_why": mount_why,
                        "harbor_calls": self._ops["setup"]}) + "\n"
        )

    async def run(self, instruction: str, environment: BaseEnvironment, context: AgentContext) -> None:
        if self._installed is None:
            raise RuntimeError("shforge: run() before setup()")
        self._instruction = instruction
        sandbox = HarborSandbox(environment, ops=self._ops["run"], mount=self._host_mount())
        workdir = self._workdir
        if workdir is None:
            # The task's [environment] workdir, which Harbor's exec uses too.
            task_env = getattr(environment, "task_env_config", None)
            workdir = getattr(task_env, "workdir", None) or None
        if workdir is None:
            # The container's working directory; "/" (an image without a
            # WORKDIR) would contain the session dir: the user's HOME then.
            workdir = _text((await sandbox.exec('d=$(pwd); [ "$d" = / ] && d=$(cd && pwd); printf "%s\\n" "$d"')).stdout).strip().splitlines()[-1]
        started = time.monotonic()
        under = _deadline_under(_harbor_agent_timeout())
        # Harbor's clock started with run(): the time spent before the launch
        # (workdir, session upload) comes off the supervisor's deadline.
        deadline_at = started + under if self._deadline is None and under is not None else None
        try:
            rollout = await rollout_async(
                sandbox,
                self.harness,
                self._installed,
                prompt=instruction,
                base_url=str(self._url),
                model=self._model_id(),
                workdir=workdir,
                api=self._api,
                api_key_env=self._key_name if self._key is not None else None,
                api_key=self._key,
                deadline=self._deadline,
                deadline_at=deadline_at,
                mode=self._mode,
                spec=self._spec,
                host_dir=self.logs_dir / "shforge",
                dirs_made=self._dirs_made,
                mounted=f"{self._mount}/shforge" if self._mount is not None and self._engine != "shim" else None,
            )
        except BaseException as exc:
            partial = getattr(exc, "shforge_rollout", None)
            if partial is not None:
                self._record(partial, context, cancelled=isinstance(exc, asyncio.CancelledError))
            raise
        self._record(rollout, context, cancelled=False)
        cause = rollout.outcome.get("cause")
        if rollout.outcome.get("status") == "timed_out":
            # Harbor reports this as its own AgentTimeoutError.
            raise asyncio.TimeoutError(f"shforge: {self.harness} reached its in-container deadline")
        if cause in _CAUSE_ERRORS:
            raise _CAUSE_ERRORS[cause](f"shforge: {self.harness} rollout failed: {cause}")

    def _record(self, rollout: Rollout, context: AgentContext, *, cancelled: bool) -> None:
        self._rollout = rollout
        usage = rollout.usage
        context.n_input_tokens = usage["input"]
        context.n_output_tokens = usage["output"]
        context.n_cache_tokens = usage["cache"]
        receipt = rollout.receipt
        stop = None
        if receipt is not None:
            stop = {
                "cleanup_confirmed": receipt.cleanup_confirmed,
                "return_code": receipt.return_code,
                "timed_out": receipt.timed_out,
                "error": receipt.error,
                "containment": getattr(receipt, "containment", None),
                "services": len(receipt.services),
            }
        receipt_doc: Any = None
        try:
            receipt_doc = json.loads((rollout.host_dir / "out" / "receipt.json").read_text())
        except (OSError, ValueError):
            pass
        if stop is not None and isinstance(receipt_doc, dict):
            stop["stop"] = receipt_doc.get("stop")
            stop["marker"] = receipt_doc.get("marker")
        meta = dict(context.metadata or {})
        meta["shforge"] = {
            "harness": self.harness,
            "version": self._pinned,
            "outcome": rollout.outcome,
            "stop": stop,
            "stopped_by_harbor": cancelled,
            "timings": {k: round(v, 3) for k, v in rollout.timings.items()},
            "errors": rollout.errors,
            "harbor_calls": self._ops,
        }
        context.metadata = json.loads(json.dumps(meta, default=str))
        atif = rollout.atif
        if atif is None and self.harness == "openclaw":
            atif = _openclaw_atif(rollout.host_dir / "out", self._instruction, self._model_id(), self._pinned)
            if atif is not None and context.n_input_tokens == 0:
                totals = atif["final_metrics"]
                context.n_input_tokens = totals["total_prompt_tokens"]
                context.n_output_tokens = totals["total_completion_tokens"]
                context.n_cache_tokens = totals["total_cached_tokens"]
        if atif is not None:
            from harbor.models.trajectories import Trajectory  # type: ignore[import-not-found,import-untyped,unused-ignore]

            trajectory = Trajectory.model_validate(atif)
            (self.logs_dir / "trajectory.json").write_text(
                json.dumps(trajectory.model_dump(mode="json", exclude_none=True), indent=2) + "\n"
            )

    _instruction = ""

    def populate_context_post_run(self, context: AgentContext) -> None:
        if self._rollout is not None and context.n_input_tokens is None:
            self._record(self._rollout, context, cancelled=False)


def _openclaw_result(out: Path) -> Optional[Dict[str, Any]]:
    """OpenClaw's ``--json`` result: the last JSON object of its stdout
    (the runner's events.log, ``TIME<TAB>LINE``, else stdout.log)."""
    for name, tabbed in (("events.log", True), ("stdout.log", False)):
        try:
            lines = (out / name).read_text(encoding="utf-8", errors="replace").splitlines()
        except OSError:
            continue
        text = "\n".join(ln.split("\t", 1)[1] if tabbed and "\t" in ln else ln for ln in lines)
        start = text.rfind("\n{")
        start = start + 1 if start >= 0 else (0 if text.startswith("{") else -1)
        if start < 0:
            continue
        try:
            doc = json.loads(text[start:])
        except ValueError:
            continue
        if isinstance(doc, dict):
            return doc
    return None


def _openclaw_atif(out: Path, instruction: str, model: str, version: Optional[str]) -> Optional[Dict[str, Any]]:
    """OpenClaw has no snapshot reader (its session store is an internal
    SQLite schema): its ATIF is a two-step summary built from its ``--json``
    result: the instruction as the user step, the final answer as the agent
    step with the run's token totals; the tool calls are counted in
    ``extra`` (``toolSummary``), not replayed. None when there is no result
    (a killed run)."""
    doc = _openclaw_result(out)
    if doc is None:
        return None
    raw = doc.get("usage")
    usage: Dict[str, Any] = raw if isinstance(raw, dict) else {}
    n_in, n_out, n_cache = (int(usage.get(k) or 0) for k in ("input", "output", "cacheRead"))
    final = doc.get("final")
    return {
        "schema_version": "ATIF-v1.6",
        "session_id": str(doc.get("sessionId") or "openclaw"),
        "agent": {"name": "openclaw", "version": version or "unknown", "model_name": model},
        "steps": [
            {"step_id": 1, "source": "user", "message": instruction},
            {
                "step_id": 2,
                "source": "agent",
                "model_name": model,
                "message": final if isinstance(final, str) else "",
                "metrics": {"prompt_tokens": n_in, "completion_tokens": n_out, "cached_tokens": n_cache},
            },
        ],
        "final_metrics": {
            "total_prompt_tokens": n_in,
            "total_completion_tokens": n_out,
            "total_cached_tokens": n_cache,
            "total_steps": 2,
        },
        "extra": {"shforge": {"harness": "openclaw", "source": "openclaw --json result (summary: no snapshot reader)",
                              "status": doc.get("status"), "assistant_turns": doc.get("assistantTurns"),
                              "tool_summary": doc.get("toolSummary")}},
    }


def _one(harness: str, cls_name: str) -> type:
    return type(cls_name, (ShforgeAgent,), {"HARNESS": harness, "__doc__": f"shforge's {harness} agent."})


ClaudeCode = _one("claude-code", "ClaudeCode")
Cline = _one("cline", "Cline")
Codex = _one("codex", "Codex")
ContinueCli = _one("continue-cli", "ContinueCli")
CopilotCli = _one("copilot-cli", "CopilotCli")
GeminiCli = _one("gemini-cli", "GeminiCli")
Hermes = _one("hermes", "Hermes")
Kilo = _one("kilo", "Kilo")
KimiCli = _one("kimi-cli", "KimiCli")
MiniSweAgent = _one("mini-swe-agent", "MiniSweAgent")
MistralVibe = _one("mistral-vibe", "MistralVibe")
Nooa = _one("nooa", "Nooa")
OpenClaw = _one("openclaw", "OpenClaw")
OpenCode = _one("opencode", "OpenCode")
Pi = _one("pi", "Pi")
QwenCode = _one("qwen-code", "QwenCode")
Stirrup = _one("stirrup", "Stirrup")

# Unused here, kept importable for callers matching on it.
_ = NonZeroAgentExitCodeError
