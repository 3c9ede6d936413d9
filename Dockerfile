# syntax=docker/dockerfile:1
# One image for every mediajobs process: `npm run start:api`, `npm run start:worker`,
# `npm run migration:run` and `npm run admin -- …` (docker-compose.yml picks the command).

# --- build: all dependencies, compile TypeScript, then drop the dev dependencies -------------------
FROM node:20-bookworm-slim AS build
WORKDIR /app
COPY package.json package-lock.json ./
# The dashboard workspace's manifest, so npm ci installs what builds it (the app is built here).
COPY dashboard/package.json ./dashboard/
# onnxruntime-node's postinstall would download the CUDA provider (we run Silero VAD on its bundled CPU
# binary): package.json's allowScripts denies it for npm 11; this is the package's own switch for the npm
# that node:20 ships, which does not read allowScripts.
RUN ONNXRUNTIME_NODE_INSTALL=skip npm ci --no-audit --no-fund
COPY tsconfig.json tsconfig.build.json ./
COPY src ./src
COPY migrations ./migrations
COPY dashboard ./dashboard
RUN npm run build && npm prune --omit=dev --no-audit --no-fund

# --- runtime: Node, ffmpeg/ffprobe and mediainfo, the compiled code and production dependencies ---
FROM node:20-bookworm-slim AS runtime
RUN apt-get update \
  && apt-get install -y --no-install-recommends ffmpeg mediainfo util-linux \
  && rm -rf /var/lib/apt/lists/*
ENV NODE_ENV=production \
    STORAGE_DIR=/var/lib/mediajobs/storage
WORKDIR /app
COPY --from=build /app/package.json /app/package-lock.json ./
COPY --from=build /app/node_modules ./node_modules
COPY --from=build /app/dist ./dist
# The built dashboard the API serves under /dashboard (DASHBOARD_DIR defaults to ./dashboard/dist).
COPY --from=build /app/dashboard/dist ./dashboard/dist
COPY scripts ./scripts
# Owned by the unprivileged user, so a fresh named volume mounted here is writable too.
RUN mkdir -p "$STORAGE_DIR" && chown node:node "$STORAGE_DIR"
USER node
EXPOSE 3000
CMD ["npm", "run", "start:api"]
