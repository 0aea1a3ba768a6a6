import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import { listen } from '../util/listen.ts';
import type { Logger } from '../util/log.ts';

// METRICS_PORT serves Prometheus metrics and the two health checks, for a bot process
// and for the shard manager alike (each passes its own answers). Bound to 127.0.0.1 unless
// METRICS_HOST says otherwise: the metrics say how busy the bot is, not for everyone to read.

/** One check of /readyz: ok, or why not (a code, never a secret). */
export interface Check {
  ok: boolean;
  detail?: string;
}

/**
 * What /readyz answers. `ready` decides the HTTP status (200 or 503); `degraded` names what works
 * less well without making the bot unready (`accounts`: an extra account that cannot log in).
 */
export interface Readiness {
  ready: boolean;
  degraded: string[];
  checks: Record<string, Check>;
}

export interface OpsEndpoints {
  /** The Prometheus text exposition and its content type. */
  metrics(): Promise<{ contentType: string; body: string }>;
  readiness(): Promise<Readiness>;
}

export interface OpsServer {
  /** The address it listens on, e.g. http://127.0.0.1:9464 (the port the OS gave for 0). */
  readonly url: string;
  readonly port: number;
  close(): Promise<void>;
}

/** Starts the HTTP server of /metrics, /healthz and /readyz; rejects when the port cannot be bound. */
export async function startOpsServer(options: { port: number; host: string; endpoints: OpsEndpoints; logger: Logger }): Promise<OpsServer> {
  const { endpoints, logger } = options;
  const server = createServer((req, res) => {
    handle(req, res, endpoints).catch((error: unknown) => {
      logger.warn({ err: error, path: req.url?.split('?')[0] }, 'metrics endpoint failed');
      if (!res.headersSent) send(res, 500, 'text/plain; charset=utf-8', 'internal error\n');
      else res.destroy();
    });
  });
  // Scrapers keep connections alive; a stop must not wait for them.
  server.keepAliveTimeout = 5_000;
  const { port, url } = await listen(server, options.port, options.host);
  logger.info({ url }, 'metrics and health checks listening');
  return {
    url,
    port,
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  };
}

async function handle(req: IncomingMessage, res: ServerResponse, endpoints: OpsEndpoints): Promise<void> {
  const path = new URL(req.url ?? '/', 'http://localhost').pathname;
  if (req.method !== 'GET' && req.method !== 'HEAD') {
    res.setHeader('allow', 'GET, HEAD');
    return send(res, 405, 'text/plain; charset=utf-8', 'method not allowed\n');
  }
  if (path === '/metrics') {
    const { contentType, body } = await endpoints.metrics();
    return send(res, 200, contentType, body);
  }
  if (path === '/healthz') return send(res, 200, 'application/json', JSON.stringify({ status: 'ok' }));
  if (path === '/readyz') {
    const r = await endpoints.readiness();
    const status = !r.ready ? 'not_ready' : r.degraded.length > 0 ? 'degraded' : 'ready';
    return send(res, r.ready ? 200 : 503, 'application/json', JSON.stringify({ status, degraded: r.degraded, checks: r.checks }));
  }
  send(res, 404, 'text/plain; charset=utf-8', 'not found: /metrics, /healthz, /readyz\n');
}

function send(res: ServerResponse, status: number, contentType: string, body: string): void {
  res.writeHead(status, { 'content-type': contentType, 'cache-control': 'no-store' });
  res.end(res.req.method === 'HEAD' ? undefined : body);
}
