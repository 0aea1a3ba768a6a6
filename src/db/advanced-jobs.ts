import type { Db } from './database.ts';
import { Repo } from './table.ts';
import { bool, json, rowMapping, type Codec, type RowOf } from './rows.ts';
import type { Clock } from '../util/clock.ts';

// The advanced_jobs table (migrations/001, 004): advanced (Beta) jobs persisted from creation, so
// a restart resumes polling; leased by the process following each one.

type JobState = 'pending' | 'running' | 'succeeded' | 'failed' | 'delivered';

/** The advanced request as stored: the service's fields plus the text, which is cleared once the job ends. */
interface StoredJobRequest {
  text: string | null;
  voice?: string;
  tone?: string;
  model?: string;
  seed?: number;
  speed?: number;
  pitch?: number;
  temperature?: number;
}

export interface StoredJob {
  jobId: string;
  /** Secret (spec: X-Job-Token): never log it. */
  jobToken: string;
  guildId: string;
  userId: string;
  channelId: string;
  /** Where to deliver the result; opaque JSON owned by the caller. */
  delivery: unknown;
  request: StoredJobRequest;
  state: JobState;
  attempt: number;
  createdAt: number;
  updatedAt: number;
  url: string | null;
  pk: number | null;
  seed: number | null;
  errorCode: string | null;
  /** The process following the job, and until when; null when nobody holds it. */
  leaseOwner: string | null;
  leaseExpiresAt: number | null;
  /** Nobody wants the result any more (/clear, /leave): followed to its end for the ledger, never delivered. */
  discard: boolean;
  /** Characters the service charged at creation; null for jobs stored before migration 004. */
  chars: number | null;
}

interface NewJob extends Pick<StoredJob, 'jobId' | 'jobToken' | 'guildId' | 'userId' | 'channelId' | 'delivery' | 'request'> {
  state?: JobState;
  attempt?: number;
  /** The seed sent with this job, when known (a fixed or resubmit seed). */
  seed?: number;
  /** When the service created it (defaults to now). */
  createdAt?: number;
  /** The creating process holds the job from the start. */
  lease?: { owner: string; expiresAt: number };
  /** Characters the service charged at creation. */
  chars?: number;
}

/** Result fields a state change records; a field left out keeps its stored value. */
/** The result columns to set; a field absent or undefined is stored as null. */
type JobResultFields = { [K in 'url' | 'pk' | 'seed' | 'errorCode']?: StoredJob[K] | undefined };

type JobRow = RowOf<StoredJob, { delivery: string; request: string; discard: number }>;
const rows = rowMapping<StoredJob, JobRow>({ codecs: { delivery: json, request: json as Codec<StoredJobRequest, string>, discard: bool } });

const statements = (db: Db) => ({
  insert: db.prepare<[JobRow]>(`
    INSERT INTO advanced_jobs (job_id, job_token, guild_id, user_id, channel_id, delivery, request, state, attempt,
      created_at, updated_at, url, pk, seed, error_code, lease_owner, lease_expires_at, discard, chars)
    VALUES (@job_id, @job_token, @guild_id, @user_id, @channel_id, @delivery, @request, @state, @attempt,
      @created_at, @updated_at, @url, @pk, @seed, @error_code, @lease_owner, @lease_expires_at, @discard, @chars)`),
  select: db.prepare<[string], JobRow>('SELECT * FROM advanced_jobs WHERE job_id = ?'),
  // A field left NULL in the update keeps its value (COALESCE), so a poll without `seed` keeps the stored one.
  update: db.prepare<
    [
      {
        job_id: string;
        state: JobState;
        updated_at: number;
        url: string | null;
        pk: number | null;
        seed: number | null;
        error_code: string | null;
      },
    ]
  >(`
    UPDATE advanced_jobs SET state = @state, updated_at = @updated_at, url = COALESCE(@url, url),
      pk = COALESCE(@pk, pk), seed = COALESCE(@seed, seed), error_code = COALESCE(@error_code, error_code)
    WHERE job_id = @job_id`),
  unfinished: db.prepare<[], JobRow>(
    "SELECT * FROM advanced_jobs WHERE state IN ('pending', 'running', 'succeeded') ORDER BY created_at, job_id",
  ),
  clearText: db.prepare<[number, string]>(
    "UPDATE advanced_jobs SET request = json_set(request, '$.text', json('null')), updated_at = ? WHERE job_id = ?",
  ),
  deleteOld: db.prepare<[number]>("DELETE FROM advanced_jobs WHERE state IN ('failed', 'delivered') AND updated_at < ?"),
  // One statement reads and decides: the job is taken only if free or its holder's lease ran out.
  claim: db.prepare<[{ job_id: string; owner: string; now: number; until: number }]>(`
    UPDATE advanced_jobs SET lease_owner = @owner, lease_expires_at = @until
    WHERE job_id = @job_id AND state IN ('pending', 'running', 'succeeded')
      AND (lease_owner IS NULL OR lease_expires_at IS NULL OR lease_expires_at <= @now)`),
  renew: db.prepare<[{ job_id: string; owner: string; until: number }]>(
    'UPDATE advanced_jobs SET lease_expires_at = @until WHERE job_id = @job_id AND lease_owner = @owner',
  ),
  releaseAll: db.prepare<[string]>('UPDATE advanced_jobs SET lease_owner = NULL, lease_expires_at = NULL WHERE lease_owner = ?'),
  discard: db.prepare<[number, string]>('UPDATE advanced_jobs SET discard = 1, updated_at = ? WHERE job_id = ?'),
});

