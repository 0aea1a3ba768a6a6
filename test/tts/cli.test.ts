// The `tts` command line: main() in-process against an emulator started here, on a virtual clock
// shared with the emulator (job progress and retry waits cost no real time), with its output,
// environment and directory injected; and two runs as a child process through bin/tts.js, for the
// exit codes a shell sees. MP3s ffprobe accepts, and the documented exit codes.
import { execFile } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { main } from '../../src/tts/cli.ts';
import { DEFAULT_TOKEN, emulatorFixture } from './helpers.ts';

const BIN = join(import.meta.dirname, '../../bin/tts.js');
let fx: Awaited<ReturnType<typeof emulatorFixture>>;
let emulator: Awaited<ReturnType<typeof emulatorFixture>>['emulator'];
let dir: string;

beforeAll(async () => {
  fx = await emulatorFixture({ jobs: { pendingMs: 100, runningMs: 200, minPollAfterMs: 100, pollAfterMs: 100 } });
  emulator = fx.emulator;
  dir = mkdtempSync(join(tmpdir(), 'tts-cli-'));
});
afterAll(async () => {
  await emulator.close();
  rmSync(dir, { recursive: true, force: true });
});
// A fresh virtual clock and a clean emulator for each test.
beforeEach(() => void fx.fresh());

interface Run {
  code: number;
  stdout: string;
  stderr: string;
}

/** Runs main() in this process, collecting what it writes as the process would see it. */
async function tts(args: string[], env: Record<string, string> = {}): Promise<Run> {
  const stdout: string[] = [];
  const stderr: string[] = [];
  const code = await main(args, {
    out: (line) => stdout.push(`${line}\n`),
    err: (line) => stderr.push(`${line}\n`),
    env: { TTS_TOKEN: DEFAULT_TOKEN, TTS_BASE_URL: emulator.baseUrl, ...env },
    cwd: dir,
    clock: fx.clock,
  });
  return { code, stdout: stdout.join(''), stderr: stderr.join('') };
}

/** Runs bin/tts.js as a child process (asynchronously: the emulator lives in this process and must keep serving). */
function spawnTts(args: string[], env: Record<string, string> = {}): Promise<Run> {
  return new Promise((resolve) => {
    execFile(
      process.execPath,
      ['--experimental-strip-types', '--no-warnings', BIN, ...args],
      { env: { PATH: process.env.PATH ?? '', TTS_TOKEN: DEFAULT_TOKEN, TTS_BASE_URL: emulator.baseUrl, ...env }, timeout: 30_000 },
      (error, stdout, stderr) => {
        const code = error ? (typeof error.code === 'number' ? error.code : -1) : 0;
        resolve({ code, stdout, stderr });
      },
    );
  });
}

function ffprobe(path: string): Promise<{ ok: boolean; out: string }> {
  return new Promise((resolve) => {
    execFile('ffprobe', ['-v', 'error', '-show_entries', 'stream=codec_name,sample_rate', '-of', 'json', path], (error, stdout) =>
      resolve({ ok: !error, out: stdout }),
    );
  });
}

