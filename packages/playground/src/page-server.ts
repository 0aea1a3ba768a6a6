/**
 * The playground page's server, on 127.0.0.1 only: the static page (public/), a small JSON API that
 * acts as the server's members (write a message, run a command, join or leave voice), the bot's
 * attachments, and one WebSocket (/api/live) that pushes every change and the voice channels' audio
 * (binary messages of 16-bit samples: the first is the voice channel's index among the server's
 * voice channels (-1: unknown), then 20 ms of mono 48 kHz PCM, played by the page with WebAudio
 * when its member is in that channel).
 *
 * It is a development tool reachable only from this machine; still, a web page from elsewhere open
 * in the same browser must not drive it: requests must name this server in Host (no DNS
 * rebinding), and the API and the WebSocket take only requests whose Origin is this page.
 */
import { readdirSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { WebSocketServer, type WebSocket } from 'ws';
import type { APIApplicationCommandInteractionDataOption } from 'discord.js';
import type { Emulator } from '@yomiage/tts-emulator';
import {
  listenOnLoopback,
  LOOPBACK_HOST,
  type FakeDiscord,
  type FakeVoiceServer,
  type LocalDiscordActivity,
  type SimulatedListener,
} from '@yomiage/local-discord';
import type { BotLogLine, BotProcessEvents, BotStatus } from './bot-process.ts';
import { PageRequestError } from './errors.ts';
import { botItem, guildView, serviceView, type CommandItem, type MemberItem, type TimelineItem } from './views.ts';
import type { VoiceTap } from './voice-tap.ts';

const PUBLIC_DIR = join(dirname(fileURLToPath(import.meta.url)), 'public');
/** The page (public/): its HTML, its style and its modules, each by its own name. */
const STATIC: Record<string, { file: string; type: string }> = {
  '/': { file: 'index.html', type: 'text/html; charset=utf-8' },
  '/style.css': { file: 'style.css', type: 'text/css; charset=utf-8' },
  ...Object.fromEntries(
    readdirSync(PUBLIC_DIR)
      .filter((f) => f.endsWith('.js'))
      .map((f) => [`/${f}`, { file: f, type: 'text/javascript; charset=utf-8' }]),
  ),
};
const MAX_BODY_BYTES = 64 * 1024;
/** Discord's limit for a member's message (without Nitro). */
const MAX_MESSAGE_CHARS = 2000;
/** Discord tells the member the application did not respond after 3 s. */
const RESPONSE_DEADLINE_MS = 3000;
const KEPT_ITEMS = 500;
/** A client this far behind on the socket skips audio rather than buffering without bound. */
const MAX_BUFFERED_BYTES = 1024 * 1024;

export interface BotView {
  readonly status: BotStatus;
  readonly logs: readonly BotLogLine[];
  on(event: 'status', listener: (...args: BotProcessEvents['status']) => void): unknown;
  on(event: 'log', listener: (...args: BotProcessEvents['log']) => void): unknown;
}

export interface PageServerOptions {
  port: number;
  guildId: string;
  discord: FakeDiscord;
  voice: FakeVoiceServer;
  emulator: Emulator;
  /** The bot child as the page shows it: its status and log (a BotProcess). */
  bot: BotView;
  tap: VoiceTap;
  /** The bot's web dashboard, linked from the page. */
  dashboardUrl?: string | undefined;
}

export class PageServer {
  readonly #options: PageServerOptions;
  readonly #http: Server;
  readonly #wss = new WebSocketServer({ noServer: true });
  readonly #clients = new Set<WebSocket>();
  /** Members' messages and the commands they ran; the bot's messages are read from the local Discord. */
  readonly #items: Array<MemberItem | CommandItem> = [];
  /** Interactions run from the page: who ran what, for the bot's replies. */
  readonly #interactions = new Map<string, { name: string; userId: string }>();
  readonly #listeners = new Map<string, SimulatedListener>();
  readonly #unsubscribe: () => void;
  readonly #serviceTimer: NodeJS.Timeout;
  #lastService = '';
  #port = 0;

  constructor(options: PageServerOptions) {
    this.#options = options;
    this.#http = createServer((req, res) => {
      this.#handle(req, res).catch((error: unknown) => {
        // No bot on the gateway (it exited, or is restarting): nobody to deliver to.
        const offline = (error as { code?: unknown }).code === 'no_session';
        const status = error instanceof PageRequestError ? error.status : offline ? 503 : 500;
        const message = offline
          ? 'the bot is not connected to the local Discord (see the bot log)'
          : error instanceof Error
            ? error.message
            : String(error);
        if (!res.headersSent) sendJson(res, status, { error: message });
        else res.destroy();
      });
    });
    this.#http.on('upgrade', (req, socket, head) => {
      if (new URL(req.url ?? '/', 'http://x').pathname !== '/api/live' || !this.#trusted(req, true)) {
        socket.end('HTTP/1.1 403 Forbidden\r\n\r\n');
        return;
      }
      this.#wss.handleUpgrade(req, socket, head, (ws) => this.#connect(ws));
    });
    this.#unsubscribe = options.discord.onActivity((activity) => this.#onActivity(activity));
    options.tap.on('utterance', (u) => this.#broadcast({ t: 'utterance', utterance: u }));
    options.tap.on('audio', (pcm, channelId) => this.#broadcastAudio(pcm, channelId));
    options.bot.on('status', (status, detail) => this.#broadcast({ t: 'bot', status, detail }));
    options.bot.on('log', (line) => this.#broadcast({ t: 'log', line: shortLine(line) }));
    this.#serviceTimer = setInterval(() => this.#pushService(), 500);
    this.#serviceTimer.unref();
  }

  get url(): string {
    return `http://${LOOPBACK_HOST}:${this.#port}/`;
  }

  async listen(): Promise<void> {
    this.#port = await listenOnLoopback(this.#http, this.#options.port);
  }

  async close(): Promise<void> {
    clearInterval(this.#serviceTimer);
    this.#unsubscribe();
    for (const ws of this.#clients) ws.terminate();
    this.#http.closeAllConnections();
    await new Promise<void>((resolve) => this.#http.close(() => resolve()));
  }

  // ---- state ------------------------------------------------------------------------------------

  get #guild() {
    const guild = this.#options.discord.guilds.find((g) => g.id === this.#options.guildId);
    if (!guild) throw new Error(`guild ${this.#options.guildId} is missing`);
    return guild;
  }

  #timeline(): TimelineItem[] {
    const { discord } = this.#options;
    const bot = discord.messages.filter((m) => m.guildId === this.#options.guildId).map((m) => botItem(m, this.#interactions));
    return [...this.#items, ...bot].sort((a, b) => a.at - b.at).slice(-KEPT_ITEMS);
  }

  #snapshot() {
    const { discord, bot, tap, emulator } = this.#options;
    return {
      guild: guildView(this.#guild),
      botUser: { id: discord.botUser.id, username: discord.botUser.username },
      // Every account of the bot (the main one first): each reads a voice channel of its own.
      botUsers: discord.bots.map((b) => ({ id: b.user.id, username: b.user.username })),
      bot: { status: bot.status, logs: bot.logs.map(shortLine) },
      dashboardUrl: this.#options.dashboardUrl ?? null,
      commands: discord.commands.guild[this.#options.guildId] ?? discord.commands.global,
      timeline: this.#timeline(),
      utterances: tap.utterances,
      service: serviceView(emulator),
    };
  }

  // ---- HTTP -------------------------------------------------------------------------------------

  async #handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    if (!this.#trusted(req, req.method !== 'GET' && req.method !== 'HEAD')) throw new PageRequestError('forbidden');
    const url = new URL(req.url ?? '/', this.url);
    const page = STATIC[url.pathname];
    if (page && req.method === 'GET') {
      const body = await readFile(join(PUBLIC_DIR, page.file));
      res.writeHead(200, { 'content-type': page.type, 'cache-control': 'no-store', 'x-content-type-options': 'nosniff' });
      res.end(body);
      return;
    }
    const attachment = /^\/api\/attachments\/(\d+)$/.exec(url.pathname);
    if (attachment && req.method === 'GET') return this.#attachment(res, attachment[1]!, url.searchParams.has('download'));
    if (req.method === 'GET' && url.pathname === '/api/state') return sendJson(res, 200, this.#snapshot());
    if (req.method !== 'POST') throw new PageRequestError('not_found', { message: `no route ${req.method} ${url.pathname}` });
    if (!/^application\/json\b/.test(req.headers['content-type'] ?? '')) throw new PageRequestError('unsupported_media_type');
    const body = await readJson(req);
    switch (url.pathname) {
      case '/api/message':
        return sendJson(res, 200, await this.#message(body));
      case '/api/command':
        return sendJson(res, 200, await this.#command(body));
      case '/api/autocomplete':
        return sendJson(res, 200, await this.#autocomplete(body));
      case '/api/voice':
        return sendJson(res, 200, await this.#voice(body));
      case '/api/click':
        return sendJson(res, 200, await this.#click(body));
      default:
        throw new PageRequestError('not_found', { message: `no route POST ${url.pathname}` });
    }
  }

  /** Host names this server (127.0.0.1 or localhost at its port); with `needsOrigin`, Origin is this page. */
  #trusted(req: IncomingMessage, needsOrigin: boolean): boolean {
    const hosts = [`${LOOPBACK_HOST}:${this.#port}`, `localhost:${this.#port}`];
    const host = req.headers.host ?? '';
    if (!hosts.includes(host)) return false;
    if (!needsOrigin) return true;
    return req.headers.origin === `http://${host}`;
  }

  #attachment(res: ServerResponse, id: string, download: boolean): void {
    const found = this.#options.discord.messages.flatMap((m) => m.attachments).find((a) => a.id === id);
    if (!found) throw new PageRequestError('not_found', { message: 'no such attachment' });
    const name = encodeURIComponent(found.filename);
    res.writeHead(200, {
      'content-type': found.contentType,
      'content-length': found.data.length,
      'content-disposition': `${download ? 'attachment' : 'inline'}; filename*=UTF-8''${name}`,
      'x-content-type-options': 'nosniff',
    });
    res.end(found.data);
  }

  // ---- what members do --------------------------------------------------------------------------

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

  async #message(body: Record<string, unknown>) {
    const member = this.#member(body.userId);
    const channel = this.#channel(body.channelId, 0);
    const content = body.content;
    if (typeof content !== 'string' || content.trim() === '')
      throw new PageRequestError('bad_request', { message: 'write something first' });
    if ([...content].length > MAX_MESSAGE_CHARS)
      throw new PageRequestError('bad_request', { message: `a message is at most ${MAX_MESSAGE_CHARS} characters` });
    const { id } = await this.#options.discord.sendMessage({
      guildId: this.#options.guildId,
      channelId: channel.id,
      author: member.user,
      content,
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
    };
    this.#remember(item);
    this.#broadcast({ t: 'item', item });
    return { id };
  }

  async #command(body: Record<string, unknown>) {
    const { name, options, locale, channelId, member } = this.#commandInput(body);
    const interaction = await this.#options.discord.sendInteraction({
      guildId: this.#options.guildId,
      channelId,
      user: member.user,
      name,
      options,
      locale,
    });
    this.#interactions.set(interaction.id, { name, userId: member.user.id });
    const item: CommandItem = {
      type: 'command',
      id: interaction.id,
      channelId,
      userId: member.user.id,
      name,
      summary: summarize(name, options),
      options,
      locale,
      at: Date.now(),
      noResponse: false,
    };
    this.#remember(item);
    this.#broadcast({ t: 'item', item });
    interaction
      .waitForResponse(() => true, RESPONSE_DEADLINE_MS)
      .catch(() => {
        item.noResponse = true;
        this.#broadcast({ t: 'item', item });
      });
    return { id: interaction.id };
  }

  /** A member clicks a button of a bot message (the local Discord refuses one the message lacks). */
  async #click(body: Record<string, unknown>) {
    const member = this.#member(body.userId);
    const message = this.#options.discord.messages.find((m) => m.id === body.messageId && !m.deleted);
    if (!message || !botItem(message, this.#interactions).buttons.some((b) => b.customId === body.customId))
      throw new PageRequestError('bad_request', { message: 'no such button' });
    const locale = typeof body.locale === 'string' && /^[a-zA-Z-]{2,8}$/.test(body.locale) ? body.locale : 'ja';
    const interaction = await this.#options.discord.sendInteraction({
      guildId: this.#options.guildId,
      channelId: message.channelId,
      user: member.user,
      name: '',
      locale,
      type: 3,
      component: { messageId: message.id, customId: String(body.customId) },
    });
    this.#interactions.set(interaction.id, { name: 'button', userId: member.user.id });
    return { id: interaction.id };
  }

  async #autocomplete(body: Record<string, unknown>) {
    const { name, options, locale, channelId, member } = this.#commandInput(body);
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

  #commandInput(body: Record<string, unknown>) {
    const member = this.#member(body.userId);
    const channelId = this.#channel(body.channelId, 0).id;
    const commands = this.#options.discord.commands.guild[this.#options.guildId] ?? [];
    const name = body.name;
    if (typeof name !== 'string' || !commands.some((c) => c.name === name))
      throw new PageRequestError('bad_request', { message: `no command /${String(name)} is registered here` });
    // A message command (type 3) runs on a message, from its Apps menu, never from the slash command form.
    if (!commands.some((c) => c.name === name && (c.type ?? 1) === 1))
      throw new PageRequestError('bad_request', { message: `${name} is a message command (Apps on a message), not a slash command` });
    const options = Array.isArray(body.options) ? (body.options as APIApplicationCommandInteractionDataOption[]) : [];
    const locale = typeof body.locale === 'string' && /^[a-zA-Z-]{2,8}$/.test(body.locale) ? body.locale : 'ja';
    return { name, options, locale, channelId, member };
  }

  async #voice(body: Record<string, unknown>) {
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

  #remember(item: MemberItem | CommandItem): void {
    this.#items.push(item);
    if (this.#items.length > KEPT_ITEMS) this.#items.splice(0, this.#items.length - KEPT_ITEMS);
  }

  // ---- live updates -----------------------------------------------------------------------------

  #onActivity(activity: LocalDiscordActivity): void {
    switch (activity.kind) {
      case 'message':
        if (activity.message.guildId === this.#options.guildId)
          this.#broadcast({ t: 'item', item: botItem(activity.message, this.#interactions) });
        return;
      case 'reaction':
      case 'deletion': {
        const item = this.#items.find((i): i is MemberItem => i.type === 'member' && i.id === activity.messageId);
        if (!item) return;
        if (activity.kind === 'reaction') item.reactions.push(activity.emoji);
        else item.deleted = true;
        this.#broadcast({ t: 'item', item });
        return;
      }
      case 'voiceStates':
        if (activity.guildId === this.#options.guildId) this.#broadcast({ t: 'voice', voiceStates: guildView(this.#guild).voiceStates });
        return;
    }
  }

  #connect(ws: WebSocket): void {
    this.#clients.add(ws);
    ws.on('close', () => this.#clients.delete(ws));
    ws.on('error', () => this.#clients.delete(ws));
    ws.send(JSON.stringify({ t: 'hello', state: this.#snapshot() }));
  }

  #broadcast(message: { t: string } & Record<string, unknown>): void {
    if (this.#clients.size === 0) return;
    const text = JSON.stringify(message);
    for (const ws of this.#clients) if (ws.readyState === ws.OPEN) ws.send(text);
  }

  #broadcastAudio(pcm: Int16Array, channelId: string | undefined): void {
    if (this.#clients.size === 0) return;
    const framed = new Int16Array(pcm.length + 1);
    framed[0] = this.#guild.channels.filter((c) => c.type === 2).findIndex((c) => c.id === channelId);
    framed.set(pcm, 1);
    const bytes = Buffer.from(framed.buffer);
    for (const ws of this.#clients)
      if (ws.readyState === ws.OPEN && ws.bufferedAmount < MAX_BUFFERED_BYTES) ws.send(bytes, { binary: true });
  }

  #pushService(): void {
    if (this.#clients.size === 0) return;
    const service = serviceView(this.#options.emulator);
    const text = JSON.stringify(service);
    if (text === this.#lastService) return;
    this.#lastService = text;
    this.#broadcast({ t: 'service', service });
  }
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

/** A log line for the page: level, time, message and a few short fields. */
function shortLine(line: BotLogLine): BotLogLine {
  const { level, time, msg, pid: _pid, hostname: _hostname, ...rest } = line;
  const fields = JSON.stringify(rest);
  return { level, ...(time !== undefined ? { time } : {}), msg: msg ?? '', ...(fields !== '{}' ? { fields: fields.slice(0, 400) } : {}) };
}

async function readJson(req: IncomingMessage): Promise<Record<string, unknown>> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of req) {
    size += (chunk as Buffer).length;
    if (size > MAX_BODY_BYTES) throw new PageRequestError('too_large');
    chunks.push(chunk as Buffer);
  }
  try {
    const value: unknown = JSON.parse(Buffer.concat(chunks).toString('utf8'));
    if (typeof value === 'object' && value !== null && !Array.isArray(value)) return value as Record<string, unknown>;
  } catch {
    // answered below
  }
  throw new PageRequestError('bad_request', { message: 'the body must be a JSON object' });
}

function sendJson(res: ServerResponse, status: number, value: unknown): void {
  const text = JSON.stringify(value);
  res.writeHead(status, {
    'content-type': 'application/json; charset=utf-8',
    'content-length': Buffer.byteLength(text),
    'cache-control': 'no-store',
  });
  res.end(text);
}
