/**
 * What the page's members do, through the local Discord as their client would: write a message
 * (with files and their alt text), post a poll, vote and end it (member-polls.ts), run a slash
 * command or a message command (a message's Apps menu), submit the modal the bot answered with,
 * click a button, ask for autocomplete, join or leave voice. Each command a member ran is one
 * timeline item until the bot answers it (its reply then carries the "used" header, as Discord
 * shows it), or says the application did not respond.
 */
import type { APIApplicationCommand, APIApplicationCommandInteractionDataOption } from 'discord.js';
import type { FakeDiscord, FakeInteraction, FakeVoiceServer, SimulatedListener } from '@yomiage/local-discord';
import { PageRequestError } from './errors.ts';
import { PollDesk } from './member-polls.ts';
import { botItem, type CommandItem, type Invoked, type MemberAttachment, type MemberItem } from './views.ts';

/** Discord's limit for a member's message (without Nitro). */
const MAX_MESSAGE_CHARS = 2000;
/** Discord's limits on what a member attaches (without Nitro): 10 files a message, 10 MiB each, alt text of 1,024 characters. */
export const UPLOAD_LIMITS = { files: 10, bytes: 10 * 1024 * 1024, altTextChars: 1024, filenameChars: 100 } as const;
/** Files members attached, kept for the page to show (the oldest go first). */
const KEPT_UPLOADS = 100;
/** Discord tells the member the application did not respond after 3 s. */
const RESPONSE_DEADLINE_MS = 3000;
const KEPT_ITEMS = 500;
/** Discord's limits on a modal's answer: a value at most 4,000 characters, at most 5 text inputs. */
const MODAL_VALUE_MAX = 4000;
const MODAL_INPUTS_MAX = 5;

interface MemberActionsOptions {
  guildId: string;
  discord: FakeDiscord;
  voice: FakeVoiceServer;
  /** Pushes a changed item to every page. */
  changed(item: MemberItem | CommandItem): void;
}

type Body = Record<string, unknown>;

export class MemberActions {
  readonly #options: MemberActionsOptions;
  /** Members' messages and the commands they ran; the bot's messages are read from the local Discord. */
  readonly items: Array<MemberItem | CommandItem> = [];
  /** Interactions run from the page: who ran what, for the bot's replies (and the modals it opened). */
  readonly interactions = new Map<string, Invoked & { channelId: string }>();
  readonly #listeners = new Map<string, SimulatedListener>();
  /** What members attached, by attachment id, for the page to show. */
  readonly uploads = new Map<string, { filename: string; contentType: string; data: Buffer }>();
  readonly #polls: PollDesk;