describe('tts say', () => {
  it('GIVEN text and a voice THEN (as a child process) writes an MP3 ffprobe accepts, exit 0', async () => {
    const out = join(dir, 'say.mp3');
    const r = await spawnTts(['say', 'こんにちは、世界', '--voice', 'ja-JP-Wavenet-B', '-o', out]);
    expect(r.stderr).toBe('');
    expect(r.code).toBe(0);
    expect(r.stdout).toContain(`wrote ${out}`);
    const probe = await ffprobe(out);
    expect(probe.ok).toBe(true);
    expect(JSON.parse(probe.out).streams[0].codec_name).toBe('mp3');
  });

  it('GIVEN out-of-range speed THEN a note about the substitution, still exit 0', async () => {
    const r = await tts(['say', 'はやい', '--voice', 'ja-JP-Wavenet-B', '--speed', '9', '-o', join(dir, 'fast.mp3')]);
    expect(r.code).toBe(0);
    expect(r.stdout).toContain('speed 9 is out of range; the service used 1');
  });

  it('GIVEN a rejected token THEN (as a child process) exit 3 naming token_mismatch, and the token is not printed', async () => {
    const wrong = 'w'.repeat(64);
    const r = await spawnTts(['say', 'こんにちは', '--voice', 'ja-JP-Wavenet-B', '-o', join(dir, 'no.mp3')], { TTS_TOKEN: wrong });
    expect(r.code).toBe(3);
    expect(r.stderr).toContain('token_mismatch');
    expect(r.stderr + r.stdout).not.toContain(wrong);
    expect(existsSync(join(dir, 'no.mp3'))).toBe(false);
  });

  it('GIVEN invalid input THEN exit 2 and nothing reaches the service', async () => {
    const cases = [
      ['say', 'こんにちは', '--voice', 'ja-JP-Wavenet-B', '--pitch', 'high', '-o', join(dir, 'bad.mp3')],
      ['say', '', '--voice', 'ja-JP-Wavenet-B', '-o', join(dir, 'bad.mp3')],
      ['say', 'こんにちは', '-o', join(dir, 'bad.mp3')],
      ['say', 'こんにちは', '--voice', 'ja-JP-Wavenet-B'],
      ['narrate', 'みじかい', '-o', join(dir, 'bad.mp3')],
      ['narrate', 'じゅうぶんな長さのテキストです', '--temperature', '0.3', '-o', join(dir, 'bad.mp3')],
      ['frobnicate'],
    ];
    const runs = await Promise.all(cases.map((args) => tts(args)));
    runs.forEach((r, i) => {
      expect(r.code, cases[i]!.join(' ')).toBe(2);
      expect(r.stderr.length).toBeGreaterThan(0);
    });
    const r = await tts(['say', 'こんにちは', '--voice', 'ja-JP-Wavenet-B', '-o', join(dir, 'bad.mp3')], { TTS_TOKEN: 'short' });
    expect(r.code).toBe(2);
    expect(r.stderr).toContain('token_missing');
    expect(emulator.requests()).toEqual([]);
  });

  it('GIVEN an exhausted allowance THEN exit 4 naming allowance_exhausted and no file', async () => {
    emulator.setRemaining(DEFAULT_TOKEN, 0);
    const out = join(dir, 'notice.mp3');
    const r = await tts(['say', 'こんにちは', '--voice', 'ja-JP-Wavenet-B', '-o', out]);
    expect(r.code).toBe(4);
    expect(r.stderr).toContain('allowance_exhausted');
    expect(existsSync(out)).toBe(false);
  });

  it('GIVEN the service redirects with a 302 THEN exit 3 with one line naming the Location and TTS_BASE_URL, no token, no file', async () => {
    const location = `${emulator.baseUrl}/ja/text_to_speech_api/`;
    emulator.injectFault({ target: 'standard', count: 1, status: 302, body: null, headers: { Location: location } });
    const out = join(dir, 'moved.mp3');
    const r = await tts(['say', 'こんにちは', '--voice', 'ja-JP-Wavenet-B', '-o', out]);
    expect(r.code).toBe(3);
    expect(r.stdout).toBe('');
    expect(r.stderr).toBe(
      `tts: error redirect_refused (HTTP 302): The service redirected POST /text_to_speech_api/ to ${location} (HTTP 302). ` +
        `Not followed: only a 307 or 308 keeps the POST and its body. Set TTS_BASE_URL to ${emulator.baseUrl}/ja (now ${emulator.baseUrl}).\n`,
    );
    expect(r.stderr).not.toContain(DEFAULT_TOKEN);
    expect(existsSync(out)).toBe(false);
  });

  it('GIVEN the service redirects with a 307 to its /ja/ path THEN it is followed and the MP3 written, exit 0', async () => {
    emulator.injectFault({ target: 'standard', count: 1, status: 307, body: null, headers: { Location: '/ja/text_to_speech_api/' } });
    const out = join(dir, 'followed.mp3');
    const r = await tts(['say', 'こんにちは', '--voice', 'ja-JP-Wavenet-B', '-o', out]);
    expect(r.stderr).toBe('');
    expect(r.code).toBe(0);
    expect(existsSync(out)).toBe(true);
    expect(emulator.requests().map((q) => q.path)).toContain('/ja/text_to_speech_api/');
  });

  it('GIVEN plain http to another host THEN exit 2 naming TTS_BASE_URL, and the token goes nowhere', async () => {
    for (const [env, flag] of [
      [{ TTS_BASE_URL: 'http://tts.example.com' }, []],
      [{}, ['--base-url', 'http://10.0.0.5:8787']],
    ] as const) {
      const r = await tts(['say', 'こんにちは', '--voice', 'ja-JP-Wavenet-B', '-o', join(dir, 'x.mp3'), ...flag], { ...env });
      expect(r.code).toBe(2);
      expect(r.stderr).toContain('TTS_BASE_URL (or its --flag) must be https');
      expect(r.stderr).not.toContain(DEFAULT_TOKEN);
    }
  });

  it('GIVEN nothing listening THEN exit 5 naming network', async () => {
    const r = await tts(['say', 'こんにちは', '--voice', 'ja-JP-Wavenet-B', '-o', join(dir, 'x.mp3')], {
      TTS_BASE_URL: 'http://127.0.0.1:1',
    });
    expect(r.code).toBe(5);
    expect(r.stderr).toContain('network');
    // Retried as the spec says, on the injected clock: no real time spent waiting.
    expect(fx.clock.sleeps).toEqual([1000, 2000]);
  });
});

