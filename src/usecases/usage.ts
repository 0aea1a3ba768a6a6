import type { ChannelSpend } from '../billing/ledger.ts';
import type { UseCaseDeps } from './deps.ts';

// Characters of the billing period as /usage and the dashboard show them.

/**
 * The period's characters in `scope` (a member's with userId, else the whole server's): the usage
 * against the limit, the spend per day and per text channel, and the `top` biggest spenders (none
 * when `top` is 0).
 */
export async function usageReport(deps: Pick<UseCaseDeps, 'budget' | 'repos'>, scope: { guildId: string; userId?: string }, top: number) {
  const { budget, repos } = deps;
  const period = budget.currentPeriod();
  return {
    period,
    usage: await budget.usage(scope),
    days: repos.dailySpend.days(period, scope),
    // Per text channel; a null channel is spend recorded before channels were (shown as other/unknown).
    channels: repos.dailySpend.channels(period, scope),
    top: top > 0 ? await budget.topSpenders(scope.guildId, top) : [],
  };
}

/**
 * Spend per channel, named only where the member can view the channel (`viewable`: id to name):
 * the channels of the server (`inGuild`) they cannot view add up in one row (`hidden`), neither
 * named nor told apart.
 */
export function spendByChannel(rows: readonly ChannelSpend[], viewable: ReadonlyMap<string, string>, inGuild: (id: string) => boolean) {
  const isHidden = (id: string | null) => id !== null && !viewable.has(id) && inGuild(id);
  const hidden = rows.filter((c) => isHidden(c.channelId)).reduce((sum, c) => sum + c.chars, 0);
  const shown = rows
    .filter((c) => !isHidden(c.channelId))
    .map((c) => ({ ...c, name: c.channelId === null ? null : (viewable.get(c.channelId) ?? c.channelId) }));
  const merged = hidden > 0 ? [...shown, { channelId: null, chars: hidden, name: null, hidden: true }] : shown;
  return merged.sort((a, b) => b.chars - a.chars);
}
