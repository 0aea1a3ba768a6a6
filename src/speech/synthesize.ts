import type { Clock } from '../util/clock.ts';

/**
 * The synthesis pipeline glue: cache -> in-flight dedupe -> budget -> TTS client -> download ->
 * cache.put -> budget.commit -> history. The scheduler (queue.ts) only sees `Synthesizer`.
 *
 * Collaborators are typed structurally here so the real classes (TtsClient, AudioCache,
 * CharacterBudget, HistoryRepo) fit without this file importing their modules.
 */

export type Endpoint = 'standard' | 'advanced';

/** Advanced (Beta) job parameters (spec: Advanced job creation request). */
export interface AdvancedParams {
  voice: string;
  tone?: string;
  model?: 'flash' | 'pro';
  seed?: number;
  speed?: number;
  pitch?: number;
}

/** Characters charged to one author for (their share of) a request. */
export interface Charge {
  guildId: string;
  userId: string;
  chars: number;
}

/** One request to the service, possibly several authors' messages merged. */
export interface SynthesisRequest {
  guildId: string;
  endpoint: Endpoint;
  text: string;
  voice: string;
  speed: number;
  pitch: number;
  advanced?: AdvancedParams;
  /** Per-author charges; their sum is what the request costs (architecture: characters are money). */
  charges: Charge[];
}

export interface SynthesisProgress {
  status: string;
  jobId?: string;
}

export interface SynthesisOptions {
  signal?: AbortSignal;
  onProgress?: (p: SynthesisProgress) => void;
}

/** Audio ready to play or attach. */
export interface ReadyAudio {
  mp3Path?: string;
  mp3?: Buffer;
  oggPath?: string;
  durationMs: number;
  fromCache: boolean;
  key: string;
  seed?: number;
  url?: string;
  /** Whether this call shared another caller's in-flight request. */
  shared?: boolean;
}

export interface Synthesizer {
  synthesize(req: SynthesisRequest, options?: SynthesisOptions): Promise<ReadyAudio>;
}

// ---- errors (one place, stable codes; STYLE 4) ----

export type SpeechErrorCode = 'budget_refused' | 'aborted' | 'closed' | 'synthesis_failed';

const MESSAGES: Record<SpeechErrorCode, string> = {
  budget_refused: 'character allowance exceeded',
  aborted: 'speech was cancelled',
  closed: 'the speech queue is closed',
  synthesis_failed: 'speech synthesis failed',
};

/** Base error of src/speech; `code` is stable, `guildId` says where. */
export class SpeechError extends Error {
  override name = 'SpeechError';
  readonly code: SpeechErrorCode;
  readonly guildId: string | undefined;
  constructor(code: SpeechErrorCode, options: { message?: string; guildId?: string; cause?: unknown } = {}) {
    super(options.message ?? MESSAGES[code], { cause: options.cause });
    this.code = code;
    this.guildId = options.guildId;
  }
}

export interface BudgetRefusal {
  scope: string;
  used: number;
  limit: number;
  requested: number;
  resetsAt: number;
}

/** The character budget said no; carries its numbers so the bot can tell the author. */
export class BudgetRefusedError extends SpeechError {
  override name = 'BudgetRefusedError';
  readonly refusal: BudgetRefusal;
  constructor(refusal: BudgetRefusal, guildId?: string) {
    super('budget_refused', {
      message: `character allowance exceeded (${refusal.scope}: ${refusal.used}+${refusal.requested} > ${refusal.limit})`,
      ...(guildId === undefined ? {} : { guildId }),
    });
    this.refusal = refusal;
  }
}

// ---- collaborator shapes (the real classes fit these) ----

export interface SpeakResultLike {
  url: string;
  pk: number;
  text?: string;
  substituted?: boolean;
}

export interface NarrateResultLike {
  url: string;
  pk: number;
  seed?: number;
  jobId?: string;
}

