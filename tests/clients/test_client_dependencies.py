"""The client needs httpx and pydantic only: the adapters' frameworks load with their modules."""

import subprocess
import sys

PROBE = """
import sys
import engram_client
loaded = sorted(name for name in ("langgraph", "agents", "openai") if name in sys.modules)
print(",".join(loaded))
import engram_client.langgraph, engram_client.openai_agents
print(",".join(sorted(name for name in ("langgraph", "agents") if name in sys.modules)))
"""


def test_importing_the_client_loads_no_framework():
    result = subprocess.run(  # noqa: S603 - this interpreter, a fixed script
        [sys.executable, "-c", PROBE], capture_output=True, text=True, check=True, timeout=120
    )

    assert result.stdout.splitlines() == ["", "agents,langgraph"]
