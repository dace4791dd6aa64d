"""One module per embedding provider; ``apps.providers.embeddings`` is the public entry point."""
