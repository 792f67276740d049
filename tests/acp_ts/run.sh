#!/usr/bin/env bash
# The TypeScript SDK's client against `wave-ls acp` (tests/acp_ts/scenario.test.mjs).
# Installs the locked npm packages, then runs node's test runner; WAVE_PYTHON is the
# Python with wave-ls installed (default: the repository's .venv). Any failure, the set-up
# included, fails the run.
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
export WAVE_PYTHON="${WAVE_PYTHON:-$here/../../.venv/bin/python}"
cd "$here"
npm ci --no-audit --no-fund --loglevel=error
node --test --test-concurrency=1 scenario.test.mjs
