import os
from typing import Any

from django.core.management.base import CommandParser
from typing_extensions import override

from apps.core.management.base import CommandFailed, EngramCommand
from apps.tenancy.management.commands._common import tenant_arg
from apps.tenancy.services import (
    tenant_configure_embedding_provider,
    tenant_configure_llm_provider,
)


class Command(EngramCommand):
    help = (
        "Configure a tenant's embedding or LLM provider. The API key is read from the "
        "environment variable named by --api-key-env so it never lands in shell history."
    )

    @override
    def add_command_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("--tenant", required=True, help="Tenant slug or id.")
        parser.add_argument(
            "--kind",
            required=True,
            choices=["embedding", "llm"],
            help="embedding: vectors for memories and articles; llm: the promotion compiler.",
        )
        parser.add_argument(
            "--provider",
            required=True,
            help="embedding: local | openai (any OpenAI-compatible /embeddings endpoint); "
            "llm: heuristic | openai | anthropic.",
        )
        parser.add_argument("--model", default="", help="The provider's model name.")
        parser.add_argument(
            "--base-url", default="", help="The provider's API base URL (default: its own)."
        )
        parser.add_argument(
            "--dimensions",
            type=int,
            help="Ask the model for vectors this long; must equal EMBEDDING_DIMENSIONS.",
        )
        parser.add_argument("--api-key-env", default="", help="Name of an env var holding the key.")

    @override
    def handle(self, *args: Any, **options: Any) -> None:
        tenant = tenant_arg(options["tenant"])
        api_key = ""
        if options["api_key_env"]:
            api_key = os.environ.get(options["api_key_env"], "")
            if not api_key:
                raise CommandFailed(
                    "empty_api_key_env", f"Environment variable {options['api_key_env']} is empty."
                )
        config: dict[str, Any] = {
            key: value
            for key, value in {
                "model": options["model"],
                "base_url": options["base_url"],
                "dimensions": options["dimensions"],
            }.items()
            if value
        }
        if options["kind"] == "embedding":
            tenant_configure_embedding_provider(
                tenant=tenant, provider=options["provider"], config=config, api_key=api_key
            )
        else:
            tenant_configure_llm_provider(
                tenant=tenant, provider=options["provider"], config=config, api_key=api_key
            )
        data = {
            "tenant": tenant.slug,
            "kind": options["kind"],
            "provider": options["provider"],
            "config": config,
            "api_key_set": bool(api_key),
        }
        self.render(options, data, f"Configured {options['kind']} provider for {tenant.slug}")
