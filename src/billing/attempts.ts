/**
 * What the client tells its caller about charges, so a ledger can follow the service's charging
 * model (docs/operating.md, "Characters are money"). Every attempt to an endpoint that charges (standard
 * speech, job creation) ends in exactly one `attempt` event; a job that fails is refunded. The
 * client (src/tts) reports these; a charge session (src/billing/charge-session.ts) records them.
 */

/** How one attempt may have cost characters. */
export type AttemptOutcome =
  /** Answered 4xx (429 and quota_exceeded included), notice audio, or never left this host. */
  | 'not_charged'
  /** 5xx, a timeout or a broken connection after sending, or aborted while in flight. */
  | 'maybe_charged'
  /** Standard 200 with our text (`pk`), or a job created (202, `jobId`). */
  | 'charged';

export type BillingEvent =
  | {
      kind: 'attempt';
      endpoint: 'standard' | 'advanced';
      attempt: number;
      outcome: AttemptOutcome;
      pk?: number | undefined;
      jobId?: string;
    }
  /** The job failed: the service gives its characters back. */
  | { kind: 'job_refunded'; jobId: string };

/** Hooks a caller passes with a request to keep its ledger in step (all optional). */
export interface BillingHooks {
  /**
   * Awaited right before each attempt that may charge is sent (after the rate budget granted it).
   * Throwing stops the request without sending (e.g. the character budget refused a resubmit).
   */
  beforeSend?(e: { endpoint: 'standard' | 'advanced'; attempt: number }): Promise<void>;
  /** Called synchronously, in order, for every event. */
  onEvent?(e: BillingEvent): void;
}