export interface TtsClientLike {
  speak(
    req: { voice: string; text: string; speed: number; pitch: number },
    options: { key?: string; signal?: AbortSignal },
  ): Promise<SpeakResultLike>;
  narrate(
    req: { text: string; voice?: string; tone?: string; model?: 'flash' | 'pro'; seed?: number; speed?: number; pitch?: number },
    options: {
      key?: string;
      signal?: AbortSignal;
      onProgress?: (p: { status: string }) => void;
      onJobCreated?: (job: { jobId: string }) => void;
    },
  ): Promise<NarrateResultLike>;
  download(url: string, options?: { signal?: AbortSignal }): Promise<Buffer>;
}

export interface CacheEntryLike {
  key: string;
  mp3Path: string;
  oggPath?: string | null;
  durationMs: number;
}

/** What the cache keys on: everything that changes the audio. */
export interface CacheInput {
  endpoint: Endpoint;
  voice: string;
  text: string;
  speed: number;
  pitch: number;
  tone?: string;
  model?: string;
  seed?: number;
}

export interface AudioCacheLike {
  key(input: CacheInput): string;
  isCacheable(input: CacheInput): boolean;
  get(key: string): CacheEntryLike | null | Promise<CacheEntryLike | null>;
  put(key: string, mp3: Buffer): CacheEntryLike | Promise<CacheEntryLike>;
}

export type ReserveResult<R> = { ok: true; reservation: R } | { ok: false; refusal: BudgetRefusal };

export interface BudgetLike<R = unknown> {
  reserve(charges: Array<{ guildId: string; userId: string; endpoint: Endpoint; chars: number }>): ReserveResult<R> | Promise<ReserveResult<R>>;
  commit(reservation: R): unknown;
  release(reservation: R): unknown;
}

/** One author's share of a generation (HistoryRepo.record in src/db/repositories.ts fits). */
export interface HistoryRecord {
  pk: number | null;
  endpoint: Endpoint;
  url: string | null;
  voice: string;
  characters: number;
  text: string;
  guildId: string;
  userId: string;
}

export interface HistoryLike {
  record(entry: HistoryRecord): unknown;
}

export interface SynthesizerOptions {
  client: TtsClientLike;
  cache: AudioCacheLike;
  budget: BudgetLike<any>;
  history?: HistoryLike;
  /** Accepted for symmetry with the other pieces; timing (retries, polling) lives in the client. */
  clock?: Clock;
}

function cacheInput(req: SynthesisRequest): CacheInput {
  if (req.endpoint === 'standard') {
    return { endpoint: 'standard', voice: req.voice, text: req.text, speed: req.speed, pitch: req.pitch };
  }
  const a = req.advanced ?? { voice: req.voice };
  const input: CacheInput = { endpoint: 'advanced', voice: a.voice, text: req.text, speed: a.speed ?? 1, pitch: a.pitch ?? 0 };
  if (a.tone !== undefined) input.tone = a.tone;
  if (a.model !== undefined) input.model = a.model;
  if (a.seed !== undefined) input.seed = a.seed;
  return input;
}

function abortError(signal: AbortSignal | undefined, guildId: string): unknown {
  const reason: unknown = signal?.reason;
  return reason instanceof SpeechError ? reason : new SpeechError('aborted', { guildId, cause: reason });
}

interface InFlight {
  promise: Promise<ReadyAudio>;
  controller: AbortController;
  waiters: number;
  progress: Set<(p: SynthesisProgress) => void>;
}

