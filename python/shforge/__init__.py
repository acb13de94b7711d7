"""shforge for Python adapters: the generated scripts and a typed host API.

The API is a thin typed layer over the ``shforge`` executable installed
with this package: every rule, message and exit code is the CLI's own.
Errors are :class:`ShforgeError` subclasses carrying the CLI's one-line
message and its exit code as ``code``.

One rollout in one call, over any sandbox (``shforge.docker.DockerSandbox``
or a provider's own class with ``exec``/``upload``/``download``)::

    from shforge.docker import DockerSandbox
    r = shforge.rollout(DockerSandbox("ctr", user="1000:1000"), "codex",
                        prompt=p, base_url=url, model=m, workdir="/work",
                        api_key_env="OPENAI_API_KEY", deadline=600)
    r.receipt.timed_out, r.outcome["status"], r.usage.total

The same by hand, host side::

    import shforge
    sup = shforge.script_path(shforge.SUPERVISOR)       # upload the scripts
    session = shforge.write_session("codex", out, session_dir=..., workdir=...,
                                    entry=entry, base_url=url, model=m, prompt=p)
    argv = shforge.launch_argv(SUP, RECEIPT, ["bash", RUNNER, session.params],
                               deadline=600)            # run it in the sandbox
    receipt = shforge.read_receipt(copied_receipt)
    doc = shforge.snapshot("codex", dir=copied_codex_home)
"""

from __future__ import annotations

from ._cli import binary
from .errors import (
    ROLLOUT_STEPS,
    BinaryNotFoundError,
    NoSessionDataError,
    OperationError,
    RolloutError,
    SandboxError,
    SandboxTimeoutError,
    ShforgeError,
    UsageError,
)
from .harness import Api, Capture, HarnessName, Mode, Session, SnapshotKind, write_session
from .installer import installer_script
from .params import ParamValue, params_text, write_params
from .scripts import (
    BOOTSTRAP,
    RUNNER,
    SUPERVISOR,
    ScriptEntry,
    installer_path,
    manifest,
    script_path,
    scripts_dir,
    verify,
)
from .rollout import (
    INSTALLER_EXITS,
    ROLLOUT_VAR,
    Installed,
    Rollout,
    Timings,
    Usage,
    install,
    install_async,
    rollout,
    rollout_async,
)
from .sandbox import AsyncSandbox, Command, ExecResult, Sandbox
from .snapshot import snapshot
from .supervisor import (
    MARKER_VAR,
    Receipt,
    Seconds,
    Service,
    StopReport,
    Zombie,
    end_services_argv,
    launch_argv,
    read_receipt,
)
from .tools import FakeModelServer, Pinned, fake_model_server, fetch, outcome, pin

__all__ = [
    "INSTALLER_EXITS",
    "ROLLOUT_STEPS",
    "ROLLOUT_VAR",
    "AsyncSandbox",
    "Command",
    "ExecResult",
    "FakeModelServer",
    "Installed",
    "Pinned",
    "Rollout",
    "RolloutError",
    "Sandbox",
    "SandboxError",
    "SandboxTimeoutError",
    "Timings",
    "Usage",
    "fake_model_server",
    "fetch",
    "install",
    "install_async",
    "outcome",
    "pin",
    "rollout",
    "rollout_async",
    "BOOTSTRAP",
    "MARKER_VAR",
    "RUNNER",
    "SUPERVISOR",
    "Api",
    "BinaryNotFoundError",
    "Capture",
    "HarnessName",
    "Mode",
    "NoSessionDataError",
    "OperationError",
    "ParamValue",
    "Receipt",
    "ScriptEntry",
    "Seconds",
    "Service",
    "StopReport",
    "Zombie",
    "Session",
    "ShforgeError",
    "SnapshotKind",
    "UsageError",
    "binary",
    "end_services_argv",
    "installer_path",
    "installer_script",
    "launch_argv",
    "manifest",
    "params_text",
    "read_receipt",
    "script_path",
    "scripts_dir",
    "snapshot",
    "verify",
    "write_params",
    "write_session",
]
