/**
 * Preloaded into the playground's bot child (`--import` in NODE_OPTIONS), nowhere else: a UDP
 * socket bound without an address binds 127.0.0.1 instead of every interface. @discordjs/voice
 * opens its voice socket with `createSocket('udp4')` and lets the first send bind it to 0.0.0.0,
 * which would leave the playground's bot reachable from the network on an ephemeral port. The
 * playground's voice server is on 127.0.0.1, so the bot's code runs unchanged and the socket
 * simply stays on loopback. With Discord itself (`npm start`), nothing loads this file.
 */
import dgram from 'node:dgram';

const LOOPBACK = '127.0.0.1';
const bind = dgram.Socket.prototype.bind as (...args: unknown[]) => dgram.Socket;

// Node's own implicit bind (first send) calls `this.bind({ port: 0, exclusive: true }, null)`.
dgram.Socket.prototype.bind = function bindOnLoopback(this: dgram.Socket, ...given: unknown[]): dgram.Socket {
  const [first, second] = given;
  let args = given;
  if (typeof first === 'object' && first !== null) {
    const options = first as dgram.BindOptions;
    if (options.address === undefined && options.fd === undefined) args = [{ ...options, address: LOOPBACK }, ...given.slice(1)];
  } else if (typeof first === 'function') {
    args = [0, LOOPBACK, first]; // bind(callback)
  } else if (typeof second !== 'string') {
    args = [first ?? 0, LOOPBACK, ...given.slice(1)]; // bind(), bind(port), bind(port, callback)
  }
  return bind.apply(this, args);
} as typeof dgram.Socket.prototype.bind;
