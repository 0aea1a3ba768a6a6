/**
 * Media primitives the bot and the development servers both run: the resampler that brings MP3
 * sample rates to Discord's 48 kHz, and the lookup of the ffmpeg binary. A library, not a server:
 * the bot lists it among its dependencies.
 */
export { ffmpegPath } from './ffmpeg-path.ts';
export { Resampler } from './resample.ts';
