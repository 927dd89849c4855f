# catalog-bot, the GitHub App: a small non-root image. Build: `docker build -t catalog-bot .`
# (or `buildah bud`). Configure with the environment described in the README.
FROM node:20-bookworm-slim AS build
WORKDIR /app
COPY package.json package-lock.json ./
RUN npm ci --no-audit --no-fund
COPY tsconfig.json tsconfig.build.json ./
COPY src ./src
RUN npm run build && npm prune --omit=dev

FROM node:20-bookworm-slim
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
