"""The typed API against the installed CLI: same words, same exit codes."""

from __future__ import annotations

import datetime
import hashlib
import json
import shutil
import subprocess
from pathlib import Path
from typing import Any, Dict, List

import pytest

import shforge


def cli(*args: str, stdin: bytes = b"") -> "subprocess.CompletedProcess[bytes]":
    """The installed shforge itself, to compare the API with."""
    return subprocess.run(
        [str(shforge.binary()), *args], input=stdin, capture_output=True, check=False
    )


def cli_error(*args: str, stdin: bytes = b"") -> tuple[int, str]:
    proc = cli(*args, stdin=stdin)
    return proc.returncode, proc.stderr.decode().strip()


def test_the_binary_is_the_wheels_and_on_path() -> None:
    assert shforge.binary().parent == Path(shforge.__file__).parents[3].parent / "bin"
    on_path = shutil.which("shforge")
    assert on_path is not None and Path(on_path).samefile(shforge.binary())
    assert cli("--version").stdout.decode().startswith("shforge ")


def test_params_round_trip_through_bash(tmp_path: Path) -> None:
    params: Dict[str, Any] = {
        "RUNNER_ARGV": ["a b", "$(touch x)", "", "'"],
        "RUNNER_CWD": "/w\nx",
    }
    out = tmp_path / "params.sh"
    shforge.write_params(out, params)
    assert out.read_text() == cli("params", "-", stdin=json.dumps(params).encode()).stdout.decode()
    shown = subprocess.run(
        ["bash", "-c", 'source "$1"; printf "<%s>" "${RUNNER_ARGV[@]}" "$RUNNER_CWD"', "_", str(out)],
        capture_output=True,
        check=True,
        cwd=tmp_path,
    ).stdout.decode()
    assert shown == "<a b><$(touch x)><><'></w\nx>"
    assert not (tmp_path / "x").exists()


@pytest.mark.parametrize(
    "bad",
    [{"A": "x\0y"}, {"A": 1}, {"A": ["x", None]}, {"A": {"b": "c"}}, {"1A": "x"}],
)
def test_params_refused_as_the_cli_refuses(tmp_path: Path, bad: Dict[str, Any]) -> None:
    out = tmp_path / "params.sh"
    with pytest.raises(shforge.UsageError) as err:
        shforge.write_params(out, bad)
    assert (err.value.code, str(err.value)) == cli_error("params", "-", stdin=json.dumps(bad).encode())
    assert not out.exists() and list(tmp_path.iterdir()) == []


def test_params_refuses_what_json_would_change() -> None:
    for bad in [{1: "x"}, {"A": b"bytes"}, {"A": float("nan")}]:
        with pytest.raises(shforge.UsageError) as err:
            shforge.params_text(bad)  # type: ignore[arg-type]
        assert err.value.code == 2 and str(err.value).startswith("shforge: ")


def test_launch_argv_is_the_libraries() -> None:
    argv = shforge.launch_argv(
        "/s/process_supervisor.sh",
        "/s/receipt.json",
        ["bash", "--noprofile", "a b", "$(x)", "--", ""],
        deadline=datetime.timedelta(milliseconds=1509),
        grace=2,
        marker="-tok=1",
        cgroup="none",
    )
    # bash's own variables from the image (TMOUT, FUNCNEST, ...) are
    # cleared before bash starts: README, "What the image's environment
    # cannot change".
    cleared = ["BASH_ENV", "ENV", "SHELLOPTS", "BASHOPTS", "TMOUT", "FUNCNEST", "CDPATH",
               "BASH_COMPAT", "CHILD_MAX", "PS4", "BASH_XTRACEFD"]  # fmt: skip
    assert argv[0] == "env"
    assert argv[1 : 1 + 2 * len(cleared)] == [w for v in cleared for w in ("-u", v)]
    assert argv[1 + 2 * len(cleared) :] == [
        "bash", "--noprofile", "--norc", "/s/process_supervisor.sh",
        "--receipt", "/s/receipt.json", "--deadline", "1.50", "--grace", "2.00",
        "--marker", "-tok=1", "--cgroup", "none",
        "--", "bash", "--noprofile", "a b", "$(x)", "--", "",
    ]  # fmt: skip
    assert shforge.launch_argv("s", "r", ["x"], deadline=1e-5)[-4:] == ["--deadline", "0.00", "--", "x"]


@pytest.mark.parametrize(
    "kwargs, cli_args",
    [
        ({"marker": "a b"}, ["--marker=a b"]),
        ({"cgroup": "rel/dir"}, ["--cgroup=rel/dir"]),
        ({"max_procs": 5}, ["--max-procs=5"]),
        ({"deadline": -1.0}, ["--deadline=-1.000000000"]),
        ({"grace": float("inf")}, ["--grace=inf"]),
    ],
)
def test_launch_refusals_carry_the_cli_message(kwargs: Dict[str, Any], cli_args: List[str]) -> None:
    with pytest.raises(shforge.UsageError) as err:
        shforge.launch_argv("s", "r", ["x"], **kwargs)
    expected = cli_error("launch", "--supervisor", "s", "--receipt", "r", *cli_args, "--", "x")
    assert (err.value.code, str(err.value)) == expected
    assert expected[0] == 2


