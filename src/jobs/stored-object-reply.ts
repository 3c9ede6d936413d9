// One stored object as an HTTP answer, whole (200) or a single byte range (206, 416 when it cannot be
// served): the asset links and the playback routes both answer this way, each with its own lookup,
// content type and caching.
import type { FastifyReply, FastifyRequest } from 'fastify';
import { ApiError } from '../common/errors';
import type { Storage } from '../common/storage/storage';

/**
 * Parses a single `bytes=` range: null when there is none to honour, 'invalid' when it cannot be
 * served (416). RFC 9110 §14.2: a Range in a unit the server does not understand is ignored (the
 * whole body, 200), and a server may ignore a multi-range request rather than send multipart.
 */
export function parseRange(
  header: string | undefined,
  size: number,
): { start: number; end: number } | null | 'invalid' {
  if (!header) return null;
  const unit = /^\s*([^=\s]+)\s*=/.exec(header);
  if (!unit || unit[1].toLowerCase() !== 'bytes') return null;
  const spec = header.slice(unit[0].length).trim();
  if (spec.includes(',')) return null;
  const match = /^(\d*)-(\d*)$/.exec(spec);
  if (!match || (match[1] === '' && match[2] === '')) return 'invalid';
  let start: number;
  let end: number;
  if (match[1] === '') {
    start = Math.max(0, size - Number(match[2]));
    end = size - 1;
  } else {
    start = Number(match[1]);
    end = match[2] === '' ? size - 1 : Math.min(Number(match[2]), size - 1);
  }
  if (start > end || start >= size) return 'invalid';
  return { start, end };
}

/**
 * Streams `key` (of `size` bytes) from storage into `reply`, honouring the request's Range; `missing` is
 * thrown when the object is gone from the store. `cacheControl`, when given, is sent as it is.
 */
export async function sendStoredObject(
  storage: Storage,
  key: string,
  size: number,
  request: FastifyRequest,
  reply: FastifyReply,
  answer: { contentType: string; missing: ApiError; cacheControl?: string },
): Promise<void> {
  const range = parseRange(request.headers.range, size);
  if (range === 'invalid') {
    throw new ApiError('range_not_satisfiable', { param: 'Range', headers: { 'Content-Range': `bytes */${size}` } });
  }
  const body = await storage.read(key, range ?? undefined);
  if (!body) throw answer.missing;
  void reply.header('Accept-Ranges', 'bytes').header('Content-Type', answer.contentType);
  if (answer.cacheControl) void reply.header('Cache-Control', answer.cacheControl);
  if (range) {
    void reply
      .status(206)
      .header('Content-Range', `bytes ${range.start}-${range.end}/${size}`)
      .header('Content-Length', String(range.end - range.start + 1));
    return reply.send(body);
  }
  void reply.status(200).header('Content-Length', String(size));
  return reply.send(body);
}