  constructor(options: MemberActionsOptions) {
    this.#options = options;
    this.#polls = new PollDesk({
      guildId: options.guildId,
      discord: options.discord,
      add: (item) => {
        this.#remember(item);
        options.changed(item);
      },
      changed: (item) => options.changed(item),
    });
  }

  /** Stops the polls' timers. */
  close(): void {
    this.#polls.close();
  }

  get #guild() {
    const guild = this.#options.discord.guilds.find((g) => g.id === this.#options.guildId);
    if (!guild) throw new Error(`guild ${this.#options.guildId} is missing`);
    return guild;
  }

  /** The commands registered for this server, slash and message commands alike. */
  get #commands(): APIApplicationCommand[] {
    return this.#options.discord.commands.guild[this.#options.guildId] ?? [];
  }

  #member(userId: unknown) {
    const member = this.#guild.members.find((m) => m.user.id === userId && !m.user.bot);
    if (!member) throw new PageRequestError('bad_request', { message: `no member ${String(userId)} in this server` });
    return member;
  }

  #channel(channelId: unknown, type: number) {
    const channel = this.#guild.channels.find((c) => c.id === channelId && c.type === type);
    if (!channel)
      throw new PageRequestError('bad_request', {
        message: `no ${type === 2 ? 'voice' : 'text'} channel ${String(channelId)} in this server`,
      });
    return channel;
  }

  /** A message: its text, and files with the alt text the member wrote (a message of files alone is fine, as in Discord). */
  async message(body: Body) {
    const member = this.#member(body.userId);
    const channel = this.#channel(body.channelId, 0);
    const content = typeof body.content === 'string' ? body.content : '';
    const files = uploadsOf(body.attachments);
    if (content.trim() === '' && files.length === 0) throw new PageRequestError('bad_request', { message: 'write something first' });
    if ([...content].length > MAX_MESSAGE_CHARS)
      throw new PageRequestError('bad_request', { message: `a message is at most ${MAX_MESSAGE_CHARS} characters` });
    const { discord } = this.#options;
    // uploadsOf checked every file first: a refused message uploads nothing.
    const attachments: MemberAttachment[] = files.map((file) => {
      const { id } = discord.uploadAttachment({ filename: file.filename, data: file.data, contentType: file.contentType });
      this.uploads.set(id, file);
      if (this.uploads.size > KEPT_UPLOADS) this.uploads.delete(this.uploads.keys().next().value!);
      return {
        id,
        filename: file.filename,
        contentType: file.contentType,
        size: file.data.length,
        url: `/api/attachments/${id}`,
        ...(file.description ? { description: file.description } : {}),
      };
    });
    const { id } = await discord.sendMessage({
      guildId: this.#options.guildId,
      channelId: channel.id,
      author: member.user,
      content,
      attachments: attachments.map((a) => ({
        id: a.id,
        filename: a.filename,
        size: a.size,
        content_type: a.contentType,
        ...(a.description ? { description: a.description } : {}),
      })),
    });
    const item: MemberItem = {
      type: 'member',
      id,
      channelId: channel.id,
      authorId: member.user.id,
      content,
      at: Date.now(),
      reactions: [],
      deleted: false,
      ...(attachments.length ? { attachments } : {}),
    };
    this.#remember(item);
    this.#options.changed(item);
    return { id };
  }

  /** A poll, from the composer's "+" menu (Discord's poll UI). */
  async poll(body: Body) {
    const member = this.#member(body.userId);
    const channel = this.#channel(body.channelId, 0);
    const { id } = await this.#polls.create(member.user, channel.id, body);
    return { id };
  }

  /** A member clicks an answer of a poll: a vote, or the vote taken back. */
  pollVote(body: Body) {
    const member = this.#member(body.userId);
    this.#polls.vote(this.#pollItem(body.messageId), member.user.id, body.answerId);
    return { ok: true };
  }

  /** The poll's author ends it now: Discord then posts its result message. */
  async pollEnd(body: Body) {
    const member = this.#member(body.userId);
    const result = await this.#polls.endEarly(this.#pollItem(body.messageId), member.user.id);
    return { id: result.id };
  }

  #pollItem(messageId: unknown): MemberItem {
    const item = this.items.find((i): i is MemberItem => i.type === 'member' && i.id === messageId && i.poll !== undefined);
    if (!item) throw new PageRequestError('bad_request', { message: 'no such poll' });
    return item;
  }

  /** A slash command from the form or the `/` picker; answers with the modal when the bot opens one. */
  async command(body: Body) {
    const { name, options, locale, channelId, member } = this.#commandInput(body, 'slash');
    const interaction = await this.#options.discord.sendInteraction({
      guildId: this.#options.guildId,
      channelId,
      user: member.user,
      name,
      options,
      locale,
    });
    const item = this.#ran(interaction.id, { kind: 'slash', name, userId: member.user.id, channelId }, options, locale);
    return { id: interaction.id, ...(await this.#answered(interaction, item)) };
  }

  /** A message command from a message's Apps menu (Discord's message context menu). */
  async messageCommand(body: Body) {
    const { name, locale, channelId, member } = this.#commandInput(body, 'message');
    const messageId = String(body.messageId ?? '');
    const target = this.#options.discord.messages.find((m) => m.id === messageId && m.channelId === channelId && !m.deleted);
    const written = this.items.some((i) => i.type === 'member' && i.id === messageId && i.channelId === channelId && !i.deleted);
    if (!target && !written) throw new PageRequestError('bad_request', { message: `no message ${messageId} in this channel` });
    const interaction = await this.#options.discord.sendInteraction({
      guildId: this.#options.guildId,
      channelId,
      user: member.user,
      name,
      locale,
      target: { messageId },
    });
    const item = this.#ran(interaction.id, { kind: 'message', name, userId: member.user.id, channelId }, [], locale);
    return { id: interaction.id, ...(await this.#answered(interaction, item)) };
  }

  /** The member submits the modal the bot answered `interactionId` with. */
  async modalSubmit(body: Body) {
    const member = this.#member(body.userId);
    const openedBy = String(body.interactionId ?? '');
    const opened = this.interactions.get(openedBy);
    if (!opened || opened.userId !== member.user.id) throw new PageRequestError('bad_request', { message: 'no such modal' });
    const given = typeof body.values === 'object' && body.values !== null ? Object.entries(body.values) : [];
    if (given.length > MODAL_INPUTS_MAX || given.some(([, v]) => typeof v !== 'string' || v.length > MODAL_VALUE_MAX))
      throw new PageRequestError('bad_request', { message: `at most ${MODAL_INPUTS_MAX} values of at most ${MODAL_VALUE_MAX} characters` });
    const interaction = await this.#options.discord.sendInteraction({
      guildId: this.#options.guildId,
      channelId: opened.channelId,
      user: member.user,
      name: '',
      locale: localeOf(body),
      type: 5,
      modal: { interactionId: openedBy, values: Object.fromEntries(given) as Record<string, string> },
    });
    // Its reply is headed as the command that opened the modal ("… used 読みを修正").
    this.interactions.set(interaction.id, { ...opened, itemId: opened.itemId ?? openedBy });
    const first = await interaction.waitForResponse(() => true, RESPONSE_DEADLINE_MS).catch(() => undefined);
    return { id: interaction.id, answered: first !== undefined };
  }

  /** A member clicks a button of a bot message (the local Discord refuses one the message lacks). */
  async click(body: Body) {
    const member = this.#member(body.userId);
    const message = this.#options.discord.messages.find((m) => m.id === body.messageId && !m.deleted);
    if (!message || !botItem(message, this.interactions).buttons.some((b) => b.customId === body.customId))
      throw new PageRequestError('bad_request', { message: 'no such button' });
    const interaction = await this.#options.discord.sendInteraction({
      guildId: this.#options.guildId,
      channelId: message.channelId,
      user: member.user,
      name: '',
      locale: localeOf(body),
      type: 3,
      component: { messageId: message.id, customId: String(body.customId) },
    });
    // A reply to a click is shown as a reply to the message that had the button.
    this.interactions.set(interaction.id, {
      kind: 'button',
      name: String(body.customId),
      userId: member.user.id,
      channelId: message.channelId,
      messageId: message.id,
    });
    return { id: interaction.id, ...(await this.#answered(interaction)) };
  }

  async autocomplete(body: Body) {
    const { name, options, locale, channelId, member } = this.#commandInput(body, 'slash');
    const interaction = await this.#options.discord.sendInteraction({
      guildId: this.#options.guildId,
      channelId,
      user: member.user,
      name,
      options,
      locale,
      type: 4,
    });
    const response = await interaction.waitForResponse((r) => r.kind === 'callback', RESPONSE_DEADLINE_MS).catch(() => undefined);
    const choices = response?.data?.choices;
    return { choices: Array.isArray(choices) ? choices : [] };
  }

  async voiceState(body: Body) {
    const member = this.#member(body.userId);
    const { discord, voice } = this.#options;
    const guildId = this.#options.guildId;
    const channelId = body.channelId === null ? null : this.#channel(body.channelId, 2).id;
    const userId = member.user.id;
    const previous = this.#listeners.get(userId);
    if (previous && previous.channelId !== channelId) {
      voice.dave.detachListener(previous);
      this.#listeners.delete(userId);
    }
    await discord.setVoiceState(userId, guildId, channelId);
    // The member's client in the call: a DAVE group member that decrypts what the bot sends.
    if (channelId && !this.#listeners.has(userId)) this.#listeners.set(userId, voice.simulateListener({ guildId, channelId, userId }));
    return { ok: true };
  }

  /** A command's name, options and where it was run; a slash command and a message command are never taken for each other. */
  #commandInput(body: Body, kind: 'slash' | 'message') {
    const member = this.#member(body.userId);
    const channelId = this.#channel(body.channelId, 0).id;
    const name = body.name;
    const command = this.#commands.find((c) => c.name === name);
    if (typeof name !== 'string' || !command)
      throw new PageRequestError('bad_request', { message: `no command /${String(name)} is registered here` });
    // Discord lists a message command only on a message's Apps menu, and a slash command only after `/`.
    if ((command.type === 3) !== (kind === 'message'))
      throw new PageRequestError('bad_request', {
        message: kind === 'slash' ? `${name} is a message command: run it from a message's Apps menu` : `/${name} is not a message command`,
      });
    const options = Array.isArray(body.options) ? (body.options as APIApplicationCommandInteractionDataOption[]) : [];
    return { name, options, locale: localeOf(body), channelId, member };
  }

  /** Records a command a member ran: one timeline item, until the bot answers it. */
  #ran(
    id: string,
    invoked: Invoked & { channelId: string },
    options: readonly APIApplicationCommandInteractionDataOption[],
    locale: string,
  ) {
    this.interactions.set(id, invoked);
    const item: CommandItem = {
      type: 'command',
      id,
      channelId: invoked.channelId,
      userId: invoked.userId,
      name: invoked.name,
      kind: invoked.kind === 'message' ? 'message' : 'slash',
      summary: summarize(invoked.name, options),
      options,
      locale,
      at: Date.now(),
      replied: false,
      noResponse: false,
    };
    this.#remember(item);
    this.#options.changed(item);
    return item;
  }

  /**
   * Waits for the bot's first answer (Discord's 3 s): the item then gives way to the reply, or says
   * the application did not respond. A modal is handed to the page to open.
   */
  async #answered(interaction: FakeInteraction, item?: CommandItem): Promise<{ modal?: unknown }> {
    const first = await interaction.waitForResponse(() => true, RESPONSE_DEADLINE_MS).catch(() => undefined);
    if (item) {
      if (first) item.replied = true;
      else item.noResponse = true;
      this.#options.changed(item);
    }
    return first?.kind === 'callback' && first.type === 9 ? { modal: first.data } : {};
  }

  #remember(item: MemberItem | CommandItem): void {
    this.items.push(item);
    if (this.items.length > KEPT_ITEMS) this.items.splice(0, this.items.length - KEPT_ITEMS);
  }
}