def test_launch_refuses_no_command_and_bad_seconds() -> None:
    with pytest.raises(shforge.UsageError):
        shforge.launch_argv("s", "r", [])
    with pytest.raises(shforge.UsageError):
        shforge.launch_argv("s", "", ["x"])
    with pytest.raises(shforge.UsageError, match="number of seconds"):
        shforge.launch_argv("s", "r", ["x"], deadline="5")  # type: ignore[arg-type]


def test_end_services_argv() -> None:
    argv = shforge.end_services_argv("/s/sup.sh", "/s/r.json", grace=0.5)
    assert argv[0] == "env" and ["-u", "TMOUT"] == argv[argv.index("TMOUT") - 1 : argv.index("TMOUT") + 1]
    assert argv[argv.index("bash") :] == [
        "bash", "--noprofile", "--norc", "/s/sup.sh", "--end-services", "/s/r.json", "--grace", "0.50",
    ]  # fmt: skip


def test_receipt_typed_and_strict(tmp_path: Path) -> None:
    path = tmp_path / "receipt.json"
    path.write_text(
        '{"cleanup_confirmed": true, "return_code": 143, "error": null, "timed_out": true,'
        ' "extra": 1, "containment": "cgroup",'
        ' "services": [{"pid": 12, "start_time": 3456, "argv0": "srv"}]}'
    )
    r = shforge.read_receipt(path)
    assert r == shforge.Receipt(
        cleanup_confirmed=True,
        return_code=143,
        error=None,
        timed_out=True,
        containment="cgroup",
        services=(shforge.Service(pid=12, start_time=3456, argv0="srv"),),
    )
    assert r.is_clean
    path.write_text('{"cleanup_confirmed": true, "error": null, "timed_out": false}')
    with pytest.raises(shforge.UsageError) as err:
        shforge.read_receipt(path)
    assert (err.value.code, str(err.value)) == cli_error("receipt", str(path))
    assert "return_code" in str(err.value)
    with pytest.raises(shforge.UsageError) as err:
        shforge.read_receipt(tmp_path / "absent.json")
    assert err.value.code == 2 and "absent.json" in str(err.value)


@pytest.mark.parametrize("name", ["PWD", "SHLVL", "IFS", "TMOUT", "NEMO_GYM_SUPERVISOR", "LD_PRELOAD"])
def test_api_key_env_refuses_names_the_runtime_owns(tmp_path: Path, name: str) -> None:
    with pytest.raises(shforge.UsageError) as err:
        shforge.write_session(
            "codex", tmp_path / "s", session_dir="/s", workdir="/w", entry="/e",
            base_url="http://x", model="m", prompt="p", api_key_env=name,
        )  # fmt: skip
    assert err.value.code == 2 and "--api-key-env" in str(err.value) and name in str(err.value)
    assert not (tmp_path / "s").exists()


def test_session_dir_and_its_refusals(tmp_path: Path) -> None:
    out = tmp_path / "session"
    prompt = "line 1\n$(rm -rf /) 'quoted' -leading\n" * 1000
    session = shforge.write_session(
        "codex",
        out,
        session_dir="/sandbox/session",
        workdir="/task",
        entry="/opt/codex/bin/codex",
        base_url="http://127.0.0.1:9/v1",
        model="m-{file:/etc/shadow}",
        prompt=prompt,
    )
    assert (out / "prompt.txt").read_text() == prompt
    assert session.capture == shforge.Capture(harness="codex", kind="codex", dir="/sandbox/session/codex")
    assert session.params == "/sandbox/session/params.sh"
    with pytest.raises(shforge.UsageError) as err:
        shforge.write_session(
            "codex", tmp_path / "s2", session_dir="/s", workdir="/w", entry="/e",
            base_url="http://x", model="m", prompt="p", api="chat",
        )  # fmt: skip
    assert str(err.value) == "shforge: harness codex does not support api chat (it supports: responses)"
    assert not (tmp_path / "s2").exists()
    with pytest.raises(shforge.UsageError):
        shforge.write_session(
            "codex", out, session_dir="/s", workdir="/w", entry="/e",
            base_url="http://x", model="m", prompt="p",
        )  # fmt: skip


