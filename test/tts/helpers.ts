import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Clock } from '../../src/util/clock.ts';

/**
 * A virtual clock: `sleep(ms)` records `ms`, moves `now()` forward by it and resolves on the next
 * turn of the event loop, so retry/poll waits are asserted exactly and cost no real time.
 */
export interface VirtualClock extends Clock {
  sleeps: number[];
  advance(ms: number): void;
}

export function virtualClock(start = 1_800_000_000_000): VirtualClock {
  let t = start;
  const sleeps: number[] = [];
  return {
    sleeps,
    now: () => t,
    advance(ms) {
      t += ms;
    },
    sleep(ms, signal) {
      if (signal?.aborted) return Promise.reject(signal.reason);
      sleeps.push(ms);
      t += Math.max(0, ms);
      return new Promise((resolve, reject) => {
        const onAbort = () => reject(signal!.reason);
        signal?.addEventListener('abort', onAbort, { once: true });
        setImmediate(() => {
          signal?.removeEventListener('abort', onAbort);
          resolve();
        });
      });
    },
  };
}

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
