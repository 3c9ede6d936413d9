// Which URIs of an HLS package the CLI follows (convert --package hls): the playlists' own, relative to the
// playback link, and nothing that would leave the package or the folder it is saved into.

import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { packagePath, PackageEscapeError, playlistUris } from '../src/cli/package-download.js';

const MASTER = new URL('https://api.example/v1/playback/ast_1.1767000000.sig/master.m3u8');
const BASE = new URL('./', MASTER);
const MEDIA = new URL('h264-720-sdr/playlist.m3u8', MASTER);

describe('an HLS package downloaded by the CLI', () => {
  test('names every URI a playlist holds: URI lines and URI attributes', () => {
    const master = [
      '#EXTM3U',
      '#EXT-X-MEDIA:TYPE=AUDIO,GROUP-ID="audio",NAME="Main",URI="audio/playlist.m3u8"',
      '#EXT-X-STREAM-INF:BANDWIDTH=1000,CODECS="avc1.64001f,mp4a.40.2"',
      'h264-720-sdr/playlist.m3u8',
      '',
    ].join('\r\n');
    assert.deepEqual(playlistUris(master), ['audio/playlist.m3u8', 'h264-720-sdr/playlist.m3u8']);
    const media = '#EXTM3U\n#EXT-X-MAP:URI="init.mp4"\n#EXTINF:4.0,\nseg-00000.m4s\n#EXT-X-ENDLIST\n';
    assert.deepEqual(playlistUris(media), ['init.mp4', 'seg-00000.m4s']);
  });

  test('keeps the package layout for URIs inside it', () => {
    assert.equal(packagePath(BASE, MASTER, 'h264-720-sdr/playlist.m3u8'), 'h264-720-sdr/playlist.m3u8');
    assert.equal(packagePath(BASE, MEDIA, 'seg-00001.m4s'), 'h264-720-sdr/seg-00001.m4s');
    assert.equal(packagePath(BASE, MEDIA, '../audio/init.mp4'), 'audio/init.mp4');
  });

  for (const [from, uri] of [
    [MASTER, '../master.m3u8'],
    [MEDIA, '../../ast_2.1767000000.sig/master.m3u8'],
    [MEDIA, '../../../../etc/passwd'],
    [MASTER, 'https://elsewhere.example/v1/playback/ast_1.1767000000.sig/x.m4s'],
    [MASTER, '/v1/playback/ast_1.1767000000.sig/../x.m4s'],
    [MASTER, 'a/b/c.m4s'],
    [MASTER, '%2e%2e/x.m4s'],
    [MASTER, 'a%2Fb%2F..%2F..%2F..%2Fx.m4s'],
    [MASTER, '.hidden'],
    [MASTER, 'x.m4s?token=other'],
    [MASTER, 'file:///etc/passwd'],
  ] as const) {
    test(`refuses ${uri}`, () => {
      assert.throws(() => packagePath(BASE, from, uri), PackageEscapeError);
    });
  }
});
