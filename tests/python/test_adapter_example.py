"""An adapter's rollout, as an agent server would write it, using only the
installed ``shforge`` package: one real Codex run against the fake model
server, through bootstrap, the pinned installer, a session dir, the
supervised launch, the receipt, a snapshot and ``--end-services``.

The "sandbox" here is the host itself (the paths inside and outside are the
same); a real adapter uploads ``shforge.scripts_dir()`` and the session dir
into its sandbox and runs the argv there.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Iterator, List

import pytest

import shforge

ARTIFACTS = Path(os.environ.get("SHFORGE_ARTIFACTS", "/var/cache/shforge/artifacts"))
#: The artifact installers/codex.toml pins for x86_64.
CODEX_ARTIFACT = "openai-codex-0.171.0-linux-x64.tgz"


@dataclass
class Rollout:
    """What one rollout left for the adapter to judge."""

    exit_code: int
    deliverable: str
    receipt: shforge.Receipt
    snapshot: dict[str, object]
    end_services_exit: int
    marker: str


def fake_model_server(log: Path) -> "tuple[subprocess.Popen[bytes], str]":
    """``shforge fake-model-server`` on a free port; its base URL."""
    proc = subprocess.Popen(
        [str(shforge.binary()), "fake-model-server", "--port", "0", "--log", str(log)],
        stdout=subprocess.PIPE,
        stdin=subprocess.DEVNULL,
    )
    assert proc.stdout is not None
    line = proc.stdout.readline().decode()
    assert line.startswith("listening on "), line
    return proc, line.split()[-1]


def rollout(work: Path, prompt_token: str) -> Rollout:
    """One Codex rollout in ``work``: everything an adapter does around it."""
    scripts = work / "shforge"  # the sandbox's copy of the packaged scripts
    shutil.copytree(shforge.scripts_dir(), scripts)
    session_dir = work / "session"
    workdir = work / "task"
    target = work / "out" / "deliverable.txt"
    for d in (workdir, target.parent):
        d.mkdir(parents=True)

    # 1. Bootstrap under the image's POSIX sh: bash present, dirs apart.
    subprocess.run(
        ["sh", str(scripts / shforge.BOOTSTRAP), "--need", "bash",
         "--workdir", str(workdir), "--session-dir", str(session_dir)],
        check=True, stdin=subprocess.DEVNULL,
    )  # fmt: skip

    # 2. The pinned installer, from the artifacts the adapter mirrors.
    install = subprocess.run(
        ["bash", str(scripts / "installers" / "codex.sh"), "--prefix", str(work / "prefix"),
         "--source-dir", str(ARTIFACTS)],
        check=True, capture_output=True, stdin=subprocess.DEVNULL,
    )  # fmt: skip
    entry = install.stdout.decode().splitlines()[-1]

    server, base_url = fake_model_server(work / "requests.jsonl")
    try:
        # 3. The session dir (the prompt drives the fake model's one tool call).
        session = shforge.write_session(
            "codex",
            session_dir,
            session_dir=str(session_dir),
            workdir=str(workdir),
            entry=entry,
            base_url=base_url,
            model="fake-model",
            prompt=(
                "Write the token below into the target file, exactly, with no newline.\n"
                f"shforge-token={prompt_token} shforge-target={target} shforge-prefer=shell\n"
            ),
        )

        # 4. The supervised launch of the runner.
        marker = f"{prompt_token}-marker"
        receipt_path = work / "receipt.json"
        argv = shforge.launch_argv(
            str(scripts / shforge.SUPERVISOR),
            str(receipt_path),
            ["bash", "--noprofile", "--norc", str(scripts / shforge.RUNNER), session.params],
            deadline=120,
            marker=marker,
        )
        env = dict(os.environ, HOME=str(work / "task-home"), OPENAI_API_KEY="sk-not-a-real-key")
        (work / "task-home").mkdir()
        code = subprocess.run(argv, env=env, cwd=workdir, stdin=subprocess.DEVNULL, check=False).returncode

        # 5. The receipt and the session data, copied out (here: in place).
        receipt = shforge.read_receipt(receipt_path)
        assert session.capture.kind == "codex" and session.capture.dir is not None
        doc = shforge.snapshot(session.capture.kind, dir=session.capture.dir)
        if cli_has_atif():
            trajectory = shforge.snapshot(session.capture.kind, dir=session.capture.dir, format="atif")
            assert str(trajectory["schema_version"]).startswith("ATIF-"), trajectory

        # 6. End whatever services the run left (none expected).
        end = subprocess.run(
            shforge.end_services_argv(str(scripts / shforge.SUPERVISOR), str(receipt_path)),
            check=False, stdin=subprocess.DEVNULL,
        )  # fmt: skip
    finally:
        server.terminate()
        server.wait()
    return Rollout(
        exit_code=code,
        deliverable=target.read_text() if target.exists() else "",
        receipt=receipt,
        snapshot=doc,
        end_services_exit=end.returncode,
        marker=marker,
    )


def cli_has_atif() -> bool:
    """``shforge snapshot --format atif`` exists in the installed CLI."""
    help_text = subprocess.run(
        [str(shforge.binary()), "snapshot", "--help"], capture_output=True, check=True
    ).stdout.decode()
    return "--format" in help_text


def marked_processes(marker: str) -> List[int]:
    """Live (non-zombie) processes carrying the run's marker."""
    needle = f"{shforge.MARKER_VAR}={marker}".encode()
    found = []
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            stat = Path(f"/proc/{entry}/stat").read_text()
            environ = Path(f"/proc/{entry}/environ").read_bytes()
        except OSError:
            continue
        if stat.rsplit(") ", 1)[-1].startswith("Z"):
            continue
        if needle in environ.split(b"\0"):
            found.append(int(entry))
    return found


