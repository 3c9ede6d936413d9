// What may be asked for inside an HLS package, and how each file is served (type and caching).
// The layout is fixed (src/common/storage/storage.ts packagePrefix): `master.m3u8` at the top, and per
// rendition a folder of one level holding its playlist, init segment and media segments.

/** The container of a package's asset row (the worker writes it; `storage_key` is the package's prefix). */
export const PACKAGE_CONTAINER = 'hls';

/**
 * The names a package's files have (src/media/hls/rendition-names.ts writes them; test/jobs/package-files.spec.ts
 * holds the two together): `master.m3u8` at the top; in a rendition's folder (`<codec>-<lines>-<range>`,
 * or `audio`) `playlist.m3u8`, `init.mp4` and `seg-00000.m4s`…. Nothing else is served, so no `.`, `..`,
 * separator or other name ever reaches the database or storage.
 */
const PACKAGE_PATH =
  /^(?:master\.m3u8|(?:audio|[a-z0-9]+-\d{1,5}-[a-z]+)\/(?:playlist\.m3u8|init\.mp4|seg-\d{5,}\.m4s))$/;

/** Whether `path` is a name a package's file has (PACKAGE_PATH): checked before anything is looked up. */
export function isPackageFilePath(path: string): boolean {
  return PACKAGE_PATH.test(path);
}

/** The key of `path` under the package's prefix, or null when the path is not a package file's name. */
export function packageFileKey(prefix: string, path: string): string | null {
  return isPackageFilePath(path) ? `${prefix}${path}` : null;
}

/** The three kinds of files a package holds; anything else in its folder is not served. */
export type PackageFileKind = 'playlist' | 'init' | 'segment';

export function packageFileKind(path: string): PackageFileKind | null {
  if (path.endsWith('.m3u8')) return 'playlist';
  if (path.endsWith('.mp4')) return 'init';
  if (path.endsWith('.m4s')) return 'segment';
  return null;
}

export const PACKAGE_CONTENT_TYPES: Record<PackageFileKind, string> = {
  playlist: 'application/vnd.apple.mpegurl',
  init: 'video/mp4',
  segment: 'video/iso.segment',
};

/** How long a CDN or player may keep a playlist: a few seconds, so a deleted package stops playing soon. */
export const PLAYLIST_MAX_AGE_SECONDS = 5;

/**
 * `Cache-Control` for a file of a package reached with a token valid for `secondsLeft` more seconds. The
 * token is in the URL, so a CDN caches per token: a segment never changes under its URL and may be kept
 * until the token expires (immutable); a playlist is kept a few seconds only (never past the token).
 */
export function packageCacheControl(kind: PackageFileKind, secondsLeft: number): string {
  const left = Math.max(0, Math.floor(secondsLeft));
  if (kind === 'playlist') return `public, max-age=${Math.min(PLAYLIST_MAX_AGE_SECONDS, left)}`;
  return `public, max-age=${left}, immutable`;
}
