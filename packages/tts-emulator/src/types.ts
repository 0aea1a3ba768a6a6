/** Public types of the TTS service emulator (re-exported by index.ts). */
import type { AudioInput } from './audio.ts';
import type { SpeechEngine, SpeechOption } from './speech.ts';

export interface EmulatorAccount {
  /** The account access token, 64 characters. */
  token: string;
  plan: 'free' | 'paid';
  /** Monthly characters. */
  allowance: number;
  /** Characters left this month; defaults to `allowance`. */
  remaining?: number;
  /** Defaults to `user-<n>`. */
  userId?: string;
}

interface RateOption {
  limit: number;
  windowMs: number;
}

export interface EmulatorOptions {
  /** 0 = ephemeral. */
  port: number;
  host: string;
  accounts: EmulatorAccount[];
  /** Logged-in web sessions (session authentication), each bound to an account by its token. */
  sessions: { sessionid: string; token: string }[];
  /** Standard voice ids. */
  voices: readonly string[];
  /** Read the client IP from the first X-Forwarded-For entry. */
  trustProxy: boolean;
  /** Expose the /__emulator/ control API. */
  control: boolean;
  rate: { standard: RateOption; advanced: RateOption };
  /** Job state machine timings. */
  jobs: { pendingMs: number; runningMs: number; minPollAfterMs: number; pollAfterMs: number };
  signedUrlTtlMs: number;
  /** Extra latency of the standard endpoint. */
  synthesisDelayMs: number;
  /** content_policy_violation words. */
  blockList: string[];
  /** Base for audio URLs and the session Referer check; default the listening http://host:port. */
  publicBaseUrl?: string;
  /** Clock for rate windows (and so `reset_in`), job timings and URL expiry. */
  now: () => number;
  /**
   * Waits for `ms` on the same clock as `now`: synthesis delay, injected latency and fault delays.
   * A benchmark that runs time faster passes both from one scaled clock.
   */
  sleep: (ms: number) => Promise<void>;
  /**
   * What the audio is: `espeak` reads the text with espeak-ng (real words; an error at start when
   * it is missing), `tones` a deterministic tone per character, `auto` espeak-ng when it runs here
   * and tones otherwise. Default `tones`, so tests hear the same audio on every machine; the
   * emulator command and the playground ask for `auto`.
   */
  speech: SpeechOption;
  /** The espeak-ng binary. */
  espeakPath: string;
  /**
   * Seconds of tone audio per character at speed 1.0 (default 0.12, about a syllable's length;
   * espeak-ng reads at its own pace). A test about what becomes of a text, not how long it plays,
   * passes a smaller value: every second the tones make is decoded, transcoded and played by the bot.
   */
  secondsPerChar: number;
  /**
   * Called with every audio file the emulator makes (once per file while it stays in memory): the
   * playground uses it to tell which text the bot is playing.
   */
  onAudio?: (made: { hash: string; input: AudioInput; bytes: Buffer }) => void;
}

export type Target = 'standard' | 'advanced' | 'poll' | 'audio';

export interface RequestLogEntry {
  at: number;
  ip: string | null;
  method: string;
  path: string;
  target: Target | 'control' | 'other';
  /** 0 while the request is still being answered. */
  status: number;
  /** Secret headers (token, x-job-token, cookie, x-csrftoken, authorization) masked as '***'. */
  headers: Record<string, string>;
  /** Parsed JSON, else the raw string, null when empty. */
  body: unknown;
  /**
   * Outcome: the advanced/poll `code`; for the standard endpoint the `error` message, or
   * 'notice' for notice audio; for failed jobs the failure code; for HTML 403s 'csrf'.
   */
  code?: string;
}

export interface Fault {
  target: Target;
  count: number;
  status: number;
  /**
   * JSON body (a string is sent as-is as text/html). `null` = no body. `undefined` = the spec's
   * body for that status and target when it has one (standard 500 `{error:'Internal server
   * error'}`, advanced 500 internal_error, 503 tts_retry_exhausted, ...), otherwise no body.
   */
  body?: unknown;
  /**
   * Advanced and poll targets: answer with the spec's body for this code (its message,
   * `error_code` for unsupported_location, `retry_after` 1 for rate_limited) when `body` is undefined.
   */
  code?: string | undefined;
  headers?: Record<string, string> | undefined;
  delayMs?: number | undefined;
  /**
   * Standard and advanced targets: handle the request as usual first (charged, recorded in the
   * account's history, a job created), then answer with the fault: the service charged and the
   * answer was lost. Without it a fault replaces the request, which is neither processed nor charged.
   */
  chargeFirst?: boolean | undefined;
}

export interface JobOutcome {
  /** How many of the next created jobs get this outcome; default 1. */
  count?: number | undefined;
  /** 'timeout' = runs, then fails with job_timeout. */
  outcome: 'succeed' | 'fail' | 'stay_pending' | 'timeout';
  /** Failure code for 'fail'; default internal_error. */
  code?: string | undefined;
}

/** One planned (observed, not enforced) advanced limit: spec Limits, "Planned advanced limits". */
export interface PlannedCounter {
  limit: number;
  windowMs: number;
  /** Largest count of any key in the window right now. */
  current: number;
  /** Largest count of any key in one window since start or reset. */
  max: number;
}

export interface EmulatorStats {
  /** Requests received per target. */
  requests: Record<Target | 'control' | 'other', number>;
  /** Responses sent per target and status, e.g. `{ standard: { 200: 3, 429: 1 } }`. */
  statuses: Record<Target | 'other', Record<number, number>>;
  jobsCreated: number;
  /** Every account together, net of refunds. */
  charactersCharged: number;
  notices: number;
  /**
   * The enforced per-IP rate windows (spec: Limits): `current` is the busiest client's count in
   * the window now, `retryInMs` when that client may send again once it is full (0: it may now).
   */
  rate: Record<'standard' | 'advanced', RateWindowState>;
  planned: {
    /** Job creations per user (client IP when not logged in): 30 / 60 s. */
    jobCreationsPerUserMinute: PlannedCounter;
    /** Job creations per user: 180 / hour. */
    jobCreationsPerUserHour: PlannedCounter;
    /** Status checks of one job per logged-in user or job token + job id: 120 / 60 s. */
    statusChecksPerJobMinute: PlannedCounter;
    /** Total status checks per logged-in user or job token: 600 / 60 s. */
    statusChecksTotalMinute: PlannedCounter;
    /** Checks of nonexistent or unauthorized jobs per client IP: 30 / 60 s. */
    badJobChecksPerIpMinute: PlannedCounter;
  };
}

interface RateWindowState {
  limit: number;
  windowMs: number;
  current: number;
  retryInMs: number;
}

export interface AccountCharges {
  userId: string;
  plan: 'free' | 'paid';
  charged: number;
  remaining: number;
}

export interface Emulator {
  baseUrl: string;
  port: number;
  options: EmulatorOptions;
  /** The engine making the audio (`speech: 'auto'` resolved on this machine). */
  speech: SpeechEngine;
  close(): Promise<void>;
  requests(): RequestLogEntry[];
  clearRequests(): void;
  injectFault(f: Fault): void;
  setLatency(target: Target | 'all', ms: number): void;
  nextJobs(o: JobOutcome): void;
  setRemaining(token: string, remaining: number): void;
  /** Characters charged to the account of `token` since start or reset, net of refunds (0 if unknown). */
  charged(token: string): number;
  /** Per account (by user id, never the token): characters charged net of refunds, and left this month. */
  accounts(): AccountCharges[];
  stats(): EmulatorStats;
  reset(): void;
}
