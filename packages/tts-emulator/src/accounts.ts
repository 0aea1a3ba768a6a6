import type { EmulatorAccount } from './types.ts';

/** Monthly characters per plan when an account is created without one (the service's published plans, 2023 prices). */
export const PLAN_ALLOWANCE = { free: 5_000, paid: 1_000_000 } as const;

/** An account as the running emulator sees it. */
export interface AccountState {
  readonly token: string;
  plan: 'free' | 'paid';
  allowance: number;
  remaining: number;
  readonly userId: string;
  /** Generation history (Sentence): audio hash -> pk. A hit is not charged again (as the service documents). */
  readonly history: Map<string, number>;
  /** Characters charged since start or reset, net of refunds: what the account paid. */
  charged: number;
}

/** Accounts by access token and logged-in web sessions by `sessionid`. */
export class Accounts {
  readonly #initial: EmulatorAccount[];
  readonly #sessions: ReadonlyMap<string, string>;
  #byToken = new Map<string, AccountState>();

  constructor(accounts: readonly EmulatorAccount[], sessions: readonly { sessionid: string; token: string }[]) {
    this.#initial = accounts.map((a) => ({ ...a }));
    this.#sessions = new Map(sessions.map((s) => [s.sessionid, s.token]));
    this.reset();
  }

  /** The account whose access token is `token`. */
  byToken(token: string): AccountState | undefined {
    return this.#byToken.get(token);
  }

  all(): AccountState[] {
    return [...this.#byToken.values()];
  }

  /** The account logged in with web session `sessionid`. */
  bySession(sessionid: string): AccountState | undefined {
    const token = this.#sessions.get(sessionid);
    return token === undefined ? undefined : this.#byToken.get(token);
  }

  /** Changes an account's remaining characters or plan, creating the account if it is new. */
  upsert(patch: { token: string; remaining?: number | undefined; plan?: 'free' | 'paid' | undefined }): AccountState {
    let account = this.#byToken.get(patch.token);
    if (!account) {
      const plan = patch.plan ?? 'free';
      account = this.#create({ token: patch.token, plan, allowance: PLAN_ALLOWANCE[plan] }, this.#byToken.size);
      this.#byToken.set(account.token, account);
    }
    if (patch.plan !== undefined) account.plan = patch.plan;
    if (patch.remaining !== undefined) account.remaining = patch.remaining;
    return account;
  }

  /** Back to the configured accounts with their starting balances and empty histories. */
  reset(): void {
    this.#byToken = new Map(this.#initial.map((a, i) => [a.token, this.#create(a, i)]));
  }

  #create(a: EmulatorAccount, index: number): AccountState {
    return {
      token: a.token,
      plan: a.plan,
      allowance: a.allowance,
      remaining: a.remaining ?? a.allowance,
      userId: a.userId ?? `user-${index + 1}`,
      history: new Map(),
      charged: 0,
    };
  }
}
