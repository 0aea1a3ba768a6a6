/**
 * The audio Discord voice carries, as the local voice server states it (Discord's side of the
 * protocol; the bot states the same facts on its side): Opus at 48 kHz, stereo, one packet per
 * 20 ms frame.
 */
export const VOICE_SAMPLE_RATE = 48_000;
export const VOICE_CHANNELS = 2;
export const FRAME_MS = 20;
/** Samples per channel in one frame (960). */
export const FRAME_SAMPLES = (VOICE_SAMPLE_RATE / 1000) * FRAME_MS;
