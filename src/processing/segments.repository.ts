import { Injectable } from '@nestjs/common';
import { DataSource } from 'typeorm';
import { row, rows } from '../common/database/sql';
import { openItemStatuses } from '../jobs/job-lifecycle';

export interface SegmentRow {
  job_id: string;
  item_index: number;
  segment: number;
  start_seconds: string;
  duration_seconds: string;
  status: 'queued' | 'processing' | 'succeeded' | 'failed';
  worker: string | null;
  attempts: number;
  processed_seconds: string;
  source_key: string;
  encoded_key: string | null;
  audio_key: string | null;
  audio_codec: string | null;
}

export interface NewSegment {
  segment: number;
  startSeconds: number;
  durationSeconds: number;
  sourceKey: string;
  audio: { key: string; codec: string } | null;
}

/** How ending a segment went: the item ended meanwhile, it had ended already, others are open, or it was the last. */
export type SegmentEnd = 'item_not_open' | 'already_ended' | 'more_open' | 'last';

const COLUMNS = `job_id, item_index, segment, start_seconds, duration_seconds, status, worker, attempts,
  processed_seconds, source_key, encoded_key, audio_key, audio_codec`;

/**
 * The segments of long sdr2hdr items (item_segments). A segment's status is its own; the item's and the
 * job's stay with the job lifecycle. Ending a segment locks its item's row FOR UPDATE, so of the
 * segments of one item that end at once exactly one sees none left open: that one joins. (Lock order:
 * the item row only — the cancel, which locks the job then the item rows, never waits on us in a cycle.)
 */
@Injectable()
export class SegmentsRepository {
  constructor(private readonly db: DataSource) {}

  /** Records an item's segments once; a second split of the same item (a retried unit) adds nothing. */
  async record(jobId: string, index: number, segments: NewSegment[]): Promise<void> {
    for (const segment of segments) {
      await this.db.query(
        `INSERT INTO item_segments (job_id, item_index, segment, start_seconds, duration_seconds, source_key, audio_key, audio_codec)
         VALUES ($1, $2, $3, $4, $5, $6, $7, $8) ON CONFLICT DO NOTHING`,
        [
          jobId,
          index,
          segment.segment,
          segment.startSeconds,
          segment.durationSeconds,
          segment.sourceKey,
          segment.audio?.key ?? null,
          segment.audio?.codec ?? null,
        ],
      );
    }
  }

  list(jobId: string, index: number): Promise<SegmentRow[]> {
    return rows<SegmentRow>(
      this.db,
      `SELECT ${COLUMNS} FROM item_segments WHERE job_id = $1 AND item_index = $2 ORDER BY segment`,
      [jobId, index],
    );
  }

  /** Whether the item is still being processed (its job too); segments of an ended item stop. */
  async itemOpen(jobId: string, index: number): Promise<boolean> {
    const open = await row(
      this.db,
      `SELECT 1 FROM job_items i JOIN jobs j ON j.id = i.job_id
        WHERE i.job_id = $1 AND i.index = $2 AND i.status = 'processing' AND j.status = 'processing'`,
      [jobId, index],
    );
    return open !== null;
  }

  /** A worker takes a segment (again, after a worker died); null when it ended or its item did. */
  takeSegment(jobId: string, index: number, segment: number, worker: string): Promise<SegmentRow | null> {
    return row<SegmentRow>(
      this.db,
      `UPDATE item_segments s SET status = 'processing', worker = $4, attempts = s.attempts + 1, progress = 0, started_at = now()
         FROM job_items i JOIN jobs j ON j.id = i.job_id
        WHERE s.job_id = $1 AND s.item_index = $2 AND s.segment = $3 AND s.status = ANY($5)
          AND i.job_id = s.job_id AND i.index = s.item_index AND i.status = 'processing' AND j.status = 'processing'
        RETURNING ${COLUMNS.split(',')
          .map((column) => `s.${column.trim()}`)
          .join(', ')}`,
      [jobId, index, segment, worker, openItemStatuses()],
    );
  }

  /** A segment's progress; returns the item's (the duration-weighted sum of its segments', ended ones count 1). */
  async progress(jobId: string, index: number, segment: number, fraction: number): Promise<number> {
    const item = await row<{ fraction: string | null }>(
      this.db,
      `WITH updated AS (
         UPDATE item_segments SET progress = GREATEST(progress, $4)
          WHERE job_id = $1 AND item_index = $2 AND segment = $3 AND status = 'processing'
          RETURNING segment, progress)
       SELECT sum(s.duration_seconds * CASE WHEN s.status = 'succeeded' THEN 1
                                            ELSE COALESCE(u.progress, s.progress) END)
              / NULLIF(sum(s.duration_seconds), 0) AS fraction
         FROM item_segments s LEFT JOIN updated u ON u.segment = s.segment
        WHERE s.job_id = $1 AND s.item_index = $2`,
      [jobId, index, segment, fraction],
    );
    return Math.min(1, Number(item?.fraction ?? 0));
  }

  /**
   * A segment's encoded part is stored: the segment → succeeded, under its item's row lock. 'last'
   * goes to exactly one caller per item: the one whose segment was the last open one.
   */
  endSegment(
    jobId: string,
    index: number,
    segment: number,
    ended: { encodedKey: string; processedSeconds: number },
  ): Promise<SegmentEnd> {
    return this.db.transaction(async (manager): Promise<SegmentEnd> => {
      const item = await row(
        manager,
        `SELECT 1 FROM job_items WHERE job_id = $1 AND index = $2 AND status = 'processing' FOR UPDATE`,
        [jobId, index],
      );
      if (!item) return 'item_not_open';
      const written = await row(
        manager,
        `UPDATE item_segments SET status = 'succeeded', progress = 1, encoded_key = $4, processed_seconds = $5, finished_at = now()
          WHERE job_id = $1 AND item_index = $2 AND segment = $3 AND status = ANY($6)
          RETURNING 1`,
        [jobId, index, segment, ended.encodedKey, ended.processedSeconds, openItemStatuses()],
      );
      if (!written) return 'already_ended';
      const open = await row(
        manager,
        `SELECT 1 FROM item_segments WHERE job_id = $1 AND item_index = $2 AND status <> 'succeeded' LIMIT 1`,
        [jobId, index],
      );
      return open ? 'more_open' : 'last';
    });
  }

  /** A segment the media could not be encoded from (the item fails with it). */
  async failSegment(jobId: string, index: number, segment: number): Promise<void> {
    await this.db.query(
      `UPDATE item_segments SET status = 'failed' WHERE job_id = $1 AND item_index = $2 AND segment = $3
          AND status = ANY($4)`,
      [jobId, index, segment, openItemStatuses()],
    );
  }
}
