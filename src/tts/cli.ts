/**
 * The `tts` command line (`npm run tts -- ...`, or the `tts` bin): speak through the service from a
 * terminal, list voices, check the environment. Uses src/tts directly; no Discord involved.
 *
 * Exit codes: 0 success, 1 doctor found a problem, 2 invalid input (nothing was sent),
 * 3 refused by the service (4xx), 4 rate limited or allowance exhausted (notice audio included),
 * 5 server or network failure, 130 interrupted.
 *
 * `main` touches the process only through its `CliIo` (output, environment, directory, clock,
 * interrupt), so tests run it in-process; bin/tts.js is the entry point that passes the process's own.
 */
import { spawnSync } from 'node:child_process';
import { rename, writeFile } from 'node:fs/promises';
import { createRequire } from 'node:module';
import { resolve } from 'node:path';
import { parseArgs } from 'node:util';
import { z } from 'zod';
import { FRAME_SAMPLES, VOICE_CHANNELS, VOICE_SAMPLE_RATE } from '../util/voice-format.ts';
import type { Clock } from '../util/clock.ts';
import { tokenUrl } from '../util/token-url.ts';
import { ffmpegPath } from '@yomiage/media';
import { TtsClient } from './client.ts';
import type { NarrateProgress } from './types.ts';
import { KNOWN_STANDARD_VOICES } from './voices.ts';
import { isLoopbackHost } from './download.ts';
import { request } from './transport.ts';
import { EXIT_CODES, TtsInputError, TtsUsageError, exitCodeFor, isTtsError } from './errors.ts';
import { ADVANCED_VOICES, validateToken, type AdvancedRequest, type Plan } from './validation.ts';

const USAGE = `usage: tts <command> [options]

commands:
  say TEXT --voice V [--speed N] [--pitch N] -o out.mp3
      standard speech; speed 0.3..4 and pitch -20..20 (out of range: the service uses 1 / 0)
  narrate TEXT [--voice V] [--tone T] [--model flash|pro] [--seed N] [--speed N] [--pitch N]
               [--temperature 0|0.5|0.7|1] -o out.mp3
      advanced (Beta) speech job; prints each status change and the seed
  voices      list the advanced voices (and sample standard voice ids)
  doctor      check token, service reachability, Opus, DAVE and SQLite (and ffmpeg, for the benchmark)

common options (override the environment):
  --token T       TTS_TOKEN      the 64-character access token
  --base-url URL  TTS_BASE_URL   default https://ondoku3.com (loopback URLs allow local audio)
  --plan P        TTS_PLAN       free (default) or paid

exit codes: 0 ok, 2 invalid input (nothing sent), 3 refused by the service,
            4 rate limited or allowance exhausted, 5 server or network failure
`;

const ConfigSchema = z.object({
  TTS_TOKEN: z.string().optional(),
  TTS_BASE_URL: tokenUrl().default('https://ondoku3.com'),
  TTS_PLAN: z.enum(['free', 'paid'], { error: 'must be free or paid' }).default('free'),
});

/** What the command line touches outside itself. */
interface CliIo {
  /** Writes one line to standard output. */
  out(line: string): void;
  /** Writes one line to standard error. */
  err(line: string): void;
  env: Readonly<Record<string, string | undefined>>;
  /** The directory relative output paths are resolved against. */
  cwd: string;
  /** The client's clock (retry and poll waits); the wall clock when absent. */
  clock?: Clock;
  /** Aborts the running command (Ctrl-C): exit 130. */
  signal?: AbortSignal;
}

/** The process's own output, environment and Ctrl-C. */
export function processIo(): CliIo {
  const interrupt = new AbortController();
  process.once('SIGINT', () => interrupt.abort());
  return {
    out: (line) => process.stdout.write(`${line}\n`),
    err: (line) => process.stderr.write(`${line}\n`),
    env: process.env,
    // `npm run tts` runs in the package root; a relative path means the caller's directory.
    cwd: process.env.INIT_CWD ?? process.cwd(),
    signal: interrupt.signal,
  };
}

const usage = (message: string) => new TtsUsageError({ message });

function parse(argv: string[]) {
  return parseArgs({
    args: argv,
    allowPositionals: true,
    options: {
      voice: { type: 'string' },
      speed: { type: 'string' },
      pitch: { type: 'string' },
      tone: { type: 'string' },
      model: { type: 'string' },
      seed: { type: 'string' },
      temperature: { type: 'string' },
      output: { type: 'string', short: 'o' },
      token: { type: 'string' },
      'base-url': { type: 'string' },
      plan: { type: 'string' },
      help: { type: 'boolean', short: 'h' },
    },
  });
}

type Values = ReturnType<typeof parse>['values'];

function config(values: Values, io: CliIo) {
  // Flags override the environment; one schema so an error names the variable.
  const env = {
    TTS_TOKEN: values.token ?? io.env.TTS_TOKEN,
    TTS_BASE_URL: values['base-url'] ?? (io.env.TTS_BASE_URL || undefined),
    TTS_PLAN: values.plan ?? (io.env.TTS_PLAN || undefined),
  };
  const parsed = ConfigSchema.safeParse(env);
  if (!parsed.success) {
    throw usage(parsed.error.issues.map((i) => `${String(i.path[0])} (or its --flag) ${i.message}`).join('; '));
  }
  return parsed.data;
}

