"""No docker needed: the package's Harbor layer against the checkout."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]


def test_import_shforge_does_not_import_harbor() -> None:
    code = "import sys, shforge; assert 'harbor' not in sys.modules and 'shforge.harbor' not in sys.modules"
    subprocess.run([sys.executable, "-c", code], check=True)


def test_harness_apis_match_the_specs() -> None:
    tomllib = pytest.importorskip("tomllib")
    from shforge._harbor_rollout import HARNESS_APIS, catalog

    specs = {p.stem: tomllib.loads(p.read_text())["apis"] for p in (ROOT / "harnesses").glob("*.toml")}
    assert HARNESS_APIS == specs
    assert set(catalog()) == set(specs)


def test_one_class_per_harness() -> None:
    pytest.importorskip("harbor")
    from shforge import harbor

    classes = {getattr(harbor, n).HARNESS for n in harbor.__all__ if n not in ("HarborSandbox", "ShforgeAgent", "API_FORMATS")}
    assert classes == {p.stem for p in (ROOT / "harnesses").glob("*.toml")}
    assert harbor.ShforgeAgent.SUPPORTS_ATIF is True


def test_the_key_is_on_no_argv_and_in_no_env(tmp_path: Path) -> None:
    """Every exec's command and env, as Harbor's docker exec would put them
    on the host's docker argv, lacks the key's value; the key goes as a
    0600 file the launch wrapper reads and deletes."""
    import asyncio
    import os
    import stat

    pytest.importorskip("harbor")
    from shforge._harbor_rollout import Installed, rollout_async
    from shforge.harbor import HarborSandbox

    key = "sk-shforge-test-key-0123456789"
    seen: list = []
    uploads: list = []

    class Result:
        return_code = 0
        stdout = "/app"
        stderr = ""

    class FakeEnvironment:
        async def exec(self, command, cwd=None, env=None, timeout_sec=None, user=None):  # noqa: ANN001
            seen.append((command, dict(env or {})))
            return Result()

        async def upload_file(self, src, dst):  # noqa: ANN001
            mode = stat.S_IMODE(os.stat(src).st_mode)
            uploads.append((dst, mode, Path(src).read_text()))

        async def upload_dir(self, src, dst):  # noqa: ANN001
            # The key rides in the session dir's one upload.
            k = Path(src) / ".key"
            if k.exists():
                uploads.append((dst + "/.key", stat.S_IMODE(os.stat(k).st_mode), k.read_text()))
            uploads.append((dst, None, None))

        async def is_dir(self, path):  # noqa: ANN001
            return True

        async def download_dir(self, src, dst):  # noqa: ANN001
            Path(dst).mkdir(parents=True, exist_ok=True)

    installed = Installed("codex", "/opt/shforge/codex-0.171.0/codex/bin/codex", "/opt/shforge", "/opt/shforge/scripts", 0.0)
    asyncio.run(rollout_async(
        HarborSandbox(FakeEnvironment()), "codex", installed, prompt="hi", base_url="http://127.0.0.1:9",
        model="fake-model", workdir="/app", api_key_env="MY_KEY", api_key=key, deadline=10,
        host_dir=tmp_path / "host",
    ))  # fmt: skip
    assert seen and all(key not in cmd and key not in " ".join(env.values()) for cmd, env in seen)
    key_uploads = [u for u in uploads if u[0].endswith("/.key")]
    assert key_uploads and key_uploads[0][1] == 0o600 and key_uploads[0][2] == key
    assert not (tmp_path / "host" / ".key").exists() and not (tmp_path / "host" / "session" / ".key").exists()
    launch = [cmd for cmd, _ in seen if "launch.pid" in cmd and "exec" in cmd][0]
    assert "rm -f" in launch and "export MY_KEY" in launch

    # HarborSandbox's own env: a file sourced and removed, never Harbor's env.
    seen.clear()
    uploads.clear()
    r = asyncio.run(HarborSandbox(FakeEnvironment()).exec(["echo", "x y"], env={"MY_KEY": key}))
    assert r.exit_code == 0 and r.stdout == b"/app"
    (cmd, env), = seen
    assert env == {} and key not in cmd and "; echo 'x y'\n)" in cmd and "rm -f" in cmd
    assert uploads[0][1] == 0o600 and uploads[0][2] == f"export MY_KEY={key}\n"

    # With a mount (Harbor's bind-mounted logs dir) the env file is a host
    # write there, 0600, not an upload, and gone from the host after.
    seen.clear()
    uploads.clear()
    mount = tmp_path / "mount"
    mount.mkdir()
    r = asyncio.run(HarborSandbox(FakeEnvironment(), mount=(mount, "/logs/agent")).exec(["true"], env={"MY_KEY": key}))
    (cmd, env), = seen
    assert not uploads and env == {} and key not in cmd and ". /logs/agent/.shforge-env-" in cmd
    assert list(mount.iterdir()) == []


def test_exec_gives_stderr_apart(tmp_path: Path) -> None:
    """Harbor merges stderr into stdout; HarborSandbox's wrapper gives them
    back apart (run here by a real bash -c, as Harbor's docker exec does),
    exit code kept, stdout byte for byte, also when the transport strips the
    output."""
    import asyncio

    pytest.importorskip("harbor")
    from shforge.harbor import HarborSandbox

    class Result:
        def __init__(self, rc: int, out: str, strip: bool) -> None:
            self.return_code, self.stdout, self.stderr = rc, out.strip() if strip else out, ""

    class BashEnvironment:
        def __init__(self, strip: bool) -> None:
            self.strip = strip

        async def exec(self, command, cwd=None, env=None, timeout_sec=None, user=None):  # noqa: ANN001
            p = subprocess.run(["bash", "-c", command], stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
            return Result(p.returncode, p.stdout, self.strip)

    for strip in (False, True):
        sb = HarborSandbox(BashEnvironment(strip))
        r = asyncio.run(sb.exec("printf 'out 1\\nout 2'; echo err >&2; exit 3"))
        assert (r.exit_code, r.stdout, r.stderr.strip()) == (3, b"out 1\nout 2", b"err")
        r = asyncio.run(sb.exec("echo only-err >&2"))
        assert (r.exit_code, r.stdout, r.stderr.strip()) == (0, b"", b"only-err")
        r = asyncio.run(sb.exec(["sh", "-c", "exit 7"]))
        assert r.exit_code == 7
    # An `exit` inside the command (the stdin wrapper's) ends only its subshell.
    r = asyncio.run(HarborSandbox(BashEnvironment(False)).exec("echo a; exit 4"))
    assert (r.exit_code, r.stdout) == (4, b"a\n")


def test_openclaw_atif_from_its_json_result(tmp_path: Path) -> None:
    """OpenClaw has no snapshot reader: its trajectory is a two-step summary
    from the --json result in the runner's events.log, valid under Harbor's
    models, with the run's token totals."""
    import json

    pytest.importorskip("harbor")
    from harbor.models.trajectories import Trajectory
    from shforge.harbor import _openclaw_atif

    result = {"ok": True, "status": "ok", "final": "done", "usage": {"input": 120, "output": 7, "cacheRead": 3},
              "assistantTurns": 2, "toolSummary": {"calls": 1, "tools": ["exec"], "failures": 0}, "sessionId": "s-1"}
    lines = ["1.5\tsome log line"] + [f"2.0\t{ln}" for ln in json.dumps(result, indent=2).splitlines()]
    (tmp_path / "events.log").write_text("\n".join(lines) + "\n")
    doc = _openclaw_atif(tmp_path, "do it", "fake-model", "2026.9.6")
    assert doc is not None
    Trajectory.model_validate(doc)
    assert [s["source"] for s in doc["steps"]] == ["user", "agent"] and doc["steps"][1]["message"] == "done"
    assert doc["final_metrics"]["total_prompt_tokens"] == 120 and doc["final_metrics"]["total_cached_tokens"] == 3
    # A killed run printed no result: no trajectory.
    (tmp_path / "events.log").write_text("1.0\tstarting\n")
    assert _openclaw_atif(tmp_path, "do it", "fake-model", None) is None
