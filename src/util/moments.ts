import { channel } from 'node:diagnostics_channel';

/**
 * Moments on a clip's way to the listener, published on diagnostics channels so a benchmark (and
 * later metrics) can time them without the code knowing who listens; nothing is built or sent when
 * nobody subscribes. `at` is this process's performance.now().
 */
export const moments = {
  /** The service's MP3 is downloaded: `{ guildId, key, at }`. */
  downloaded: channel('yomiage:speech:downloaded'),
  /** A clip was handed to the guild's player: `{ guildId, at, source, canEncrypt }`; `canEncrypt` false means it waits for DAVE. */
  play: channel('yomiage:voice:play'),
  /** The call can encrypt again after a wait for DAVE, and the player is let through: `{ guildId, at }`. */
  encrypting: channel('yomiage:voice:encrypting'),
};

export type PlaySource = 'ogg' | 'mp3-in-process' | 'mp3-ffmpeg';
