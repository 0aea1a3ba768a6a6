import type { Endpoint, Charge } from '../../billing/ledger.ts';
import type { NewHistoryEntry } from '../../db/generation-history.ts';
import { probeDurationMs } from '../../audio/mp3-frames.ts';
import type { BillingHooks } from '../../billing/attempts.ts';
import type { TtsClient } from '../../tts/client.ts';
import type { RateGrant } from '../../tts/limiter/limiter.ts';
import type { AdvancedRequest, AdvancedVoice } from '../../tts/validation.ts';
import type { Logger } from '../../util/log.ts';
import { moments } from '../../util/moments.ts';
import { ChargeSession, type LedgerLike } from '../../billing/charge-session.ts';
import { AudioCache, isCacheable, type AudioKeyInput, type CachedAudio } from './cache.ts';
import { SpeechError } from '../errors.ts';
import { BudgetRefusedError } from '../../billing/errors.ts';

export type { Charge };

/**
 * The synthesis pipeline glue: cache -> in-flight dedupe -> budget hold -> TTS client (the ledger
 * follows each attempt, src/billing/charge-session.ts) -> download -> cache.put -> history. The scheduler
 * (queue/scheduler.ts) only sees `Synthesizer`.
 *
 * Collaborators are typed as the parts of the real classes (TtsClient, AudioCache,
 * CharacterBudget, HistoryRepo) that are used, so tests can pass small fakes.
 */

/** Advanced (Beta) job parameters (spec: Advanced job creation request). */
export type AdvancedParams = Omit<AdvancedRequest, 'text' | 'temperature'> & { voice: AdvancedVoice };

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
  /** Who asked and where the result goes (explicit requests): lets advanced jobs be persisted. */
  context?: RequestContext;
  /** Whose turn it is at the rate window (the limiter's pacing key): the audience it is read for; the guild when absent. */
  audience?: string;
}

interface RequestContext {
  /** The utterance this request speaks. */
  utteranceId: string;
  userId: string;
  channelId: string;
  /** The utterance's delivery metadata (plain data). */
  meta?: unknown;
}

/** Runs an advanced job to its end; the bot passes one that persists jobs (src/tts/jobs.ts). */
export type NarrateFn = (
  req: AdvancedRequest,
  opts: {
    key: string;
    signal: AbortSignal;
    onProgress: (p: { state: string; jobId?: string }) => void;
    context?: RequestContext | undefined;
    billing?: BillingHooks | undefined;
  },
) => Promise<{ url: string; pk: number; seed?: number; mp3?: Buffer }>;

interface SynthesisProgress {
  status: string;
  jobId?: string;
}

export interface SynthesisOptions {
  signal?: AbortSignal;
  onProgress?: (p: SynthesisProgress) => void;
  /**
   * A rate grant the caller already holds: the request spends it instead of waiting
   * for one. When no request is sent after all (a cache hit, a shared in-flight call, a budget
   * refusal, an abort) it stays unspent, and its owner gives it back (queue/grants.ts `Grants`).
   */
  grant?: RateGrant | undefined;
  /**
   * Told at once when `grant` will not be spent though the call goes on (it rides on an identical
   * request already in flight), so its owner gives it back to the window now, not when the call ends.
   */
  grantUnneeded?: () => void;
}

/** Audio ready to play or attach; never changed once handed out (`playableNow` reads what the cache wrote since). */
export interface ReadyAudio {
  readonly mp3Path?: string;
  readonly mp3?: Buffer;
  readonly oggPath?: string;
  durationMs: number;
  fromCache: boolean;
  key: string;
  seed?: number;
  url?: string;
  /** Whether this call shared another caller's in-flight request. */
  shared?: boolean;
  /**
   * Unpins the cached files (eviction must not delete audio a queued utterance is
   * about to play). Whoever holds the audio calls it once it is played or dropped.
   */
  release?: () => void;
  /**
   * A miss comes back once its MP3 is downloaded (`mp3`, playable at once) while its
   * Ogg Opus is cached: true once cached (its files then known to `playableNow`, pinned until `release`),
   * false when caching failed (logged; the MP3 still plays or is attached). Never rejects.
   */
  cached?: Promise<boolean>;
  /** A miss's cached files once written (pinned until `release`), else undefined: read through `playableNow`. */
  files?: () => CachedFiles | undefined;
  /**
   * Clips played back to back as one sound (a cached name, then its line). The
   * fields above describe the whole: `durationMs` is the sum, `release` releases every part.
   */
  parts?: ReadyAudio[];
}

