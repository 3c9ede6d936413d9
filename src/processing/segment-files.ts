import { Inject, Injectable } from '@nestjs/common';
import { segmentsPrefix, STORAGE, type Storage } from '../common/storage/storage';

/** An item's temporary segments in storage (source parts, encoded parts, audio): removed once it has ended. */
@Injectable()
export class SegmentFiles {
  constructor(@Inject(STORAGE) private readonly storage: Storage) {}

  async remove(jobId: string, index: number): Promise<void> {
    const keys: string[] = [];
    for await (const entry of this.storage.list(segmentsPrefix(jobId, index))) keys.push(entry.key);
    await this.storage.removeMany(keys);
  }
}
