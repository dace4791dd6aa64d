"""Swagger UI and ReDoc render from the deployment alone, in a real browser with no network.

The WSGI application runs as gunicorn runs it (no test static-file handler: only WhiteNoise
serves ``/static/``), behind a recording proxy that forwards requests for this server and
refuses, and records, every other one. Headless Chromium loads each page through the proxy,
with every other host name resolving to nothing, and dumps the DOM once the page has settled.
The page must list the operations, and no request may have gone anywhere else.

Chromium comes from Debian's packages (``.ci/run`` installs it); without it the test skips,
except in CI, where it fails.
"""

from __future__ import annotations

import http.client
import os
import shutil
import subprocess
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from socketserver import ThreadingMixIn
from urllib.parse import urlsplit
from wsgiref.simple_server import WSGIRequestHandler, WSGIServer, make_server

import pytest
from django.core.wsgi import get_wsgi_application
from typing_extensions import override

pytestmark = pytest.mark.browser

CHROMIUM_FLAGS = (
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-dev-shm-usage",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--disable-extensions",
    "--disable-default-apps",
    "--mute-audio",
    "--no-pings",
    "--disable-domain-reliability",
    "--disable-client-side-phishing-detection",
    "--disable-features=NetworkTimeServiceQuerying,OptimizationHints,Translate,MediaRouter,"
    "AutofillServerCommunication,CertificateTransparencyComponentUpdater",
)


#: Where Chromium itself calls home (component updates, account sign-in, network time)
#: whatever page it shows; refused like the rest, but not the page's doing.
BROWSER_OWN_HOSTS = frozenset(
    {"update.googleapis.com", "accounts.google.com", "clients2.google.com", "redirector.gvt1.com"}
)


def _host(request: str) -> str:
    method, _, target = request.partition(" ")
    if method == "CONNECT":
        return target.rsplit(":", 1)[0]
    return urlsplit(target).hostname or ""


def _chromium() -> str:
    # Debian's /usr/bin/chromium wrapper exports Google API keys, which make the browser sign in
    # to Google services by itself; the binary it wraps is run directly.
    binary = Path("/usr/lib/chromium/chromium")
    if binary.exists():
        return str(binary)
    for name in ("chromium", "chromium-browser", "google-chrome"):
        path = shutil.which(name)
        if path:
            return path
    if os.environ.get("CI"):
        pytest.fail("CI needs Chromium for the API docs check (.ci/run installs it)")
    pytest.skip("Chromium is not installed (apt-get install chromium)")


class _QuietWSGIServer(ThreadingMixIn, WSGIServer):
    daemon_threads = True


class _QuietHandler(WSGIRequestHandler):
    @override
    def log_message(self, format: str, *args: object) -> None:
        pass


@pytest.fixture(scope="module")
def app_address() -> Iterator[str]:
    server = make_server(
        "127.0.0.1",
        0,
        get_wsgi_application(),
        server_class=_QuietWSGIServer,
        handler_class=_QuietHandler,
    )
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"127.0.0.1:{server.server_port}"
    finally:
        server.shutdown()
        server.server_close()


class RecordingProxy(ThreadingHTTPServer):
    """An HTTP proxy that forwards to one address and refuses the rest, recording both."""

    daemon_threads = True

    def __init__(self, upstream: str) -> None:
        self.upstream = upstream
        self.forwarded: list[str] = []
        self.refused: list[str] = []
        self.lock = threading.Lock()
        super().__init__(("127.0.0.1", 0), _ProxyHandler)


