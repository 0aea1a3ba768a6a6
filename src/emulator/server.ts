import { createHmac, randomBytes, timingSafeEqual } from 'node:crypto';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import { isIP, type AddressInfo } from 'node:net';
import { z } from 'zod';
import { sleep } from '../util/clock.ts';
import { Accounts, type AccountState } from './accounts.ts';
import { AudioStore, audioHash, type AudioInput } from './audio.ts';
import { JobStore, type Job } from './jobs.ts';
import {
  ADVANCED_ERRORS,
  FORBIDDEN_HTML,
  NOTICE_TEXT,
  POLL_ERRORS,
  STANDARD_ERRORS,
  jobFailureMessage,
  type AdvancedErrorCode,
} from './messages.ts';
import type { AccountCharges, EmulatorOptions, EmulatorStats, Fault, JobOutcome, PlannedCounter, RequestLogEntry, Target } from './types.ts';
import { codePointLength, parseJsonBody, validateAdvanced, validateStandard } from './validate.ts';
import { SlidingWindow } from './windows.ts';

/** What a handler answers; written to the socket in one place so the log sees every status. */
interface Reply {
  status: number;
  json?: unknown;
  /** A non-JSON body (HTML, XML) with its content type. */
  text?: string;
  bytes?: Buffer;
  contentType?: string;
  headers?: Record<string, string>;
  /** Send headers only (HEAD). */
  omitBody?: boolean;
  /** Goes into the request log. */
  code?: string;
}

interface Context {
  req: IncomingMessage;
  method: string;
  path: string;
  raw: string;
  ip: string | null;
}

const TARGETS = ['standard', 'advanced', 'poll', 'audio'] as const satisfies readonly Target[];
const SECRET_HEADERS = new Set(['token', 'x-job-token', 'cookie', 'x-csrftoken', 'authorization']);
const MAX_BODY_BYTES = 1024 * 1024;
const MAX_LOG = 10_000;
/**
 * The standard endpoint, at the spec's path or under one of the site's locale prefixes (`/ja/`,
 * `/en/`, `/zh-hans/`, `/pt-br/`: a lowercase two-letter language and an optional subtag). The
 * service's official client posts to `/ja/text_to_speech_api/` (see test/emulator/README.md).
 */
const STANDARD_PATH = /^(?:\/[a-z]{2}(?:-[a-z0-9]{2,8})?)?\/text_to_speech_api\/$/;
const POLL_PATH = /^\/api\/advanced-tts\/jobs\/([^/]+)\/$/;
const AUDIO_PATH = /^\/(media|signed)\/([0-9a-f]{56})\.mp3$/;
/** The voice notice audio is read in. */
const NOTICE_VOICE = 'ja-JP-Wavenet-B';

/** Spec: Limits, "Planned advanced limits" (observed only, never enforced). */
const PLANNED = {
  jobCreationsPerUserMinute: { limit: 30, windowMs: 60_000 },
  jobCreationsPerUserHour: { limit: 180, windowMs: 3_600_000 },
  statusChecksPerJobMinute: { limit: 120, windowMs: 60_000 },
  statusChecksTotalMinute: { limit: 600, windowMs: 60_000 },
  badJobChecksPerIpMinute: { limit: 30, windowMs: 60_000 },
} as const satisfies Record<keyof EmulatorStats['planned'], { limit: number; windowMs: number }>;

const faultSchema = z.object({
  target: z.enum(TARGETS),
  count: z.number().int().min(1),
  status: z.number().int().min(100).max(599),
  body: z.unknown().optional(),
  code: z.string().min(1).optional(),
  headers: z.record(z.string(), z.string()).optional(),
  delayMs: z.number().min(0).optional(),
  chargeFirst: z.boolean().optional(),
});
const latencySchema = z.object({ target: z.enum([...TARGETS, 'all']), ms: z.number().min(0) });
const jobOutcomeSchema = z.object({
  count: z.number().int().min(1).optional(),
  outcome: z.enum(['succeed', 'fail', 'stay_pending', 'timeout']),
  code: z.string().min(1).optional(),
});
const accountSchema = z.object({
  token: z.string().min(1),
  remaining: z.number().int().min(0).optional(),
  plan: z.enum(['free', 'paid']).optional(),
});

