import type { Actor } from '../domain/audit.ts';
import { VOICE_ID_MAX, VOICE_POOL_MAX } from '../domain/voice-pool.ts';
import { UserError } from '../i18n/errors.ts';
import type { UseCaseDeps } from './deps.ts';
import { confirmVoice, isKnownVoice } from './voices.ts';

// A server's voice pool, changed by an admin: one rule for /config voice-pool and the web dashboard
// (the caller has checked Manage Server). A voice is checked as /voice set checks one; the pool is
// capped (VOICE_POOL_MAX); each change is audit-logged. Who speaks with which voice:
// src/domain/voice-pool.ts.

/** The voice an admin typed, trimmed, or a UserError when it cannot be a voice id (nothing sent). */
function voiceId(typed: unknown): string {
  const voice = typeof typed === 'string' ? typed.trim() : '';
  if (voice === '' || voice.length > VOICE_ID_MAX)
    throw new UserError('tts.unsupported_voice', { vars: { voice: voice.slice(0, VOICE_ID_MAX) } });
  return voice;
}

/**
 * Adds a standard voice to the server's pool: the pool as it is now. Refused (nothing saved) when
 * it is in the pool already, the pool is full, or the voice is unknown and the service does not
 * confirm it (one short request, charged to the admin, as /voice set's check).
 */
export async function addPoolVoice(
  ctx: Pick<UseCaseDeps, 'repos' | 'voices'>,
  guildId: string,
  actor: Actor,
  typed: unknown,
): Promise<string[]> {
  const voice = voiceId(typed);
  const pool = ctx.repos.voicePool.list(guildId);
  if (pool.includes(voice)) throw new UserError('voicepool.exists', { vars: { voice } });
  if (pool.length >= VOICE_POOL_MAX) throw new UserError('voicepool.full', { vars: { max: VOICE_POOL_MAX } });
  if (!isKnownVoice(ctx, voice)) await confirmVoice(ctx, voice, guildId, actor.userId);
  const result = await ctx.repos.voicePool.add(guildId, voice);
  // Another admin may have filled it meanwhile.
  if (result === 'full') throw new UserError('voicepool.full', { vars: { max: VOICE_POOL_MAX } });
  if (result === 'added') await ctx.repos.audit.record(guildId, actor, 'voice_pool.add', { voice });
  return ctx.repos.voicePool.list(guildId);
}

/** Takes a voice out of the server's pool: the pool as it is now. Refused when it was not in it. */
export async function removePoolVoice(ctx: Pick<UseCaseDeps, 'repos'>, guildId: string, actor: Actor, typed: unknown): Promise<string[]> {
  const voice = voiceId(typed);
  if (!(await ctx.repos.voicePool.remove(guildId, voice))) throw new UserError('voicepool.not_listed', { vars: { voice } });
  await ctx.repos.audit.record(guildId, actor, 'voice_pool.remove', { voice });
  return ctx.repos.voicePool.list(guildId);
}
