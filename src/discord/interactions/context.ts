import type { Config } from '../../config.ts';
import type { Logger } from '../../util/log.ts';
import type { VoiceManager } from '../../voice/manager.ts';
import type { Diagnosis } from '../diagnosis/diagnosis.ts';
import type { ButtonQuestions } from './buttons.ts';
import type { SpeechRequests } from './speech-requests.ts';
import type { VoiceControl } from '../voice-control/voice-control.ts';
import type { UseCaseDeps } from '../../usecases/deps.ts';

/** What command handlers may use: the use cases' collaborators and the bot's own, passed in, never fetched from globals. */
export interface BotContext extends UseCaseDeps {
  config: Config;
  logger: Logger;
  voice: VoiceManager;
  /** /say and /narrate. */
  requests: SpeechRequests;
  /** /join, /leave, /skip, /clear. */
  voiceControl: VoiceControl;
  /** The auto-read path: how many of a server's messages it dropped unread (/usage). */
  autoRead: { droppedCount(guildId: string): number };
  /** Questions asked with buttons (/narrate's cost, a dictionary import), answered by one click. */
  buttons: ButtonQuestions;
  /** /diagnose and "Why wasn't this read?": what the bot checks and records about its own silence. */
  diagnosis: Diagnosis;
}
