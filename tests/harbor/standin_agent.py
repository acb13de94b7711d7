"""A stand-in agent that behaves like Harbor's own installed agents on a
timeout: it runs its work through one ``environment.exec`` and nothing else.
When Harbor's timeout cancels ``run()``, Harbor kills its local
``docker compose exec`` client and nothing inside the container is
signalled, so the process (argv[0] ``shforge-standin-agent``) is still
running when the verifier looks: the check in tests/test.sh must fail."""

from __future__ import annotations

from harbor.agents.base import BaseAgent
from harbor.environments.base import BaseEnvironment
from harbor.models.agent.context import AgentContext


class StandinAgent(BaseAgent):
    @staticmethod
    def name() -> str:
        return "shforge-standin"

    def version(self) -> str:
        return "0"

    async def setup(self, environment: BaseEnvironment) -> None:
        return None

    async def run(self, instruction: str, environment: BaseEnvironment, context: AgentContext) -> None:
        await environment.exec("exec -a shforge-standin-agent sleep 300")