/** The files of a message as the page sends them (base64), checked against Discord's limits. */
function uploadsOf(value: unknown): Array<{ filename: string; contentType: string; data: Buffer; description: string }> {
  if (value === undefined) return [];
  const bad = (message: string) => new PageRequestError('bad_request', { message });
  if (!Array.isArray(value)) throw bad('attachments must be a list');
  if (value.length > UPLOAD_LIMITS.files) throw bad(`at most ${UPLOAD_LIMITS.files} files a message`);
  return value.map((raw: unknown) => {
    const file = (typeof raw === 'object' && raw !== null ? raw : {}) as Record<string, unknown>;
    // A name as Discord keeps it: no folders, no control characters.
    const filename = typeof file.filename === 'string' ? file.filename.replace(/[\\/\p{Cc}]/gu, '_').trim() : '';
    if (!filename || [...filename].length > UPLOAD_LIMITS.filenameChars)
      throw bad(`a file needs a name of at most ${UPLOAD_LIMITS.filenameChars} characters`);
    const contentType =
      typeof file.contentType === 'string' && /^[\w.+-]+\/[\w.+-]+$/.test(file.contentType) ? file.contentType : 'application/octet-stream';
    if (typeof file.data !== 'string' || !/^[A-Za-z0-9+/]*={0,2}$/.test(file.data)) throw bad(`${filename}: its data must be base64`);
    const data = Buffer.from(file.data, 'base64');
    if (data.length === 0) throw bad(`${filename} is empty`);
    if (data.length > UPLOAD_LIMITS.bytes) throw bad(`${filename} is over ${UPLOAD_LIMITS.bytes / 1024 / 1024} MB`);
    const description = typeof file.description === 'string' ? file.description.trim() : '';
    if ([...description].length > UPLOAD_LIMITS.altTextChars) throw bad(`alt text is at most ${UPLOAD_LIMITS.altTextChars} characters`);
    return { filename, contentType, data, description };
  });
}

function localeOf(body: Body): string {
  return typeof body.locale === 'string' && /^[a-zA-Z-]{2,8}$/.test(body.locale) ? body.locale : 'ja';
}

/** `/config voice value: ja-JP-Wavenet-A`: the command line as Discord shows it. */
function summarize(name: string, options: readonly APIApplicationCommandInteractionDataOption[]): string {
  const parts = [`/${name}`];
  const walk = (list: readonly APIApplicationCommandInteractionDataOption[]) => {
    for (const option of list) {
      if ('options' in option && Array.isArray(option.options)) {
        parts.push(option.name);
        walk(option.options as APIApplicationCommandInteractionDataOption[]);
      } else if ('value' in option) {
        parts.push(`${option.name}: ${String(option.value)}`);
      }
    }
  };
  walk(options);
  return parts.join(' ');
}
