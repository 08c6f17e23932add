# syntax=docker/dockerfile:1
# One image for all five services; the command picks the service:
#   docker run moniro node services/<gateway|agent-runner|tool-executor|scheduler|signal-bridge>/dist/main.js
# (each service's dist/main.js is its esbuild bundle: services/bundle.mjs).
# Services read MONIRO_* variables (docs/configuration.md, docs/deployment.md).

ARG NODE_IMAGE=node:20-slim

# ---- build: install with dev dependencies, compile, then drop dev dependencies
FROM ${NODE_IMAGE} AS build
WORKDIR /app
ENV npm_config_update_notifier=false npm_config_fund=false npm_config_audit=false

# Manifests first, so `npm ci` is cached until a dependency changes.
COPY package.json package-lock.json tsconfig.base.json tsconfig.json ./
COPY libs/api/package.json libs/api/
COPY libs/bus/package.json libs/bus/
COPY libs/cli/package.json libs/cli/
COPY libs/client/package.json libs/client/
COPY libs/config/package.json libs/config/
COPY libs/envelopes/package.json libs/envelopes/
COPY libs/llm/package.json libs/llm/
COPY libs/ports/package.json libs/ports/
COPY libs/registry/package.json libs/registry/
COPY libs/store/package.json libs/store/
COPY libs/telemetry/package.json libs/telemetry/
COPY libs/tool-catalog/package.json libs/tool-catalog/
COPY services/agent-runner/package.json services/agent-runner/
COPY services/gateway/package.json services/gateway/
COPY services/scheduler/package.json services/scheduler/
COPY services/signal-bridge/package.json services/signal-bridge/
COPY services/tool-executor/package.json services/tool-executor/
RUN npm ci --ignore-scripts

COPY libs libs
COPY services services
# Only the runtime's projects (and what they reference), not test/ or bench/.
# The moniro CLI is also bundled into libs/cli/dist/moniro.js, and each service into its dist/main.js
# (services/bundle.mjs; esbuild, a dev dependency: before the prune).
RUN npx tsc --build libs/cli services/gateway services/agent-runner services/tool-executor services/scheduler services/signal-bridge \
 && npm run --silent build:cli \
 && npm run --silent build:services \
 && npm prune --omit=dev --ignore-scripts \
 && find libs services -maxdepth 2 \( -name src -o -name '*.tsbuildinfo' -o -name 'tsconfig.json' \) -exec rm -rf {} +

# ---- runtime: compiled JavaScript and production dependencies only
FROM ${NODE_IMAGE} AS runtime
# NODE_OPTIONS: SERVICE_NODE_FLAGS of libs/config/src/node-flags.ts (test/deploy checks they agree).
ENV NODE_ENV=production \
    NODE_OPTIONS="--max-semi-space-size=2 --v8-pool-size=1" \
    MONIRO_HTTP_HOST=0.0.0.0 \
    MONIRO_AGENTS_DIR=/etc/moniro/agents \
    MONIRO_WORKSPACES_DIR=/data/workspaces
WORKDIR /app
COPY --from=build /app/package.json /app/package-lock.json ./
COPY --from=build /app/node_modules node_modules
COPY --from=build /app/libs libs
COPY --from=build /app/services services
# tini as PID 1: it reaps orphaned processes (exec's sandboxed commands and their
# children re-parent to PID 1; node does not reap them, so they would pile up as zombies).
# bubblewrap: the tool-executor runs every exec command inside it (no network, its own
# PID namespace and /proc, read-only system); without it the executor refuses exec.
# Its container needs the settings in docs/deployment.md ("The exec sandbox in a container").
RUN apt-get update \
 && apt-get install -y --no-install-recommends tini bubblewrap \
 && rm -rf /var/lib/apt/lists/* \
 && mkdir -p /etc/moniro/agents /data/workspaces && chown -R node:node /data
USER node
# gateway API; health/metrics ports of the other services (see docs/deployment.md)
EXPOSE 8080 9101 9102 9103 9104
# The command (CMD; Kubernetes 'args', compose 'command') picks the service; tini stays in front.
ENTRYPOINT ["/usr/bin/tini", "--"]
CMD ["node", "services/gateway/dist/main.js"]