export interface Synthesizer {
  synthesize(req: SynthesisRequest, options?: SynthesisOptions): Promise<ReadyAudio>;
  /** Resolves once no cache write started by a miss is still under way (before closing the database). */
  idle?(): Promise<void>;
  /** The cached audio of `req` (pinned), or null; never sends anything or holds characters. */
  lookup?(req: SynthesisRequest): Promise<ReadyAudio | null>;
}

/**
 * `audio` as it can be played now: a miss whose cache write has finished since is its cached files
 * (the Ogg Opus plays without decoding the MP3 again); a new object, `audio` is left as it is.
 */
export function playableNow(audio: ReadyAudio): ReadyAudio {
  if (audio.parts) {
    const parts = audio.parts.map(playableNow);
    return parts.every((p, i) => p === audio.parts![i]) ? audio : { ...audio, parts };
  }
  const files = audio.files?.();
  return files ? { ...audio, ...files } : audio;
}

/** Audio made of `parts` played back to back (one part: that part itself). */
export function sequenceAudio(parts: readonly ReadyAudio[]): ReadyAudio {
  if (parts.length === 1) return parts[0]!;
  return {
    parts: [...parts],
    durationMs: parts.reduce((ms, p) => ms + p.durationMs, 0),
    fromCache: parts.every((p) => p.fromCache),
    key: parts.map((p) => p.key).join('+'),
    release: () => {
      for (const p of parts) p.release?.();
    },
  };
}

// ---- collaborators (the parts of the real classes used here) ----

export type TtsClientLike = Pick<TtsClient, 'speak' | 'narrate' | 'download'>;

export interface AudioCacheLike {
  get(key: string, options?: { pin?: boolean }): Promise<CachedAudio | null>;
  put(key: string, mp3: Buffer, info?: { endpoint?: Endpoint; pin?: boolean }): Promise<CachedAudio>;
  /** Keeps `key`'s files from eviction until the returned function is called. */
  pin?(key: string): () => void;
}

export type BudgetLike = LedgerLike;

interface HistoryLike {
  record(entry: NewHistoryEntry): unknown;
}

interface SynthesizerOptions {
  client: TtsClientLike;
  cache: AudioCacheLike;
  budget: BudgetLike;
  history?: HistoryLike;
  /** Advanced jobs go through this instead of `client.narrate` when given (persistence, resume). */
  narrate?: NarrateFn;
  /** Cache failures, and ledger writes that failed (the request itself goes on: its audio is paid for). */
  logger?: Pick<Logger, 'warn' | 'debug'>;
}

function cacheInput(req: SynthesisRequest): AudioKeyInput {
  if (req.endpoint === 'standard') {
    return { endpoint: 'standard', voice: req.voice, text: req.text, speed: req.speed, pitch: req.pitch };
  }
  const a: AdvancedParams = req.advanced ?? { voice: req.voice as AdvancedVoice };
  const input: AudioKeyInput = { endpoint: 'advanced', voice: a.voice, text: req.text, speed: a.speed ?? 1, pitch: a.pitch ?? 0 };
  if (a.tone !== undefined) input.tone = a.tone;
  if (a.model !== undefined) input.model = a.model;
  if (a.seed !== undefined) input.seed = a.seed;
  return input;
}

function abortError(signal: AbortSignal | undefined, guildId: string): unknown {
  const reason: unknown = signal?.reason;
  return reason instanceof SpeechError ? reason : new SpeechError('aborted', { guildId, cause: reason });
}

/** What one call to the service gives its waiters: on a miss, also the cache write under way. */
type CallResult = ReadyAudio & { cachedFiles?: Promise<CachedFiles | null> };

interface InFlight {
  promise: Promise<CallResult>;
  /** The grant the first caller brought, spent by this call's first attempt. */
  grant?: RateGrant | undefined;
  controller: AbortController;
  waiters: number;
  progress: Set<(p: SynthesisProgress) => void>;
  settled: boolean;
  /** The pin the call took when it cached the audio; held until every waiter took its own. */
  callPin?: (() => void) | undefined;
}

