# catalog-bot, the GitHub App: a small non-root image. Build: `docker build -t catalog-bot .`
# (or `buildah bud`). Configure with the environment described in the README.
#
# NODE_IMAGE: the Node.js base image (Node 22 LTS or 24 LTS, Debian with apt). The default
# is Docker Hub's tag; for builds that must not depend on a registry you do not control,
# or change when it retags, pass your mirror's copy pinned by digest (README, "Container
# image"):
#   docker build --build-arg NODE_IMAGE=registry.example.internal/node@sha256:<digest> .
ARG NODE_IMAGE=docker.io/library/node:22-bookworm-slim
FROM ${NODE_IMAGE} AS build
WORKDIR /app
COPY package.json package-lock.json ./
RUN npm ci --no-audit --no-fund
COPY tsconfig.json tsconfig.build.json ./
COPY src ./src
RUN npm run build && npm prune --omit=dev

FROM ${NODE_IMAGE}
# git reads the catalogs from the repository mirrors; nothing else is needed at run time.
RUN apt-get update && apt-get install -y --no-install-recommends git ca-certificates \
    && rm -rf /var/lib/apt/lists/*
WORKDIR /app
COPY --from=build /app/package.json ./
COPY --from=build /app/node_modules ./node_modules
COPY --from=build /app/dist ./dist
ENV NODE_ENV=production \
    PORT=3000 \
    CATALOG_BOT_WORKDIR=/var/lib/catalog-bot
RUN mkdir -p /var/lib/catalog-bot && chown node:node /var/lib/catalog-bot
USER node
EXPOSE 3000
# SIGTERM lets running jobs finish (see README); node is PID 1 only through this exec form.
ENTRYPOINT ["node", "dist/server.js"]
