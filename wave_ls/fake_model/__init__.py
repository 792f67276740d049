"""The offline, scriptable model: an OpenAI Chat Completions server for tests and demos.

See ``docs/fake-model.md`` for the script format and the routing rules.
"""

from __future__ import annotations

from wave_ls.fake_model.script import Script, ScriptError, choose_step, parse_script
from wave_ls.fake_model.server import FakeModelServer

__all__ = ["FakeModelServer", "Script", "ScriptError", "choose_step", "parse_script"]
