import type { Config } from '../../config.ts';
import type { Repositories } from '../../db/repositories.ts';
import type { CharacterBudget } from '../../billing/budget.ts';
import type { Synthesizer } from '../../speech/synthesis/synthesize.ts';
import type { Logger } from '../../util/log.ts';
import type { SlidingCounts } from '../../util/sliding-counts.ts';
import type { VoiceManager } from '../../voice/manager.ts';
import type { AutoReader } from '../events/auto-read.ts';
import type { Diagnosis } from '../diagnosis/diagnosis.ts';
import type { ButtonQuestions } from './buttons.ts';
import type { SpeechRequests } from '../delivery/requests.ts';
import type { VoiceControl } from './voice-control.ts';

/** What command handlers may use: collaborators passed in, never fetched from globals. */
export interface BotContext {
  config: Config;
  logger: Logger;
  repos: Repositories;
  budget: CharacterBudget;
  voice: VoiceManager;
  /** /say and /narrate, and the voice checks /config and /voice share with them. */
  requests: SpeechRequests;
  /** /join, /leave, /skip, /clear. */
  voiceControl: VoiceControl;
  /** The auto-read path (its skipped count for /usage). */
  autoRead: AutoReader;
  /** Questions asked with buttons (/narrate's cost, a dictionary import), answered by one click. */
  buttons: ButtonQuestions;
  /** Speech made outside the queue (the web dashboard's voice previews), through the cache and the budgets. */
  synthesizer: Synthesizer;
  /** Each member's voice previews in the window (commands/voice/voice-preview.ts PREVIEW_RATE), the slash command and the dashboard together. */
  previews: SlidingCounts;
  /** /diagnose and "Why wasn't this read?": what the bot checks and records about its own silence. */
  diagnosis: Diagnosis;
}
