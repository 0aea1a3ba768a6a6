/**
 * Where everything of the local Discord listens: 127.0.0.1 and nowhere else. It is a development
 * tool that accepts the bot token it made up and serves a self-signed certificate, so it must not
 * be reachable from the network. Every socket of this module listens through these two functions,
 * and there is no option for another address (test/loopback.test.ts checks both).
 */
import type { Socket as UdpSocket } from 'node:dgram';
import type { AddressInfo, Server } from 'node:net';

export const LOOPBACK_HOST = '127.0.0.1';

/** Starts `server` listening on 127.0.0.1 (`port` 0: an ephemeral one); resolves with the port. */
export function listenOnLoopback(server: Server, port = 0): Promise<number> {
  return new Promise((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, LOOPBACK_HOST, () => {
      server.off('error', reject);
      resolve((server.address() as AddressInfo).port);
    });
  });
}

/** Binds a UDP socket to 127.0.0.1 (`port` 0: an ephemeral one); resolves with the port. */
export function bindOnLoopback(socket: UdpSocket, port = 0): Promise<number> {
  return new Promise((resolve, reject) => {
    socket.once('error', reject);
    socket.bind(port, LOOPBACK_HOST, () => {
      socket.off('error', reject);
      resolve(socket.address().port);
    });
  });
}
