import type { BudgetLike, ReadyAudio, SynthesisOptions, SynthesisRequest, Synthesizer } from '../../src/speech/synthesis/synthesize.ts';
import type { Charge, Reservation } from '../../src/billing/ledger.ts';
import type { BudgetRefusal } from '../../src/billing/policy.ts';
import { type UtteranceInput, voiceAudience } from '../../src/speech/queue/utterance.ts';

interface Call {
  req: SynthesisRequest;
  signal: AbortSignal | undefined;
  resolve: () => void;
  reject: (err: Error) => void;
}

/** A synthesizer that records each request; `manual` calls wait for release(). */
export class FakeSynth implements Synthesizer {
  calls: Call[] = [];
  inFlight = 0;
  maxInFlight = 0;
  manual: boolean;
  failWhen: (req: SynthesisRequest) => Error | null;
  constructor(options: { manual?: boolean; failWhen?: (req: SynthesisRequest) => Error | null } = {}) {
    this.manual = options.manual ?? false;
    this.failWhen = options.failWhen ?? (() => null);
  }
  synthesize(req: SynthesisRequest, options: SynthesisOptions = {}): Promise<ReadyAudio> {
    this.inFlight++;
    this.maxInFlight = Math.max(this.maxInFlight, this.inFlight);
    return new Promise<void>((resolve, reject) => {
      this.calls.push({ req, signal: options.signal, resolve, reject });
      options.signal?.addEventListener('abort', () => reject(options.signal!.reason), { once: true });
      if (!this.manual) resolve();
    })
      .then(() => {
        const err = this.failWhen(req);
        if (err) throw err;
        return { mp3: Buffer.from(req.text), durationMs: 100, fromCache: false, key: `k:${req.text}` };
      })
      .finally(() => this.inFlight--);
  }
  /** Lets the i-th call finish. */
  release(i: number): void {
    this.calls[i]!.resolve();
  }
}

/** The audience of guild g's voice session in these tests (each guild's own, as channel ids are unique). */
export function sessionOf(g: string): string {
  return voiceAudience(`vc-${g}`);
}

let n = 0;
/** An auto-read message in guild g by user u, for the guild's voice session unless `extra` names a channel. */
export function msg(g: string, u: string, text: string, extra: Partial<UtteranceInput> = {}): UtteranceInput {
  n++;
  const audience = extra.channelId === undefined ? { audience: sessionOf(g) } : {};
  return {
    guildId: g,
    userId: u,
    channelId: 'c1',
    kind: 'auto',
    text,
    voice: 'ja-JP-Wavenet-B',
    speed: 1,
    pitch: 0,
    meta: n,
    ...audience,
    ...extra,
  };
}

/**
 * A ledger that holds everything (or refuses with `refuse`) and logs each call as
 * `reserve:u1=3,u2=4`, `sent`, `charge`, `uncertain`, `release`, `refund:<jobId>`.
 */
export function fakeLedger(
  options: { log?: string[]; refuse?: (charges: readonly Charge[]) => BudgetRefusal | undefined } = {},
): BudgetLike & { log: string[] } {
  const log = options.log ?? [];
  let n = 0;
  const reservation = (charges: readonly Charge[]): Reservation => ({
    id: `r${++n}`,
    periodStart: 0,
    charges,
    total: charges.reduce((a, c) => a + c.chars, 0),
    createdAt: 0,
  });
  return {
    log,
    async reserve(charges) {
      log.push(`reserve:${charges.map((c) => `${c.userId}=${c.chars}`).join(',')}`);
      const refusal = options.refuse?.(charges);
      return refusal ? { ok: false, refusal } : { ok: true, reservation: reservation(charges) };
    },
    async markSent(r) {
      log.push('sent');
      return { ok: true, reservation: r };
    },
    async charge() {
      log.push('charge');
      return 'charged';
    },
    async uncertain() {
      log.push('uncertain');
    },
    async release() {
      log.push('release');
    },
    async refundJob(jobId) {
      log.push(`refund:${jobId}`);
      return true;
    },
  };
}
