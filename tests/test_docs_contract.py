"""The repository's docs stand on their own (issue 28 point 9): `docs/protocol.md` is the
whole contract (every method and update kind the server has), nothing points at specs
outside the repository, the offline model's page starts with a script it writes, and the
licence the extension's manifest names is there."""

from __future__ import annotations

import json
import re
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
DOCS = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]
# A spec ID of the reference specs (WT-5, FAIL-1..3, PLAN-RO-3); UTF-8 and the like are not.
SPEC_ID = re.compile(r"\b(?!UTF-)(?:[A-Z]+-)+\d+\b")


def test_no_doc_points_outside_the_repository() -> None:
    for doc in DOCS:
        text = doc.read_text(encoding="utf-8")
        for outside in ("shared/spec", "PROTOCOL.md", "SPEC.md", "SPEC section", "SPEC §"):
            assert outside not in text, f"{doc.name} names {outside}"
        assert not SPEC_ID.findall(text), f"{doc.name}: {SPEC_ID.findall(text)}"


def test_protocol_page_names_every_method_and_update_kind() -> None:
    source = "\n".join(p.read_text() for p in (ROOT / "wave_ls" / "server").glob("*.py"))
    page = (ROOT / "docs" / "protocol.md").read_text(encoding="utf-8")
    methods = set(re.findall(r'"(wave/[a-zA-Z]+/[a-zA-Z]+)"', source))
    assert {"wave/session/new", "wave/mcp/list", "wave/session/compact"} <= methods
    assert [m for m in sorted(methods) if f"`{m}" not in page] == []
    kinds = set(re.findall(r'"kind": "([a-zA-Z]+)"', source))
    assert "toolBlock" in kinds
    assert [k for k in sorted(kinds) if f"| `{k}` |" not in page] == []
    for section in ("## Launch and configuration", "## Model-facing names", "## The command line"):
        assert section in page


def test_the_offline_model_page_starts_with_a_script_it_writes() -> None:
    page = (ROOT / "docs" / "fake-model.md").read_text(encoding="utf-8")
    first_block = page.split("```sh\n", 1)[1].split("```", 1)[0]
    written = re.search(r"echo '(.+)' > (\S+\.json)", first_block)
    assert written, first_block
    assert f"--script {written.group(2)}" in first_block
    assert json.loads(written.group(1))["routes"]


def test_the_licence_is_there() -> None:
    manifest = json.loads((ROOT / "vscode-extension" / "package.json").read_text())
    licence = (ROOT / "LICENSE").read_text()
    assert manifest["license"] == "MIT" and licence.startswith("MIT License")
    assert "wave-ls contributors" in licence
