"""Any OpenAI-compatible ``/embeddings`` endpoint: OpenAI itself, Ollama, vLLM, llama.cpp, TEI."""

from __future__ import annotations

from collections.abc import Sequence

import openai

from apps.providers.clients import OPENAI_DEFAULT_EMBEDDING_MODEL, openai_client, rejection_for


class OpenAICompatibleEmbedder:
    def __init__(self, *, base_url: str, api_key: str, model: str, dimensions: int) -> None:
        self._base_url = base_url
        self._api_key = api_key
        self._model = model or OPENAI_DEFAULT_EMBEDDING_MODEL
        self.dimensions = dimensions

    def embed(self, texts: Sequence[str]) -> list[list[float]]:
        client = openai_client(base_url=self._base_url, api_key=self._api_key)
        try:
            response = client.embeddings.create(
                model=self._model,
                input=list(texts),
                dimensions=self.dimensions,
                encoding_format="float",
            )
        except openai.APIStatusError as exc:
            rejection = rejection_for(status_code=exc.status_code, error=exc)
            if rejection is None:
                raise
            raise rejection from exc
        # The API documents ``index``; some compatible servers return items out of order.
        items = sorted(response.data, key=lambda item: item.index)
        return [list(item.embedding) for item in items]

    # A hosted model's queries cost the same as any text; there is nothing cheaper to call.
    embed_queries = embed
