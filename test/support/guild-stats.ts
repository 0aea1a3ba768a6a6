import type { AudienceStats, SpeechScheduler } from '../../src/speech/queue.ts';

/** The scheduler's counters of every audience of one guild added up (playing: any of them is). */
export function guildStats(scheduler: SpeechScheduler, guildId: string): Omit<AudienceStats, 'audience'> {
  const total = { guildId, queued: 0, synthesizing: 0, ready: 0, playing: false, delivered: 0, dropped: 0 };
  for (const s of scheduler.stats()) {
    if (s.guildId !== guildId) continue;
    total.queued += s.queued;
    total.synthesizing += s.synthesizing;
    total.ready += s.ready;
    total.delivered += s.delivered;
    total.dropped += s.dropped;
    total.playing ||= s.playing;
  }
  return total;
}
