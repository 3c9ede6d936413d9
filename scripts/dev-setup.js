// First-run setup for `npm run dev`: writes the secrets a local run needs into `.env` (gitignored).
// Adds only what is missing, never changes a value already there, and leaves alone any variable the
// environment itself sets (real environment variables win over `.env` at start-up).
// Plain Node, no dependencies: it runs before anything else is set up.
'use strict';

const crypto = require('node:crypto');
const fs = require('node:fs');
const path = require('node:path');

const ENV_FILE = path.resolve(process.cwd(), '.env');

/** 256 random bits, URL-safe base64 (43 characters): nothing to quote or escape in `.env`. */
const randomSecret = () => crypto.randomBytes(32).toString('base64url');

/** An Ed25519 private key as base64 of its PKCS#8 DER, on one line. */
function ed25519PrivateKey() {
  const { privateKey } = crypto.generateKeyPairSync('ed25519');
  return privateKey.export({ format: 'der', type: 'pkcs8' }).toString('base64');
}

const GENERATED = [
  ['ADMIN_TOKEN', 'operator token: send it as X-Admin-Token to /v1/admin/*', randomSecret],
  ['ASSET_URL_SECRET', 'signs the expiring download links of outputs', randomSecret],
  ['METRICS_TOKEN', 'bearer token Prometheus sends to /metrics (API and workers)', randomSecret],
  ['LICENSE_SIGNING_KEY', 'Ed25519 private key (base64 PKCS#8 DER) that signs licence tokens', ed25519PrivateKey],
];

/** Names defined in an existing `.env` (KEY=value or export KEY=value). */
function definedNames(text) {
  const names = new Set();
  for (const line of text.split(/\r?\n/)) {
    const match = /^\s*(?:export\s+)?([A-Za-z_][A-Za-z0-9_]*)\s*=/.exec(line);
    if (match) names.add(match[1]);
  }
  return names;
}

function main() {
  const existing = fs.existsSync(ENV_FILE) ? fs.readFileSync(ENV_FILE, 'utf8') : '';
  const defined = definedNames(existing);
  const lines = [];
  for (const [name, purpose, generate] of GENERATED) {
    if (defined.has(name)) continue;
    if (process.env[name]) {
      console.log(`dev-setup: ${name} comes from the environment; not writing one to .env`);
      continue;
    }
    lines.push(`# ${purpose}`, `${name}=${generate()}`);
  }

  if (lines.length) {
    const header = existing ? '' : '# Local settings for `npm run dev`, written by scripts/dev-setup.js. Keep this file out of git.\n';
    const separator = existing && !existing.endsWith('\n') ? '\n' : '';
    fs.writeFileSync(ENV_FILE, `${existing}${separator}${header}${lines.join('\n')}\n`, { mode: 0o600 });
    const written = lines.filter((line) => !line.startsWith('#')).map((line) => line.split('=')[0]);
    console.log(`dev-setup: wrote ${written.join(', ')} to ${ENV_FILE}`);
  } else {
    console.log(`dev-setup: ${ENV_FILE} already has every generated setting; nothing changed`);
  }

  const adminInFile = definedNames(fs.existsSync(ENV_FILE) ? fs.readFileSync(ENV_FILE, 'utf8') : '').has('ADMIN_TOKEN');
  const where = process.env.ADMIN_TOKEN ? 'the ADMIN_TOKEN environment variable' : adminInFile ? `ADMIN_TOKEN in ${ENV_FILE}` : null;
  if (where) {
    console.log(`dev-setup: the operator token is ${where} (header X-Admin-Token on /v1/admin/*; npm run admin reads .env too)`);
  }
}

try {
  main();
} catch (error) {
  console.error(`dev-setup: could not prepare ${ENV_FILE}: ${error.message}`);
  process.exit(1);
}
