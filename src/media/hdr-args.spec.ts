// Exact argv of the SDR → HDR encode, built from frozen ffprobe outputs of real files
// (test/fixtures/probe/*.json, made by regenerate.sh there).
import { HEAD, LOCAL_INPUT, frozenProbe } from '../../test/fixtures/probe/frozen';
import { DEFAULT_HDR_ENCODE } from './encoder-settings';
import { buildHdrFilter, buildSdrToHdrArgs, buildX265Params } from './hdr-args';
import type { VideoStreamInfo } from './media.types';

const HDR_ENCODE = [
  '-c:v',
  'libx265',
  '-preset',
  'veryfast',
  '-crf',
  '12',
  '-profile:v',
  'main10',
  '-pix_fmt',
  'yuv420p10le',
  '-tag:v',
  'hvc1',
  '-color_primaries',
  'bt2020',
  '-color_trc',
  'smpte2084',
  '-colorspace',
  'bt2020nc',
  '-color_range',
  'tv',
];
const X265_PARAMS_1000 =
  'hdr10=1:hdr10-opt=1:repeat-headers=1:colorprim=bt2020:transfer=smpte2084:colormatrix=bt2020nc:range=limited:' +
  'master-display=G(13250,34500)B(7500,3000)R(34000,16000)WP(15635,16450)L(10000000,1):max-cll=249,203:log-level=error:info=0';
const BT709_TO_PQ =
  'zscale=tin=bt709:pin=bt709:min=bt709:rin=tv:t=smpte2084:p=bt2020:m=bt2020nc:r=tv:npl=203,format=yuv420p10le';

