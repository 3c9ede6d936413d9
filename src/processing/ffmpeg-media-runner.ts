// The MediaRunner of production: ffprobe and ffmpeg on this machine (src/media), and the files they
// make in the item's work folder.
import { Inject, Injectable, Logger } from '@nestjs/common';
import { mkdir, readdir } from 'node:fs/promises';
import { join } from 'node:path';
import { APP_CONFIG, type AppConfig } from '../common/config/config';
import type { MediaApi, ProbeOutcome } from '../media/media.types';
import { convertSdrToHdr, normaliseSpeechLoudness, readOutputLight } from '../media/pipelines';
import { probeMedia } from '../media/probe';
import { ROUND_TRIP_SAMPLES } from '../media/output-checks';
import type { HdrOutputSpec } from '../media/output-spec';
import { extractAudio, joinParts, probeKeyframes, splitVideo } from '../media/segments';
import { checkWithFfmpeg } from './ffmpeg-output-checks';
import { fileSha256 } from './run-measurements';
import { endedEarly, made, probeFailure, round } from './runner-outcomes';
import { sdr2hdrMedia } from './output-media';
import { joinPackage, makePackage, makePackagePart } from './package-output';
import { confinedCpuCount } from '../media/cpu-set';
import { renderLightMap } from '../media/light-map';
import type {
  CheckedOutput,
  CheckRequest,
  EncodePackagePartRequest,
  EncodePackagePartResult,
  EncodeSegmentRequest,
  EncodeSegmentResult,
  JoinPackageRequest,
  JoinRequest,
  LightMapMade,
  LightMapRequest,
  MediaRun,
  MediaRunner,
  RunItemRequest,
  RunItemResult,
  SplitRequest,
  ToolFailure,
} from './media-runner';

@Injectable()
export class FfmpegMediaRunner implements MediaRunner {
  private readonly logger = new Logger(FfmpegMediaRunner.name);

  constructor(@Inject(APP_CONFIG) private readonly config: AppConfig) {}

  /** Probes the local input again (full verdict, then the caller's), then runs the item's pipeline. */
  async run(request: RunItemRequest): Promise<RunItemResult> {
    const probing = performance.now();
    const probed = await this.probe(request.inputPath, request.api, request.signal);
    request.onStage?.('probe', performance.now() - probing);
    if (!probed.ok) return probeFailure(probed);
    const refused = request.admit({
      durationSeconds: probed.probe.durationSeconds,
      width: probed.probe.video?.width ?? null,
      height: probed.probe.video?.height ?? null,
    });
    if (refused) return refused;
    const common = {
      input: request.inputPath,
      probe: probed.probe,
      ...this.tools(request),
      onProgress: request.onProgress,
    };
    const { container } = request.output;
    const output = `${request.outputPath}.${container}`;
    const encoding = performance.now();
    if (request.api === 'sdr2hdr' && request.output.package === 'hls') {
      const made = await makePackage({
        input: request.inputPath,
        probe: probed.probe,
        spec: request.output,
        outputPath: request.outputPath,
        confinedCpus: confinedCpuCount(),
        onProgress: request.onProgress,
        ...this.tools(request),
      });
      request.onStage?.('encode', performance.now() - encoding);
      return made.ok ? { ...made, sourceColour: probed.probe.video } : made;
    }
    if (request.api === 'sdr2hdr') {
      const spec = request.output;
      const result = await convertSdrToHdr({
        ...common,
        output,
        ...encodeOf(spec),
        roundTripSamples: request.measureInRun !== false ? ROUND_TRIP_SAMPLES : undefined,
      });
      request.onStage?.('encode', performance.now() - encoding);
      if (!result.ok) return { ok: false, code: result.code, message: result.message };
      const truncated = await endedEarly(output, probed.probe.durationSeconds, result.processedSeconds);
      if (truncated) return truncated;
      const media = sdr2hdrMedia(result.width, result.height, spec.quality, result.light);
      return {
        ...made(output, container, result.processedSeconds, result, media),
        sourceSeconds: probed.probe.durationSeconds,
        sourceColour: probed.probe.video,
        ...(result.roundTripSsim !== null
          ? { measuredInRun: { sha256: await fileSha256(output), roundTripSsim: result.roundTripSsim } }
          : {}),
      };
    }
    const result = await normaliseSpeechLoudness({
      ...common,
      output,
      container: request.output.container,
      targetLufs: request.output.targetLufs,
      meterWritten: request.measureInRun !== false,
    });
    request.onStage?.('encode', performance.now() - encoding);
    if (!result.ok) return { ok: false, code: result.code, message: result.message };
    const truncated = await endedEarly(output, probed.probe.durationSeconds, result.processedSeconds);
    if (truncated) return truncated;
    const media = {
      input_integrated_lufs: round(result.input.integratedLufs),
      speech_seconds: round(result.speech.speechSeconds),
    };
    return {
      ...made(output, container, result.processedSeconds, null, media),
      sourceSeconds: probed.probe.durationSeconds,
      ...(result.written ? { measuredInRun: { sha256: await fileSha256(output), loudness: result.written } } : {}),
    };
  }

