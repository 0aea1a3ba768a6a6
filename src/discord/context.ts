import type { Config } from '../config.ts';
import type { Logger } from '../util/log.ts';
import type { SpeechService } from './speech.ts';
import type { Repositories } from '../db/repositories.ts';
import type { CharacterBudget } from '../speech/budget.ts';
import type { VoiceManager } from '../voice/manager.ts';

/** What command handlers may use: collaborators passed in, never fetched from globals (STYLE.md #10). */
export interface BotContext {
  config: Config;
  logger: Logger;
  repos: Repositories;
  budget: CharacterBudget;
  speech: SpeechService;
  voice: VoiceManager;
}
