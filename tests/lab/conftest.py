"""Fixtures for the lab's tests, shared with the app suites they measure."""

from tests.knowledge.conftest import local_embeddings

__all__ = ["local_embeddings"]
