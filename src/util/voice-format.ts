/**
 * The audio Discord voice carries, declared once for everything that encodes, decodes or listens to
 * it (the bot's player, the local voice server, the playground): Opus at 48 kHz, stereo, one packet
 * per 20 ms frame.
 */
export const VOICE_SAMPLE_RATE = 48_000;
export const VOICE_CHANNELS = 2;
export const FRAME_MS = 20;
/** Samples per channel in one frame (960). */
export const FRAME_SAMPLES = (VOICE_SAMPLE_RATE / 1000) * FRAME_MS;
