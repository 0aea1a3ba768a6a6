import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { createJob } from './advanced.ts';
import { controlReply, TARGETS, type ControlTarget } from './control.ts';
import { clientIp, logBody, maskHeaders, readBody, send, type Reply, type RequestContext } from './http.ts';
import { audioFile } from './media.ts';
import { pollJob } from './poll.ts';
import { faultReply, internalError } from './replies.ts';
import { ServiceState } from './service.ts';
import type { SpeechEngine } from './speech.ts';
import { standardSpeech } from './standard.ts';
import type { AccountCharges, EmulatorOptions, EmulatorStats, Fault, JobOutcome, RequestLogEntry, Target } from './types.ts';

const MAX_LOG = 10_000;

/**
 * The standard endpoint, at the spec's path or under one of the site's locale prefixes (`/ja/`,
 * `/en/`, `/zh-hans/`, `/pt-br/`: a lowercase two-letter language and an optional subtag). The
 * service's official client posts to `/ja/text_to_speech_api/` (see this package's README.md).
 */
const STANDARD_PATH = /^(?:\/[a-z]{2}(?:-[a-z0-9]{2,8})?)?\/text_to_speech_api\/$/;
const POLL_PATH = /^\/api\/advanced-tts\/jobs\/([^/]+)\/$/;

/** The spec's four endpoints; a path that matches none is a 404 (or the control API). */
const ENDPOINTS: {
  target: Target;
  matches: (path: string) => boolean;
  answer: (s: ServiceState, ctx: RequestContext) => Reply | Promise<Reply>;
}[] = [
  { target: 'standard', matches: (p) => STANDARD_PATH.test(p), answer: standardSpeech },
  { target: 'advanced', matches: (p) => p === '/api/advanced-tts/', answer: createJob },
  { target: 'poll', matches: (p) => POLL_PATH.test(p), answer: (s, ctx) => pollJob(s, ctx, POLL_PATH.exec(ctx.path)![1]!) },
  { target: 'audio', matches: (p) => p.startsWith('/media/') || p.startsWith('/signed/'), answer: audioFile },
];

/**
 * The emulated service over HTTP: routes each request to its endpoint, logs it, applies injected
 * latency and faults, and serves the control API. Endpoint behaviour lives in standard.ts,
 * advanced.ts, poll.ts and media.ts; the service's state in service.ts.
 */
export class EmulatorServer implements ControlTarget {
  readonly options: EmulatorOptions;
  readonly #server: Server;
  readonly #service: ServiceState;
  #log: RequestLogEntry[] = [];
  #faults: (Fault & { left: number })[] = [];
  #latency: Record<Target, number> = { standard: 0, advanced: 0, poll: 0, audio: 0 };