@pytest.fixture
def codex_artifact() -> Iterator[None]:
    if not (ARTIFACTS / CODEX_ARTIFACT).is_file():
        message = f"SKIPPED LOUDLY: {ARTIFACTS / CODEX_ARTIFACT} is missing (run shforge smoke codex to fetch it)"
        if os.environ.get("SHFORGE_REQUIRE_SHELLS") == "1":
            pytest.fail(message + " and SHFORGE_REQUIRE_SHELLS=1")
        pytest.skip(message)
    yield


def test_one_real_codex_rollout(tmp_path: Path, codex_artifact: None) -> None:
    token = f"adapter-{time.time_ns():x}-{os.getpid()}"
    r = rollout(tmp_path, token)
    assert r.exit_code == 0
    assert r.deliverable == token
    assert r.receipt.is_clean and r.receipt.return_code == 0 and not r.receipt.timed_out
    assert r.receipt.services == ()
    summary = r.snapshot["summary"]
    assert isinstance(summary, dict) and summary["sessions"] >= 1 and summary["tool_calls"]
    assert r.end_services_exit == 0
    assert marked_processes(r.marker) == []


def test_the_same_rollout_in_a_container_in_one_call(tmp_path: Path, codex_artifact: None,
                                                     monkeypatch: pytest.MonkeyPatch) -> None:  # fmt: skip
    """What the adapter above does by hand, in a Docker container as uid
    1000, with one call: ``shforge.rollout`` over ``DockerSandbox`` does the
    upload, bootstrap, install, session, launch, copy-back, snapshot and
    ``--end-services``, and removes its scratch dir."""
    import dockerfix
    from shforge.docker import DockerSandbox

    why = dockerfix.docker_ok([dockerfix.BOOKWORM])
    if why is not None:
        dockerfix.loud_skip(why)
    monkeypatch.setenv("OPENAI_API_KEY", "sk-not-a-real-key")
    cid = subprocess.run(
        ["docker", "run", "-d", "--init", "--network", "host", dockerfix.BOOKWORM, "sleep", "infinity"],
        capture_output=True, check=True,
    ).stdout.decode().strip()  # fmt: skip
    try:
        subprocess.run(["docker", "exec", cid, "sh", "-c", "mkdir /task && chown 1000:1000 /task"], check=True)
        token = f"adapter-{time.time_ns():x}-{os.getpid()}"
        with shforge.fake_model_server() as server:
            r = shforge.rollout(
                DockerSandbox(cid, user="1000:1000"), "codex",
                prompt=dockerfix.prompt(token, "/task/deliverable.txt"),
                base_url=server.base_url, model="fake-model", workdir="/task",
                api_key_env="OPENAI_API_KEY", deadline=120,
            )  # fmt: skip
        assert r.exit_code == 0
        assert dockerfix.read(cid, "/task/deliverable.txt") == token
        assert r.receipt.is_clean and r.receipt.return_code == 0 and not r.receipt.timed_out
        assert r.receipt.services == () and r.end_services_exit is None
        assert r.snapshot is not None and r.snapshot["summary"]["tool_calls"]
        assert r.outcome["status"] == "completed"
        dockerfix.only_init_left(cid)
    finally:
        subprocess.run(["docker", "rm", "-f", cid], capture_output=True)
