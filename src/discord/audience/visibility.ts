import { ChannelType, PermissionFlagsBits, type Guild, type GuildBasedChannel, type GuildMember, type VoiceState } from 'discord.js';

/**
 * Who will hear or see what is read: the humans in the bot's voice channel (null: not in voice)
 * and the viewers of the channel where the text was written or asked for, which is where its MP3
 * is posted (an MP3 channel, `/say attach:true`, a reply when the audio cannot be played).
 */
export interface Audience {
  voiceChannelId: string | null;
  postChannelId: string | null;
}

// What is read never reveals more than its listeners could see (a channel's name is read only
// when every listener can view that channel; otherwise a neutral word). The rule, conservative:
// - voice: every human now in the bot's voice channel has ViewChannel on the mentioned channel;
// - the post channel: every viewer of it can view the mentioned channel. Members are not all in
//   the cache (Discord sends few with a guild), so this is decided from permissions alone: yes when
//   @everyone views the mentioned channel and no overwrite on it denies that to anyone, or when its
//   overwrites grant ViewChannel to everyone the post channel's do and deny it to nobody they don't
//   (the same overwrites, as channels of one private category, pass). Otherwise: hidden.
// Both parts apply together. A private thread is seen only by its members and by those with Manage
// Threads on its parent (https://discord.com/developers/docs/topics/threads#private-threads), so it
// counts as seen by the call when every human there is a member the bot knows of (its thread member
// cache, from THREAD_MEMBERS_UPDATE; someone it has not heard of counts as no member) or may manage
// threads in the parent; and by a post channel only when that is the thread itself.

/** Whether everyone in `audience` can view `mentioned`. */
export function audienceCanView(guild: Guild, mentioned: GuildBasedChannel, audience: Audience): boolean {
  const privateThread = mentioned.type === ChannelType.PrivateThread;
  if (privateThread && audience.postChannelId !== null && audience.postChannelId !== mentioned.id) return false;
  if (privateThread && !audience.voiceChannelId) return true;
  if (audience.voiceChannelId) {
    const voice = guild.channels.cache.get(audience.voiceChannelId);
    if (!voice?.isVoiceBased()) return false;
    // Everyone in the call by voice state: one whose member is not cached counts as unable to view.
    const humans = [...inCall(guild, voice.id)].filter((s) => !isBot(guild, s));
    if (!humans.every((s) => s.member !== null && memberCanView(mentioned, s.member))) return false;
    if (privateThread) return true;
  }
  if (audience.postChannelId === null) return true;
  const target = overwritten(mentioned);
  const post = guild.channels.cache.get(audience.postChannelId);
  if (!target || !post) return false;
  return everyoneViews(guild, target) || atLeastAsVisible(target, overwritten(post));
}

/**
 * Whether `member` can view `channel`: View Channel there (a thread: in its parent); a private
 * thread only as a member of it the bot knows of, or with Manage Threads in its parent.
 */
export function memberCanView(channel: GuildBasedChannel, member: GuildMember): boolean {
  if (!(channel.permissionsFor(member)?.has(PermissionFlagsBits.ViewChannel) ?? false)) return false;
  if (channel.type !== ChannelType.PrivateThread) return true;
  return channel.members.cache.has(member.id) || (channel.parent?.permissionsFor(member)?.has(PermissionFlagsBits.ManageThreads) ?? false);
}

/** The voice states of everyone now in `channelId`, cached member or not. */
export const inCall = (guild: Guild, channelId: string): VoiceState[] => [
  ...guild.voiceStates.cache.filter((s) => s.channelId === channelId).values(),
];

/** A known bot (the bot itself, or a cached bot user); an unknown member counts as a human. */
export const isBot = (guild: Guild, state: VoiceState): boolean =>
  state.id === guild.client.user.id || (state.member?.user.bot ?? guild.client.users.cache.get(state.id)?.bot ?? false);

/** The channel whose overwrites decide (a thread's parent). */
const overwritten = (channel: GuildBasedChannel) => (channel.isThread() ? channel.parent : channel);
type Overwritten = NonNullable<ReturnType<typeof overwritten>>;
const VIEW = PermissionFlagsBits.ViewChannel;

/** @everyone views the channel and no role or member overwrite on it denies that. */
function everyoneViews(guild: Guild, channel: Overwritten): boolean {
  return channel.permissionsFor(guild.roles.everyone).has(VIEW) && channel.permissionOverwrites.cache.every((o) => !o.deny.has(VIEW));
}

/**
 * Whoever views `post` views `target`: every overwrite allowing ViewChannel on `post` allows it on
 * `target` too, and every one denying it on `target` denies it on `post` too. (Discord applies
 * @everyone's, then the roles', then the member's overwrite over the same server permissions, so
 * more allowed and less denied at each step never hides the channel from anyone.)
 */
function atLeastAsVisible(target: Overwritten, post: Overwritten | null): boolean {
  if (!post) return false;
  const on = (channel: Overwritten, id: string) => channel.permissionOverwrites.cache.get(id);
  return (
    post.permissionOverwrites.cache.every((o) => !o.allow.has(VIEW) || (on(target, o.id)?.allow.has(VIEW) ?? false)) &&
    target.permissionOverwrites.cache.every((o) => !o.deny.has(VIEW) || (on(post, o.id)?.deny.has(VIEW) ?? false))
  );
}
