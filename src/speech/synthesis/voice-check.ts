import { KNOWN_STANDARD_VOICES } from '../../tts/voices.ts';
import type { Synthesizer } from './synthesize.ts';

/** What a confirming request speaks: one character, the cheapest request the service accepts. */
export const CONFIRM_TEXT = 'あ';

interface VoiceCheckerOptions {
  synthesizer: Synthesizer;
  /** Voices accepted without asking (default: src/tts/voices.ts). */
  known?: readonly string[];
  /** How long a confirming request may wait for the rate budget and the service. */
  timeoutMs?: number;
}

/**
 * Decides whether a standard voice may be saved or used. A voice in the known list
 * is; the service's list grows, so one that is not is confirmed by the service itself with one
 * short request. That request goes through the same pipeline as any speech: the cache (a voice
 * confirmed before costs nothing), the character budget (charged to the member and server who
 * asked, as every request is: src/billing/budget.ts via the synthesizer), the shared rate
 * budget keyed by the guild, then the service. A refusal, a rate limit or a timeout rejects with
 * the error (nothing is remembered), so the caller saves nothing and says why.
 */
export class VoiceChecker {
  readonly #synth: Synthesizer;
  readonly #known: Set<string>;
  readonly #timeoutMs: number;
  /** Confirmed by the service in this process. */
  readonly #confirmed = new Set<string>();

  constructor(options: VoiceCheckerOptions) {
    this.#synth = options.synthesizer;
    this.#known = new Set(options.known ?? KNOWN_STANDARD_VOICES);
    this.#timeoutMs = options.timeoutMs ?? 15_000;
  }

  /** Known, or confirmed earlier: usable without a request. */
  isKnown(voice: string): boolean {
    return this.#known.has(voice) || this.#confirmed.has(voice);
  }

  /** Resolves when the voice is usable; rejects with the refusal (TtsError, BudgetRefusedError, SpeechError 'aborted' on timeout). */
  async confirm(voice: string, who: { guildId: string; userId: string }): Promise<void> {
    if (this.isKnown(voice)) return;
    await this.#synth
      .synthesize(
        {
          guildId: who.guildId,
          endpoint: 'standard',
          text: CONFIRM_TEXT,
          voice,
          speed: 1,
          pitch: 0,
          charges: [{ guildId: who.guildId, userId: who.userId, endpoint: 'standard', chars: CONFIRM_TEXT.length }],
        },
        { signal: AbortSignal.timeout(this.#timeoutMs) },
      )
      .then((audio) => audio.release?.());
    this.#confirmed.add(voice);
  }
}
