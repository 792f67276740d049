"""``runtime.text.encodable``: what leaves the process as JSON always encodes as UTF-8."""

from __future__ import annotations

import json

from wave_ls.runtime.text import encodable


def test_a_body_without_lone_surrogates_is_handed_back_as_is() -> None:
    body = {"messages": [{"role": "user", "content": "héllo 👋"}], "tools": [{"name": "Glob"}]}
    assert encodable(body) is body


def test_a_lone_surrogate_anywhere_is_made_readable_and_only_its_branch_copied() -> None:
    kept = {"role": "system", "content": "plain"}
    body: dict[str, list[dict[str, str]]] = {
        "messages": [kept, {"role": "tool", "content": "src/caf\udce9.py"}]
    }
    out = encodable(body)
    assert out["messages"][1]["content"] == "src/caf\\xe9.py"
    assert out["messages"][0] is kept
    assert body["messages"][1]["content"] == "src/caf\udce9.py"  # the input is not changed
    json.dumps(out, ensure_ascii=False).encode("utf-8")  # encodes now


def test_values_json_cannot_hold_are_passed_through_and_strings_beside_them_fixed() -> None:
    marker = object()
    body = {"key\udcff": ["x\ud83d", marker], "tags": {1, 2}}
    out = encodable(body)
    assert out == {"key\\xff": ["x\\ud83d", marker], "tags": {1, 2}}