/** Builds the synthesis pipeline used by the scheduler. */
export function createSynthesizer(options: SynthesizerOptions): Synthesizer {
  const { client, cache, budget, history } = options;
  const inFlight = new Map<string, InFlight>();
  /** Cache writes of misses still under way (their audio already went on), by key. */
  const caching = new Map<string, Promise<unknown>>();
  /** The code of the cache failure logged last; a run of the same failure is logged once. */
  let lastCacheFailure: string | undefined;

  /** Cache write or transcode failed after the characters were spent: say why, once. */
  function cacheFailed(error: unknown, guildId: string): void {
    const code = String((error as { code?: unknown }).code ?? (error as Error).name ?? 'error');
    const fields = { err: error, guildId };
    if (code !== lastCacheFailure)
      options.logger?.warn(fields, 'could not cache the paid audio; delivering it uncached (its MP3 decoded as it plays)');
    else options.logger?.debug(fields, 'could not cache the paid audio again (same cause)');
    lastCacheFailure = code;
  }

  async function run(req: SynthesisRequest, key: string, cacheable: boolean, call: InFlight): Promise<CallResult> {
    const signal = call.controller.signal;
    // Characters are held before the request is sent (a refusal throws here, nothing is sent);
    // from then on the session records what each attempt cost, as it happens.
    const session = await ChargeSession.open(budget, req.charges, {
      guildId: req.guildId,
      endpoint: req.endpoint,
      ...(req.endpoint === 'standard' ? { audioKey: key } : {}),
      onError: (err) => options.logger?.warn({ err, guildId: req.guildId }, 'ledger write failed'),
    });
    try {
      let url: string;
      let pk: number;
      let seed: number | undefined;
      let downloaded: Buffer | undefined;
      if (req.endpoint === 'standard') {
        // Notice audio (allowance exhausted) is thrown by the client, so what comes back is the text's audio.
        const grant = call.grant;
        ({ url, pk } = await client.speak(
          { voice: req.voice, text: req.text, speed: req.speed, pitch: req.pitch },
          { key: req.audience ?? req.guildId, signal, billing: session, grant },
        ));
      } else {
        const a = req.advanced ?? { voice: req.voice as AdvancedVoice };
        const onProgress = (p: { state: string; jobId?: string }) =>
          call.progress.forEach((f) => f(p.jobId === undefined ? { status: p.state } : { status: p.state, jobId: p.jobId }));
        const narrate: NarrateFn = options.narrate ?? ((r, o) => client.narrate(r, o));
        const result = await narrate(
          { ...a, text: req.text },
          { key: req.audience ?? req.guildId, signal, onProgress, billing: session, context: req.context },
        );
        ({ url, pk, seed } = result);
        downloaded = result.mp3;
      }
      // Signed URLs expire: download right away (unless the job runner already did).
      const mp3 = downloaded ?? (await client.download(url, { signal }));
      if (moments.downloaded.hasSubscribers) moments.downloaded.publish({ guildId: req.guildId, key, at: performance.now() });
      await session.close();
      // One history row per author of a merged request, each with the characters charged to them.
      for (const c of req.charges) {
        await Promise.resolve(
          history?.record({
            pk,
            endpoint: req.endpoint,
            url,
            voice: req.voice,
            characters: session.outcome === 'free' ? 0 : c.chars,
            text: req.text,
            guildId: c.guildId,
            userId: c.userId,
          }),
        ).catch((err: unknown) => options.logger?.warn({ err, guildId: req.guildId }, 'history write failed'));
      }
      const ready: ReadyAudio = { durationMs: 0, fromCache: false, key, url };
      if (seed !== undefined) ready.seed = seed;
      const uncached: ReadyAudio = { ...ready, mp3, durationMs: probeDurationMs(mp3) };
      if (!cacheable) return uncached;
      // The MP3 plays now, decoded in-process, while the cache makes the Ogg Opus for the next time:
      // the first packet no longer waits for the transcode.
      const put = cache.put(key, mp3, { endpoint: req.endpoint, pin: true }).then(
        (entry) => {
          lastCacheFailure = undefined;
          // The put's own pin holds the files until every waiter has taken its own (in the
          // microtasks that follow this one), then goes.
          if (entry.release) setImmediate(entry.release);
          return { mp3Path: entry.mp3Path, oggPath: entry.oggPath };
        },
        (error: unknown) => {
          // The characters are spent: the audio goes on uncached, never thrown away.
          cacheFailed(error, req.guildId);
          return null;
        },
      );
      caching.set(key, put);
      void put.finally(() => {
        if (caching.get(key) === put) caching.delete(key);
      });
      return { ...uncached, cachedFiles: put };
    } finally {
      await session.close();
    }
  }

  /** A cache hit spends neither characters nor rate budget (architecture: the budget is scarce). */
  async function cached(req: SynthesisRequest): Promise<ReadyAudio | null> {
    const input = cacheInput(req);
    if (!isCacheable(input)) return null;
    const key = AudioCache.key(input);
    // The same text again while its first copy is still being cached: that copy is the hit.
    await caching.get(key);
    const hit = await cache.get(key, { pin: true });
    if (!hit) return null;
    return {
      mp3Path: hit.mp3Path,
      oggPath: hit.oggPath,
      durationMs: hit.durationMs,
      fromCache: true,
      key,
      ...(hit.release ? { release: hit.release } : {}),
    };
  }

  return {
    async idle() {
      while (caching.size > 0) await Promise.all(caching.values());
    },
    async synthesize(req, opts = {}) {
      const { signal } = opts;
      if (signal?.aborted) throw abortError(signal, req.guildId);
      const hit = await cached(req);
      if (hit) return hit;
      const input = cacheInput(req);
      const key = AudioCache.key(input);
      const cacheable = isCacheable(input);
      // A waiter that joined another's call refused by *their* budget (another guild's, another
      // member's) tries on its own, so each member sees their own numbers.
      for (let tries = 0; ; tries++) {
        try {
          return await wait(req, key, cacheable, opts, tries < 2);
        } catch (err) {
          if (err !== RETRY_ALONE) throw err;
        }
      }
    },
    lookup: cached,
  };

  async function wait(
    req: SynthesisRequest,
    key: string,
    cacheable: boolean,
    opts: SynthesisOptions,
    mayShare: boolean,
  ): Promise<ReadyAudio> {
    const { signal, onProgress } = opts;
    // Identical in-flight requests share one call; it is aborted only when every waiter gave up.
    let call = mayShare ? inFlight.get(key) : undefined;
    const shared = call !== undefined;
    // Riding on another caller's request: this caller's grant is not spent; its owner gives it back now.
    if (shared) opts.grantUnneeded?.();
    if (!call) {
      const created: InFlight = {
        controller: new AbortController(),
        waiters: 0,
        progress: new Set(),
        promise: undefined as never,
        settled: false,
        grant: opts.grant,
      };
      created.promise = run(req, key, cacheable, created)
        .then((ready) => {
          created.callPin = ready.release;
          return ready;
        })
        .finally(() => {
          created.settled = true;
          if (inFlight.get(key) === created) inFlight.delete(key);
          if (created.waiters === 0) created.callPin?.();
        });
      // Waiters attach their own handlers; this keeps an abandoned call from being "unhandled".
      created.promise.catch(() => {});
      if (mayShare) inFlight.set(key, created);
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
      const { release: _callPin, cachedFiles, ...ready } = await Promise.race([current.promise, aborted]);
      const audio: ReadyAudio = { ...ready, ...(shared ? { shared: true } : {}) };
      // Every waiter holds a pin of its own (taken while the call's pin still holds the files).
      if (ready.mp3Path && cache.pin) return { ...audio, release: cache.pin(key) };
      return cachedFiles ? followCaching(audio, key, cachedFiles) : audio;
    } catch (err) {
      if (signal?.aborted) throw abortError(signal, req.guildId);
      if (shared && err instanceof BudgetRefusedError) throw RETRY_ALONE;
      throw err;
    } finally {
      if (onAbort) signal?.removeEventListener('abort', onAbort);
      if (onProgress) current.progress.delete(onProgress);
      current.waiters--;
      if (current.waiters === 0 && signal?.aborted) current.controller.abort(signal.reason);
      if (current.waiters === 0 && current.settled) current.callPin?.();
    }
  }

  /**
   * A miss's audio (a new object) that learns where its cached files are once they are written, and
   * pins them from then until it is released (a clip released before that never pins them).
   */
  function followCaching(audio: ReadyAudio, key: string, files: Promise<CachedFiles | null>): ReadyAudio {
    let released = false;
    let unpin: (() => void) | undefined;
    let pinned: CachedFiles | undefined;
    const cached = files.then((written) => {
      if (!written) return false;
      if (!released) {
        unpin = cache.pin?.(key);
        pinned = written;
      }
      return true;
    });
    const release = () => {
      released = true;
      pinned = undefined;
      unpin?.();
    };
    return { ...audio, release, cached, files: () => pinned };
  }
}

type CachedFiles = Pick<CachedAudio, 'mp3Path' | 'oggPath'>;

/** Thrown inside `synthesize` only: the shared call was refused by someone else's budget. */
const RETRY_ALONE = Symbol('retry alone');
