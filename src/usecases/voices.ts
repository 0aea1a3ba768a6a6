import { BudgetRefusedError } from '../billing/errors.ts';
import { UserError } from '../i18n/errors.ts';
import { SpeechError } from '../speech/errors.ts';
import type { UseCaseDeps } from './deps.ts';

// The voice and budget checks every request shares (/say, /narrate, a preview, a voice saved by
// /config, /voice or the dashboard): what can be refused is refused before anything is made.

/** In the known list, or confirmed by the service earlier: usable without a request. */
export function isKnownVoice(deps: Pick<UseCaseDeps, 'voices'>, voice: string): boolean {
  return deps.voices.isKnown(voice);
}

/**
 * A standard voice may be saved or used only when it is known or the service confirmed it (one
 * short request, charged like any other: src/speech/synthesis/voice-check.ts). Otherwise throws
 * what to tell the member; nothing is saved.
 */
export async function confirmVoice(deps: Pick<UseCaseDeps, 'voices'>, voice: string, guildId: string, userId: string): Promise<void> {
  try {
    await deps.voices.confirm(voice, { guildId, userId });
  } catch (error) {
    if (error instanceof BudgetRefusedError) throw error;
    const code = (error as { code?: string }).code;
    if (code === 'unsupported_voice' || code === 'invalid_voice' || code === 'voice_required' || code === 'invalid_input')
      throw new UserError('tts.unsupported_voice', { vars: { voice }, cause: error });
    if (error instanceof SpeechError || code === 'rate_limited' || code === 'aborted')
      throw new UserError('voice.check_busy', { vars: { voice }, cause: error });
    throw error;
  }
}

/** Refuses, before anything is answered or sent, a request the budget would refuse (nothing is held). */
export async function precheckBudget(
  deps: Pick<UseCaseDeps, 'budget' | 'onRefused'>,
  guildId: string,
  userId: string,
  endpoint: 'standard' | 'advanced',
  chars: number,
): Promise<void> {
  const result = await deps.budget.check([{ guildId, userId, endpoint, chars }]);
  if (!result.ok) {
    deps.onRefused?.();
    throw new BudgetRefusedError({ refusal: result.refusal, guildId });
  }
}