class _ProxyHandler(BaseHTTPRequestHandler):
    server: RecordingProxy
    protocol_version = "HTTP/1.1"

    @override
    def log_message(self, format: str, *args: object) -> None:
        pass

    def _refuse(self, target: str) -> None:
        with self.server.lock:
            self.server.refused.append(target)
        self.send_response(502)
        self.send_header("Content-Length", "0")
        self.send_header("Connection", "close")
        self.end_headers()
        self.close_connection = True

    def do_CONNECT(self) -> None:
        self._refuse(f"CONNECT {self.path}")

    def _forward(self) -> None:
        target = urlsplit(self.path)
        if target.netloc != self.server.upstream:
            self._refuse(f"{self.command} {self.path}")
            return
        with self.server.lock:
            self.server.forwarded.append(f"{self.command} {target.path}")
        length = int(self.headers.get("Content-Length") or 0)
        body = self.rfile.read(length) if length else None
        headers = {
            name: value
            for name, value in self.headers.items()
            if name.lower() not in {"proxy-connection", "connection", "keep-alive"}
        }
        host, port = self.server.upstream.split(":")
        upstream = http.client.HTTPConnection(host, int(port), timeout=60)
        path = target.path + (f"?{target.query}" if target.query else "")
        upstream.request(self.command, path, body=body, headers=headers)
        response = upstream.getresponse()
        payload = response.read()
        self.send_response(response.status)
        for name, value in response.getheaders():
            if name.lower() not in {"connection", "transfer-encoding", "content-length"}:
                self.send_header(name, value)
        self.send_header("Content-Length", str(len(payload)))
        self.end_headers()
        self.wfile.write(payload)
        upstream.close()

    do_GET = _forward
    do_HEAD = _forward
    do_POST = _forward
    do_OPTIONS = _forward


@pytest.fixture
def proxy(app_address: str) -> Iterator[RecordingProxy]:
    server = RecordingProxy(app_address)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield server
    finally:
        server.shutdown()
        server.server_close()


def _rendered_dom(url: str, proxy: RecordingProxy, profile: Path) -> str:
    proxy_address = f"127.0.0.1:{proxy.server_address[1]}"
    result = subprocess.run(  # noqa: S603 - a fixed binary and arguments built here
        [
            _chromium(),
            *CHROMIUM_FLAGS,
            f"--user-data-dir={profile}",
            f"--proxy-server=http://{proxy_address}",
            # Loopback goes through the proxy too, so every request is seen.
            "--proxy-bypass-list=<-loopback>",
            # Any name the proxy might be asked to resolve, and any direct lookup, fails.
            "--host-resolver-rules=MAP * ~NOTFOUND, EXCLUDE 127.0.0.1",
            "--virtual-time-budget=30000",
            "--dump-dom",
            url,
        ],
        capture_output=True,
        text=True,
        timeout=180,
        check=False,
    )
    assert result.returncode == 0, result.stderr[-2000:]
    return result.stdout


@pytest.mark.parametrize(
    ("_case", "path", "rendered_operation"),
    [
        ("swagger_ui", "/api/docs/", 'id="operations-memory-memory_recall"'),
        ("redoc", "/api/redoc/", 'id="operation/memory_recall"'),
    ],
)
def test_the_api_docs_render_with_no_network(
    _case, path, rendered_operation, app_address, proxy, tmp_path
):
    dom = _rendered_dom(f"http://{app_address}{path}", proxy, tmp_path / "profile")

    assert rendered_operation in dom
    assert [request for request in proxy.refused if _host(request) not in BROWSER_OWN_HOSTS] == []
    assert f"GET {path}" in proxy.forwarded
    assert "GET /api/schema/" in proxy.forwarded
    assert any(
        request.startswith("GET /static/drf_spectacular_sidecar/") for request in proxy.forwarded
    )


def test_the_docs_page_points_only_at_this_deployment(client):
    page = client.get("/api/docs/").content.decode()

    assert "/static/drf_spectacular_sidecar/swagger-ui-dist/swagger-ui-bundle.js" in page
    assert "https://" not in page
    assert "cdn" not in page.lower()


def test_whitenoise_serves_the_bundles_without_a_static_handler(client):
    response = client.get("/static/drf_spectacular_sidecar/swagger-ui-dist/swagger-ui-bundle.js")

    assert response.status_code == 200
    assert response["Content-Type"].startswith("text/javascript")