export class JobsRepo extends Repo<ReturnType<typeof statements>> {
  constructor(db: Db, clock?: Clock) {
    super(db, clock, statements);
  }

  /** Persists a job the service just created. */
  async insert(input: NewJob): Promise<StoredJob> {
    const now = this.clock.now();
    const job: StoredJob = {
      jobId: input.jobId,
      jobToken: input.jobToken,
      guildId: input.guildId,
      userId: input.userId,
      channelId: input.channelId,
      delivery: input.delivery ?? null,
      request: input.request,
      state: input.state ?? 'pending',
      attempt: input.attempt ?? 1,
      createdAt: input.createdAt ?? now,
      updatedAt: now,
      url: null,
      pk: null,
      seed: input.seed ?? null,
      errorCode: null,
      leaseOwner: input.lease?.owner ?? null,
      leaseExpiresAt: input.lease?.expiresAt ?? null,
      discard: false,
      chars: input.chars ?? null,
    };
    const row = rows.toRow(job);
    await this.write(() => this.sql.insert.run(row));
    return rows.fromRow(row);
  }

  get(jobId: string): StoredJob | undefined {
    const row = this.sql.select.get(jobId);
    return row ? rows.fromRow(row) : undefined;
  }

  /** Moves the job to `state`, recording result fields given (others keep their values). Resolves false for an unknown job. */
  updateState(jobId: string, state: JobState, result: JobResultFields = {}): Promise<boolean> {
    const params = {
      job_id: jobId,
      state,
      updated_at: this.clock.now(),
      url: result.url ?? null,
      pk: result.pk ?? null,
      seed: result.seed ?? null,
      error_code: result.errorCode ?? null,
    };
    return this.write(() => this.sql.update.run(params).changes > 0);
  }

  /** Jobs not yet delivered nor failed: still to poll (pending/running) or to deliver (succeeded), oldest first. */
  listUnfinished(): StoredJob[] {
    return this.sql.unfinished.all().map(rows.fromRow);
  }

  /** The result reached its destination. */
  markDelivered(jobId: string): Promise<boolean> {
    return this.updateState(jobId, 'delivered');
  }

  /** Drops the text from the stored request (privacy: kept only while it may be needed to resubmit). */
  clearText(jobId: string): Promise<boolean> {
    return this.write(() => this.sql.clearText.run(this.clock.now(), jobId).changes > 0);
  }

  /** Deletes ended jobs (failed, delivered) last touched before `before` (ms), tokens and all; resolves with how many. */
  deleteEndedBefore(before: number): Promise<number> {
    return this.write(() => this.sql.deleteOld.run(before).changes);
  }

  /** Takes the lease of an unfinished job until `until` if it is free or its holder's lease expired. */
  claim(jobId: string, owner: string, until: number): Promise<boolean> {
    return this.write(() => this.sql.claim.run({ job_id: jobId, owner, now: this.clock.now(), until }).changes > 0);
  }

  /** Extends our lease; resolves false when the job is no longer ours (another process took it over). */
  renew(jobId: string, owner: string, until: number): Promise<boolean> {
    return this.write(() => this.sql.renew.run({ job_id: jobId, owner, until }).changes > 0);
  }

  /** Gives back every lease `owner` holds (a clean shutdown). */
  releaseAll(owner: string): Promise<number> {
    return this.write(() => this.sql.releaseAll.run(owner).changes);
  }

  /** Nobody wants the job's result any more: it is still followed to its end, never delivered. */
  markDiscard(jobId: string): Promise<boolean> {
    return this.write(() => this.sql.discard.run(this.clock.now(), jobId).changes > 0);
  }
}