describe('tts narrate', () => {
  it('GIVEN text THEN prints each status change and the seed, writes an MP3, exit 0', async () => {
    const out = join(dir, 'narrate.mp3');
    const r = await tts(['narrate', 'これは高度な読み上げのテストです。', '--voice', 'Luna', '--tone', 'calm', '--seed', '42', '-o', out]);
    expect(r.stderr).toBe('');
    expect(r.code).toBe(0);
    const states = [...r.stdout.matchAll(/: (queued|pending|running|succeeded)/g)].map((m) => m[1]);
    expect(states).toEqual(['queued', 'pending', 'running', 'succeeded']);
    expect(r.stdout).toContain('seed: 42');
    const probe = await ffprobe(out);
    expect(probe.ok).toBe(true);
    expect(JSON.parse(probe.out).streams[0]).toMatchObject({ codec_name: 'mp3', sample_rate: '24000' });
  });

  it('GIVEN a rejected token THEN exit 3 naming invalid_token', async () => {
    const r = await tts(['narrate', 'これは高度な読み上げのテストです。', '-o', join(dir, 'n.mp3')], { TTS_TOKEN: 'v'.repeat(64) });
    expect(r.code).toBe(3);
    expect(r.stderr).toContain('invalid_token');
  });

  it('GIVEN quota exceeded THEN exit 4 naming quota_exceeded', async () => {
    emulator.setRemaining(DEFAULT_TOKEN, 2);
    const r = await tts(['narrate', 'これは高度な読み上げのテストです。', '-o', join(dir, 'n.mp3')]);
    expect(r.code).toBe(4);
    expect(r.stderr).toContain('quota_exceeded');
  });

  it('GIVEN a final job failure THEN exit 3 naming the service code', async () => {
    emulator.nextJobs({ outcome: 'fail', code: 'content_policy_violation' });
    const r = await tts(['narrate', 'これは高度な読み上げのテストです。', '-o', join(dir, 'n.mp3')]);
    expect(r.code).toBe(3);
    expect(r.stdout).toContain('failed (code content_policy_violation)');
    expect(r.stderr).toContain('content_policy_violation');
  });
});

describe('tts voices / doctor', () => {
  it('voices lists the 25 advanced voices and a standard sample', async () => {
    const r = await tts(['voices']);
    expect(r.code).toBe(0);
    expect(r.stdout).toContain('Yann');
    expect(r.stdout).toContain('ja-JP-Wavenet-B');
  });

  it('doctor checks everything against the emulator without printing the token', async () => {
    const r = await tts(['doctor']);
    expect(r.stdout).toContain('ok    token: 64 characters');
    expect(r.stdout).toMatch(/ok {4}service .*reachable/);
    expect(r.stdout).toContain('ok    SQLite');
    expect(r.stdout).not.toContain(DEFAULT_TOKEN);
    expect([0, 1]).toContain(r.code);
  });
});
