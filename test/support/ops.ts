/**
 * Test helpers for the operator's endpoints (metrics, health, error reports over real HTTP): a reader of the
 * Prometheus text format, a loopback webhook receiver that records what it was sent, and polling.
 */
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';

/** One sample: metric name, labels, value. */
export interface Sample {
  name: string;
  labels: Record<string, string>;
  value: number;
}

/** Parses the Prometheus text exposition (the lines prom-client writes). */
export function parseSamples(text: string): Sample[] {
  const out: Sample[] = [];
  for (const line of text.split('\n')) {
    if (!line || line.startsWith('#')) continue;
    const m = /^([a-zA-Z_:][\w:]*)(?:\{(.*)\})? (\S+)$/.exec(line);
    if (!m) throw new Error(`not a sample line: ${line}`);
    const labels: Record<string, string> = {};
    for (const l of (m[2] ?? '').matchAll(/(\w+)="((?:[^"\\]|\\.)*)"/g)) labels[l[1]!] = l[2]!;
    out.push({ name: m[1]!, labels, value: Number(m[3]) });
  }
  return out;
}

/** The value of `name` with exactly these labels (others ignored when absent from `labels`), or 0 when no sample. */
export function value(text: string, name: string, labels: Record<string, string> = {}): number {
  const found = parseSamples(text).filter((s) => s.name === name && Object.entries(labels).every(([k, v]) => s.labels[k] === v));
  return found.reduce((n, s) => n + s.value, 0);
}

/** The metric families named in `# TYPE` lines. */
export function families(text: string): Map<string, string> {
  return new Map([...text.matchAll(/^# TYPE (\S+) (\S+)$/gm)].map((m) => [m[1]!, m[2]!]));
}

export async function getText(url: string): Promise<{ status: number; type: string | null; body: string }> {
  const res = await fetch(url);
  return { status: res.status, type: res.headers.get('content-type'), body: await res.text() };
}

/** A webhook receiver on 127.0.0.1: records every JSON body POSTed to it. */
export async function startWebhookReceiver(): Promise<{
  url: string;
  posts: Array<{ path: string; body: { content?: string } }>;
  close(): Promise<void>;
}> {
  const posts: Array<{ path: string; body: { content?: string } }> = [];
  const server = createServer((req, res) => {
    let raw = '';
    req.on('data', (c: Buffer) => (raw += c.toString('utf8')));
    req.on('end', () => {
      posts.push({ path: req.url ?? '', body: JSON.parse(raw || '{}') as { content?: string } });
      res.writeHead(204).end();
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    posts,
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  };
}
