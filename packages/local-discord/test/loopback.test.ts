/**
 * The local Discord listens on 127.0.0.1 and nowhere else (src/loopback.ts), and so does the
 * playground built on it. That it stays a package of its own (the bot never imports it, it never
 * imports the bot) is the root structure test's.
 */
import { createSocket } from 'node:dgram';
import { once } from 'node:events';
import { readdir, readFile } from 'node:fs/promises';
import { connect, createServer, type AddressInfo } from 'node:net';
import { dirname, join, relative, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { startFakeDiscord, type FakeDiscord } from '../src/server.ts';
import { startFakeVoiceServer, type FakeVoiceServer } from '../src/voice/server.ts';

/** The workspace root: this package is packages/local-discord. */
const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '../../..');
const MODULE = join(ROOT, 'packages/local-discord/src');
/** Another loopback address: on Linux all of 127/8 reaches this host, so a wildcard listener answers it. */
const OTHER_LOCAL = '127.0.0.2';

/** Whether a TCP connection to host:port is accepted. */
async function accepts(host: string, port: number): Promise<boolean> {
  const socket = connect({ host, port });
  try {
    await once(socket, 'connect');
    return true;
  } catch {
    return false;
  } finally {
    socket.destroy();
  }
}

async function sourceFiles(dir: string): Promise<string[]> {
  const entries = await readdir(dir, { recursive: true, withFileTypes: true });
  return entries.filter((e) => e.isFile() && e.name.endsWith('.ts')).map((e) => join(e.parentPath, e.name));
}

describe('bound to 127.0.0.1 only', () => {
  let discord: FakeDiscord;
  let voice: FakeVoiceServer;

  beforeAll(async () => {
    discord = await startFakeDiscord();
    voice = await startFakeVoiceServer();
  });
  afterAll(async () => {
    await discord.close();
    await voice.close();
  });

  it('GIVEN another loopback address that does reach this host THEN neither the REST/gateway port nor the voice gateway answers there', async () => {
    // Control: 127.0.0.2 is a live address here, so a server listening on any address would answer it.
    const control = createServer((s) => s.destroy());
    await new Promise<void>((done) => control.listen(0, OTHER_LOCAL, done));
    try {
      expect(await accepts(OTHER_LOCAL, (control.address() as AddressInfo).port)).toBe(true);
    } finally {
      control.close();
    }
    const restPort = Number(new URL(discord.apiUrl).port);
    const voicePort = Number(voice.endpoint.split(':')[1]);
    expect(new URL(discord.apiUrl).hostname).toBe('127.0.0.1');
    expect(new URL(discord.gatewayUrl).hostname).toBe('127.0.0.1');
    expect(voice.endpoint).toBe(`127.0.0.1:${voicePort}`);
    for (const port of [restPort, voicePort]) {
      expect(await accepts('127.0.0.1', port)).toBe(true);
      expect(await accepts(OTHER_LOCAL, port)).toBe(false);
    }
  });

  it('GIVEN a datagram to the voice UDP port at another loopback address THEN it never arrives; the same at 127.0.0.1 does', async () => {
    const client = createSocket('udp4');
    client.on('error', () => {}); // ICMP port unreachable for the first send
    try {
      const keepalive = Buffer.alloc(8);
      // Sent first: had it been delivered, it would have arrived before the second.
      client.send(keepalive, voice.udpPort, OTHER_LOCAL);
      client.send(keepalive, voice.udpPort, '127.0.0.1');
      await vi.waitFor(() => expect(voice.udpStats.keepalives).toBeGreaterThan(0));
      expect(voice.udpStats.keepalives).toBe(1);
    } finally {
      client.close();
    }
  });
});

describe('structure', () => {
  it('every socket of the local Discord listens through loopback.ts, which names 127.0.0.1 and takes no host', async () => {
    const offenders: string[] = [];
    for (const file of await sourceFiles(MODULE)) {
      if (file.endsWith('loopback.ts')) continue;
      const text = await readFile(file, 'utf8');
      const name = relative(ROOT, file);
      if (/\.listen\(/.test(text)) offenders.push(`${name}: .listen(`);
      if (/\.bind\(/.test(text)) offenders.push(`${name}: .bind(`);
      if (/0\.0\.0\.0|'::'|\bhost\s*:/.test(text)) offenders.push(`${name}: names a host`);
      for (const m of text.matchAll(/new WebSocketServer\(([^)]*)\)/g)) {
        if (!/noServer: true|server: /.test(m[1]!)) offenders.push(`${name}: a WebSocketServer with its own socket`);
      }
    }
    expect(offenders).toEqual([]);
    const loopback = await readFile(join(MODULE, 'loopback.ts'), 'utf8');
    expect(loopback).toMatch(/export const LOOPBACK_HOST = '127\.0\.0\.1';/);
    expect(loopback.match(/\.listen\(port, LOOPBACK_HOST,/g)).toHaveLength(1);
    expect(loopback.match(/\.bind\(port, LOOPBACK_HOST,/g)).toHaveLength(1);
  });

  it('the playground opens no socket of its own: its page server listens through loopback.ts, its emulator on 127.0.0.1', async () => {
    const offenders: string[] = [];
    for (const file of await sourceFiles(join(ROOT, 'packages/playground/src'))) {
      // bot-loopback.ts is the bot child's preload that keeps its UDP socket on 127.0.0.1 (tested with the playground).
      if (file.endsWith('bot-loopback.ts')) continue;
      const text = await readFile(file, 'utf8');
      const name = relative(ROOT, file);
      if (/\.listen\(\s*[^)\s]/.test(text)) offenders.push(`${name}: .listen(`);
      if (/\.bind\(|createSocket/.test(text)) offenders.push(`${name}: a UDP socket`);
      if (/0\.0\.0\.0|'::'/.test(text)) offenders.push(`${name}: names a wildcard address`);
      for (const m of text.matchAll(/new WebSocketServer\(([^)]*)\)/g))
        if (!/noServer: true/.test(m[1]!)) offenders.push(`${name}: a WebSocketServer with its own socket`);
      for (const m of text.matchAll(/startEmulator\(\{([^}]*)\}/g))
        if (!/host: LOOPBACK_HOST/.test(m[1]!)) offenders.push(`${name}: an emulator without host: LOOPBACK_HOST`);
    }
    expect(offenders).toEqual([]);
    expect(await readFile(join(ROOT, 'packages/playground/src/page-server.ts'), 'utf8')).toMatch(/listenOnLoopback\(this\.#http/);
  });
});
