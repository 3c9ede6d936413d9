import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { cllOffsets, writeAv1SegmentLightLevels } from './av1-light';

/** One OBU with its size field (sizes here are < 128: one leb128 byte). */
const obu = (type: number, payload: number[]) => [(type << 3) | 0b10, payload.length, ...payload];
const box = (type: string, payload: Buffer) => {
  const head = Buffer.alloc(8);
  head.writeUInt32BE(8 + payload.length);
  head.write(type, 4, 'latin1');
  return Buffer.concat([head, payload]);
};

// A keyframe's temporal unit as SVT-AV1 writes it: sequence header, MDCV and CLL metadata, then a frame whose
// data happens to hold the CLL OBU's own bytes (which must be left alone).
const unit = [
  ...obu(1, [0x00, 0x00, 0x00, 0x4c]),
  ...obu(5, [0x02, ...new Array<number>(24).fill(0x11), 0x80]),
  ...obu(5, [0x01, 0x03, 0xe8, 0x03, 0xe8, 0x80]),
  ...obu(6, [0x2a, 0x06, 0x01, 0x03, 0xe8, 0x03, 0xe8, 0x80, 0x55]),
];

describe('AV1 content light metadata OBUs', () => {
  it('finds each HDR_CLL payload by walking the OBUs, never a look-alike inside frame data', () => {
    const buffer = Buffer.from([...unit, ...unit]);
    const cll = 6 + 28 + 3; // after the sequence header OBU, the MDCV OBU, and the CLL OBU's header, size and type
    expect(cllOffsets(buffer, 0, buffer.length)).toEqual([cll, unit.length + cll]);
  });

  it('refuses a run it cannot walk: an OBU without its size field, or one past its box', () => {
    expect(() => cllOffsets(Buffer.from([0x30, 0x00]), 0, 2)).toThrow(/no size field/);
    expect(() => cllOffsets(Buffer.from(obu(6, [1, 2, 3])), 0, 4)).toThrow(/past its box/);
  });

  it('rewrites the levels in every mdat of a segment in place, leaving the moof and the frame alone', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'av1-light-'));
    try {
      const moof = box('moof', Buffer.from([0x2a, 0x06, 0x01, 0x03, 0xe8, 0x03, 0xe8, 0x80]));
      const segment = Buffer.concat([moof, box('mdat', Buffer.from(unit)), moof, box('mdat', Buffer.from(unit))]);
      const path = join(dir, 'seg-00000.m4s');
      await writeFile(path, segment);
      expect(await writeAv1SegmentLightLevels(path, { maxCll: 203, maxFall: 100 })).toBe(2);
      const written = await readFile(path);
      expect(written.length).toBe(segment.length);
      const expected = Buffer.from(segment);
      for (const mdat of [moof.length + 8, 2 * moof.length + 8 + unit.length + 8])
        Buffer.from([0x00, 203, 0x00, 100]).copy(expected, mdat + 37);
      expect(written).toEqual(expected);
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });
});