function makeClient(values: Values, io: CliIo): TtsClient {
  const cfg = config(values, io);
  if (cfg.TTS_TOKEN === undefined || cfg.TTS_TOKEN === '') throw usage('TTS_TOKEN (or --token) is required');
  const loopback = isLoopbackHost(new URL(cfg.TTS_BASE_URL).hostname);
  return new TtsClient({
    token: cfg.TTS_TOKEN,
    baseUrl: cfg.TTS_BASE_URL,
    plan: cfg.TTS_PLAN as Plan,
    download: { allowLoopback: loopback },
    ...(io.clock ? { clock: io.clock } : {}),
  });
}

/** A number flag: absent stays absent; anything else goes to the validators as a number (maybe NaN). */
function num(v: string | undefined): number | undefined {
  return v === undefined ? undefined : v.trim() === '' ? Number.NaN : Number(v);
}

function textArg(positionals: string[]): string {
  const text = positionals.slice(1).join(' ');
  if (positionals.length < 2) throw usage('TEXT is required');
  return text;
}

function outputArg(values: Values, io: CliIo): string {
  if (!values.output) throw usage('-o out.mp3 is required');
  return resolve(io.cwd, values.output);
}

async function save(path: string, audio: Buffer): Promise<void> {
  // Write then rename, so a failed run never leaves half a file under the requested name.
  const tmp = `${path}.${process.pid}.tmp`;
  await writeFile(tmp, audio);
  await rename(tmp, path);
}

async function say(positionals: string[], values: Values, io: CliIo): Promise<number> {
  const text = textArg(positionals);
  const output = outputArg(values, io);
  const client = makeClient(values, io);
  const signal = io.signal;
  const r = await client.speak(
    { voice: values.voice as string, text, speed: num(values.speed) ?? 1, pitch: num(values.pitch) ?? 0 },
    signal ? { signal } : {},
  );
  for (const [field, s] of Object.entries(r.substituted)) {
    io.out(`note: ${field} ${s.requested} is out of range; the service used ${s.used}`);
  }
  const audio = await client.download(r.url, signal ? { signal } : {});
  await save(output, audio);
  io.out(`wrote ${output} (${audio.length} bytes, pk ${r.pk})`);
  return 0;
}

async function narrate(positionals: string[], values: Values, io: CliIo): Promise<number> {
  const text = textArg(positionals);
  const output = outputArg(values, io);
  const client = makeClient(values, io);
  const signal = io.signal;
  const req: Record<string, unknown> = { text };
  if (values.voice !== undefined) req.voice = values.voice;
  if (values.tone !== undefined) req.tone = values.tone;
  if (values.model !== undefined) req.model = values.model;
  for (const k of ['seed', 'speed', 'pitch', 'temperature'] as const) {
    const n = num(values[k]);
    if (n !== undefined) req[k] = n;
  }
  const onProgress = (e: NarrateProgress) => {
    const job = e.jobId ? `job ${e.jobId}` : 'job';
    const extra = [e.code ? `code ${e.code}` : '', e.seed !== undefined ? `seed ${e.seed}` : ''].filter(Boolean).join(', ');
    io.out(`[attempt ${e.attempt}] ${job}: ${e.state}${extra ? ` (${extra})` : ''}`);
  };
  const r = await client.narrate(req as unknown as AdvancedRequest, { signal, onProgress });
  // Download right away: the signed URL expires (spec: GET /api/advanced-tts/jobs/{job_id}/).
  const audio = await client.download(r.url, signal ? { signal } : {});
  await save(output, audio);
  io.out(`seed: ${r.seed ?? '(not reported by the service)'}`);
  io.out(`wrote ${output} (${audio.length} bytes, pk ${r.pk}, job ${r.jobId})`);
  return 0;
}

function voices(io: CliIo): number {
  io.out('Advanced voices (25):');
  io.out(`  female: ${ADVANCED_VOICES.slice(0, 12).join(', ')}`);
  io.out(`  male:   ${ADVANCED_VOICES.slice(12).join(', ')}`);
  io.out("Standard voices: the service's own list (about 650 ids, and it grows); it is the authority.");
  io.out(`  known ids include: ${KNOWN_STANDARD_VOICES.join(', ')}`);
  return 0;
}

