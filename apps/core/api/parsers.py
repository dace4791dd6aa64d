"""The JSON body parser every API uses: bounded size, bounded depth, clean text.

https://www.django-rest-framework.org/api-guide/parsers/#custom-parsers
"""

from __future__ import annotations

import json
from typing import IO, Any

from django.conf import settings
from rest_framework.exceptions import ParseError
from rest_framework.parsers import JSONParser
from typing_extensions import override

from apps.core.api.input import JsonTooDeep, check_json_tree
from apps.core.exceptions import PayloadTooLarge


def payload_too_large(limit: int) -> PayloadTooLarge:
    return PayloadTooLarge(
        f"The request body is larger than {limit} bytes.", details={"max_bytes": limit}
    )


def _refuse_constant(name: str) -> None:
    raise ValueError(f"{name} is not valid JSON")


class BoundedJSONParser(JSONParser):
    """JSON at most ``REQUEST_BODY_MAX_BYTES`` long and ``REQUEST_JSON_MAX_DEPTH`` deep,
    whose every key and string passes :func:`apps.core.api.input.check_json_tree`.

    Invalid JSON (including bytes that are not UTF-8, and NaN/Infinity) is 400
    ``invalid_json``; too large is 413 ``payload_too_large``; too deep 422 ``json_too_deep``;
    NUL or a lone surrogate 422 ``invalid_text``.
    """

    @override
    def parse(
        self,
        stream: IO[Any] | None,
        media_type: str | None = None,
        parser_context: Any = None,
    ) -> Any:
        if stream is None:
            raise ParseError("The request body is empty.")
        limit = settings.REQUEST_BODY_MAX_BYTES
        raw = stream.read(limit + 1)
        if len(raw) > limit:
            raise payload_too_large(limit)
        try:
            text = raw.decode("utf-8")
            data = json.loads(text, parse_constant=_refuse_constant)
        except RecursionError as exc:
            # The C decoder gives up near the interpreter's recursion limit; anything that
            # deep is far past the depth bound anyway.
            max_depth = settings.REQUEST_JSON_MAX_DEPTH
            raise JsonTooDeep(
                f"JSON nests deeper than {max_depth} levels.", details={"max_depth": max_depth}
            ) from exc
        except ValueError as exc:
            raise ParseError(f"JSON parse error - {exc}") from exc
        check_json_tree(data)
        return data
