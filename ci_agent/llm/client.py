"""The seam between the conversation loop and the model service.

A request is a Messages API body and a response is the Messages API JSON, both plain dicts, so
the loop can be driven by any implementation and `--dry-run` can print exactly what would go
out. The only real implementation is `anthropic_client.AnthropicClient`.
"""

from __future__ import annotations

from typing import Any, Protocol


class ModelClient(Protocol):
    def create(self, request: dict[str, Any]) -> dict[str, Any]:
        """Send one Messages API request; return the response message as JSON.

        Raises `ModelServiceError` for anything that is not a usable response.
        """
        ...
