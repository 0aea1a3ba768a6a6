/**
 * The local Discord: a Discord-compatible development server on 127.0.0.1 (REST, gateway, TLS
 * voice gateway and UDP with DAVE) that the real discord.js client and @discordjs/voice connect
 * to. Used by the test suite and the playground; not Discord. See README.md next to this file.
 */
export * from './server.ts';
export * from './voice/server.ts';
export { LocalDiscordError } from './errors.ts';
export { shardOf } from './gateway.ts';
export { FRAME_MS, FRAME_SAMPLES, VOICE_CHANNELS, VOICE_SAMPLE_RATE } from './voice-format.ts';
export { LOOPBACK_HOST, bindOnLoopback, listenOnLoopback } from './loopback.ts';
export type { DaveEvent, DaveGroupSnapshot } from './voice/dave/gateway.ts';
export type { SimulatedListener } from './voice/dave/listener.ts';
