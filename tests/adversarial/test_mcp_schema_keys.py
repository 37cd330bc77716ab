"""A server's tool whose input schema names a property as the Messages API refuses to read it
(`filter[id]`, `$top`: the API takes letters, digits, `_`, `.` and `-`, at most 64). Sent, the
API answers every request with a 400, and the session can no longer talk to the model at all,
whatever the user asks. The tool is skipped with one line instead; the server's other tools stay."""

from __future__ import annotations

import re
import uuid
from pathlib import Path

from tests.adversarial.cases import case
from tests.mcp_kit import processes_with, server_command
from tests.test_mcp_client import started

API_PROPERTY_KEY = re.compile(r"[a-zA-Z0-9_.-]{1,64}")


@case("server", "a tool whose property names the API refuses is skipped, never sent to break every request")
def test_property_names_the_api_refuses(tmp_path: Path) -> None:
    marker = f"mcp-keys-test-{uuid.uuid4().hex[:8]}"
    manager, tools, warnings = started({"hostile": server_command("hostile", marker)}, tmp_path)
    try:
        definitions = tools.definitions()
        assert len(definitions) == 200  # the server's other tools are all there
        for definition in definitions:
            keys = definition["input_schema"].get("properties", {})
            assert all(API_PROPERTY_KEY.fullmatch(key) for key in keys), definition["name"]
        [line] = [line for line in warnings if "'bad_keys'" in line]
        assert "skipped" in line and "filter[id]" in line and "\n" not in line
    finally:
        manager.close()
    assert processes_with(marker) == []
