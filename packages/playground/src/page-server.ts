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
import type { Emulator } from '@yomiage/tts-emulator';
import { listenOnLoopback, LOOPBACK_HOST, type FakeDiscord, type FakeVoiceServer, type LocalDiscordActivity } from '@yomiage/local-discord';
import type { BotLogLine, BotProcessEvents, BotStatus } from './bot-process.ts';
import { PageRequestError } from './errors.ts';
import { MemberActions, UPLOAD_LIMITS } from './member-actions.ts';
import { sampleImagePng } from './sample-image.ts';
import { botItem, guildView, serviceView, type MemberItem, type TimelineItem } from './views.ts';
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
/** A message's body may carry its files (base64: 4 bytes for every 3). */
const MAX_MESSAGE_BODY_BYTES = Math.ceil((UPLOAD_LIMITS.files * UPLOAD_LIMITS.bytes * 4) / 3) + MAX_BODY_BYTES;
const KEPT_ITEMS = 500;
/** A client this far behind on the socket skips audio rather than buffering without bound. */
const MAX_BUFFERED_BYTES = 1024 * 1024;

interface BotView {
  readonly status: BotStatus;
  readonly logs: readonly BotLogLine[];
  on(event: 'status', listener: (...args: BotProcessEvents['status']) => void): unknown;
  on(event: 'log', listener: (...args: BotProcessEvents['log']) => void): unknown;
}

interface PageServerOptions {
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
  /** What members do through the page, and what they wrote and ran. */
  readonly #actions: MemberActions;
  /** A sample image the composer can attach (made once, on first use). */
  #sampleImage: Buffer | undefined;
  readonly #unsubscribe: () => void;
  readonly #serviceTimer: NodeJS.Timeout;
  #lastService = '';
  #port = 0;

  constructor(options: PageServerOptions) {
    this.#options = options;
    this.#actions = new MemberActions({
      guildId: options.guildId,
      discord: options.discord,
      voice: options.voice,
      changed: (item) => this.#broadcast({ t: 'item', item }),
    });
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

  /** Members acting as the page acts for them (the playground's own set-up, before the page opens). */
  get members(): MemberActions {
    return this.#actions;
  }

  async listen(): Promise<void> {
    this.#port = await listenOnLoopback(this.#http, this.#options.port);
  }

  async close(): Promise<void> {
    clearInterval(this.#serviceTimer);
    this.#actions.close();
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
    const bot = discord.messages.filter((m) => m.guildId === this.#options.guildId).map((m) => botItem(m, this.#actions.interactions));
    return [...this.#actions.items, ...bot].sort((a, b) => a.at - b.at).slice(-KEPT_ITEMS);
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
    if (req.method === 'GET' && url.pathname === '/api/sample-image.png') return this.#sendSampleImage(res);
    if (req.method !== 'POST') throw new PageRequestError('not_found', { message: `no route ${req.method} ${url.pathname}` });
    if (!/^application\/json\b/.test(req.headers['content-type'] ?? '')) throw new PageRequestError('unsupported_media_type');
    const body = await readJson(req, url.pathname === '/api/message' ? MAX_MESSAGE_BODY_BYTES : MAX_BODY_BYTES);
    const actions = this.#actions;
    switch (url.pathname) {
      case '/api/message':
        return sendJson(res, 200, await actions.message(body));
      case '/api/poll':
        return sendJson(res, 200, await actions.poll(body));
      case '/api/poll-vote':
        return sendJson(res, 200, actions.pollVote(body));
      case '/api/poll-end':
        return sendJson(res, 200, await actions.pollEnd(body));
      case '/api/command':
        return sendJson(res, 200, await actions.command(body));
      case '/api/message-command':
        return sendJson(res, 200, await actions.messageCommand(body));
      case '/api/modal':
        return sendJson(res, 200, await actions.modalSubmit(body));
      case '/api/autocomplete':
        return sendJson(res, 200, await actions.autocomplete(body));
      case '/api/voice':
        return sendJson(res, 200, await actions.voiceState(body));
      case '/api/click':
        return sendJson(res, 200, await actions.click(body));
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

  /** A bot's attachment, or a file a member attached. */
  #attachment(res: ServerResponse, id: string, download: boolean): void {
    const found = this.#options.discord.messages.flatMap((m) => m.attachments).find((a) => a.id === id) ?? this.#actions.uploads.get(id);
    if (!found) throw new PageRequestError('not_found', { message: 'no such attachment' });
    const name = encodeURIComponent(found.filename);
    res.writeHead(200, {
      'content-type': found.contentType,
      'content-length': found.data.length,
      'content-disposition': `${download ? 'attachment' : 'inline'}; filename*=UTF-8''${name}`,
      'x-content-type-options': 'nosniff',
      // A member's file is theirs to name the type of: opened on its own, it runs no script in this page's origin.
      'content-security-policy': 'sandbox',
    });
    res.end(found.data);
  }

  #sendSampleImage(res: ServerResponse): void {
    this.#sampleImage ??= sampleImagePng();
    res.writeHead(200, {
      'content-type': 'image/png',
      'content-length': this.#sampleImage.length,
      'cache-control': 'no-store',
      'x-content-type-options': 'nosniff',
    });
    res.end(this.#sampleImage);
  }

  // ---- live updates -----------------------------------------------------------------------------

  #onActivity(activity: LocalDiscordActivity): void {
    switch (activity.kind) {
      case 'message':
        if (activity.message.guildId === this.#options.guildId)
          this.#broadcast({ t: 'item', item: botItem(activity.message, this.#actions.interactions) });
        return;
      case 'reaction':
      case 'deletion': {
        const item = this.#actions.items.find((i): i is MemberItem => i.type === 'member' && i.id === activity.messageId);
        if (!item) return;
        if (activity.kind === 'reaction') item.reactions.push(activity.emoji);
        else item.deleted = true;
        this.#broadcast({ t: 'item', item });
        return;
      }
      case 'voiceStates':
        // Who is where, and the voice channels' statuses (set by the bot as it reads).
        if (activity.guildId === this.#options.guildId) {
          const { voiceStates, channels } = guildView(this.#guild);
          this.#broadcast({ t: 'voice', voiceStates, channels });
        }
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

/** A log line for the page: level, time, message and a few short fields. */
function shortLine(line: BotLogLine): BotLogLine {
  const { level, time, msg, pid: _pid, hostname: _hostname, ...rest } = line;
  const fields = JSON.stringify(rest);
  return { level, ...(time !== undefined ? { time } : {}), msg: msg ?? '', ...(fields !== '{}' ? { fields: fields.slice(0, 400) } : {}) };
}

async function readJson(req: IncomingMessage, maxBytes: number): Promise<Record<string, unknown>> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of req) {
    size += (chunk as Buffer).length;
    if (size > maxBytes) throw new PageRequestError('too_large');
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
