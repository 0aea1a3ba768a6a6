import http, { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { request } from '../../src/tts/transport.ts';

let server: Server | undefined;
afterEach(async () => {
  server?.closeAllConnections();
  await new Promise((r) => server?.close(r) ?? r(undefined));
  server = undefined;
});

async function listen(handler: http.RequestListener): Promise<string> {
  server = createServer(handler);
  await new Promise<void>((r) => server!.listen(0, '127.0.0.1', () => r()));
  return `http://127.0.0.1:${(server.address() as AddressInfo).port}/`;
}

describe('TTS transport (node:http, agents of its own)', () => {
  it('GIVEN another library replaced http.globalAgent THEN requests still go through the transport’s own agent', async () => {
    const url = await listen((req, res) => req.resume().on('end', () => res.end('pong')));
    const original = http.globalAgent;
    const hostile = new http.Agent();
    hostile.createConnection = () => {
      throw new Error('the global agent was used');
    };
    http.globalAgent = hostile;
    try {
      const res = await request(url, { method: 'POST', body: 'ping' });
      expect(res.statusCode).toBe(200);
      expect(await res.body.text()).toBe('pong');
    } finally {
      http.globalAgent = original;
    }
  });

  it('GIVEN a server that never answers THEN the headers timeout fails with its own code', async () => {
    const url = await listen(() => {});
    await expect(request(url, { method: 'GET', headersTimeout: 100 })).rejects.toMatchObject({ code: 'HEADERS_TIMEOUT' });
  });

  it('GIVEN a body that stalls THEN the body timeout ends the read', async () => {
    const url = await listen((_req, res) => {
      res.writeHead(200);
      res.write('part');
    });
    const res = await request(url, { method: 'GET', bodyTimeout: 100 });
    await expect(res.body.text()).rejects.toMatchObject({ code: 'BODY_TIMEOUT' });
  });
});
