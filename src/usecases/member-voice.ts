import { effectiveVoice, effectiveVolume, VOLUME_RANGE, type UserSettings } from '../domain/member-settings.ts';
import { POOL_CALL_MAX, poolVoiceFor } from '../domain/voice-pool.ts';
import { LIMITS } from '../tts/validation.ts';
import type { UseCaseDeps } from './deps.ts';
import { confirmVoice, isKnownVoice } from './voices.ts';
import { UserError } from '../i18n/errors.ts';
import { speakableName } from '../speech/text/names.ts';
import { normaliseSpelling } from '../speech/text/spelling.ts';
import { guildLang, type Lang } from '../i18n/texts.ts';

// A member's own voice and name reading in one server: one validation and one write for /voice
// and the web dashboard alike.

/** Longest name a member can set (Discord's own nickname limit). */
export const READ_NAME_MAX = 32;
// Text that would turn into a ping, a channel link or a URL if it were ever shown: not a name.
const NOT_A_NAME = /<[@#]|@(?:everyone|here)|https?:\/\/|discord\.gg\//i;

/** What is wrong with a name a member typed, as an i18n key; undefined when it can be saved. */
function nameProblem(
  name: string,
  lang: Lang,
): 'uservoice.name_too_long' | 'uservoice.name_invalid' | 'uservoice.name_unspeakable' | undefined {
  if ([...name].length > READ_NAME_MAX) return 'uservoice.name_too_long';
  if (NOT_A_NAME.test(name)) return 'uservoice.name_invalid';
  if (!speakableName(name, lang)) return 'uservoice.name_unspeakable';
  return undefined;
}

/** What a member may change of their own voice (each field optional; absent keeps its value, null goes back to the server's). */
interface MemberVoiceChange {
  voice?: string | null | undefined;
  speed?: number | null | undefined;
  pitch?: number | null | undefined;
}

/**
 * The voice a member hears for their messages: the server's defaults under their own choices, their
 * voice of the server's pool when they chose none (`from`: whose voice it is; their first voice of
 * the pool, as when alone: in a call it may be another, speakingVoice), and the volume they are
 * played at (an admin's choice wins over their own).
 */
export function memberVoice(ctx: Pick<UseCaseDeps, 'repos'>, guildId: string, userId: string) {
  const user = ctx.repos.userSettings.get(guildId, userId);
  const poolVoice = user.voice === null ? poolVoiceFor(ctx.repos.voicePool.list(guildId), userId) : undefined;
  return {
    ...effectiveVoice(ctx.repos.guildSettings.get(guildId), user, poolVoice),
    from: user.voice !== null ? ('own' as const) : poolVoice !== undefined ? ('pool' as const) : ('server' as const),
    volume: effectiveVolume(user),
    adminVolume: user.adminVolume,
    own: { voice: user.voice, speed: user.speed, pitch: user.pitch, volume: user.volume },
    nickname: user.nickname,
  };
}

/**
 * What a member's message is spoken with now: voice, speed, pitch and volume. Without a voice of
 * their own, their share of the server's pool among `call` (the ids of the people in the voice
 * channel it is played in; src/domain/voice-pool.ts), or their first voice of the pool outside a
 * call; the server's voice when the pool is empty.
 */
export function speakingVoice(ctx: Pick<UseCaseDeps, 'repos'>, guildId: string, userId: string, call?: readonly string[]) {
  const { userSettings, voicePool, guildSettings } = ctx.repos;
  const user = userSettings.get(guildId, userId);
  const pool = user.voice === null ? voicePool.list(guildId) : [];
  let shared: { members: string[]; taken: Set<string> } | undefined;
  // A call too big to share the pool in: each speaks with their first voice (no lookup per member).
  if (pool.length > 0 && call && call.length <= POOL_CALL_MAX + 1) {
    shared = { members: [], taken: new Set() };
    for (const id of call) {
      if (id === userId) continue;
      const own = userSettings.get(guildId, id).voice;
      if (own === null) shared.members.push(id);
      else shared.taken.add(own);
    }
  }
  const poolVoice = poolVoiceFor(pool, userId, shared);
  return { ...effectiveVoice(guildSettings.get(guildId), user, poolVoice), volume: effectiveVolume(user) };
}

/** The volume asked for, checked (a number from 0 to 2; null clears it), or a UserError naming the range. */
export function checkVolume(value: unknown): number | null {
  if (value === null) return null;
  if (typeof value !== 'number' || !Number.isFinite(value) || value < VOLUME_RANGE.min || value > VOLUME_RANGE.max)
    throw new UserError('config.out_of_range', { vars: { setting: 'volume', min: VOLUME_RANGE.min, max: VOLUME_RANGE.max } });
  return value;
}

/**
 * Saves how loud a member's own speech is played in voice (0 to 2; null: back to 1), from their
 * next message on. An admin's volume for them (/config volume) still wins: `adminVolume` says so.
 */
export async function setMemberVolume(
  ctx: Pick<UseCaseDeps, 'repos'>,
  guildId: string,
  userId: string,
  value: unknown,
): Promise<{ volume: number; own: number | null; adminVolume: number | null }> {
  const own = checkVolume(value);
  const user = await ctx.repos.userSettings.set(guildId, userId, { volume: own });
  return { volume: effectiveVolume(user), own: user.volume, adminVolume: user.adminVolume };
}

/**
 * Checks and saves a member's voice, speed and pitch (the ranges of /voice set's options); an
 * unknown voice is saved only once the service confirmed it (one short request, charged to them).
 */
export async function setMemberVoice(
  ctx: Pick<UseCaseDeps, 'repos' | 'voices'>,
  guildId: string,
  userId: string,
  change: MemberVoiceChange,
): Promise<UserSettings> {
  const inRange = (setting: 'speed' | 'pitch', value: unknown, range: { min: number; max: number }) => {
    if (value === undefined || value === null) return value;
    if (typeof value !== 'number' || !Number.isFinite(value) || value < range.min || value > range.max)
      throw new UserError('config.out_of_range', { vars: { setting, min: range.min, max: range.max } });
    return value;
  };
  const speed = inRange('speed', change.speed, LIMITS.standardSpeed);
  const pitch = inRange('pitch', change.pitch, LIMITS.standardPitch);
  let voice = change.voice;
  if (typeof voice === 'string') {
    voice = voice.trim();
    if (voice === '' || voice.length > 100) throw new UserError('tts.unsupported_voice', { vars: { voice: voice.slice(0, 100) } });
    if (!isKnownVoice(ctx, voice)) await confirmVoice(ctx, voice, guildId, userId);
  } else if (voice !== undefined && voice !== null)
    throw new UserError('tts.unsupported_voice', { vars: { voice: String(voice).slice(0, 100) } });
  return ctx.repos.userSettings.set(guildId, userId, { voice, speed, pitch });
}

/**
 * Saves (or clears, with an empty text) how a member's name is read: the reading as it will sound,
 * or null once cleared. Throws what to tell them when it cannot be a name.
 */
export async function setReadName(
  ctx: Pick<UseCaseDeps, 'repos'>,
  guildId: string,
  userId: string,
  reading: string,
): Promise<string | null> {
  const raw = normaliseSpelling(reading).trim();
  if (raw === '') {
    await ctx.repos.userSettings.set(guildId, userId, { nickname: null });
    return null;
  }
  const readLang = guildLang(ctx.repos.guildSettings.get(guildId).locale);
  const problem = nameProblem(raw, readLang);
  if (problem) throw new UserError(problem, { vars: { max: READ_NAME_MAX } });
  await ctx.repos.userSettings.set(guildId, userId, { nickname: raw });
  return speakableName(raw, readLang, ctx.repos.dictionary.list(guildId, userId));
}
