"""OpenAPI: publish each :class:`KnowledgeChoiceField` as its own named enum component.

Imported by ``KnowledgeConfig.ready`` so drf-spectacular registers the extension.
"""

from __future__ import annotations

from typing import Any

from drf_spectacular.extensions import OpenApiSerializerFieldExtension
from drf_spectacular.openapi import AutoSchema
from drf_spectacular.plumbing import ResolvedComponent
from typing_extensions import override

from apps.knowledge.apis.fields import KnowledgeChoiceField


class KnowledgeChoiceFieldExtension(OpenApiSerializerFieldExtension):
    target_class = "apps.knowledge.apis.fields.KnowledgeChoiceField"
    match_subclasses = True

    @override
    def map_serializer_field(self, auto_schema: AutoSchema, direction: Any) -> Any:
        field = self.target
        assert isinstance(field, KnowledgeChoiceField)  # noqa: S101 - target_class guarantees it
        component = ResolvedComponent(
            name=field.enum_name,
            type=ResolvedComponent.SCHEMA,
            object=field.enum_name,
            schema={"type": "string", "enum": list(field.enum_values)},
        )
        auto_schema.registry.register_on_missing(component)
        return component.ref
