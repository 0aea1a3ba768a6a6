import { Counter, Gauge, Histogram, Registry, collectDefaultMetrics } from 'prom-client';
import { unhealthy, type SessionFigures } from './session-health.ts';
import { VOICE_RECOVERY_CAUSES, type VoiceRecoveryCause } from '../voice/session.ts';

// The bot's Prometheus metrics, one registry per bot (tests run several bots in one
// process). Code elsewhere never imports prom-client: it reports through the small methods of
// BotMetrics (wired in src/ops/instrument.ts), so the names and their meaning live here only.
// No label carries a guild or user id: labels are endpoints, HTTP statuses and outcomes.

/** How one message (an accepted or refused utterance) ended; each is counted once. */
export type MessageOutcome = 'spoken' | 'dropped_stale' | 'refused' | 'failed' | 'skipped';
const MESSAGE_OUTCOMES = ['spoken', 'dropped_stale', 'refused', 'failed', 'skipped'] as const satisfies readonly MessageOutcome[];

/** Gauges read when scraped (the rate window from the shared store, live sessions, the queues). */
interface MetricSources {
  /** Grants inside the current window of `endpoint`, as the shared store counts them. */
  rateWindowUsed?: (endpoint: 'standard' | 'advanced') => number | Promise<number>;
  voiceSessions?: () => number;
  queueDepth?: () => number;
  /** Each voice session's figures over the last minutes (session-health.ts). */
  sessionHealth?: () => readonly SessionFigures[];
}

/** Every metric name the bot exports (the dashboard test checks its queries against these). */
export const METRIC_NAMES = [
  'yomiage_tts_requests_total',
  'yomiage_rate_window_used',
  'yomiage_speech_messages_total',
  'yomiage_speech_merged_total',
  'yomiage_speech_wait_seconds',
  'yomiage_voice_first_packet_seconds',
  'yomiage_voice_recoveries_total',
  'yomiage_cache_hits_total',
  'yomiage_cache_misses_total',
  'yomiage_characters_spent_total',
  'yomiage_voice_sessions',
  'yomiage_queue_depth',
  'yomiage_voice_session_heard_20s_min_ratio',
  'yomiage_voice_session_wait_p95_max_seconds',
  'yomiage_voice_sessions_unhealthy',
] as const;

/** The bot's metrics and the registry that serves them. */
export class BotMetrics {
  readonly registry = new Registry();
  readonly #requests: Counter<'endpoint' | 'status'>;
  readonly #messages: Counter<'outcome'>;
  readonly #merged: Counter;
  readonly #wait: Histogram;
  readonly #firstPacket: Histogram;
  readonly #recoveries: Counter<'cause'>;
  readonly #hits: Counter;
  readonly #misses: Counter;
  readonly #chars: Counter<'endpoint'>;
  #sources: MetricSources = {};

