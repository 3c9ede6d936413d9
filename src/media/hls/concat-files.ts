// One file made of several, byte for byte in order: how a rung's init segment and media segments become the
// one MP4 the checks and the light pass read (a fragmented MP4 is its init segment followed by its fragments).
import { createReadStream } from 'node:fs';
import { open } from 'node:fs/promises';

/**
 * Writes `parts` one after another into `output` (created or truncated). One file handle for the whole
 * output: piping each part into one shared write stream left that stream's listeners behind per part
 * (MaxListenersExceededWarning past 10 segments).
 */
export async function concatFiles(parts: string[], output: string): Promise<void> {
  const out = await open(output, 'w');
  try {
    for (const part of parts) for await (const chunk of createReadStream(part)) await out.write(chunk as Buffer);
  } finally {
    await out.close();
  }
}