describe('buildSdrToHdrArgs', () => {
  it('builds the docs/media.md recipe for a tagged BT.709 H.264+AAC MP4 with the defaults', () => {
    const args = buildSdrToHdrArgs({
      ...DEFAULT_HDR_ENCODE,
      input: '/data/in/sdr.mp4',
      output: '/data/out/hdr.mp4',
      probe: frozenProbe('sdr-320x180-aac.mp4'),
      container: 'mp4',
    });
    expect(args).toEqual([
      ...HEAD,
      ...LOCAL_INPUT('/data/in/sdr.mp4'),
      '-map',
      '0:0',
      '-map',
      '0:1',
      '-vf',
      BT709_TO_PQ,
      ...HDR_ENCODE,
      '-x265-params',
      X265_PARAMS_1000,
      '-c:a',
      'copy',
      '-movflags',
      '+faststart',
      '-f',
      'mp4',
      '/data/out/hdr.mp4',
    ]);
  });

  it('reads an untagged input as BT.709 limited range (zscale needs explicit input colorimetry)', () => {
    const probe = frozenProbe('untagged-320x180.mp4');
    expect(probe.video).toMatchObject({
      colorPrimaries: null,
      colorTransfer: null,
      colorSpace: null,
      colorRange: null,
    });
    const args = buildSdrToHdrArgs({
      ...DEFAULT_HDR_ENCODE,
      input: '/in.mp4',
      output: '/out.mp4',
      probe,
      container: 'mp4',
    });
    expect(args[args.indexOf('-vf') + 1]).toBe(BT709_TO_PQ);
  });

  it('downscales 1080p to 720p in the same zscale step, writes MOV, and derives ST 2086 max luminance from peak_nits', () => {
    const args = buildSdrToHdrArgs({
      ...DEFAULT_HDR_ENCODE,
      input: '/in/1080.mp4',
      output: '/out/720.mov',
      probe: frozenProbe('sdr-1920x1080-aac.mp4'),
      targetHeight: 720,
      peakNits: 4000,
      container: 'mov',
      preset: 'medium',
      crf: 16,
    });
    expect(args).toEqual([
      ...HEAD,
      ...LOCAL_INPUT('/in/1080.mp4'),
      '-map',
      '0:0',
      '-map',
      '0:1',
      '-vf',
      'zscale=w=1280:h=720:tin=bt709:pin=bt709:min=bt709:rin=tv:t=smpte2084:p=bt2020:m=bt2020nc:r=tv:npl=203,format=yuv420p10le',
      '-c:v',
      'libx265',
      '-preset',
      'medium',
      '-crf',
      '16',
      ...HDR_ENCODE.slice(6),
      '-x265-params',
      X265_PARAMS_1000.replace('L(10000000,1)', 'L(40000000,1)'),
      '-c:a',
      'copy',
      '-movflags',
      '+faststart',
      '-f',
      'mov',
      '/out/720.mov',
    ]);
  });

  it('treats the requested lines as the short side for portrait video, and writes no audio when there is none', () => {
    const args = buildSdrToHdrArgs({
      ...DEFAULT_HDR_ENCODE,
      input: '/in/portrait.mp4',
      output: '/out/portrait.mp4',
      probe: frozenProbe('sdr-portrait-1080x1920.mp4'),
      targetHeight: 720,
      container: 'mp4',
    });
    expect(args[args.indexOf('-vf') + 1]).toMatch(/^zscale=w=720:h=1280:/);
    expect(args).toContain('-an');
    expect(args).not.toContain('-c:a');
    expect(args.filter((a) => a === '-map')).toHaveLength(1);
  });

  it('never upscales: a 720p request on a 180p source keeps the source size', () => {
    const args = buildSdrToHdrArgs({
      ...DEFAULT_HDR_ENCODE,
      input: '/in.mp4',
      output: '/out.mp4',
      probe: frozenProbe('sdr-320x180-aac.mp4'),
      targetHeight: 720,
      container: 'mp4',
    });
    expect(args[args.indexOf('-vf') + 1]).toBe(BT709_TO_PQ);
  });

  it('re-encodes non-AAC audio (PCM in MOV) to AAC', () => {
    const probe = frozenProbe('sdr-pcm.mov');
    expect(probe.container).toBe('mov');
    const args = buildSdrToHdrArgs({
      ...DEFAULT_HDR_ENCODE,
      input: '/in.mov',
      output: '/out.mov',
      probe,
      container: 'mov',
    });
    expect(args.slice(args.indexOf('-c:a'), args.indexOf('-c:a') + 4)).toEqual(['-c:a', 'aac', '-b:a', '192k']);
  });

  it('keeps MaxCLL at or below the mastering peak', () => {
    const args = buildSdrToHdrArgs({
      ...DEFAULT_HDR_ENCODE,
      input: '/in.mp4',
      output: '/out.mp4',
      probe: frozenProbe('sdr-320x180-aac.mp4'),
      peakNits: 203,
      container: 'mp4',
    });
    expect(args[args.indexOf('-x265-params') + 1]).toContain('L(2030000,1):max-cll=203,203:');
  });

  it("keeps a confined worker's encoder on its CPUs: no NUMA pools (they re-pin to the whole node), a frame per CPU", () => {
    const params = (confinedCpus?: number) => {
      const args = buildSdrToHdrArgs({
        ...DEFAULT_HDR_ENCODE,
        input: '/in.mp4',
        output: '/out.mp4',
        probe: frozenProbe('sdr-320x180-aac.mp4'),
        container: 'mp4',
        confinedCpus,
      });
      return args[args.indexOf('-x265-params') + 1];
    };
    expect(params()).toBe(X265_PARAMS_1000);
    expect(params(1)).toBe(`${X265_PARAMS_1000}:pools=none:frame-threads=1`);
    expect(params(3)).toBe(`${X265_PARAMS_1000}:pools=none:frame-threads=3`);
    expect(params(64)).toBe(`${X265_PARAMS_1000}:pools=none:frame-threads=16`);
    expect(() => params(0)).toThrow(RangeError);
    expect(() => params(1.5)).toThrow(RangeError);
  });

  it('reads a URL input with only network protocols and a read timeout', () => {
    const args = buildSdrToHdrArgs({
      ...DEFAULT_HDR_ENCODE,
      input: 'http://127.0.0.1:4000/source?sig=abc',
      output: '/out.mp4',
      probe: frozenProbe('sdr-320x180-aac.mp4'),
      container: 'mp4',
      rwTimeoutUs: 5_000_000,
    });
    expect(args.slice(8, 16)).toEqual([
      '-protocol_whitelist',
      'http,https,tcp,tls',
      '-rw_timeout',
      '5000000',
      '-format_whitelist',
      'mov,wav',
      '-i',
      'http://127.0.0.1:4000/source?sig=abc',
    ]);
  });

  it('refuses values that would make a wrong or unsafe command', () => {
    const probe = frozenProbe('sdr-320x180-aac.mp4');
    const base = { ...DEFAULT_HDR_ENCODE, input: '/in.mp4', output: '/out.mp4', probe, container: 'mp4' as const };
    expect(() => buildSdrToHdrArgs({ ...base, peakNits: 100 })).toThrow(RangeError);
    expect(() => buildSdrToHdrArgs({ ...base, peakNits: 10001 })).toThrow(RangeError);
    expect(() => buildSdrToHdrArgs({ ...base, crf: 52 })).toThrow(RangeError);
    expect(() => buildSdrToHdrArgs({ ...base, targetHeight: 721 })).toThrow(RangeError);
    expect(() => buildSdrToHdrArgs({ ...base, input: 'relative.mp4' })).toThrow(/absolute/);
    expect(() => buildSdrToHdrArgs({ ...base, output: '-f' })).toThrow(/absolute/);
    expect(() => buildSdrToHdrArgs({ ...base, probe: frozenProbe('tone-44k.m4a', 'audio') })).toThrow(/no video/);
  });
});

