#!/bin/sh
# Runs once, at the primary's initdb (the image's /docker-entrypoint-initdb.d): let the standby
# stream from it. `engram` is the image's superuser, so it holds the replication privilege.
set -e
echo "host replication all all scram-sha-256" >> "$PGDATA/pg_hba.conf"