async function doctor(values: Values, io: CliIo): Promise<number> {
  const require = createRequire(import.meta.url);
  let failed = 0;
  const check = async (name: string, fn: () => Promise<string> | string) => {
    try {
      io.out(`ok    ${name}: ${await fn()}`);
    } catch (e) {
      failed++;
      io.out(`FAIL  ${name}: ${e instanceof Error ? e.message : String(e)}`);
    }
  };
  const cfg = await (async () => {
    try {
      return config(values, io);
    } catch (e) {
      failed++;
      io.out(`FAIL  config: ${(e as Error).message}`);
      return undefined;
    }
  })();
  await check('token', () => {
    if (!cfg?.TTS_TOKEN) throw new Error('TTS_TOKEN (or --token) is not set');
    // Never print the token, not even a part of it.
    if (!validateToken(cfg.TTS_TOKEN).ok) throw new Error('not 64 visible ASCII characters');
    return '64 characters';
  });
  if (cfg) {
    await check(`service ${cfg.TTS_BASE_URL}`, async () => {
      const res = await request(cfg.TTS_BASE_URL, {
        method: 'GET',
        headersTimeout: 5000,
        bodyTimeout: 5000,
        signal: AbortSignal.timeout(8000),
      });
      await res.body.dump();
      return `reachable (HTTP ${res.statusCode}); plan ${cfg.TTS_PLAN}`;
    });
  }
  await check('ffmpeg', () => {
    // Not needed by the bot (it makes its Ogg Opus in-process): only the voice benchmark's baseline runs it.
    // '' (not undefined): only the environment given here counts.
    const path = ffmpegPath(io.env.FFMPEG_PATH ?? '');
    const r = spawnSync(path, ['-hide_banner', '-version'], { encoding: 'utf8', timeout: 10_000 });
    if (r.error || r.status !== 0) return `${path} does not run (not needed by the bot; only \`npm run bench:voice\`'s baseline uses it)`;
    return `${path}: ${r.stdout.split('\n')[0] ?? ''}`;
  });
  await check('Opus encoder (@discordjs/opus)', () => {
    const { OpusEncoder } = require('@discordjs/opus') as {
      OpusEncoder: new (rate: number, channels: number) => { encode(pcm: Buffer): Buffer };
    };
    const packet = new OpusEncoder(VOICE_SAMPLE_RATE, VOICE_CHANNELS).encode(Buffer.alloc(FRAME_SAMPLES * VOICE_CHANNELS * 2));
    return `loads, encodes a 20 ms frame (${packet.length} bytes)`;
  });
  await check('DAVE (@snazzah/davey)', async () => {
    const davey = (await import('@snazzah/davey')) as Record<string, unknown>;
    const version = davey.DAVE_PROTOCOL_VERSION ?? (davey.default as Record<string, unknown> | undefined)?.DAVE_PROTOCOL_VERSION;
    return version === undefined ? 'loads' : `loads, protocol version ${String(version)}`;
  });
  await check('SQLite (better-sqlite3)', () => {
    const Database = require('better-sqlite3') as new (path: string) => {
      prepare(sql: string): { pluck(): { get(): unknown } };
      close(): void;
    };
    const db = new Database(':memory:');
    try {
      return `opens :memory:, SQLite ${String(db.prepare('select sqlite_version()').pluck().get())}`;
    } finally {
      db.close();
    }
  });
  io.out(failed === 0 ? 'all checks passed' : `${failed} check(s) failed`);
  return failed === 0 ? 0 : 1;
}

function report(e: unknown, io: CliIo): number {
  const err = io.err;
  if (e instanceof TtsUsageError) {
    err(`tts: ${e.message}`);
    err('run `tts --help` for usage');
    return EXIT_CODES.input;
  }
  if (isTtsError(e)) {
    const c = e.context;
    const details = [
      c.serviceCode !== undefined && c.serviceCode !== e.code ? `service code ${c.serviceCode}` : '',
      c.status !== undefined ? `HTTP ${c.status}` : '',
      c.attempts !== undefined && c.attempts > 1 ? `${c.attempts} attempts` : '',
      c.jobId !== undefined ? `job ${c.jobId}` : '',
    ].filter(Boolean);
    err(`tts: error ${e.code}${details.length ? ` (${details.join(', ')})` : ''}: ${e.message}`);
    if (e instanceof TtsInputError) for (const i of e.issues) err(`  ${i.field}: ${i.code}: ${i.message}`);
    if (c.serviceMessage !== undefined) err(`  service says: ${c.serviceMessage}`);
    return exitCodeFor(e);
  }
  err(`tts: unexpected failure: ${e instanceof Error ? e.message : String(e)}`);
  return EXIT_CODES.unavailable;
}

/** Runs the command line with `argv` (without node and script) and resolves to the exit code. */
export async function main(argv: string[], io: CliIo): Promise<number> {
  try {
    let parsed: ReturnType<typeof parse>;
    try {
      parsed = parse(argv);
    } catch (e) {
      throw usage((e as Error).message);
    }
    const { values, positionals } = parsed;
    const command = positionals[0];
    if (values.help || command === undefined || command === 'help') {
      io.out(USAGE);
      return command === undefined && !values.help ? EXIT_CODES.input : 0;
    }
    switch (command) {
      case 'say':
        return await say(positionals, values, io);
      case 'narrate':
        return await narrate(positionals, values, io);
      case 'voices':
        return voices(io);
      case 'doctor':
        return await doctor(values, io);
      default:
        throw usage(`unknown command "${command}"`);
    }
  } catch (e) {
    return report(e, io);
  }
}
