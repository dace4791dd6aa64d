"""Engram from Python in a dozen lines.

ENGRAM_API_URL=http://127.0.0.1:8000 ENGRAM_API_KEY=... python quickstart.py
"""

from __future__ import annotations

from engram_client import Engram, EngramError


def main() -> None:
    with Engram() as engram:
        me = engram.whoami()
        print(f"acting as {me.subject_id} in {me.tenant_slug}")

        memory = engram.remember("The staging database runs PostgreSQL 18.", tags=["infra"])
        print("remembered", memory.id, memory.embedding_status)

        for hit in engram.recall("which postgres version is staging on?", limit=3).hits:
            print(f"{hit.score}  {hit.memory.text}")

        merged = engram.recall_context("how do we deploy staging?")
        for item in merged.items:
            print(item.source, item.rank, item.text or item.title)

        engram.session_append("demo-session", "Let's use blue-green deploys.", role="user")
        print("promotion:", engram.promote("demo-session").reason)

        try:
            engram.forget(memory.id)
            engram.forget(memory.id)
        except EngramError as error:
            print("second forget:", error.status, error.code)


if __name__ == "__main__":
    main()
