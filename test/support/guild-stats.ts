import type { AudienceStats } from '../../src/speech/queue/options.ts';
import type { SpeechScheduler } from '../../src/speech/queue/scheduler.ts';

/** The scheduler's counters of every audience of one guild added up (playing: any of them is; the oldest wait: theirs). */
export function guildStats(scheduler: SpeechScheduler, guildId: string): Omit<AudienceStats, 'audience'> {
  const total = {
    guildId,
    queued: 0,
    synthesizing: 0,
    ready: 0,
    playing: false,
    oldestAt: null as number | null,
    delivered: 0,
    dropped: 0,
  };
  for (const s of scheduler.stats()) {
    if (s.guildId !== guildId) continue;
    total.queued += s.queued;
    total.synthesizing += s.synthesizing;
    total.ready += s.ready;
    total.delivered += s.delivered;
    total.dropped += s.dropped;
    total.playing ||= s.playing;
    if (s.oldestAt !== null && (total.oldestAt === null || s.oldestAt < total.oldestAt)) total.oldestAt = s.oldestAt;
  }
  return total;
}
