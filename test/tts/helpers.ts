import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { FakeClock } from '../support/clock.ts';
import { DEFAULT_TOKEN, startEmulator, type Emulator, type EmulatorOptions } from '@yomiage/tts-emulator';
import { TtsClient, type TtsClientInit } from '../../src/tts/client.ts';
import type { LogSink } from '../../src/util/log.ts';
import type { RateKind, RateLimiter } from '../../src/tts/limiter/limiter.ts';
import type { TtsError } from '../../src/tts/errors.ts';

/** A minimal MPEG-2 Layer III frame header (24 kHz, 160 kbit/s) followed by padding: passes the MP3 sniff. */
export const FAKE_MP3 = Buffer.concat([Buffer.from([0xff, 0xf3, 0xe4, 0xc4]), Buffer.alloc(200)]);
export const ID3_MP3 = Buffer.concat([Buffer.from('ID3'), Buffer.alloc(100)]);

/** A loopback HTTP server on port 0 with a route table; counts hits per path. */
export async function routeServer(
  routes: Record<string, (req: IncomingMessage, res: ServerResponse) => void>,
): Promise<{ url: string; hits: Map<string, number>; close(): Promise<void>; server: Server }> {
  const hits = new Map<string, number>();
  const server = createServer((req, res) => {
    const path = (req.url ?? '/').split('?')[0]!;
    hits.set(path, (hits.get(path) ?? 0) + 1);
    const route = routes[path];
    if (route) route(req, res);
    else {
      res.statusCode = 404;
      res.end();
    }
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    hits,
    server,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

// ---- emulator-backed client fixtures ----------------------------------------------------------

export { DEFAULT_TOKEN };

/** A limiter that grants everything and records what the client asked of it. */
export function recordingLimiter(): RateLimiter & { acquires: RateKind[]; blocks: [RateKind, number][] } {
  const acquires: RateKind[] = [];
  const blocks: [RateKind, number][] = [];
  return {
    acquires,
    blocks,
    acquire: async (kind) => {
      acquires.push(kind);
    },
    block: (kind, ms) => {
      blocks.push([kind, ms]);
    },
  };
}

/** A pino-like logger keeping every line as JSON text. */
export function recordingLogger(): LogSink & { lines: string[] } {
  const lines: string[] = [];
  const log = (level: string) => (obj: object, msg?: string) => {
    lines.push(JSON.stringify({ level, ...obj, msg }));
  };
  return { lines, debug: log('debug'), info: log('info'), warn: log('warn'), error: log('error') };
}

/**
 * One emulator per test file sharing a swappable fake clock (the emulator's job timings and
 * rate windows follow the same time as the client's waits).
 */
export async function emulatorFixture(options: Partial<EmulatorOptions> = {}) {
  let clock = new FakeClock({ autoAdvance: true, start: 1_800_000_000_000 });
  const emulator: Emulator = await startEmulator({ control: true, now: () => clock.now(), ...options });
  return {
    emulator,
    get clock() {
      return clock;
    },
    /** Fresh clock, limiter, logger and a client against the emulator; clears emulator state. */
    fresh(init: Partial<TtsClientInit> = {}) {
      clock = new FakeClock({ autoAdvance: true, start: clock.now() });
      emulator.reset();
      const limiter = recordingLimiter();
      const logger = recordingLogger();
      const client = new TtsClient({
        token: DEFAULT_TOKEN,
        baseUrl: emulator.baseUrl,
        clock,
        limiter,
        logger,
        requestTimeoutMs: 5_000,
        download: { allowLoopback: true },
        ...init,
      });
      return { client, clock, limiter, logger };
    },
    /** Requests the emulator saw for `target`. */
    seen(target: string) {
      return emulator.requests().filter((r) => r.target === target);
    },
  };
}

/** The rejection of `p` (fails the test if it resolves). */
export async function rejection(p: Promise<unknown>): Promise<TtsError> {
  let value: unknown;
  try {
    value = await p;
  } catch (err) {
    return err as TtsError;
  }
  throw new Error(`expected a rejection, got ${JSON.stringify(value)}`);
}
