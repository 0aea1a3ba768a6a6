import type { Lang } from '../../i18n/texts.ts';

/** Where a finished utterance goes when it is not (only) played: plain data, so it survives a restart. */
export type DeliveryTarget =
  /** `createdAt` (the interaction's) and `channelId` let a late result go to the channel once the 15-minute token is gone. */
  | { kind: 'interaction'; applicationId: string; token: string; createdAt?: number; channelId?: string }
  | { kind: 'message'; channelId: string; messageId: string };

/** What the Discord side attaches to each utterance it queues (stored with it, opaque to the speech core). */
export interface UtteranceMeta {
  delivery: DeliveryTarget;
  lang: Lang;
  /** Attach the MP3 even when connected to voice (/say attach:true). */
  forceAttach?: boolean;
  /** Only ever posted, never played: the voice channel's listeners cannot all read its channel (auto-read.ts). */
  attachOnly?: true;
  /** /narrate: the advanced voice, shown with the seed. */
  advancedVoice?: string;
  /** The bot's own clip (announcement, notice): charged to the server, only played, never attached (bot-clips.ts). */
  botClip?: true;
  /** A poll's result: the message of the poll it reads (its question and answers), so deleting the poll takes it back too. */
  pollMessageId?: string;
}

/** Why queued speech was dropped before it was spoken (each has a `cancelled.*` message). */
export type ClearReason = 'clear' | 'leave' | 'auto_leave' | 'disconnected' | 'stage_audience';
