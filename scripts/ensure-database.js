// Creates the database named in DATABASE_URL when it does not exist yet (first run on a new machine).
const { Client } = require('pg');
const fs = require('node:fs');
if (fs.existsSync('.env') && process.env.NODE_ENV !== 'test') process.loadEnvFile('.env');

async function main() {
  const url = new URL(process.env.DATABASE_URL || 'postgres://postgres@127.0.0.1:5432/mediajobs');
  const name = decodeURIComponent(url.pathname.slice(1));
  const admin = new URL(url);
  admin.pathname = '/postgres';
  const client = new Client({ connectionString: admin.toString() });
  await client.connect();
  const { rowCount } = await client.query('SELECT 1 FROM pg_database WHERE datname = $1', [name]);
  if (!rowCount) {
    await client.query(`CREATE DATABASE "${name.replace(/"/g, '""')}"`);
    console.log(`created database ${name}`);
  }
  await client.end();
}

main().catch((error) => {
  console.error(`Could not reach PostgreSQL to create the database: ${error.message}`);
  console.error('Is PostgreSQL running? On a laptop: docker compose up -d postgres redis');
  process.exit(1);
});
