-- The data-growth benchmark's tables (bench/growth.ts): years of an account base, written by SQL alone.
-- Run by bench/lib/growth-seed.ts on a database the repository's migrations made, with its scale in
-- settings: growth.jobs (jobs over 400 days) and growth.accounts. Every row is one the service could have
-- written (real ids, enum values, holds and ledger rows as src/billing/holds.ts writes them), derived
-- from the row's number alone, so two seeds of one scale hold the same rows.
--
-- Shape: three large accounts hold 20 %, 15 % and 10 % of the jobs; the rest are spread over the other
-- accounts with a cubic skew (a few thousand accounts with thousands of jobs, most with a handful).
-- Every tenth job has three items, the rest one. The newest jobs (about ten minutes' worth) are still open.
-- Ledger: a grant per account; per job an authorise, then a capture of its charge and a release of the
-- rest (holds.ts writes only the non-zero ones); the per-day usage (account_usage_days) they add up to.
-- Events: one per ended job (outbox), and a delivery per subscribed endpoint (the three large accounts
-- have three endpoints, the next 30 % of accounts one).
-- Running balances in the ledger's balance_after/reserved_after are plausible, not replayed.
\timing on
SET session_replication_role = replica; -- no per-row foreign-key triggers: the rows are consistent by construction
SET maintenance_work_mem = '512MB';
SET synchronous_commit = off;

DROP SCHEMA IF EXISTS growth_seed CASCADE;
CREATE SCHEMA growth_seed;

SET work_mem = '256MB';

-- Ids as src/common/ids.ts makes them: 9 base62 characters of milliseconds, then 14 characters (here the
-- row's number in hex, which keeps them unique; hex digits are base62 digits). The time part comes from
-- a table of every 3-character base62 string: per-row function calls would make the seed take hours.
CREATE FUNCTION growth_seed.c(x bigint) RETURNS text LANGUAGE sql IMMUTABLE PARALLEL SAFE AS
$$ SELECT substr('0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz', (x % 62)::int + 1, 1) $$;
CREATE UNLOGGED TABLE growth_seed.b3 AS
  SELECT v::int AS v, growth_seed.c(v / 3844) || growth_seed.c(v / 62) || growth_seed.c(v) AS s FROM generate_series(0, 238327) v;
ALTER TABLE growth_seed.b3 ADD PRIMARY KEY (v);
CREATE UNLOGGED TABLE growth_seed.b1 AS SELECT v::int AS v, growth_seed.c(v) AS s FROM generate_series(0, 61) v;
ALTER TABLE growth_seed.b1 ADD PRIMARY KEY (v);
-- One time part (9 characters) per distinct millisecond value: ms < 62^7, so it starts with "00".
CREATE FUNCTION growth_seed.time9(ms bigint) RETURNS text LANGUAGE sql STABLE PARALLEL SAFE AS $$
  SELECT '00' || (SELECT s FROM growth_seed.b1 WHERE v = (ms / 56800235584)::int)
              || (SELECT s FROM growth_seed.b3 WHERE v = ((ms / 238328) % 238328)::int)
              || (SELECT s FROM growth_seed.b3 WHERE v = (ms % 238328)::int) $$;
CREATE FUNCTION growth_seed.ms(at timestamptz) RETURNS bigint LANGUAGE sql IMMUTABLE PARALLEL SAFE AS
$$ SELECT (extract(epoch FROM at) * 1000)::bigint $$;
CREATE FUNCTION growth_seed.tail(n bigint) RETURNS text LANGUAGE sql IMMUTABLE PARALLEL SAFE AS
$$ SELECT lpad(to_hex(n), 14, '0') $$;
-- A uniform number in [0, 1) from a row number and a salt.
CREATE FUNCTION growth_seed.u(n bigint, salt bigint) RETURNS double precision LANGUAGE sql IMMUTABLE PARALLEL SAFE AS
$$ SELECT (((n * 2654435761 + salt * 40503) # ((n + salt) * 2246822519)) % 4294967296)::double precision / 4294967296 $$;

CREATE TABLE growth_seed.params AS
  SELECT current_setting('growth.jobs')::bigint AS jobs,
         current_setting('growth.accounts')::bigint AS accounts,
         date_trunc('minute', now()) AS anchor;

CREATE UNLOGGED TABLE growth_seed.accounts AS
  SELECT n, at, 'acct_' || growth_seed.time9(growth_seed.ms(at)) || growth_seed.tail(n) AS id, growth_seed.time9(growth_seed.ms(at)) AS t
    FROM growth_seed.params p, generate_series(1, p.accounts) n,
         LATERAL (SELECT timestamptz '2025-01-01 00:00:00+00' + make_interval(secs => n * 60) AS at) a;
ALTER TABLE growth_seed.accounts ADD PRIMARY KEY (n);

-- Everything about job number j that more than one table needs, computed once; the time parts by
-- joins on the tables of base62 strings (hash joins: no per-row function calls).
CREATE UNLOGGED TABLE growth_seed.base AS
  SELECT j, acct, created_at, items, api, estimated, status, finished_at,
         CASE status WHEN 'succeeded' THEN estimated WHEN 'partially_succeeded' THEN estimated / 3 ELSE 0 END AS charged,
         growth_seed.ms(created_at) AS cms, growth_seed.ms(finished_at) AS fms
    FROM (
      SELECT j, acct, created_at, items, api, estimated, status,
             CASE WHEN status IN ('queued', 'processing') THEN NULL ELSE created_at + make_interval(secs => 20 + j % 90) END AS finished_at
        FROM (
          SELECT j, created_at, items, api, estimated,
                 CASE WHEN a < 0.20 THEN 1 WHEN a < 0.35 THEN 2 WHEN a < 0.45 THEN 3
                      ELSE 4 + floor((p.accounts - 4) * power((a - 0.45) / 0.55, 3))::bigint END AS acct,
                 CASE WHEN j > p.jobs - greatest(6, p.jobs / 57600) THEN (CASE WHEN j % 2 = 0 THEN 'queued' ELSE 'processing' END)
                      WHEN s < 0.90 THEN 'succeeded'
                      WHEN s < 0.95 THEN 'failed'
                      WHEN s < 0.98 THEN 'cancelled'
                      WHEN items > 1 THEN 'partially_succeeded'
                      ELSE 'succeeded' END AS status
            FROM growth_seed.params p, generate_series(1, p.jobs) j,
                 LATERAL (SELECT growth_seed.u(j, 1) AS a, growth_seed.u(j, 2) AS s,
                                 p.anchor - make_interval(secs => ((p.jobs - j) * 34560000.0 / p.jobs)::double precision) AS created_at,
                                 CASE WHEN j % 10 = 0 THEN 3 ELSE 1 END AS items,
                                 CASE WHEN j % 7 = 0 THEN 'audio' ELSE 'sdr2hdr' END AS api,
                                 (20 + j % 180)::bigint * (CASE WHEN j % 10 = 0 THEN 3 ELSE 1 END) AS estimated) r
        ) x
    ) y;
CREATE UNLOGGED TABLE growth_seed.jobs AS
  SELECT b.j, b.acct, b.created_at, b.items, b.api, b.estimated, b.status, b.finished_at, b.charged,
         a.id AS account_id, a.t AS account_t,
         '00' || ch.s || cm.s || cl.s AS tc,
         CASE WHEN b.fms IS NOT NULL THEN '00' || fh.s || fm.s || fl.s END AS tf,
         'job_00' || ch.s || cm.s || cl.s || growth_seed.tail(b.j) AS id
    FROM growth_seed.base b
    JOIN growth_seed.accounts a ON a.n = b.acct
    JOIN growth_seed.b1 ch ON ch.v = (b.cms / 56800235584)::int
    JOIN growth_seed.b3 cm ON cm.v = ((b.cms / 238328) % 238328)::int
    JOIN growth_seed.b3 cl ON cl.v = (b.cms % 238328)::int
    LEFT JOIN growth_seed.b1 fh ON fh.v = (b.fms / 56800235584)::int
    LEFT JOIN growth_seed.b3 fm ON fm.v = ((b.fms / 238328) % 238328)::int
    LEFT JOIN growth_seed.b3 fl ON fl.v = (b.fms % 238328)::int
   ORDER BY b.j;
DROP TABLE growth_seed.base;

-- Bulk loading is far faster with the secondary indexes built once afterwards (as they would be by
-- CREATE INDEX): their definitions are kept here, dropped, and recreated at the end.
CREATE TABLE growth_seed.saved_indexes AS
  SELECT i.indexrelid::regclass::text AS name, pg_get_indexdef(i.indexrelid) AS def
    FROM pg_index i JOIN pg_class t ON t.oid = i.indrelid
   WHERE t.relname IN ('jobs', 'job_items', 'credit_ledger', 'outbox_events', 'webhook_deliveries', 'assets')
     AND t.relnamespace = 'public'::regnamespace
     AND NOT EXISTS (SELECT 1 FROM pg_constraint c WHERE c.conindid = i.indexrelid);
CREATE TABLE growth_seed.saved_constraints AS
  SELECT c.conrelid::regclass::text AS tbl, c.conname AS name, pg_get_constraintdef(c.oid) AS def
    FROM pg_constraint c JOIN pg_class t ON t.oid = c.conrelid
   WHERE t.relname IN ('outbox_events') AND t.relnamespace = 'public'::regnamespace AND c.contype = 'u';
DO $$ DECLARE r record; BEGIN
  FOR r IN SELECT name FROM growth_seed.saved_indexes LOOP EXECUTE format('DROP INDEX %s', r.name); END LOOP;
  FOR r IN SELECT tbl, name FROM growth_seed.saved_constraints LOOP
    EXECUTE format('ALTER TABLE %s DROP CONSTRAINT %I', r.tbl, r.name);
  END LOOP;
END $$;

\echo accounts
INSERT INTO accounts (id, name, plan_id, balance_credits, reserved_credits, created_at, updated_at)
  SELECT id, 'Growth account ' || n,
         CASE WHEN n <= 10 THEN 'enterprise' WHEN n <= 2000 THEN 'pro' WHEN n <= 30000 THEN 'starter' ELSE 'free' END,
         1000000000000, 0, at, at
    FROM growth_seed.accounts;
INSERT INTO members (id, account_id, email, role, created_at, invited_at)
  SELECT 'mem_' || t || growth_seed.tail(n), id, 'owner-' || n || '@growth.example', 'owner', at, at
    FROM growth_seed.accounts;
INSERT INTO webhook_endpoints (id, account_id, url, events, secret, created_at)
  SELECT 'we_' || t || growth_seed.tail(n * 4 + e), id,
         'https://hooks.example.com/' || n || '/' || e, '{job.succeeded,job.partially_succeeded,job.failed,job.cancelled}',
         'whsec_growth' || n || 'x' || e, at
    FROM growth_seed.params p, growth_seed.accounts, generate_series(1, 3) e
   WHERE (n <= 3) OR (e = 1 AND n <= p.accounts * 3 / 10);
INSERT INTO licenses (id, account_id, key_hash, key_prefix, max_devices, expires_at, created_at)
  SELECT 'lic_' || t || growth_seed.tail(n), id, sha256(('growth-license-' || n)::bytea), 'mjl_' || to_hex(n), 3,
         p.anchor + interval '365 days', at
    FROM growth_seed.params p, growth_seed.accounts WHERE n <= p.accounts / 10;
INSERT INTO license_activations (id, license_id, device_id, device_name, first_seen_at, last_seen_at, deactivated_at)
  SELECT 'act_' || t || growth_seed.tail(n * 4 + d), 'lic_' || t || growth_seed.tail(n),
         'device-' || n || '-' || d, 'Workstation ' || d, at, p.anchor - make_interval(hours => d),
         CASE WHEN d = 3 THEN p.anchor - interval '30 days' END
    FROM growth_seed.params p, growth_seed.accounts, generate_series(1, 3) d WHERE n <= p.accounts / 10;
INSERT INTO credit_ledger (id, account_id, kind, credits, job_id, reason, balance_after, reserved_after, created_at)
  SELECT 'led_' || t || growth_seed.tail(n * 4), id, 'grant', 1000000000000, NULL, 'opening balance', 1000000000000, 0, at
    FROM growth_seed.accounts;

\echo jobs
INSERT INTO jobs (id, account_id, api, status, region, output_options, metadata, estimated_credits, charged_credits,
                  billing_state, estimated_seconds, processed_seconds, error, progress, request_id, attempts,
                  created_at, started_at, finished_at, heartbeat_at)
  SELECT id, account_id, api, status, 'growth',
         CASE api WHEN 'audio' THEN '{"target_lufs": -16, "container": "wav"}'::jsonb
              ELSE '{"resolution": "source", "peak_nits": 1000, "container": "mp4", "quality": "balanced", "mapping": "reference", "transfer": "pq"}'::jsonb END,
         CASE WHEN j % 3 = 0 THEN jsonb_build_object('order', 'ord-' || j) ELSE '{}'::jsonb END,
         estimated, charged,
         CASE WHEN status IN ('queued', 'processing') THEN 'authorised'
              WHEN status IN ('succeeded', 'partially_succeeded') THEN 'settled' ELSE 'released' END,
         30 * items, CASE WHEN finished_at IS NULL THEN 0 ELSE 30 * items END,
         CASE status WHEN 'failed' THEN jsonb_build_object('type', 'processing_error', 'code', 'processing_failed',
                       'message', 'The media could not be processed.', 'param', NULL, 'request_id', 'req_' || tc || growth_seed.tail(j),
                       'doc_url', 'https://docs.example.com/errors#processing_failed', 'retryable', false) END,
         CASE WHEN finished_at IS NULL THEN 0 ELSE 1 END,
         'req_' || tc || growth_seed.tail(j), CASE WHEN status = 'queued' THEN 0 ELSE 1 END,
         created_at, CASE WHEN status = 'queued' THEN NULL ELSE created_at + interval '2 seconds' END, finished_at,
         CASE WHEN status = 'processing' THEN created_at + interval '10 seconds' END
    FROM growth_seed.jobs;

\echo job_items
INSERT INTO job_items (job_id, index, status, source, duration_seconds, width, height, estimated_credits, charged_credits,
                       processed_seconds, output, error, worker, attempts, progress, checks)
  SELECT id, i, item_status, jsonb_build_object('type', 'url', 'url', 'https://media.example.com/' || j || '/' || i || '.mp4'),
         30, CASE WHEN api = 'sdr2hdr' THEN 1920 END, CASE WHEN api = 'sdr2hdr' THEN 1080 END,
         estimated / items, CASE WHEN item_status = 'succeeded' THEN estimated / items ELSE 0 END,
         CASE WHEN item_status IN ('succeeded', 'failed') THEN 30 ELSE 0 END,
         CASE WHEN item_status = 'succeeded' THEN jsonb_build_object(
           'asset_id', 'ast_' || tf || growth_seed.tail(j * 4 + i), 'size_bytes', 10485760 + j % 100000,
           'container', CASE api WHEN 'audio' THEN 'wav' ELSE 'mp4' END) END,
         CASE WHEN item_status = 'failed' THEN jsonb_build_object('type', 'processing_error', 'code', 'processing_failed',
           'message', 'The media could not be processed.', 'param', NULL, 'request_id', 'req_' || tc || growth_seed.tail(j),
           'doc_url', 'https://docs.example.com/errors#processing_failed', 'retryable', false) END,
         CASE WHEN item_status <> 'queued' THEN 'wkr_growth' || (j % 16) END,
         CASE WHEN item_status = 'queued' THEN 0 ELSE 1 END,
         CASE WHEN item_status IN ('succeeded', 'failed') THEN 1 ELSE 0 END, '[]'::jsonb
    FROM growth_seed.jobs,
         LATERAL (SELECT i, CASE status WHEN 'partially_succeeded' THEN (CASE WHEN i = 0 THEN 'succeeded' ELSE 'failed' END)
                                        ELSE status END AS item_status
                    FROM generate_series(0, items - 1) i) it;

\echo assets
-- Outputs of the last 45 days' jobs: the older half already swept (deleted_at set), as the retention purge leaves them.
INSERT INTO assets (id, account_id, job_id, item_index, storage_key, size_bytes, container, content_type, created_at, expires_at, deleted_at)
  SELECT 'ast_' || tf || growth_seed.tail(j * 4 + i), account_id, id, i,
         'outputs/' || id || '/' || i || CASE api WHEN 'audio' THEN '.wav' ELSE '.mp4' END, 10485760 + j % 100000,
         CASE api WHEN 'audio' THEN 'wav' ELSE 'mp4' END, CASE api WHEN 'audio' THEN 'audio/wav' ELSE 'video/mp4' END,
         finished_at, finished_at + interval '30 days',
         CASE WHEN finished_at + interval '30 days' <= p.anchor THEN finished_at + interval '30 days 1 hour' END
    FROM growth_seed.params p, growth_seed.jobs f,
         LATERAL generate_series(0, CASE WHEN f.status = 'partially_succeeded' THEN 0 ELSE f.items - 1 END) i
   WHERE f.status IN ('succeeded', 'partially_succeeded') AND f.created_at > p.anchor - interval '45 days';

\echo credit_ledger
INSERT INTO credit_ledger (id, account_id, kind, credits, job_id, reason, balance_after, reserved_after, created_at)
  SELECT 'led_' || t || growth_seed.tail(j * 4 + m), account_id, kind, credits, id, NULL,
         1000000000000 - (j % 1000000), CASE kind WHEN 'authorise' THEN estimated ELSE 0 END, at
    FROM growth_seed.jobs,
         LATERAL (VALUES (1, 'authorise', estimated, created_at, tc),
                         (2, 'capture', charged, finished_at, tf),
                         (3, 'release', estimated - charged, finished_at, tf)) m(m, kind, credits, at, t)
   WHERE at IS NOT NULL AND (m = 1 OR credits > 0);

\echo account_usage_days
-- What the service keeps beside the ledger and the jobs (src/billing/usage-days.ts), for every day: captures
-- by the ledger row's day, jobs by their creation day at their estimate while open, their processed time
-- once ended. (A database seeded before this table was filled by its migration's backfill, for the days
-- the reads ask for: the same rows there, so the seed's version stays.)
INSERT INTO account_usage_days (account_id, day, captured_credits, processing_seconds)
  SELECT account_id, day, SUM(captured), SUM(seconds)
    FROM (SELECT account_id, (created_at AT TIME ZONE 'UTC')::date AS day, credits AS captured, 0 AS seconds
            FROM credit_ledger WHERE kind = 'capture'
          UNION ALL
          SELECT account_id, (created_at AT TIME ZONE 'UTC')::date, 0,
                 CASE WHEN status IN ('queued', 'processing') THEN estimated_seconds ELSE processed_seconds END
            FROM jobs) used
   GROUP BY account_id, day;

\echo outbox_events
INSERT INTO outbox_events (id, account_id, job_id, event, payload, created_at, dispatched_at)
  SELECT evt, account_id, id, 'job.' || status,
         jsonb_build_object('id', evt, 'event', 'job.' || status, 'created_at', finished_at,
           'data', jsonb_build_object('job', jsonb_build_object('job_id', id, 'items', jsonb_build_array(jsonb_build_object(
             'index', 0, 'status', CASE status WHEN 'partially_succeeded' THEN 'succeeded' ELSE status END,
             'charged_credits', charged / items, 'output', NULL, 'checks', '[]'::jsonb))), 'error', NULL)),
         finished_at, finished_at + interval '50 milliseconds'
    FROM growth_seed.jobs, LATERAL (SELECT 'evt_' || tf || growth_seed.tail(j) AS evt) e
   WHERE finished_at IS NOT NULL;

\echo webhook_deliveries
INSERT INTO webhook_deliveries (id, event_id, endpoint_id, origin, state, attempts, next_attempt_at, created_at, finished_at)
  SELECT 'dlv_' || tf || growth_seed.tail(j * 4 + e), 'evt_' || tf || growth_seed.tail(j),
         'we_' || account_t || growth_seed.tail(acct * 4 + e), 'outbox',
         CASE WHEN j % 500 = 0 THEN 'failed' ELSE 'delivered' END, CASE WHEN j % 500 = 0 THEN 8 ELSE 1 END, NULL,
         finished_at, finished_at + interval '300 milliseconds'
    FROM growth_seed.params p, growth_seed.jobs, generate_series(1, 3) e
   WHERE finished_at IS NOT NULL AND ((acct <= 3) OR (e = 1 AND acct <= p.accounts * 3 / 10));

\echo open holds and open jobs
UPDATE accounts a SET reserved_credits = h.held, open_jobs = h.open
  FROM (SELECT account_id, sum(estimated_credits) AS held,
               count(*) FILTER (WHERE status IN ('queued', 'processing')) AS open
          FROM jobs WHERE billing_state = 'authorised' GROUP BY account_id) h
 WHERE a.id = h.account_id;

\echo indexes
DO $$ DECLARE r record; BEGIN
  FOR r IN SELECT def FROM growth_seed.saved_indexes LOOP EXECUTE r.def; END LOOP;
  FOR r IN SELECT tbl, name, def FROM growth_seed.saved_constraints LOOP
    EXECUTE format('ALTER TABLE %s ADD CONSTRAINT %I %s', r.tbl, r.name, r.def);
  END LOOP;
END $$;
SET session_replication_role = origin;
DROP SCHEMA growth_seed CASCADE;
VACUUM (ANALYZE);
