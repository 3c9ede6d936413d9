import type { MigrationInterface, QueryRunner } from 'typeorm';

// Segment-parallel encoding (SEGMENT_SECONDS): a long sdr2hdr item is split at keyframes into segments,
// each its own unit of queue work (src/common/queues.ts, PROCESS_SEGMENT). One row per segment: where
// it starts and how long it is in the source, its status (queued → processing → succeeded | failed),
// the worker that ran it, how often it was taken, its progress (the item's is the duration-weighted
// sum), the storage keys of its source part and encoded part, and (on every row of the item, the same)
// where the source's audio waits for the join and its codec. The transaction that ends the last
// segment (item row locked FOR UPDATE) tells its worker to join. created_at/started_at/finished_at
// time the split (the job's start → created_at), each encode, and the join (last finished_at → the job's end).
export class ItemSegments1765250000000 implements MigrationInterface {
  name = 'ItemSegments1765250000000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`
      CREATE TABLE item_segments (
        job_id text NOT NULL,
        item_index integer NOT NULL,
        segment integer NOT NULL CHECK (segment >= 0),
        start_seconds numeric NOT NULL,
        duration_seconds numeric NOT NULL CHECK (duration_seconds > 0),
        status text NOT NULL DEFAULT 'queued' CHECK (status IN ('queued', 'processing', 'succeeded', 'failed')),
        worker text,
        attempts integer NOT NULL DEFAULT 0,
        progress real NOT NULL DEFAULT 0 CHECK (progress >= 0 AND progress <= 1),
        processed_seconds numeric NOT NULL DEFAULT 0,
        source_key text NOT NULL,
        encoded_key text,
        audio_key text,
        audio_codec text,
        created_at timestamptz NOT NULL DEFAULT now(),
        started_at timestamptz,
        finished_at timestamptz,
        PRIMARY KEY (job_id, item_index, segment),
        FOREIGN KEY (job_id, item_index) REFERENCES job_items (job_id, index) ON DELETE CASCADE
      )`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`DROP TABLE item_segments`);
  }
}
