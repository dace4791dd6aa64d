"""The MCP server and the stop hook reach Engram through the Python client only."""

import ast
from pathlib import Path

import apps.mcp

HTTP_MODULES = {"httpx", "requests", "urllib", "http", "aiohttp", "socket"}
MCP_DIR = Path(apps.mcp.__file__).parent


def _imported_roots(path: Path) -> set[str]:
    roots = set()
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.Import):
            roots |= {alias.name.split(".")[0] for alias in node.names}
        elif isinstance(node, ast.ImportFrom) and node.module:
            roots.add(node.module.split(".")[0])
    return roots


def test_no_mcp_module_imports_an_http_library_or_names_an_api_path():
    modules = sorted(MCP_DIR.glob("*.py"))
    offenders = {
        path.name: sorted(_imported_roots(path) & HTTP_MODULES)
        for path in modules
        if _imported_roots(path) & HTTP_MODULES
    }
    paths = [path.name for path in modules if "/api/v1" in path.read_text()]

    assert {path.name for path in modules} >= {"server.py", "tools.py", "stop_hook.py"}
    assert offenders == {}
    assert paths == []
    assert all(
        "engram_client" in _imported_roots(MCP_DIR / name)
        for name in ("tools.py", "stop_hook.py", "server.py")
    )
