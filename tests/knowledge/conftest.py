"""Fixtures for the knowledge tests: viewers of each kind and an embeddings outage."""

from __future__ import annotations

import pytest

from apps.knowledge.viewer import Viewer
from apps.tenancy.models import ApiKeyRole


@pytest.fixture
def agent_viewer() -> Viewer:
    return Viewer.for_subject("agent-a")


@pytest.fixture
def other_agent_viewer() -> Viewer:
    return Viewer.for_subject("agent-b")


@pytest.fixture
def curator() -> Viewer:
    return Viewer(role=ApiKeyRole.USER, subject_id="user-key-1")


@pytest.fixture
def local_embeddings(settings):
    """Switch the deployment default to the bundled model, for tests about real meaning."""
    settings.EMBEDDING_PROVIDER = "local"
