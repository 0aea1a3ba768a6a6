import { Events, type Client } from 'discord.js';
import type { Clock } from '../../util/clock.ts';
import type { Logger } from '../../util/log.ts';
import type { BotAccounts } from './accounts.ts';
import { BotError } from '../errors.ts';

/**
 * The extra accounts' logins (EXTRA_DISCORD_TOKENS). One that cannot log in (a wrong token, one
 * reset in the Developer Portal, Discord not answering), at start or later (the gateway closes
 * with 4004 Authentication failed, or another code it does not come back from), costs only
 * itself: it is logged, reported once (an error line: ERROR_WEBHOOK_URL), left out of every
 * account choice, and tried again after a wait that doubles, while the main account and the
 * other extras serve on. Each attempt has a new client: discord.js destroys one whose login
 * failed, and a destroyed client does not connect again.
 */

const EXTRA_LOGIN_DEFAULTS = {
  /** The wait before the first retry (EXTRA_ACCOUNT_RETRY_SECONDS); it doubles at each failure. */
  firstRetryMs: 60_000,
  /** The longest wait between two attempts. */
  maxRetryMs: 3_600_000,
} as const;

interface ExtraLoginsOptions {
  accounts: BotAccounts;
  /** The extra accounts' tokens, in the operator's order (the accounts' extras, one each). */
  tokens: readonly string[];
  /** A new client for an extra account. */
  makeClient: () => Client;
  /** What the bot listens to on an extra account's client, attached to each new one. */
  wire: (client: Client) => void;
  logger: Logger;
  clock: Clock;
  firstRetryMs?: number;
  maxRetryMs?: number;
}

export class ExtraLogins {
  readonly #o: ExtraLoginsOptions & typeof EXTRA_LOGIN_DEFAULTS;
  readonly #stopped = new AbortController();
  /** Failed attempts in a row, per account. */
  readonly #failures: number[];

  constructor(options: ExtraLoginsOptions) {
    this.#o = {
      ...EXTRA_LOGIN_DEFAULTS,
      ...Object.fromEntries(Object.entries(options).filter(([, v]) => v !== undefined)),
    } as ExtraLoginsOptions & typeof EXTRA_LOGIN_DEFAULTS;
    this.#failures = options.tokens.map(() => 0);
  }

  /** Logs every extra account in; resolves once each is logged in or has failed its first attempt (then retried in the background). */
  async start(): Promise<void> {
    await Promise.all(this.#o.tokens.map((_, index) => this.#attempt(index, this.#o.accounts.extras[index]!.client)));
  }

  /** No more attempts (the bot is stopping; it destroys the clients). */
  stop(): void {
    this.#stopped.abort();
  }

  async #attempt(index: number, client: Client): Promise<void> {
    const { accounts, tokens } = this.#o;
    accounts.setExtra(index, client, accounts.extras[index]!.state === 'down' ? 'down' : 'starting');
    this.#o.wire(client);
    try {
      const ready = new Promise<void>((resolve) => client.once(Events.ClientReady, () => resolve()));
      await client.login(tokens[index]);
      await ready;
    } catch (error) {
      await client.destroy().catch(() => {});
      return this.#down(index, client, new BotError('extra_account_down', { cause: error }));
    }
    if (this.#stopped.signal.aborted) return;
    const failures = this.#failures[index]!;
    this.#failures[index] = 0;
    accounts.setExtra(index, client, 'serving');
    if (failures > 0)
      this.#o.logger.info({ extraAccount: index + 1, accountId: client.user?.id, failures }, 'extra account logged in again: serving');
    // discord.js emits this only for a close it does not reconnect after (4004 for a reset token).
    const lost = (event: { code: number }) => {
      if (accounts.extras[index]?.client !== client || this.#stopped.signal.aborted) return;
      client.off(Events.ShardDisconnect, lost);
      const error = new BotError('extra_account_down', {
        message: `${BotError.messages.extra_account_down} (the gateway closed with ${event.code})`,
      });
      void client.destroy().catch(() => {});
      this.#down(index, client, error);
    };
    client.on(Events.ShardDisconnect, lost);
  }

  #down(index: number, client: Client, error: BotError): void {
    if (this.#stopped.signal.aborted) return;
    const { accounts, logger, firstRetryMs, maxRetryMs } = this.#o;
    accounts.setExtra(index, client, 'down');
    const failures = ++this.#failures[index]!;
    const retryInMs = Math.min(maxRetryMs, firstRetryMs * 2 ** (failures - 1));
    // By position and user id, never by token.
    const fields = { extraAccount: index + 1, accountId: client.user?.id, retryInS: Math.round(retryInMs / 1000) };
    // Reported once per outage; the retries that fail too are only logged.
    if (failures === 1) logger.error({ err: error, ...fields }, 'an extra account cannot log in: left out of /join; the others serve on');
    else
      logger.warn(
        { ...fields, failures, reason: error.cause instanceof Error ? error.cause.message : error.message },
        'an extra account still cannot log in',
      );
    void this.#o.clock.sleep(retryInMs, this.#stopped.signal).then(
      () => this.#attempt(index, this.#o.makeClient()),
      () => {},
    );
  }
}