/** The emulated service: routing, the four endpoints, fault injection and the control API. */
export class EmulatorServer {
  readonly options: EmulatorOptions;
  readonly #server: Server;
  readonly #accounts: Accounts;
  readonly #voices: ReadonlySet<string>;
  readonly #audio = new AudioStore();
  readonly #jobs: JobStore;
  /** Signs advanced audio URLs; fresh per process, like a rotated bucket key. */
  readonly #urlKey = randomBytes(32);
  readonly #standardRate: SlidingWindow;
  readonly #advancedRate: SlidingWindow;
  readonly #planned: Record<keyof typeof PLANNED, SlidingWindow>;
  #log: RequestLogEntry[] = [];
  #faults: (Fault & { left: number })[] = [];
  #latency: Record<Target, number> = { standard: 0, advanced: 0, poll: 0, audio: 0 };
  #counters = emptyCounters();
  #pk = 0;
  #noticePk: number | undefined;
  #baseUrl = '';

  constructor(options: EmulatorOptions) {
    this.options = options;
    this.#accounts = new Accounts(options.accounts, options.sessions);
    this.#voices = new Set(options.voices);
    this.#jobs = new JobStore(options.jobs);
    this.#standardRate = new SlidingWindow(options.rate.standard.limit, options.rate.standard.windowMs);
    this.#advancedRate = new SlidingWindow(options.rate.advanced.limit, options.rate.advanced.windowMs);
    this.#planned = Object.fromEntries(
      Object.entries(PLANNED).map(([k, v]) => [k, new SlidingWindow(v.limit, v.windowMs)]),
    ) as Record<keyof typeof PLANNED, SlidingWindow>;
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
    this.#baseUrl = `http://${host}:${port}`;
    return port;
  }

  get baseUrl(): string {
    return this.#baseUrl;
  }

  /** Where clients download audio and the base of the session Referer check. */
  get #publicBase(): string {
    return (this.options.publicBaseUrl ?? this.#baseUrl).replace(/\/+$/, '');
  }

  close(): Promise<void> {
    return new Promise((resolve, reject) => {
      this.#server.close((err) => (err ? reject(err) : resolve()));
      this.#server.closeAllConnections();
    });
  }

  // ---- programmatic control (mirrored by the /__emulator/ API) ----

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
    this.#jobs.queueOutcome(o);
  }

  setRemaining(token: string, remaining: number): void {
    this.#accounts.upsert({ token, remaining });
  }

  charged(token: string): number {
    return this.#accounts.byToken(token)?.charged ?? 0;
  }

  accounts(): AccountCharges[] {
    return this.#accounts.all().map((a) => ({ userId: a.userId, plan: a.plan, charged: a.charged, remaining: a.remaining }));
  }

  stats(): EmulatorStats {
    const now = this.options.now();
    const planned = {} as Record<keyof typeof PLANNED, PlannedCounter>;
    for (const key of Object.keys(PLANNED) as (keyof typeof PLANNED)[]) {
      const w = this.#planned[key];
      planned[key] = { limit: w.limit, windowMs: w.windowMs, current: w.current(now), max: w.max };
    }
    const c = this.#counters;
    return {
      requests: { ...c.requests },
      statuses: Object.fromEntries(Object.entries(c.statuses).map(([k, v]) => [k, { ...v }])) as EmulatorStats['statuses'],
      jobsCreated: c.jobsCreated,
      charactersCharged: c.charactersCharged,
      notices: c.notices,
      planned,
    };
  }

  /** Back to the starting state: accounts, jobs, windows, faults, latency, log and stats. */
  reset(): void {
    this.#accounts.reset();
    this.#jobs.clear();
    this.#standardRate.clear();
    this.#advancedRate.clear();
    for (const w of Object.values(this.#planned)) w.clear();
    this.#log = [];
    this.#faults = [];
    this.setLatency('all', 0);
    this.#counters = emptyCounters();
  }

  // ---- request handling ----

  async #handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const url = new URL(req.url ?? '/', 'http://emulator.invalid');
    const path = url.pathname;
    const method = req.method ?? 'GET';
    const raw = await readBody(req);
    const target = this.#classify(path);
    if (target === 'control') {
      // Control requests are counted but neither logged nor rate limited.
      this.#counters.requests.control++;
      send(res, raw === null ? { status: 413 } : this.#control(method, path, raw));
      return;
    }
    const ip = this.#clientIp(req);
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
    this.#counters.requests[target]++;

    let reply: Reply;
    try {
      reply = await this.#answer(target, { req, method, path, raw: raw ?? '', ip }, raw === null);
    } catch {
      reply = internalError(target);
    }
    entry.status = reply.status;
    if (reply.code !== undefined) entry.code = reply.code;
    const byStatus = this.#counters.statuses[target];
    byStatus[reply.status] = (byStatus[reply.status] ?? 0) + 1;
    send(res, reply);
  }

  async #answer(target: Target | 'other', ctx: Context, tooLarge: boolean): Promise<Reply> {
    if (target === 'other') return { status: 404, text: 'Not Found\n', contentType: 'text/plain; charset=utf-8' };
    if (this.#latency[target] > 0) await sleep(this.#latency[target]);
    const fault = this.#takeFault(target);
    if (fault) {
      if (fault.delayMs) await sleep(fault.delayMs);
      // The service did the work (and charged) before its answer was lost.
      if (fault.chargeFirst && !tooLarge && target === 'standard') await this.#standard(ctx);
      if (fault.chargeFirst && !tooLarge && target === 'advanced') await this.#advanced(ctx);
      return faultReply(fault);
    }
    if (tooLarge) return { status: 413 };
    switch (target) {
      case 'standard':
        return this.#standard(ctx);
      case 'advanced':
        return this.#advanced(ctx);
      case 'poll':
        return this.#poll(ctx, POLL_PATH.exec(ctx.path)![1]!);
      case 'audio':
        return this.#audioFile(ctx);
    }
  }

  #classify(path: string): Target | 'control' | 'other' {
    if (STANDARD_PATH.test(path)) return 'standard';
    if (path === '/api/advanced-tts/') return 'advanced';
    if (POLL_PATH.test(path)) return 'poll';
    if (path.startsWith('/media/') || path.startsWith('/signed/')) return 'audio';
    if (this.options.control && path.startsWith('/__emulator/')) return 'control';
    return 'other';
  }

  /** The socket address, or with trustProxy the first X-Forwarded-For entry; null if that is not an IP. */
  #clientIp(req: IncomingMessage): string | null {
    if (this.options.trustProxy) {
      const xff = req.headers['x-forwarded-for'];
      if (xff !== undefined) {
        const first = (Array.isArray(xff) ? xff[0] : xff)?.split(',')[0]?.trim() ?? '';
        return isIP(first) ? first : null;
      }
    }
    const address = req.socket.remoteAddress;
    return address ? address.replace(/^::ffff:/, '') : null;
  }

  #takeFault(target: Target): Fault | undefined {
    const i = this.#faults.findIndex((f) => f.target === target);
    if (i < 0) return undefined;
    const fault = this.#faults[i]!;
    if (--fault.left <= 0) this.#faults.splice(i, 1);
    return fault;
  }

  // ---- POST /text_to_speech_api/ ----

  async #standard(ctx: Context): Promise<Reply> {
    if (ctx.method !== 'POST') return { status: 405, headers: { Allow: 'POST' } };
    // Every request is counted, authenticated or not (spec: Limits, per client IP, shared across tokens).
    const rate = this.#standardRate.take(ctx.ip ?? 'unresolved', this.options.now());
    if (!rate.ok) {
      const reset_in = Math.max(1, Math.ceil(rate.retryInMs / 1000));
      return standardError(429, STANDARD_ERRORS.rateLimited, { reset_in });
    }
    const token = header(ctx.req, 'token');
    if (token === undefined || token.length !== 64) return standardError(400, STANDARD_ERRORS.tokenMissing);
    const account = this.#accounts.byToken(token);
    if (!account) return standardError(400, STANDARD_ERRORS.tokenMismatch);
    const parsed = parseJsonBody(ctx.raw);
    const checked = validateStandard(parsed.ok ? parsed.value : undefined, this.#voices);
    if (!checked.ok) return standardError(400, checked.error);

    const input: AudioInput = { kind: 'standard', ...checked.value };
    const hash = audioHash(input);
    if (this.options.synthesisDelayMs > 0) await sleep(this.options.synthesisDelayMs);
    const seen = account.history.get(hash);
    if (seen !== undefined) {
      // Served from the account's history: not charged again (service-facts.md).
      await this.#audio.bytes(input);
      return this.#standardOk(input, seen, 1);
    }
    const chars = codePointLength(input.text);
    if (account.remaining < chars) return this.#notice();
    this.#charge(account, chars);
    try {
      await this.#audio.bytes(input);
    } catch (error) {
      this.#refund(account, chars);
      throw error;
    }
    const pk = ++this.#pk;
    account.history.set(hash, pk);
    return this.#standardOk(input, pk, 1);
  }

  #standardOk(input: AudioInput, pk: number, share: number): Reply {
    const hash = this.#audio.register(input);
    return { status: 200, json: { text: input.text, url: `${this.#publicBase}/media/${hash}.mp3`, pk, share } };
  }

  /** Spec: Notice responses. HTTP 200, the notice's own text and audio, share 0, nothing charged. */
  async #notice(): Promise<Reply> {
    const input: AudioInput = { kind: 'standard', text: NOTICE_TEXT, voice: NOTICE_VOICE, speed: 1, pitch: 0 };
    await this.#audio.bytes(input);
    this.#noticePk ??= ++this.#pk;
    this.#counters.notices++;
    return { ...this.#standardOk(input, this.#noticePk, 0), code: 'notice' };
  }

  #charge(account: AccountState, chars: number): void {
    account.remaining -= chars;
    account.charged += chars;
    this.#counters.charactersCharged += chars;
  }

  #refund(account: AccountState, chars: number): void {
    account.remaining += chars;
    account.charged -= chars;
    this.#counters.charactersCharged -= chars;
  }

  // ---- POST /api/advanced-tts/ ----

  async #advanced(ctx: Context): Promise<Reply> {
    if (ctx.method !== 'POST') return { status: 405, headers: { Allow: 'POST' } };
    const auth = this.#authenticate(ctx);
    if ('reply' in auth) return auth.reply;
    const { account } = auth;
    const now = this.options.now();
    // Counted per client IP (spec: Limits); a token request whose IP is unknown is counted per user.
    const rate = this.#advancedRate.take(ctx.ip ?? `user:${account.userId}`, now);
    if (!rate.ok) {
      const retry_after = Math.max(1, Math.ceil(rate.retryInMs / 1000));
      return advancedError('rate_limited', { retry_after }, { 'Retry-After': String(retry_after) });
    }
    const parsed = parseJsonBody(ctx.raw);
    if (!parsed.ok) return advancedError('invalid_json');
    const checked = validateAdvanced(parsed.value, { plan: account.plan, blockList: this.options.blockList });
    if (!checked.ok) return advancedError(checked.error.code, {}, {}, checked.error.message);

    const request = checked.value;
    const chars = codePointLength(request.text);
    if (account.remaining < chars) return advancedError('quota_exceeded', { available: account.remaining });
    // Charged at creation; given back if the job fails (see README).
    this.#charge(account, chars);
    const job = this.#jobs.create({
      userId: account.userId,
      accountToken: account.token,
      audio: { kind: 'advanced', ...request },
      chars,
      now,
    });
    this.#counters.jobsCreated++;
    this.#planned.jobCreationsPerUserMinute.record(account.userId, now);
    this.#planned.jobCreationsPerUserHour.record(account.userId, now);
    return {
      status: 202,
      json: {
        job_id: job.id,
        job_token: job.token,
        status: job.state.status,
        min_poll_after_ms: this.options.jobs.minPollAfterMs,
        poll_url: `/api/advanced-tts/jobs/${job.id}/`,
      },
    };
  }

  /** Spec: Authentication 3. Token header, else a logged-in session passing the CSRF checks. */
  #authenticate(ctx: Context): { account: AccountState } | { reply: Reply } {
    const token = header(ctx.req, 'token');
    if (token !== undefined) {
      const account = token.length === 64 ? this.#accounts.byToken(token) : undefined;
      return account ? { account } : { reply: advancedError('invalid_token') };
    }
    const cookies = parseCookies(header(ctx.req, 'cookie'));
    const session = cookies.sessionid === undefined ? undefined : this.#accounts.bySession(cookies.sessionid);
    if (!session) {
      if (ctx.ip === null) return { reply: advancedError('client_ip_unresolved') };
      return { reply: forbiddenHtml('not_logged_in') };
    }
    const csrf = cookies.csrftoken;
    if (!csrf || header(ctx.req, 'x-csrftoken') !== csrf || !this.#refererOk(header(ctx.req, 'referer'))) {
      return { reply: forbiddenHtml('csrf') };
    }
    return { account: session };
  }

  /** The Referer must be the advanced-speech page: {base_url}/<locale>/advanced-tts-beta/. */
  #refererOk(referer: string | undefined): boolean {
    if (!referer) return false;
    return [this.#publicBase, this.#baseUrl].some((base) => {
      if (!referer.startsWith(`${base}/`)) return false;
      return /^[A-Za-z]{2}(?:[-_][A-Za-z0-9]{2,8})?\/advanced-tts-beta\/(?:[?#].*)?$/.test(referer.slice(base.length + 1));
    });
  }

  // ---- GET /api/advanced-tts/jobs/{job_id}/ ----

  async #poll(ctx: Context, jobId: string): Promise<Reply> {
    if (ctx.method !== 'GET') return { status: 405, headers: { Allow: 'GET' } };
    const now = this.options.now();
    const badKey = ctx.ip ?? 'unresolved';
    const job = this.#jobs.get(jobId);
    if (!job) {
      this.#planned.badJobChecksPerIpMinute.record(badKey, now);
      return pollError('not_found');
    }
    // Only the X-Job-Token header or the owner's session authorise; `?token=` is ignored (spec: Authentication 4).
    const jobToken = header(ctx.req, 'x-job-token');
    const sessionid = parseCookies(header(ctx.req, 'cookie')).sessionid;
    const session = sessionid === undefined ? undefined : this.#accounts.bySession(sessionid);
    let principal: string | undefined;
    if (jobToken !== undefined) {
      if (safeEqual(jobToken, job.token) && (!session || session.userId === job.userId)) principal = `token:${jobToken}`;
    } else if (session && session.userId === job.userId) {
      principal = `user:${session.userId}`;
    }
    if (principal === undefined) {
      this.#planned.badJobChecksPerIpMinute.record(badKey, now);
      return pollError('forbidden');
    }
    this.#planned.statusChecksPerJobMinute.record(`${principal}|${job.id}`, now);
    this.#planned.statusChecksTotalMinute.record(principal, now);

    await this.#advanceJob(job, now);
    const state = job.state;
    switch (state.status) {
      case 'pending':
      case 'running':
        return { status: 200, json: { job_id: job.id, status: state.status, poll_after_ms: this.options.jobs.pollAfterMs } };
      case 'succeeded': {
        const body: Record<string, unknown> = { job_id: job.id, status: 'succeeded', url: this.#signedUrl(state.hash, now), pk: state.pk };
        if (job.audio.seed !== undefined) body.seed = job.audio.seed;
        return { status: 200, json: body };
      }
      case 'failed':
        // A failed job is still HTTP 200 (spec: Job poll response).
        return { status: 200, json: { job_id: job.id, status: 'failed', code: state.code, error: jobFailureMessage(state.code) }, code: state.code };
    }
  }

  /** Moves `job` through the transitions the clock has reached, generating its audio at the end. */
  async #advanceJob(job: Job, now: number): Promise<void> {
    const phase = this.#jobs.phase(job, now);
    if (phase === 'pending' || job.state.status === 'succeeded' || job.state.status === 'failed') return;
    this.#jobs.setState(job, { status: 'running' });
    if (phase === 'running') return;
    if (job.outcome.outcome !== 'succeed') {
      this.#failJob(job, job.outcome.code);
      return;
    }
    try {
      await this.#audio.bytes(job.audio);
    } catch {
      this.#failJob(job, 'internal_error');
      return;
    }
    if (job.state.status !== 'running') return; // a concurrent poll finished it first
    const hash = this.#audio.register(job.audio);
    this.#jobs.setState(job, { status: 'succeeded', pk: ++this.#pk, hash });
  }

  #failJob(job: Job, code: string): void {
    if (job.state.status !== 'running') return;
    this.#jobs.setState(job, { status: 'failed', code });
    const account = this.#accounts.byToken(job.accountToken);
    if (account) this.#refund(account, job.chars);
  }

  /** A signed URL valid for signedUrlTtlMs from this poll (spec: the signed URL expires). */
  #signedUrl(hash: string, now: number): string {
    const expires = Math.floor((now + this.options.signedUrlTtlMs) / 1000);
    return `${this.#publicBase}/signed/${hash}.mp3?expires=${expires}&sig=${this.#sign(hash, expires)}`;
  }

  #sign(hash: string, expires: number): string {
    return createHmac('sha256', this.#urlKey).update(`${hash}:${expires}`).digest('hex');
  }

  // ---- GET /media/<hash>.mp3 and /signed/<hash>.mp3 ----

  async #audioFile(ctx: Context): Promise<Reply> {
    if (ctx.method !== 'GET' && ctx.method !== 'HEAD') return { status: 405, headers: { Allow: 'GET, HEAD' } };
    const match = AUDIO_PATH.exec(ctx.path);
    if (!match) return storageError(404, 'NoSuchKey', 'The specified key does not exist.');
    const [, kind, hash] = match as unknown as [string, 'media' | 'signed', string];
    if (kind === 'signed') {
      const query = new URL(ctx.req.url ?? '/', 'http://emulator.invalid').searchParams;
      const expires = Number(query.get('expires'));
      const sig = query.get('sig') ?? '';
      if (!Number.isInteger(expires) || !safeEqual(sig, this.#sign(hash, expires))) {
        return storageError(403, 'SignatureDoesNotMatch', 'The request signature we calculated does not match the signature you provided.');
      }
      if (this.options.now() >= expires * 1000) return storageError(403, 'ExpiredToken', 'The provided token has expired.');
    }
    const input = this.#audio.lookup(hash);
    if (!input || (input.kind === 'advanced') !== (kind === 'signed')) {
      return storageError(404, 'NoSuchKey', 'The specified key does not exist.');
    }
    const bytes = await this.#audio.bytes(input);
    return {
      status: 200,
      bytes,
      contentType: 'audio/mpeg',
      headers: { 'Cache-Control': kind === 'media' ? 'public, max-age=3600' : 'private, max-age=0' },
      omitBody: ctx.method === 'HEAD',
    };
  }

  // ---- /__emulator/ control API ----

  #control(method: string, path: string, raw: string): Reply {
    const route = `${method} ${path.replace(/\/+$/, '')}`;
    const body = (): unknown => {
      const parsed = parseJsonBody(raw);
      return parsed.ok ? parsed.value : undefined;
    };
    const done: Reply = { status: 200, json: { ok: true } };
    const invalid = (error: z.ZodError): Reply => ({ status: 400, json: { error: z.prettifyError(error) } });
    switch (route) {
      case 'GET /__emulator/requests':
        return { status: 200, json: this.requests() };
      case 'DELETE /__emulator/requests':
        this.clearRequests();
        return done;
      case 'POST /__emulator/faults': {
        const f = faultSchema.safeParse(body());
        if (!f.success) return invalid(f.error);
        this.injectFault(f.data);
        return done;
      }
      case 'POST /__emulator/latency': {
        const l = latencySchema.safeParse(body());
        if (!l.success) return invalid(l.error);
        this.setLatency(l.data.target, l.data.ms);
        return done;
      }
      case 'POST /__emulator/jobs': {
        const o = jobOutcomeSchema.safeParse(body());
        if (!o.success) return invalid(o.error);
        this.nextJobs(o.data);
        return done;
      }
      case 'PUT /__emulator/accounts': {
        const a = accountSchema.safeParse(body());
        if (!a.success) return invalid(a.error);
        const account = this.#accounts.upsert(a.data);
        return { status: 200, json: { userId: account.userId, plan: account.plan, remaining: account.remaining } };
      }
      case 'GET /__emulator/stats':
        return { status: 200, json: this.stats() };
      case 'GET /__emulator/accounts':
        return { status: 200, json: this.accounts() };
      case 'POST /__emulator/reset':
        this.reset();
        return done;
      default:
        return { status: 404, json: { error: `no control route ${route}` } };
    }
  }
}