/** Builds the synthesis pipeline used by the scheduler. */
export function createSynthesizer(options: SynthesizerOptions): Synthesizer {
  const { client, cache, budget, history } = options;
  const inFlight = new Map<string, InFlight>();

  async function run(req: SynthesisRequest, key: string, cacheable: boolean, call: InFlight): Promise<ReadyAudio> {
    const signal = call.controller.signal;
    // Characters are reserved before the request is sent, released if it never succeeds.
    const reserved = await budget.reserve(req.charges.map((c) => ({ ...c, endpoint: req.endpoint })));
    if (!reserved.ok) throw new BudgetRefusedError(reserved.refusal, req.guildId);
    let committed = false;
    try {
      let url: string;
      let pk: number;
      let seed: number | undefined;
      let substituted = false;
      if (req.endpoint === 'standard') {
        const r = await client.speak({ voice: req.voice, text: req.text, speed: req.speed, pitch: req.pitch }, { key: req.guildId, signal });
        ({ url, pk } = r);
        substituted = r.substituted === true;
      } else {
        const a = req.advanced ?? { voice: req.voice };
        const r = await client.narrate(
          { ...a, text: req.text },
          {
            key: req.guildId,
            signal,
            onProgress: (p) => call.progress.forEach((f) => f({ status: p.status })),
            onJobCreated: (job) => call.progress.forEach((f) => f({ status: 'created', jobId: job.jobId })),
          },
        );
        ({ url, pk, seed } = r);
      }
      const mp3 = await client.download(url, { signal });
      budget.commit(reserved.reservation);
      committed = true;
      // One history row per author of a merged request, each with the characters charged to them.
      for (const c of req.charges) {
        history?.record({ pk, endpoint: req.endpoint, url, voice: req.voice, characters: c.chars, text: req.text, guildId: c.guildId, userId: c.userId });
      }
      // Notice audio (spec: standard endpoint, notice responses) must never be cached as the text's audio.
      if (cacheable && !substituted) {
        const entry = await cache.put(key, mp3);
        const ready: ReadyAudio = { mp3Path: entry.mp3Path, durationMs: entry.durationMs, fromCache: false, key, url };
        if (entry.oggPath) ready.oggPath = entry.oggPath;
        if (seed !== undefined) ready.seed = seed;
        return ready;
      }
      const ready: ReadyAudio = { mp3, durationMs: 0, fromCache: false, key, url };
      if (seed !== undefined) ready.seed = seed;
      return ready;
    } finally {
      if (!committed) budget.release(reserved.reservation);
    }
  }

  return {
    async synthesize(req, opts = {}) {
      const { signal, onProgress } = opts;
      if (signal?.aborted) throw abortError(signal, req.guildId);
      const input = cacheInput(req);
      const key = cache.key(input);
      const cacheable = cache.isCacheable(input);
      // A cache hit spends neither characters nor rate budget (architecture: the budget is scarce).
      if (cacheable) {
        const hit = await cache.get(key);
        if (hit) {
          const ready: ReadyAudio = { mp3Path: hit.mp3Path, durationMs: hit.durationMs, fromCache: true, key };
          if (hit.oggPath) ready.oggPath = hit.oggPath;
          return ready;
        }
      }
      // Identical in-flight requests share one call; it is aborted only when every waiter gave up.
      let call = inFlight.get(key);
      const shared = call !== undefined;
      if (!call) {
        const created: InFlight = { controller: new AbortController(), waiters: 0, progress: new Set(), promise: undefined as never };
        created.promise = run(req, key, cacheable, created).finally(() => {
          if (inFlight.get(key) === created) inFlight.delete(key);
        });
        // Waiters attach their own handlers; this keeps an abandoned call from being "unhandled".
        created.promise.catch(() => {});
        inFlight.set(key, created);
        call = created;
      }
      const current = call;
      current.waiters++;
      if (onProgress) current.progress.add(onProgress);
      let onAbort: (() => void) | undefined;
      try {
        const aborted = new Promise<never>((_, reject) => {
          if (!signal) return;
          onAbort = () => reject(abortError(signal, req.guildId));
          signal.addEventListener('abort', onAbort, { once: true });
        });
        const ready = await Promise.race([current.promise, aborted]);
        return shared ? { ...ready, shared: true } : ready;
      } catch (err) {
        if (signal?.aborted) throw abortError(signal, req.guildId);
        throw err;
      } finally {
        if (onAbort) signal?.removeEventListener('abort', onAbort);
        if (onProgress) current.progress.delete(onProgress);
        current.waiters--;
        if (current.waiters === 0 && signal?.aborted) current.controller.abort(signal.reason);
      }
    },
  };
}
