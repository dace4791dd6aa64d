"""Django's PostgreSQL backend, with a health check that costs no round trip, and the
embedded server started on the first connection.

Without DATABASE_URL an alias names the embedded cluster (``EMBEDDED_POSTGRES``: its data dir
and database) instead of a host: the first connection of a process starts or joins it and
fills in the socket and port (apps/core/embedded_postgres.py).

With ``CONN_HEALTH_CHECKS`` Django checks a kept connection before a request's first query,
and the stock check is a ``SELECT 1``: a round trip per request and per database alias, a
measurable share of a recall over HTTP (docs/benchmarks/locomo.md, "No health-check round
trip").
Between requests a healthy connection is idle with nothing to read: the server only speaks
when asked, and psycopg reads every answer to its end. A server that restarted or ended the
session (``pg_terminate_backend``, an idle timeout, a failover) has sent its last message and
closed the socket, which is then readable.
So a connection that is not closed, not broken and has nothing waiting on its socket is
usable; one that does is closed here and Django opens a new one. A rare asynchronous message
(a ``ParameterStatus`` after a configuration reload) only costs a reconnect.
"""

from __future__ import annotations

import select
from typing import Any

from django.db.backends.postgresql import base
from typing_extensions import override

from apps.core.embedded_postgres import embedded_server


class DatabaseWrapper(base.DatabaseWrapper):
    @override
    def get_connection_params(self) -> dict[str, Any]:
        embedded = self.settings_dict.get("EMBEDDED_POSTGRES")
        if embedded is not None and not self.settings_dict.get("HOST"):
            server = embedded_server(embedded["PGDATA"], database=embedded["DATABASE"])
            self.settings_dict["HOST"] = server.socket_dir
            self.settings_dict["PORT"] = str(server.port)
        params: dict[str, Any] = super().get_connection_params()
        return params

    @override
    def is_usable(self) -> bool:
        connection = self.connection
        if connection is None or connection.closed or connection.broken:
            return False
        try:
            waiting, _, _ = select.select([connection.fileno()], [], [], 0)
        except (OSError, ValueError):
            return False
        return not waiting