function emptyCounters() {
  return {
    requests: { standard: 0, advanced: 0, poll: 0, audio: 0, control: 0, other: 0 } as EmulatorStats['requests'],
    statuses: { standard: {}, advanced: {}, poll: {}, audio: {}, other: {} } as EmulatorStats['statuses'],
    jobsCreated: 0,
    charactersCharged: 0,
    notices: 0,
  };
}

function standardError(status: number, error: string, extra: Record<string, unknown> = {}): Reply {
  return { status, json: { error, ...extra }, code: error };
}

function advancedError(code: AdvancedErrorCode, extra: Record<string, unknown> = {}, headers: Record<string, string> = {}, message?: string): Reply {
  const { status, error } = ADVANCED_ERRORS[code];
  const json: Record<string, unknown> = { code, error: message ?? error, ...extra };
  if (code === 'unsupported_location') json.error_code = 'UNSUPPORTED_LOCATION';
  return { status, json, headers, code };
}

function pollError(code: keyof typeof POLL_ERRORS): Reply {
  const { status, error } = POLL_ERRORS[code];
  return { status, json: { code, error }, code };
}

function forbiddenHtml(code: 'csrf' | 'not_logged_in'): Reply {
  return { status: 403, text: FORBIDDEN_HTML, contentType: 'text/html; charset=utf-8', code };
}