  probe(path: string, api: MediaApi, signal: AbortSignal): Promise<ProbeOutcome> {
    return probeMedia(path, {
      api,
      ffprobePath: this.config.ffprobePath,
      maxPixels: this.config.workerMaxPixels,
      signal,
    });
  }

  keyframes(path: string, videoIndex: number, run: MediaRun): Promise<number[] | null> {
    return probeKeyframes(path, videoIndex, this.tools(run));
  }

  async split(request: SplitRequest): Promise<{ ok: true; parts: string[] } | ToolFailure> {
    await mkdir(request.dir, { recursive: true });
    const cut = await splitVideo(
      request.inputPath,
      request.videoIndex,
      request.cuts,
      join(request.dir, 'part-%04d.mp4'),
      this.tools(request),
    );
    if (!cut.ok) return { ok: false, stderrTail: cut.run.stderrTail };
    const names = (await readdir(request.dir)).filter((name) => name.endsWith('.mp4')).sort();
    return { ok: true, parts: names.map((name) => join(request.dir, name)) };
  }

  async extractAudio(
    request: MediaRun & { inputPath: string; audioIndex: number; outputPath: string },
  ): Promise<{ ok: true } | ToolFailure> {
    const copied = await extractAudio(request.inputPath, request.audioIndex, request.outputPath, this.tools(request));
    return copied.ok ? copied : { ok: false, stderrTail: copied.run.stderrTail };
  }

  async encodeSegment(request: EncodeSegmentRequest): Promise<EncodeSegmentResult> {
    const probed = await this.probe(request.inputPath, 'sdr2hdr', request.signal);
    if (!probed.ok) return probeFailure(probed);
    const result = await convertSdrToHdr({
      input: request.inputPath,
      output: request.outputPath,
      probe: probed.probe,
      ...encodeOf(request.output),
      container: 'mp4',
      ...this.tools(request),
      onProgress: request.onProgress,
    });
    if (!result.ok) return { ok: false, code: result.code, message: result.message };
    return { ok: true, path: request.outputPath, processedSeconds: result.processedSeconds };
  }

  async encodePackagePart(request: EncodePackagePartRequest): Promise<EncodePackagePartResult> {
    const probed = await this.probe(request.inputPath, 'sdr2hdr', request.signal);
    if (!probed.ok) return probeFailure(probed);
    return makePackagePart({
      ...this.tools(request),
      input: request.inputPath,
      probe: probed.probe,
      spec: request.output,
      outputPath: request.partsDir,
      confinedCpus: confinedCpuCount(),
      onProgress: request.onProgress,
      unit: request.unit,
      last: request.last,
      partsDir: request.partsDir,
    });
  }

