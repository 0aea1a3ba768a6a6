import type { CharacterBudget } from '../billing/budget.ts';
import type { Repositories } from '../db/repositories.ts';
import type { Synthesizer } from '../speech/synthesis/synthesize.ts';
import type { VoiceChecker } from '../speech/synthesis/voice-check.ts';
import type { SlidingCounts } from '../util/sliding-counts.ts';

/**
 * What the use cases work with, the same for the slash commands and the dashboard: collaborators
 * passed in, never Discord. Each use case takes the part of it it needs (`Pick<UseCaseDeps, …>`).
 */
export interface UseCaseDeps {
  repos: Repositories;
  budget: CharacterBudget;
  /** Whether a voice is known, or confirmed by the service (one short request, charged to who asks). */
  voices: VoiceChecker;
  /** Speech made outside the queue (the dashboard's voice previews), through the cache and the budgets. */
  synthesizer: Synthesizer;
  /** Each member's voice previews in the window (previews.ts PREVIEW_RATE), the slash command and the dashboard together. */
  previews: SlidingCounts;
  /** A request refused before it was queued or made (the budget): counted by the metrics. */
  onRefused?: () => void;
}
