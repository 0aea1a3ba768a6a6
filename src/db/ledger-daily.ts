import type { Db } from './database.ts';
import type { ChannelSpend, DailySpend, Period } from '../billing/ledger.ts';

// A read-only report over character_ledger (owned by ledger.ts, which writes it): what counted
// against the limits per day and per text channel of a billing period, for /usage's chart and the
// dashboard. Kept apart so
// the ledger's write path stays one module of its own size.

const DAY_MS = 86_400_000;

type Params = { start: number; guild: string; user: string | null };

export class DailySpendReport {
  readonly #query;
  readonly #byChannel;

  constructor(db: Db) {
    // Released rows never counted; every other state does (docs/operating.md, "Characters are money").
    this.#query = db.prepare<[Params], { day: number; chars: number }>(`
      SELECT CAST((created_at - @start) / ${DAY_MS} AS INTEGER) AS day, SUM(chars) AS chars
      FROM character_ledger
      WHERE period_start = @start AND guild_id = @guild AND (@user IS NULL OR user_id = @user)
        AND state IN ('reserved', 'charged', 'uncertain')
      GROUP BY day ORDER BY day`);
    this.#byChannel = db.prepare<[Params], ChannelSpend>(`
      SELECT channel_id AS channelId, SUM(chars) AS chars
      FROM character_ledger
      WHERE period_start = @start AND guild_id = @guild AND (@user IS NULL OR user_id = @user)
        AND state IN ('reserved', 'charged', 'uncertain')
      GROUP BY channel_id ORDER BY chars DESC, channel_id`);
  }

  /** The period's spend per text channel, most first (a member's with userId, else the whole guild's); they add up to the days. */
  channels(period: Period, scope: { guildId: string; userId?: string }): ChannelSpend[] {
    return this.#byChannel.all({ start: period.start, guild: scope.guildId, user: scope.userId ?? null });
  }

  /** Every day of the period, spent or not (a member's with userId, else the whole guild's). */
  days(period: Period, scope: { guildId: string; userId?: string }): DailySpend[] {
    const rows = this.#query.all({ start: period.start, guild: scope.guildId, user: scope.userId ?? null });
    const count = Math.ceil((period.end - period.start) / DAY_MS);
    // A row stamped outside its period (a job recorded late) counts on the nearest day, so the days add up to the totals.
    const byDay = new Map<number, number>();
    for (const r of rows) {
      const day = Math.min(count - 1, Math.max(0, r.day));
      byDay.set(day, (byDay.get(day) ?? 0) + r.chars);
    }
    return Array.from({ length: count }, (_, day) => ({ dayStart: period.start + day * DAY_MS, chars: byDay.get(day) ?? 0 }));
  }
}
