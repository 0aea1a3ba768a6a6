/**
 * The emulated service's state, shared by its endpoints: accounts and their charges, the audio
 * bucket, the jobs, the rate windows, the planned-limit counters and the statistics.
 */
import { createHmac, randomBytes } from 'node:crypto';
import { Accounts, type AccountState } from './accounts.ts';
import { AudioStore } from './audio.ts';
import { JobStore } from './jobs.ts';
import type { EmulatorOptions, EmulatorStats, PlannedCounter } from './types.ts';
import { resolveSpeechEngine, type SpeechEngine } from './speech.ts';
import { SlidingWindow } from './windows.ts';

/** Spec: Limits, "Planned advanced limits" (observed only, never enforced). */
const PLANNED = {
  jobCreationsPerUserMinute: { limit: 30, windowMs: 60_000 },
  jobCreationsPerUserHour: { limit: 180, windowMs: 3_600_000 },
  statusChecksPerJobMinute: { limit: 120, windowMs: 60_000 },
  statusChecksTotalMinute: { limit: 600, windowMs: 60_000 },
  badJobChecksPerIpMinute: { limit: 30, windowMs: 60_000 },
} as const satisfies Record<keyof EmulatorStats['planned'], { limit: number; windowMs: number }>;

type PlannedKey = keyof typeof PLANNED;

/** What the statistics count, except the planned limits (kept in their windows). */
type Counters = Omit<EmulatorStats, 'planned' | 'rate'>;

function emptyCounters(): Counters {
  return {
    requests: { standard: 0, advanced: 0, poll: 0, audio: 0, control: 0, other: 0 },
    statuses: { standard: {}, advanced: {}, poll: {}, audio: {}, other: {} },
    jobsCreated: 0,
    charactersCharged: 0,
    notices: 0,
  };
}

export class ServiceState {
  readonly options: EmulatorOptions;
  readonly accounts: Accounts;
  readonly voices: ReadonlySet<string>;
  /** What makes the audio on this machine (the `speech` option resolved). */
  readonly speech: SpeechEngine;
  readonly audio: AudioStore;
  readonly jobs: JobStore;
  readonly standardRate: SlidingWindow;
  readonly advancedRate: SlidingWindow;
  readonly planned: Record<PlannedKey, SlidingWindow>;
  counters = emptyCounters();
  /** The listening http://host:port, set once the server listens. */
  baseUrl = '';
  /** Signs advanced audio URLs; fresh per process, like a rotated bucket key. */
  readonly #urlKey = randomBytes(32);
  #pk = 0;
  /** The notice audio's `pk`, fixed once it was first made. */
  noticePk: number | undefined;

  constructor(options: EmulatorOptions) {
    this.options = options;
    this.accounts = new Accounts(options.accounts, options.sessions);
    this.voices = new Set(options.voices);
    this.speech = resolveSpeechEngine(options.speech, options.espeakPath);
    this.audio = new AudioStore({
      engine: this.speech,
      espeakPath: options.espeakPath,
      secondsPerChar: options.secondsPerChar,
      onAudio: options.onAudio,
    });
    this.jobs = new JobStore(options.jobs);
    this.standardRate = new SlidingWindow(options.rate.standard.limit, options.rate.standard.windowMs);
    this.advancedRate = new SlidingWindow(options.rate.advanced.limit, options.rate.advanced.windowMs);
    this.planned = Object.fromEntries(Object.entries(PLANNED).map(([k, v]) => [k, new SlidingWindow(v.limit, v.windowMs)])) as Record<
      PlannedKey,
      SlidingWindow
    >;
  }

  now(): number {
    return this.options.now();
  }

  /** Where clients download audio and the base of the session Referer check. */
  get publicBase(): string {
    return (this.options.publicBaseUrl ?? this.baseUrl).replace(/\/+$/, '');
  }

  /** The next generation id (`pk`), shared by standard audio and jobs as on the service. */
  nextPk(): number {
    return ++this.#pk;
  }

  charge(account: AccountState, chars: number): void {
    account.remaining -= chars;
    account.charged += chars;
    this.counters.charactersCharged += chars;
  }

  refund(account: AccountState, chars: number): void {
    account.remaining += chars;
    account.charged -= chars;
    this.counters.charactersCharged -= chars;
  }

  /** The signature of an advanced audio URL valid until `expires` (seconds since the epoch). */
  sign(hash: string, expires: number): string {
    return createHmac('sha256', this.#urlKey).update(`${hash}:${expires}`).digest('hex');
  }

  stats(): EmulatorStats {
    const now = this.now();
    const planned = {} as Record<PlannedKey, PlannedCounter>;
    for (const key of Object.keys(PLANNED) as PlannedKey[]) {
      const w = this.planned[key];
      planned[key] = { limit: w.limit, windowMs: w.windowMs, current: w.current(now), max: w.max };
    }
    const c = this.counters;
    return {
      requests: { ...c.requests },
      statuses: Object.fromEntries(Object.entries(c.statuses).map(([k, v]) => [k, { ...v }])) as EmulatorStats['statuses'],
      jobsCreated: c.jobsCreated,
      charactersCharged: c.charactersCharged,
      notices: c.notices,
      rate: { standard: this.standardRate.state(now), advanced: this.advancedRate.state(now) },
      planned,
    };
  }

  /** Back to the starting accounts, jobs, windows and statistics. */
  reset(): void {
    this.accounts.reset();
    this.jobs.clear();
    this.standardRate.clear();
    this.advancedRate.clear();
    for (const w of Object.values(this.planned)) w.clear();
    this.counters = emptyCounters();
  }
}
