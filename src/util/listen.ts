import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';

/** Binds `server` to `host`:`port` (0: a free port); resolves with the port bound and its http:// URL, rejects if it cannot bind. */
export async function listen(server: Server, port: number, host: string): Promise<{ port: number; url: string }> {
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, host, () => {
      server.off('error', reject);
      resolve();
    });
  });
  const { port: bound, address, family } = server.address() as AddressInfo;
  return { port: bound, url: `http://${family === 'IPv6' ? `[${address}]` : address}:${bound}` };
}
