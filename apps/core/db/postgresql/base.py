"""Django's PostgreSQL backend, with a health check that costs no round trip.

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

from django.db.backends.postgresql import base
from typing_extensions import override


class DatabaseWrapper(base.DatabaseWrapper):
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
