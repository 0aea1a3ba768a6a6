/**
 * The audio Discord voice carries, declared once for everything of the bot that encodes or decodes
 * it (the player, the transcoder, the CLI's checks): Opus at 48 kHz, stereo, one packet per 20 ms
 * frame. A protocol fact: the local Discord states it on its side (test/util/shards.test.ts checks
 * the two agree).
 */
export const VOICE_SAMPLE_RATE = 48_000;
export const VOICE_CHANNELS = 2;
export const FRAME_MS = 20;
/** Samples per channel in one frame (960). */
export const FRAME_SAMPLES = (VOICE_SAMPLE_RATE / 1000) * FRAME_MS;