describe('buildHdrFilter', () => {
  const REFERENCE_PQ = { mapping: 'reference', transfer: 'pq' } as const;
  const video: VideoStreamInfo = {
    index: 0,
    codec: 'h264',
    width: 720,
    height: 576,
    fps: 25,
    colorPrimaries: 'bt470bg',
    colorTransfer: 'smpte170m',
    colorSpace: 'bt470bg',
    colorRange: 'pc',
    pixFmt: 'yuvj420p',
  };

  it('passes the probed colorimetry to zscale', () => {
    expect(buildHdrFilter(video, null, REFERENCE_PQ)).toBe(
      'zscale=tin=smpte170m:pin=bt470bg:min=bt470bg:rin=pc:t=smpte2084:p=bt2020:m=bt2020nc:r=tv:npl=203,format=yuv420p10le',
    );
  });

  it('rounds odd source sides down to even (4:2:0) without a downscale', () => {
    expect(buildHdrFilter({ ...video, width: 721, height: 577 }, null, REFERENCE_PQ)).toMatch(
      /^zscale=w=720:h=576:tin=/,
    );
  });

  it('falls back to BT.709 for tags zscale cannot read', () => {
    expect(
      buildHdrFilter({ ...video, colorTransfer: 'smpte240m', colorSpace: 'smpte240m' }, null, REFERENCE_PQ),
    ).toContain('tin=bt709:pin=bt470bg:min=bt709:rin=pc');
  });

  it("reference with HLG: through the mapping LUT (zimg's HLG applies the OOTF per channel: hue shifts)", () => {
    expect(() => buildHdrFilter(video, undefined, { mapping: 'reference', transfer: 'hlg' })).toThrow(/LUT/);
    expect(buildHdrFilter(video, undefined, { mapping: 'reference', transfer: 'hlg', lutPath: '/w/l.cube' })).toBe(
      'zscale=tin=smpte170m:t=smpte170m:pin=bt470bg:p=bt470bg:min=bt470bg:m=gbr:rin=pc:r=pc,format=gbrpf32le,' +
        'lut3d=file=/w/l.cube:interp=tetrahedral,' +
        'zscale=tin=arib-std-b67:t=arib-std-b67:pin=bt2020:p=bt2020:min=gbr:m=bt2020nc:rin=pc:r=tv,format=yuv420p10le',
    );
  });

  it('expand: matrix (and size) to float R′G′B′ (super-whites above 1 kept), the LUT, matrix to BT.2020 Y′CbCr, luma steps smoothed', () => {
    expect(
      buildHdrFilter(video, 288, { mapping: 'expand', transfer: 'pq', lutPath: '/jobs/item/out.mp4.expand.cube' }),
    ).toBe(
      'zscale=w=360:h=288:tin=smpte170m:t=smpte170m:pin=bt470bg:p=bt470bg:min=bt470bg:m=gbr:rin=pc:r=pc,format=gbrpf32le,' +
        'lut3d=file=/jobs/item/out.mp4.expand.cube:interp=tetrahedral,' +
        'zscale=tin=smpte2084:t=smpte2084:pin=bt2020:p=bt2020:min=gbr:m=bt2020nc:rin=pc:r=tv,format=yuv420p10le,' +
        'split[sharp][copy];[copy]scale=w=46:h=36:flags=area,scale=w=360:h=288:flags=bilinear[smooth];' +
        '[smooth][sharp]maskedthreshold=threshold=8:planes=1',
    );
    // Its filters on one thread (the slices' handoffs cost CPU x265 could use); reference PQ keeps the default.
    const expandArgs = buildSdrToHdrArgs({
      ...DEFAULT_HDR_ENCODE,
      mapping: 'expand',
      lutPath: '/w/l.cube',
      input: '/in.mp4',
      output: '/out.mp4',
      probe: frozenProbe('sdr-320x180-aac.mp4'),
      container: 'mp4',
    });
    expect(expandArgs.slice(expandArgs.indexOf('-vf') - 2, expandArgs.indexOf('-vf'))).toEqual([
      '-filter_threads',
      '1',
    ]);
    expect(buildHdrFilter(video, undefined, { mapping: 'expand', transfer: 'hlg', lutPath: '/w/l.cube' })).toContain(
      'zscale=tin=arib-std-b67:t=arib-std-b67:pin=bt2020',
    );
  });

  it('refuses an expand without a LUT, or a LUT path the filtergraph would have to quote', () => {
    expect(() => buildHdrFilter(video, undefined, { mapping: 'expand', transfer: 'pq' })).toThrow(/LUT/);
    for (const lutPath of ['relative.cube', "/w/it's.cube", '/w/a:b.cube', '/w/a,b.cube'])
      expect(() => buildHdrFilter(video, undefined, { mapping: 'expand', transfer: 'pq', lutPath })).toThrow(
        /LUT path/,
      );
  });
});