def test_snapshot_codes(tmp_path: Path) -> None:
    (tmp_path / "sessions").mkdir()
    with pytest.raises(shforge.NoSessionDataError) as err:
        shforge.snapshot("codex", dir=tmp_path)
    assert err.value.code == 1
    with pytest.raises(shforge.UsageError) as usage:
        shforge.snapshot("codex", dir=tmp_path / "absent")
    assert usage.value.code == 2
    with pytest.raises(shforge.UsageError):
        shforge.snapshot("codex")
    # With --format in the CLI: no session data either way (1); without it,
    # clap's refusal of the option (2). Never a Python-side failure.
    has_format = b"--format" in cli("snapshot", "--help").stdout
    with pytest.raises(shforge.NoSessionDataError if has_format else shforge.UsageError):
        shforge.snapshot("codex", dir=tmp_path, format="atif")


def test_installer_from_a_spec(tmp_path: Path) -> None:
    artifact = tmp_path / "src" / "tool"
    artifact.parent.mkdir()
    artifact.write_text("#!/bin/sh\necho 'tool 1.0'\n")
    spec = tmp_path / "tool.toml"
    spec.write_text(
        'name = "tool"\nversion = "1.0"\nentry = "bin/tool"\n\n[[artifact]]\n'
        f'path = "tool"\nsha256 = "{hashlib.sha256(artifact.read_bytes()).hexdigest()}"\n'
        'unpack = "file"\narch = "any"\nlibc = "any"\nmode = "755"\ndest = "bin/tool"\n'
    )
    out = tmp_path / "install-tool.sh"
    script = shforge.installer_script(spec, out=out)
    assert script == shforge.installer_script(spec) == out.read_text()
    run = subprocess.run(
        ["bash", str(out), "--prefix", str(tmp_path / "prefix"), "--source-dir", str(artifact.parent)],
        capture_output=True,
        check=True,
    )
    entry = run.stdout.decode().splitlines()[-1]
    assert entry == str(tmp_path / "prefix" / "tool-1.0" / "bin" / "tool")
    spec.write_text(spec.read_text().replace('sha256 = "', 'sha256 = "x'))
    with pytest.raises(shforge.UsageError) as err:
        shforge.installer_script(spec)
    assert "artifact[0].sha256" in str(err.value)


def test_pin_refuses_an_unknown_harness_and_a_missing_version_writing_nothing(tmp_path: Path) -> None:
    """``shforge.pin`` is the CLI's ``pin``: an unknown harness (exit 2) raises
    UsageError, a version npm lacks (exit 3) a ShforgeError with that code;
    nothing appears under ``out``."""
    out = tmp_path / "out"
    with pytest.raises(shforge.UsageError, match="unknown harness"):
        shforge.pin("nope@0.73.0", out=out, artifacts=tmp_path / "a")
    assert not out.exists()
    if subprocess.run(["npm", "view", "@google/gemini-cli@0.61.0", "version"], capture_output=True).returncode != 0:
        pytest.skip("SKIPPING: the npm registry is unreachable")
    with pytest.raises(shforge.errors.ShforgeError, match="npm has no @google/gemini-cli@0.0.0-nope") as e:
        shforge.pin("gemini-cli@0.0.0-nope", out=out, arch=["x86_64"], artifacts=tmp_path / "a")
    assert e.value.code == 3
    assert not out.exists()


def test_pin_writes_the_specs_it_names(tmp_path: Path) -> None:
    """An earlier Gemini CLI pinned with ``out``: the paths returned exist
    and name the version (the JS pack lands in the artifact cache)."""
    cache = Path("/var/cache/shforge/artifacts")
    if subprocess.run(["npm", "view", "@google/gemini-cli@0.60.0", "version"], capture_output=True).returncode != 0:
        pytest.skip("SKIPPING: the npm registry is unreachable")
    got = shforge.pin("gemini-cli@0.60.0", out=tmp_path / "out", arch=["x86_64"], artifacts=cache)
    assert got.installer == tmp_path / "out" / "installers" / "gemini-cli.toml"
    assert got.harness == tmp_path / "out" / "harnesses" / "gemini-cli.toml"
    assert 'version = "0.60.0"' in got.installer.read_text()
    assert 'installer = "installers/gemini-cli.toml"' in got.harness.read_text()


def test_the_literal_names_are_the_shipped_specs() -> None:
    """``HarnessName``, ``SnapshotKind`` and ``Api`` list what the checkout's
    harness specs name (a harness added there is added here)."""
    import typing

    import tomllib

    root = Path(__file__).resolve().parents[2]
    specs = {p.stem: tomllib.loads(p.read_text()) for p in (root / "harnesses").glob("*.toml")}
    assert set(typing.get_args(shforge.HarnessName)) == set(specs)
    readers = {s["capture"]["reader"] for s in specs.values() if "reader" in s["capture"]}
    assert set(typing.get_args(shforge.SnapshotKind)) == readers
    apis = {a for s in specs.values() for a in s["apis"]}
    assert set(typing.get_args(shforge.Api)) == apis
