"""The floor of issue 39's agent-setup target, as a Harbor agent: its
``setup()`` uploads the same artifacts a fresh shforge install of the
harness uploads and unpacks each with ``tar -x`` in one exec, through the
same ``environment`` calls (``upload_file``, ``exec``); ``run()`` does
nothing. ``SHFORGE_FLOOR_FILES`` names the artifacts (``:``-separated host
paths). Used by ``bench_setup.py`` only."""

from __future__ import annotations

import os
import shlex
from pathlib import Path

from harbor.agents.base import BaseAgent
from harbor.environments.base import BaseEnvironment
from harbor.models.agent.context import AgentContext

DEST = "/tmp/shforge-floor"


class UploadTarFloor(BaseAgent):
    @staticmethod
    def name() -> str:
        return "shforge-floor"

    def version(self) -> str:
        return "0"

    async def setup(self, environment: BaseEnvironment) -> None:
        files = [Path(p) for p in os.environ["SHFORGE_FLOOR_FILES"].split(":") if p]
        for f in files:
            await environment.upload_file(f, f"{DEST}/{f.name}")
        untar = " && ".join(
            f"mkdir -p {shlex.quote(f'{DEST}/x/{f.name}')} && tar -xzf {shlex.quote(f'{DEST}/{f.name}')} "
            f"-C {shlex.quote(f'{DEST}/x/{f.name}')}"
            for f in files
        )
        r = await environment.exec(untar)
        if r.return_code != 0:
            raise RuntimeError(f"floor: tar -x failed: {r.stdout}")

    async def run(self, instruction: str, environment: BaseEnvironment, context: AgentContext) -> None:
        return None
