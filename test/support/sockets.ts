/**
 * What a process tree listens on, read from /proc (Linux) as `ss -ltnup` would show it: TCP
 * sockets in LISTEN and bound UDP sockets, with their local address, for the given processes and
 * all their descendants.
 */
import { readdirSync, readFileSync, readlinkSync } from 'node:fs';

export interface OpenSocket {
  pid: number;
  proto: 'tcp' | 'tcp6' | 'udp' | 'udp6';
  address: string;
  port: number;
}

/** `root` and every process below it. */
export function processTree(root: number): number[] {
  const parents = new Map<number, number>();
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      // "pid (comm) state ppid ...": comm may hold spaces and parentheses, so split after the last ')'.
      const stat = readFileSync(`/proc/${entry}/stat`, 'utf8');
      const ppid = Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]);
      parents.set(Number(entry), ppid);
    } catch {
      // the process ended meanwhile
    }
  }
  const tree = [root];
  for (let i = 0; i < tree.length; i++) for (const [pid, ppid] of parents) if (ppid === tree[i]) tree.push(pid);
  return tree;
}

function socketInodes(pid: number): Set<string> {
  const inodes = new Set<string>();
  try {
    for (const fd of readdirSync(`/proc/${pid}/fd`)) {
      try {
        const m = /^socket:\[(\d+)\]$/.exec(readlinkSync(`/proc/${pid}/fd/${fd}`));
        if (m) inodes.add(m[1]!);
      } catch {
        // closed meanwhile
      }
    }
  } catch {
    // the process ended meanwhile
  }
  return inodes;
}

/** "0100007F" (little-endian hex IPv4) or a 32-hex IPv6, as in /proc/net/*. */
function decodeAddress(hex: string): string {
  if (hex.length === 8) return [3, 2, 1, 0].map((i) => parseInt(hex.slice(i * 2, i * 2 + 2), 16)).join('.');
  const words: string[] = [];
  for (let w = 0; w < 4; w++) {
    const word = hex.slice(w * 8, w * 8 + 8);
    const bytes = [3, 2, 1, 0].map((i) => word.slice(i * 2, i * 2 + 2)).join('');
    words.push(bytes.slice(0, 4), bytes.slice(4));
  }
  const full = words.map((x) => parseInt(x, 16).toString(16)).join(':');
  if (full.startsWith('0:0:0:0:0:ffff:')) {
    const [hi, lo] = full
      .split(':')
      .slice(6)
      .map((x) => parseInt(x, 16));
    return `::ffff:${hi! >> 8}.${hi! & 255}.${lo! >> 8}.${lo! & 255}`;
  }
  return full === '0:0:0:0:0:0:0:0' ? '::' : full === '0:0:0:0:0:0:0:1' ? '::1' : full;
}

/** Listening TCP and bound UDP sockets of `pids`. */
export function listeningSockets(pids: readonly number[]): OpenSocket[] {
  const owner = new Map<string, number>();
  for (const pid of pids) for (const inode of socketInodes(pid)) owner.set(inode, pid);
  const found: OpenSocket[] = [];
  for (const proto of ['tcp', 'tcp6', 'udp', 'udp6'] as const) {
    let table: string;
    try {
      table = readFileSync(`/proc/net/${proto}`, 'utf8');
    } catch {
      continue;
    }
    for (const line of table.split('\n').slice(1)) {
      const cols = line.trim().split(/\s+/);
      if (cols.length < 10) continue;
      const [local, , state] = [cols[1]!, cols[2]!, cols[3]!];
      const pid = owner.get(cols[9]!);
      if (pid === undefined) continue;
      // TCP: only LISTEN (0A); UDP: every bound socket (07, unconnected) can receive from anyone.
      if (proto.startsWith('tcp') && state !== '0A') continue;
      const [addressHex, portHex] = local.split(':') as [string, string];
      found.push({ pid, proto, address: decodeAddress(addressHex), port: parseInt(portHex, 16) });
    }
  }
  return found;
}