/** Errors of the audio bucket, shaped like Cloud Storage's XML errors. */
function storageError(status: number, code: string, message: string): Reply {
  const text = `<?xml version='1.0' encoding='UTF-8'?><Error><Code>${code}</Code><Message>${message}</Message></Error>`;
  return { status, text, contentType: 'application/xml; charset=UTF-8', code };
}

function internalError(target: Target | 'other'): Reply {
  if (target === 'standard') return standardError(500, STANDARD_ERRORS.internal);
  if (target === 'advanced' || target === 'poll') return advancedError('internal_error');
  return { status: 500 };
}

/**
 * The response of an injected fault. An undefined body means "what the service sends with that
 * status", when the spec defines one; null means no body; a string is sent as HTML.
 */
function faultReply(f: Fault): Reply {
  const headers = { ...f.headers };
  const body = f.body !== undefined ? f.body : f.code !== undefined ? codeBody(f.code) : defaultFaultBody(f.target, f.status);
  if (body === null || body === undefined) return { status: f.status, headers, code: 'fault' };
  if (typeof body === 'string') return { status: f.status, text: body, contentType: 'text/html; charset=utf-8', headers, code: 'fault' };
  if (f.status === 429 && f.target === 'advanced' && !Object.keys(headers).some((h) => h.toLowerCase() === 'retry-after')) {
    const retryAfter = (body as { retry_after?: unknown }).retry_after;
    if (typeof retryAfter === 'number') headers['Retry-After'] = String(retryAfter);
  }
  const code = typeof (body as { code?: unknown }).code === 'string' ? (body as { code: string }).code : 'fault';
  return { status: f.status, json: body, headers, code };
}

