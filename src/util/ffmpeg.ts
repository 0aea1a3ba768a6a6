import { execFile } from 'node:child_process';
import { EventEmitter } from 'node:events';
import type { Logger } from './log.ts';

/**
 * What the bot can do with the audio it paid for, decided at start and lowered when
 * ffmpeg goes missing later. Shared by the synthesizer (cache) and the delivery (voice or attach).
 */
export interface MediaSupport {
  /** ffmpeg with libopus: each clip is transcoded once to Ogg Opus and cached. */
  readonly transcode: boolean;
  /**
   * An MP3 not cached as Ogg Opus is played in voice (decoded in this process, src/audio/mp3-opus.ts);
   * false without ffmpeg, when such audio is attached instead (the documented degraded mode).
   */
  readonly playMp3: boolean;
}

/**
 * What ffmpeg allows now (a MediaSupport read through getters), owned in one place: found at start,
 * lowered once when ffmpeg goes missing later (`lose`, the one setter), which is the `lost` event.
 * Whoever decides by it (the delivery: play or attach) listens instead of reading a shared flag.
 */
export class Media extends EventEmitter<{ lost: [before: MediaSupport] }> implements MediaSupport {
  #support: MediaSupport;

  constructor(support: MediaSupport) {
    super();
    this.#support = { ...support };
  }

  get transcode(): boolean {
    return this.#support.transcode;
  }

  get playMp3(): boolean {
    return this.#support.playMp3;
  }

  /** A copy of what is allowed now. */
  get support(): MediaSupport {
    return { ...this.#support };
  }

  /** ffmpeg went missing after start: nothing is transcoded or decoded any more (emits `lost` once). */
  lose(): void {
    if (!this.#support.transcode && !this.#support.playMp3) return;
    const before = this.#support;
    this.#support = { transcode: false, playMp3: false };
    this.emit('lost', before);
  }
}

export type FfmpegProbe = { ok: true; path: string; version: string; libopus: boolean } | { ok: false; path: string; reason: string };

/**
 * Runs `bin -encoders` once: is it there, which version (its banner, on stderr), can it encode Opus
 * (the list, on stdout). One start of ffmpeg costs about 50 ms of CPU before it does anything, so
 * the check is one run, not two.
 */
export function probeFfmpeg(bin: string, timeoutMs = 10_000): Promise<FfmpegProbe> {
  return new Promise((resolve) => {
    execFile(bin, ['-encoders'], { timeout: timeoutMs, maxBuffer: 4 * 1024 * 1024 }, (error, stdout, stderr) => {
      if (error) {
        const code = (error as NodeJS.ErrnoException).code;
        resolve({ ok: false, path: bin, reason: typeof code === 'string' ? code : `exit ${String(code ?? error.signal)}` });
        return;
      }
      const version = /ffmpeg version (\S+)/.exec(`${stderr}\n${stdout}`)?.[1] ?? 'unknown';
      resolve({ ok: true, path: bin, version, libopus: /^\s*A\S*\s+libopus\b/m.test(stdout) });
    });
  });
}

/**
 * ffmpeg binaries found working in this process: a bot started again in the same process (the
 * in-process restarts of the tests, the playground) does not look again. Not finding one is never
 * remembered, so an ffmpeg installed meanwhile is found; one that goes missing later is noticed
 * where it is run (the synthesizer tells `Media`, whose `lost` event the delivery follows).
 */
const found = new Map<string, FfmpegProbe & { ok: true }>();

/**
 * Checks ffmpeg at start and says at warn level what works without it: the bot runs degraded, it
 * does not refuse to start. `bin` is the configured one (FFMPEG_PATH); when it is missing, no
 * other ffmpeg is used either, so FFMPEG_PATH pointing nowhere means "no ffmpeg".
 */
export async function checkMediaSupport(bin: string, logger: Pick<Logger, 'info' | 'warn'>): Promise<MediaSupport> {
  const probe = found.get(bin) ?? (await probeFfmpeg(bin));
  if (probe.ok) found.set(bin, probe);
  if (!probe.ok) {
    logger.warn(
      { ffmpeg: bin, reason: probe.reason },
      'ffmpeg not found: running degraded. Works: every command, speech already cached (played in voice without ffmpeg), ' +
        'and new speech as an MP3 attachment (to the command reply, or as a reply to the message read aloud). ' +
        'Does not work: playing new speech in voice (it is attached instead) and caching it (a repeated text is paid again). ' +
        'Install ffmpeg (apt-get install ffmpeg) or set FFMPEG_PATH.',
    );
    return { transcode: false, playMp3: false };
  }
  if (!probe.libopus) {
    logger.warn(
      { ffmpeg: bin, version: probe.version },
      'ffmpeg has no libopus encoder: running degraded. Speech is not cached as Ogg Opus (a repeated text is paid again) ' +
        'and its MP3 is decoded and encoded again on every play. Install an ffmpeg built with libopus.',
    );
  } else {
    logger.info({ ffmpeg: bin, version: probe.version }, 'ffmpeg found');
  }
  return { transcode: probe.libopus, playMp3: true };
}