describe('buildX265Params per transfer', () => {
  it('PQ: HDR10 SEI with the mastering peak and a first MaxCLL bound (reference 249/203, expand the peak)', () => {
    expect(buildX265Params({ transfer: 'pq', mapping: 'reference', peakNits: 1000 })).toBe(
      'hdr10=1:hdr10-opt=1:repeat-headers=1:colorprim=bt2020:transfer=smpte2084:colormatrix=bt2020nc:range=limited:' +
        'master-display=G(13250,34500)B(7500,3000)R(34000,16000)WP(15635,16450)L(10000000,1):max-cll=249,203:log-level=error:info=0',
    );
    expect(buildX265Params({ transfer: 'pq', mapping: 'expand', peakNits: 4000 })).toContain(
      'L(40000000,1):max-cll=4000,4000:',
    );
  });

  it('HLG: arib-std-b67 in the VUI, no mastering display or light levels', () => {
    expect(buildX265Params({ transfer: 'hlg', mapping: 'expand', peakNits: 1000 }, 2)).toBe(
      'repeat-headers=1:colorprim=bt2020:transfer=arib-std-b67:colormatrix=bt2020nc:range=limited:log-level=error:' +
        'info=0:pools=none:frame-threads=2',
    );
  });

  it('tags the container HLG too', () => {
    const args = buildSdrToHdrArgs({
      ...DEFAULT_HDR_ENCODE,
      input: '/in.mp4',
      output: '/out.mp4',
      probe: frozenProbe('sdr-320x180-aac.mp4'),
      container: 'mp4',
      transfer: 'hlg',
      lutPath: '/w/l.cube',
    });
    expect(args[args.indexOf('-color_trc') + 1]).toBe('arib-std-b67');
  });
});
