// The part of m3u8-parser 7 (no types of its own) the package tests use.
declare module 'm3u8-parser' {
  export interface ParsedSegment {
    uri: string;
    duration: number;
    map?: { uri: string };
  }
  export interface ParsedPlaylist {
    uri: string;
    attributes: Record<string, any>;
  }
  export interface Manifest {
    version?: number;
    targetDuration?: number;
    playlistType?: string;
    endList?: boolean;
    independentSegments?: boolean;
    segments: ParsedSegment[];
    playlists?: ParsedPlaylist[];
    mediaGroups?: { AUDIO?: Record<string, Record<string, { uri?: string; default?: boolean; autoselect?: boolean }>> };
  }
  export class Parser {
    push(chunk: string): void;
    end(): void;
    manifest: Manifest;
  }
}