/** The spec's JSON body for an advanced or polling error code (unknown codes get a generic message). */
function codeBody(code: string): Record<string, unknown> {
  if (code in ADVANCED_ERRORS) return advancedError(code as AdvancedErrorCode, code === 'rate_limited' ? { retry_after: 1 } : {}).json as Record<string, unknown>;
  if (code in POLL_ERRORS) return pollError(code as keyof typeof POLL_ERRORS).json as Record<string, unknown>;
  return { code, error: jobFailureMessage(code) };
}

function defaultFaultBody(target: Target, status: number): unknown {
  if (target === 'standard') {
    if (status === 429) return { error: STANDARD_ERRORS.rateLimited, reset_in: 1 };
    if (status >= 500) return { error: STANDARD_ERRORS.internal };
    return null;
  }
  if (target === 'audio') return null;
  if (status === 403) return target === 'poll' ? codeBody('forbidden') : FORBIDDEN_HTML;
  if (status === 404 && target === 'poll') return codeBody('not_found');
  if (status === 429) return codeBody('rate_limited');
  if (status === 503) return codeBody('tts_retry_exhausted');
  if (status >= 500) return codeBody('internal_error');
  return null;
}

function send(res: ServerResponse, reply: Reply): void {
  let body: Buffer | undefined;
  let type: string | undefined;
  if (reply.json !== undefined) {
    body = Buffer.from(JSON.stringify(reply.json));
    type = 'application/json';
  } else if (reply.text !== undefined) {
    body = Buffer.from(reply.text);
    type = reply.contentType;
  } else if (reply.bytes !== undefined) {
    body = reply.bytes;
    type = reply.contentType;
  }
  const headers: Record<string, string> = { 'Content-Length': String(body?.length ?? 0) };
  if (type) headers['Content-Type'] = type;
  res.writeHead(reply.status, { ...headers, ...reply.headers });
  res.end(reply.omitBody ? undefined : body);
}

