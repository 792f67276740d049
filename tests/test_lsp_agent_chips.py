"""The `@agent` chip's data over LSP (issue 24): an agent's ``color`` reaches the chat
input's completion item and ``wave/agents/list``; a name a mention cannot hold is offered
with the form the mention parser reads back."""

from __future__ import annotations

from pathlib import Path

from tests.support.lsp import server_env, wave_client


def put(folder: Path, name: str, text: str) -> None:
    folder.mkdir(parents=True, exist_ok=True)
    (folder / f"{name}.md").write_text(text, encoding="utf-8")


async def test_color_and_mention_form_reach_the_completion_items(home: Path, project: Path) -> None:
    agents = project / ".wave" / "agents"
    put(agents, "painter", "---\nname: painter\ndescription: Paints\ncolor: cyan\n---\nb\n")
    put(agents, "plain", "---\nname: plain\ndescription: Plain\n---\nb\n")
    put(agents, "expert", "---\nname: Python Expert\ndescription: Knows Python\n---\nb\n")
    async with wave_client(server_env(home), root=project) as client:
        listed = await client.request("wave/agents/list", {"cwd": str(project)})
        colors = {a["name"]: a.get("color") for a in listed["agents"]}
        assert colors["painter"] == "cyan" and colors["plain"] is None
        result = await client.request("wave/chatInput/completion", {"text": "@"})
        items = {item["label"]: item for item in result["items"]}
        assert items["painter"]["data"] == {"color": "cyan", "path": str(agents / "painter.md")}
        assert items["plain"]["data"] == {"path": str(agents / "plain.md")}  # where it came from
        assert "data" not in items["Explore"]  # a built-in's file is not one to open
        assert items["Python Expert"]["insertText"] == "[@agent:Python-Expert]"
        typed = await client.request("wave/chatInput/completion", {"text": "@Python-Ex"})
        assert [i["label"] for i in typed["items"] if i["kind"] == 7] == ["Python Expert"]
