import type { BatchRules } from '../../src/speech/queue/batching/merging.ts';
import type { Utterance } from '../../src/speech/queue/utterance.ts';
import { countChars } from '../../src/tts/chars.ts';

// The fixtures of the batching rules' GIVEN/THEN tests (test/speech/batching*.test.ts).

export const RULES: BatchRules = {
  maxMessages: 5,
  maxChars: 200,
  holdMs: 1_500,
  maxAutoAgeMs: 60_000,
  separator: { ja: '。', en: '…', default: '。' },
  countChars,
};
export const NOW = 1_000_000;

let n = 0;
/** An utterance of `text` accepted at NOW: an auto-read message by default, with its own id. */
export function u(text: string, extra: Partial<Utterance> = {}): Utterance {
  n++;
  return {
    id: `u${n}`,
    guildId: 'g1',
    userId: 'a',
    channelId: 'c1',
    kind: 'auto',
    text,
    voice: 'ja-JP-Wavenet-B',
    speed: 1,
    pitch: 0,
    lang: 'ja',
    enqueuedAt: NOW,
    ...extra,
  };
}
