import { chmodSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ffmpegPath } from '@yomiage/media';
import { checkMediaSupport, probeFfmpeg } from '../../src/util/ffmpeg.ts';
import { createLogger } from '../../src/util/log.ts';
import { captureLog } from '../support/log-scan.ts';

// The start-up ffmpeg check against real binaries: the machine's ffmpeg, a missing
// one, and an executable that is not ffmpeg at all.
let dir: string;
beforeAll(() => {
  dir = mkdtempSync(join(tmpdir(), 'ffmpeg-probe-'));
});
afterAll(() => rmSync(dir, { recursive: true, force: true }));

describe('probeFfmpeg', () => {
  it('GIVEN the installed ffmpeg THEN ok, with its version and libopus', async () => {
    const probe = await probeFfmpeg(ffmpegPath(''));
    expect(probe).toMatchObject({ ok: true, libopus: true });
    expect(probe.ok && probe.version).toMatch(/\d/);
  });

  it('GIVEN a path where nothing is THEN not ok, ENOENT', async () => {
    expect(await probeFfmpeg(join(dir, 'missing'))).toEqual({ ok: false, path: join(dir, 'missing'), reason: 'ENOENT' });
  });

  it('GIVEN an executable that fails THEN not ok, with its exit status', async () => {
    const broken = join(dir, 'broken');
    writeFileSync(broken, '#!/bin/sh\nexit 3\n');
    chmodSync(broken, 0o755);
    expect(await probeFfmpeg(broken)).toMatchObject({ ok: false, reason: 'exit 3' });
  });
});

/** An executable that answers `-encoders` as an ffmpeg without libopus does, and counts its runs. */
function ffmpegWithoutLibopus(name: string): { bin: string; runs: () => number } {
  const bin = join(dir, name);
  const count = join(dir, `${name}.runs`);
  writeFileSync(count, '');
  writeFileSync(
    bin,
    [
      '#!/bin/sh',
      `echo run >> '${count}'`,
      "echo 'ffmpeg version 9.9-test Copyright (c) the FFmpeg developers' >&2",
      "echo '  configuration: --enable-libopus' >&2",
      "printf 'Encoders:\\n A..X.. opus                 Opus\\n A..... libmp3lame           MP3\\n'",
    ].join('\n'),
  );
  chmodSync(bin, 0o755);
  return { bin, runs: () => readFileSync(count, 'utf8').split('\n').filter(Boolean).length };
}

describe('checkMediaSupport', () => {
  it('GIVEN no ffmpeg THEN neither transcoding nor MP3 playback, and one warning saying what works', async () => {
    const log = captureLog();
    const support = await checkMediaSupport(join(dir, 'missing'), createLogger({ level: 'trace', destination: log }));
    expect(support).toEqual({ transcode: false, playMp3: false });
    const records = log.records();
    expect(records).toHaveLength(1);
    expect(records[0]).toMatchObject({ level: 40, reason: 'ENOENT' });
    expect(String(records[0]!.msg)).toContain('running degraded');
  });

  it('GIVEN the installed ffmpeg THEN everything, said at info level', async () => {
    const log = captureLog();
    expect(await checkMediaSupport(ffmpegPath(''), createLogger({ level: 'trace', destination: log }))).toEqual({
      transcode: true,
      playMp3: true,
    });
    expect(log.records().map((r) => r.level)).toEqual([30]);
  });

  it('GIVEN an ffmpeg without the libopus encoder THEN MP3 playback but no transcoding, said once as a warning with its version', async () => {
    const fake = ffmpegWithoutLibopus('no-libopus');
    const log = captureLog();
    expect(await checkMediaSupport(fake.bin, createLogger({ level: 'trace', destination: log }))).toEqual({
      transcode: false,
      playMp3: true,
    });
    expect(log.records()).toHaveLength(1);
    expect(log.records()[0]).toMatchObject({ level: 40, version: '9.9-test' });
    expect(fake.runs()).toBe(1);
  });

  it('GIVEN an ffmpeg found once THEN a bot started again in the process does not run it again, and says the same', async () => {
    const fake = ffmpegWithoutLibopus('found-once');
    const first = captureLog();
    const support = await checkMediaSupport(fake.bin, createLogger({ level: 'trace', destination: first }));
    const second = captureLog();
    expect(await checkMediaSupport(fake.bin, createLogger({ level: 'trace', destination: second }))).toEqual(support);
    expect(fake.runs()).toBe(1);
    expect(second.records().map((r) => r.msg)).toEqual(first.records().map((r) => r.msg));
  });
});
