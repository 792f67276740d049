"""``wave-ls fake-model``: serve the offline, scriptable model until killed.

The first line on stdout is ``listening on http://127.0.0.1:PORT/v1``; give that URL to
clients as ``OPENAI_BASE_URL``. Scripts can be replaced at runtime with ``POST /_script``.
"""

from __future__ import annotations

import argparse
import sys


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--host", default="127.0.0.1", help="address to bind (default 127.0.0.1)")
    parser.add_argument(
        "--port", type=int, default=0, help="port to bind (default 0: pick a free one)"
    )
    parser.add_argument("--script", metavar="FILE", help="JSON script (see docs/fake-model.md)")


def run(args: argparse.Namespace) -> int:
    import json
    import threading

    from wave_ls.fake_model import FakeModelServer, ScriptError

    script = None
    if args.script:
        try:
            with open(args.script, encoding="utf-8") as handle:
                script = json.load(handle)
        except (OSError, json.JSONDecodeError) as error:
            print(f"wave-ls fake-model: cannot read script {args.script}: {error}", file=sys.stderr)
            return 2
    try:
        server = FakeModelServer(script, host=args.host, port=args.port)
        url = server.start()
    except ScriptError as error:
        print(f"wave-ls fake-model: invalid script {args.script}: {error}", file=sys.stderr)
        return 2
    except OSError as error:
        print(
            f"wave-ls fake-model: cannot listen on {args.host}:{args.port}: {error}",
            file=sys.stderr,
        )
        return 1
    print(f"listening on {url}", flush=True)
    try:
        threading.Event().wait()
    except KeyboardInterrupt:
        pass
    finally:
        server.stop()
    return 0