  async joinPackage(request: JoinPackageRequest): Promise<RunItemResult> {
    const probed = await this.probe(request.inputPath, 'sdr2hdr', request.signal);
    if (!probed.ok) return probeFailure(probed);
    return joinPackage({
      ...this.tools(request),
      input: request.inputPath,
      probe: probed.probe,
      spec: request.output,
      outputPath: request.outputPath,
      confinedCpus: confinedCpuCount(),
      onProgress: () => undefined,
      unitDirs: request.unitDirs,
    });
  }

  /** Concat demuxer, no re-encode, the audio muxed once; then the output is probed for what it is. */
  async join(request: JoinRequest): Promise<RunItemResult> {
    const { container, quality, mapping, transfer } = request.output;
    const output = `${request.outputPath}.${container}`;
    const list = `${request.outputPath}.parts.txt`;
    const joined = await joinParts(request.parts, list, request.audio, output, container, this.tools(request));
    if (!joined.ok) {
      this.logger.warn({ output, stderr: joined.run.stderrTail }, 'join failed');
      return { ok: false, code: joined.run.status === 'timeout' ? 'timeout' : 'processing_failed' };
    }
    const probed = await this.probe(output, 'sdr2hdr', request.signal);
    if (!probed.ok || !probed.probe.video) throw new Error(`the joined output ${output} does not probe`);
    const { width, height } = probed.probe.video;
    const light = await readOutputLight(output, mapping, transfer);
    return made(
      output,
      container,
      probed.probe.durationSeconds,
      { width, height },
      sdr2hdrMedia(width, height, quality, light),
    );
  }

  check(request: CheckRequest): Promise<CheckedOutput> {
    return checkWithFfmpeg(request, this.tools(request), async (path) => {
      const probed = await this.probe(path, 'audio', request.signal);
      return probed.ok ? probed.probe.durationSeconds : NaN;
    });
  }

  /**
   * The output's picture size and length come from the output itself, the source's colour tags from
   * the run's probe of the source when it made one (`sourceColour`), else from a probe of the source
   * (a probe each, ~0.15 s, side by side).
   */
  async lightMap(request: LightMapRequest): Promise<LightMapMade | ToolFailure> {
    const [probed, sourceColour] = await Promise.all([
      this.probe(request.outputPath, 'sdr2hdr', request.signal),
      request.sourceColour ??
        this.probe(request.sourcePath, 'sdr2hdr', request.signal).then((source) =>
          source.ok ? source.probe.video : undefined,
        ),
    ]);
    if (!probed.ok || !probed.probe.video) return { ok: false, stderrTail: ['the output does not probe'] };
    if (!sourceColour) return { ok: false, stderrTail: ['the source does not probe'] };
    const rendered = await renderLightMap({
      source: request.sourcePath,
      output: request.outputPath,
      png: request.pngPath,
      transfer: request.transfer,
      width: probed.probe.video.width,
      height: probed.probe.video.height,
      durationSeconds: probed.probe.durationSeconds,
      sourceColour,
      ffmpegPath: this.config.ffmpegPath,
      ffprobePath: this.config.ffprobePath,
      signal: request.signal,
      timeLimitMs: request.timeLimitMs,
    });
    return rendered.status === 'succeeded'
      ? { ok: true, path: request.pngPath, frameSeconds: rendered.frameSeconds }
      : { ok: false, stderrTail: rendered.stderrTail };
  }

  private tools(run: MediaRun) {
    return {
      signal: run.signal,
      timeLimitMs: run.timeLimitMs,
      ffmpegPath: this.config.ffmpegPath,
      ffprobePath: this.config.ffprobePath,
    };
  }
}

/** The encode of an sdr2hdr spec, field for field (the spec is complete: nothing is filled in here). */
function encodeOf(spec: HdrOutputSpec) {
  const { container, targetLines, mapping, transfer, peakNits, preset, crf } = spec;
  return { container, targetHeight: targetLines, mapping, transfer, peakNits, preset, crf };
}