  constructor(options: EmulatorOptions) {
    this.options = options;
    this.#service = new ServiceState(options);
    this.#server = createServer((req, res) => {
      this.#handle(req, res).catch(() => {
        if (!res.headersSent) res.writeHead(500).end();
        else res.destroy();
      });
    });
  }

  /** Starts listening; resolves with the bound port. */
  async listen(): Promise<number> {
    await new Promise<void>((resolve, reject) => {
      this.#server.once('error', reject);
      this.#server.listen(this.options.port, this.options.host, () => {
        this.#server.off('error', reject);
        resolve();
      });
    });
    const { port } = this.#server.address() as AddressInfo;
    const host = this.options.host.includes(':') ? `[${this.options.host}]` : this.options.host;
    this.#service.baseUrl = `http://${host}:${port}`;
    return port;
  }

  get baseUrl(): string {
    return this.#service.baseUrl;
  }

  get speech(): SpeechEngine {
    return this.#service.speech;
  }

  close(): Promise<void> {
    return new Promise((resolve, reject) => {
      this.#server.close((err) => (err ? reject(err) : resolve()));
      this.#server.closeAllConnections();
    });
  }

  // ---- programmatic control (mirrored by the /__emulator/ API, control.ts) ----

  requests(): RequestLogEntry[] {
    return this.#log.map((e) => ({ ...e }));
  }

  clearRequests(): void {
    this.#log = [];
  }

  injectFault(f: Fault): void {
    this.#faults.push({ ...f, left: f.count });
  }

  setLatency(target: Target | 'all', ms: number): void {
    for (const t of TARGETS) if (target === 'all' || target === t) this.#latency[t] = ms;
  }

  nextJobs(o: JobOutcome): void {
    this.#service.jobs.queueOutcome(o);
  }

  setRemaining(token: string, remaining: number): void {
    this.#service.accounts.upsert({ token, remaining });
  }

  upsertAccount(patch: { token: string; remaining?: number | undefined; plan?: 'free' | 'paid' | undefined }) {
    return this.#service.accounts.upsert(patch);
  }

  charged(token: string): number {
    return this.#service.accounts.byToken(token)?.charged ?? 0;
  }

  accounts(): AccountCharges[] {
    return this.#service.accounts.all().map((a) => ({ userId: a.userId, plan: a.plan, charged: a.charged, remaining: a.remaining }));
  }

  stats(): EmulatorStats {
    return this.#service.stats();
  }

  /** Back to the starting state: accounts, jobs, windows, faults, latency, log and stats. */
  reset(): void {
    this.#service.reset();
    this.#log = [];
    this.#faults = [];
    this.setLatency('all', 0);
  }

  // ---- request handling ----

  async #handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const url = new URL(req.url ?? '/', 'http://emulator.invalid');
    const path = url.pathname;
    const method = req.method ?? 'GET';
    const raw = await readBody(req);
    const counters = this.#service.counters;
    if (this.options.control && path.startsWith('/__emulator/')) {
      // Control requests are counted but neither logged nor rate limited.
      counters.requests.control++;
      send(res, raw === null ? { status: 413 } : controlReply(this, method, path, raw));
      return;
    }
    const endpoint = ENDPOINTS.find((e) => e.matches(path));
    const target = endpoint?.target ?? 'other';
    const ip = clientIp(req, this.options.trustProxy);
    const entry: RequestLogEntry = {
      at: this.options.now(),
      ip,
      method,
      path,
      target,
      status: 0,
      headers: maskHeaders(req),
      body: raw === null ? null : logBody(raw),
    };
    this.#log.push(entry);
    if (this.#log.length > MAX_LOG) this.#log.splice(0, this.#log.length - MAX_LOG);
    counters.requests[target]++;

    let reply: Reply;
    try {
      reply = endpoint ? await this.#answer(endpoint, { req, method, path, raw: raw ?? '', ip }, raw === null) : notFound();
    } catch {
      reply = internalError(target);
    }
    entry.status = reply.status;
    if (reply.code !== undefined) entry.code = reply.code;
    const byStatus = counters.statuses[target];
    byStatus[reply.status] = (byStatus[reply.status] ?? 0) + 1;
    send(res, reply);
  }

  /** The endpoint's answer, after the injected latency, or the injected fault instead. */
  async #answer(endpoint: (typeof ENDPOINTS)[number], ctx: RequestContext, tooLarge: boolean): Promise<Reply> {
    const { target } = endpoint;
    if (this.#latency[target] > 0) await this.options.sleep(this.#latency[target]);
    const fault = this.#takeFault(target);
    if (fault) {
      if (fault.delayMs) await this.options.sleep(fault.delayMs);
      // The service did the work (and charged) before its answer was lost.
      if (fault.chargeFirst && !tooLarge && (target === 'standard' || target === 'advanced')) await endpoint.answer(this.#service, ctx);
      return faultReply(fault);
    }
    if (tooLarge) return { status: 413 };
    return endpoint.answer(this.#service, ctx);
  }

  #takeFault(target: Target): Fault | undefined {
    const i = this.#faults.findIndex((f) => f.target === target);
    if (i < 0) return undefined;
    const fault = this.#faults[i]!;
    if (--fault.left <= 0) this.#faults.splice(i, 1);
    return fault;
  }
}

function notFound(): Reply {
  return { status: 404, text: 'Not Found\n', contentType: 'text/plain; charset=utf-8' };
}