  constructor(options: { defaultMetrics?: boolean } = {}) {
    const registers = [this.registry];
    if (options.defaultMetrics ?? true) collectDefaultMetrics({ register: this.registry });
    this.#requests = new Counter({
      name: 'yomiage_tts_requests_total',
      help: 'HTTP requests to the TTS service by endpoint (standard, advanced, poll) and status (the HTTP status, or "network" when no answer came)',
      labelNames: ['endpoint', 'status'],
      registers,
    });
    const sources = () => this.#sources;
    new Gauge({
      name: 'yomiage_rate_window_used',
      help: 'Requests granted in the current rate window (30 standard / 10 advanced a minute per IP). It reads the shared window (SQLite of the host, or RATE_STORE_URL), so every process reports the same value: aggregate with max, never sum',
      labelNames: ['endpoint'],
      registers,
      // prom-client's AggregatorRegistry (the shard manager) takes the max over processes.
      aggregator: 'max',
      async collect() {
        const used = sources().rateWindowUsed;
        if (!used) return;
        try {
          for (const endpoint of ['standard', 'advanced'] as const) this.set({ endpoint }, await used(endpoint));
        } catch {
          // The shared store does not answer (RATE_STORE_URL down): no value rather than a stale one,
          // and the rest of /metrics is still served.
          this.reset();
        }
      },
    });
    this.#messages = new Counter({
      name: 'yomiage_speech_messages_total',
      help: 'Messages (auto-read, /say, /narrate), each counted once by its final outcome: spoken (played or attached), dropped_stale (auto-read too old when its turn came), refused (budget or member queue), failed (synthesis or delivery failed), skipped (nobody could hear it, /skip before its clip started, /clear, a leave)',
      labelNames: ['outcome'],
      registers,
    });
    for (const outcome of MESSAGE_OUTCOMES) this.#messages.inc({ outcome }, 0);
    this.#merged = new Counter({
      name: 'yomiage_speech_merged_total',
      help: 'Messages spoken in the request of an earlier message (a request carrying n messages counts n - 1): requests saved by merging',
      registers,
    });
    this.#wait = new Histogram({
      name: 'yomiage_speech_wait_seconds',
      help: "From a message's arrival to the start of the clip that carries it (its first voice packet, or its attachment being posted)",
      buckets: [0.25, 0.5, 1, 2, 3, 5, 10, 15, 30, 60, 120, 300],
      registers,
    });
    this.#firstPacket = new Histogram({
      name: 'yomiage_voice_first_packet_seconds',
      help: "From a clip ready to play (handed to the guild's voice connection, which may first wait for it to be ready) to its first voice packet sent",
      buckets: [0.005, 0.01, 0.02, 0.04, 0.06, 0.1, 0.2, 0.5, 1, 3],
      registers,
    });
    this.#recoveries = new Counter({
      name: 'yomiage_voice_recoveries_total',
      help: "Voice calls recovered without anyone asking, by cause: worker_crash / worker_hang (the call's voice worker was replaced and the call rejoined from a new one), stall (speech waiting, no packet sent for seconds: the call was rejoined), play_timeout (a clip not started, or not ended, in time was ended), resumed / rejoined / server_moved (Discord dropped the connection and it came back)",
      labelNames: ['cause'],
      registers,
    });
    for (const cause of VOICE_RECOVERY_CAUSES) this.#recoveries.inc({ cause }, 0);
    this.#hits = new Counter({
      name: 'yomiage_cache_hits_total',
      help: 'Speech served from the audio cache (no request to the service)',
      registers,
    });
    this.#misses = new Counter({
      name: 'yomiage_cache_misses_total',
      help: 'Speech not in the audio cache (made by the service, or shared with an identical request in flight)',
      registers,
    });
    this.#chars = new Counter({
      name: 'yomiage_characters_spent_total',
      help: 'Account characters the service charged, each counted once when the ledger records the charge (refunds of failed jobs are not subtracted)',
      labelNames: ['endpoint'],
      registers,
    });
    // Gauges read at scrape time from the bot's collaborators (none yet: no value).
    const scraped = (name: string, help: string, read: (from: MetricSources) => number | undefined) =>
      new Gauge({
        name,
        help,
        registers,
        collect() {
          const n = read(sources());
          if (n !== undefined) this.set(n);
        },
      });
    scraped('yomiage_voice_sessions', 'Voice channels the bot is connected to', (from) => from.voiceSessions?.());
    scraped('yomiage_queue_depth', 'Messages accepted and not yet delivered (waiting, being synthesised, or ready)', (from) =>
      from.queueDepth?.(),
    );
    // Per-session health, summed up without a guild or channel label (each session's own figures
    // are on the dashboard and in /diagnose): the worst session, and how many are unhealthy, over
    // the sessions that read chat in the last 5 minutes. With none, nothing went unheard: 1, 0, 0.
    const healthGauge = (name: string, help: string, aggregator: 'min' | 'max' | 'sum', read: (all: readonly SessionFigures[]) => number) =>
      new Gauge({
        name,
        help,
        registers,
        aggregator,
        collect() {
          const all = sources().sessionHealth?.();
          if (all) this.set(read(all));
        },
      });
    healthGauge(
      'yomiage_voice_session_heard_20s_min_ratio',
      'The lowest share, among voice sessions, of auto-read messages heard within 20 s of being written over the last 5 minutes (a message dropped as too old or whose speech failed counts as not heard; 1 while no session read any). Aggregate with min',
      'min',
      (all) => Math.min(1, ...all.map((f) => f.ratio ?? 1)),
    );
    healthGauge(
      'yomiage_voice_session_wait_p95_max_seconds',
      "The highest 95th-percentile wait, among voice sessions, from an auto-read message's arrival to its first voice packet over the last 5 minutes (0 while none was heard). Aggregate with max",
      'max',
      (all) => Math.max(0, ...all.map((f) => f.p95WaitMs ?? 0)) / 1000,
    );
    healthGauge(
      'yomiage_voice_sessions_unhealthy',
      'Voice sessions that heard less than 80% of at least 5 auto-read messages within 20 s over the last 5 minutes',
      'sum',
      (all) => all.filter(unhealthy).length,
    );
  }

  /** Where the scrape-time gauges read from (set once the bot's collaborators exist). */
  setSources(sources: MetricSources): void {
    this.#sources = sources;
  }

  /** One HTTP exchange with the service; `status` undefined when no answer came. */
  ttsRequest(endpoint: string, status: number | undefined): void {
    this.#requests.inc({ endpoint, status: status === undefined ? 'network' : String(status) });
  }

  messages(outcome: MessageOutcome, count = 1): void {
    if (count > 0) this.#messages.inc({ outcome }, count);
  }

  merged(count: number): void {
    if (count > 0) this.#merged.inc(count);
  }

  waited(seconds: number): void {
    this.#wait.observe(Math.max(0, seconds));
  }

  firstPacket(seconds: number): void {
    this.#firstPacket.observe(Math.max(0, seconds));
  }

  /** One voice call recovered (src/voice/session.ts, VoiceRecoveryCause). */
  voiceRecovery(cause: VoiceRecoveryCause): void {
    this.#recoveries.inc({ cause });
  }

  cache(hit: boolean): void {
    (hit ? this.#hits : this.#misses).inc();
  }

  charged(endpoint: 'standard' | 'advanced', chars: number): void {
    if (chars > 0) this.#chars.inc({ endpoint }, chars);
  }

  /** The registry's text exposition. */
  text(): Promise<string> {
    return this.registry.metrics();
  }
}