/** The request body as text, or null when it is over MAX_BODY_BYTES. */
async function readBody(req: IncomingMessage): Promise<string | null> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of req as AsyncIterable<Buffer>) {
    size += chunk.length;
    if (size <= MAX_BODY_BYTES) chunks.push(chunk);
  }
  return size > MAX_BODY_BYTES ? null : Buffer.concat(chunks).toString('utf8');
}

function header(req: IncomingMessage, name: string): string | undefined {
  const v = req.headers[name];
  return Array.isArray(v) ? v.join(', ') : v;
}

function maskHeaders(req: IncomingMessage): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [k, v] of Object.entries(req.headers)) {
    if (v === undefined) continue;
    out[k] = SECRET_HEADERS.has(k) ? '***' : Array.isArray(v) ? v.join(', ') : v;
  }
  return out;
}

function logBody(raw: string): unknown {
  if (raw === '') return null;
  const parsed = parseJsonBody(raw);
  return parsed.ok ? parsed.value : raw;
}

function parseCookies(cookie: string | undefined): Record<string, string> {
  const out: Record<string, string> = {};
  for (const part of (cookie ?? '').split(';')) {
    const eq = part.indexOf('=');
    if (eq > 0) out[part.slice(0, eq).trim()] = part.slice(eq + 1).trim();
  }
  return out;
}

function safeEqual(a: string, b: string): boolean {
  const x = Buffer.from(a);
  const y = Buffer.from(b);
  return x.length === y.length && timingSafeEqual(x, y);
}
