// The rules of `output.package`, `output.ladder` and `output.codecs` (sdr2hdr) that a decorator alone
// cannot say, and their OpenAPI descriptions: one place for the words the DTO, the guide and the errors use.
import type { ValidateBy, ValidationArguments } from 'class-validator';
import { HDR_CODECS } from '../output-options';

export const MIN_RUNG_LINES = 144;
export const MAX_RUNG_LINES = 2160;
export const MAX_RUNGS = 6;

type Rule = Parameters<typeof ValidateBy>[0];
type Output = { package?: unknown };

const isHls = (args?: ValidationArguments) => (args?.object as Output | undefined)?.package === 'hls';

/** `ladder` and `codecs` describe a package: with a file (the default) they are refused, not ignored. */
export function onlyWithHls(field: 'ladder' | 'codecs'): Rule {
  return {
    name: `${field}OnlyWithHls`,
    validator: {
      validate: (_value: unknown, args) => isHls(args),
      defaultMessage: () => `${field} describes an HLS package: send it with package "hls", or omit it for a file`,
    },
  };
}

/**
 * `resolution` and `container` describe a file: a package's pictures are its ladder and its container is
 * CMAF, so an explicit value with `hls` is refused (null or omitted is fine) rather than silently ignored.
 */
export function notWithHls(field: 'resolution' | 'container'): Rule {
  const instead = field === 'resolution' ? 'the rungs are output.ladder' : 'its segments are CMAF (fragmented MP4)';
  return {
    name: `${field}NotWithHls`,
    validator: {
      validate: (_value: unknown, args) => !isHls(args),
      defaultMessage: () => `${field} applies to a file, not to an HLS package (${instead}); omit it`,
    },
  };
}

export const evenLines: Rule = {
  name: 'evenLines',
  validator: {
    validate: (value: unknown) => typeof value === 'number' && value % 2 === 0,
    defaultMessage: () => 'a rung has an even number of lines (4:2:0 pictures need even sides)',
  },
};

export const distinctHeights: Rule = {
  name: 'distinctHeights',
  validator: {
    validate: (value: unknown) => {
      if (!Array.isArray(value)) return true; // IsArray answers
      const heights = value.map((rung: unknown) => (rung as { height?: unknown } | null)?.height);
      return new Set(heights).size === heights.length;
    },
    defaultMessage: () => 'each rung has its own height: a height appears twice',
  },
};

/** ValidateNested would validate an array inside the ladder as rungs of its own: `[[{height}]]` is refused. */
export const noNestedArrays: Rule = {
  name: 'noNestedArrays',
  validator: {
    validate: (value: unknown) => !Array.isArray(value) || value.every((rung) => !Array.isArray(rung)),
    defaultMessage: () => 'each rung is an object {"height": lines}, not an array',
  },
};

export const validCodecs: Rule = {
  name: 'validCodecs',
  validator: {
    validate: (value: unknown) =>
      Array.isArray(value) &&
      value.length >= 1 &&
      value.every((codec) => (HDR_CODECS as unknown[]).includes(codec)) &&
      new Set(value).size === value.length &&
      value.includes('hevc'),
    defaultMessage: () => 'codecs is ["hevc"] or ["hevc", "av1"]',
  },
};

export const PACKAGE_DESCRIPTION =
  '`file` (default): one MP4 or MOV, as always. `hls`: a CMAF (fragmented MP4) HLS package — a master playlist ' +
  'and, per rendition, a media playlist and segments of 4 s — with the HDR rungs of `ladder` (HEVC Main10, and ' +
  'AV1 10-bit with `codecs`) and SDR rungs (H.264) made from the source, priced per rung. With `hls`, ' +
  '`resolution` and `container` are refused (the rungs are the ladder, the container CMAF).';

export const LADDER_DESCRIPTION =
  'With `package: "hls"`: the HDR rungs, each `{"height": lines}` of the short side like `resolution` (1080: ' +
  `1920×1080 landscape, 1080×1920 portrait); ${MIN_RUNG_LINES}–${MAX_RUNG_LINES} lines, even, distinct, 1–${MAX_RUNGS} rungs. ` +
  "Rungs above an item's source are not made (never upscaled); a source below every rung gets one at its own " +
  'size. Default: the four highest of 2160, 1440, 1080, 720, 540, 360 at or below the source (and the plan’s ' +
  'largest output). The SDR rungs are not listed here: the highest of 1080, 720, 540, 360 at or below the ' +
  'source and the one two steps below it. Each rung costs what a file of its picture costs for the item’s ' +
  'seconds; the estimate lists every item’s rungs (`items[i].rungs`) and their credits.';

export const CODECS_DESCRIPTION =
  'With `package: "hls"`: the HDR rungs’ codecs — `["hevc"]` (default) or `["hevc", "av1"]` (every HDR rung made ' +
  'in both, AV1 for browsers without HEVC; each AV1 rung priced as its picture, like the HEVC one).';

export const RUNG_HEIGHT_DESCRIPTION = `Lines of the rung's short side (${MIN_RUNG_LINES}–${MAX_RUNG_LINES}, even); never above the item's source.`;
