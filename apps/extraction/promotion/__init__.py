"""Session promotion: compile a finished session's turns into durable long-term memories.

The pure pieces live here (turn window, fingerprint, prompt, fail-closed parser, the
heuristic extractor); the transactional pipeline is ``apps.memory.services.promotion``.
"""
