/**
 * The sample image the composer attaches in one click (a member may pick a file of their own
 * instead): a sunset over the sea, drawn here and encoded as a PNG (RFC 2083: signature, IHDR, one
 * zlib IDAT of filter-0 rows, IEND), so the repository holds no binary and anyone can see what it is.
 */
import { crc32, deflateSync } from 'node:zlib';

const WIDTH = 320;
const HEIGHT = 180;
/** Where the sea starts (the horizon), and the sun's centre and radius. */
const HORIZON = 112;
const SUN = { x: 160, y: 104, r: 30 };

type Rgb = [number, number, number];

const mix = (a: Rgb, b: Rgb, t: number): Rgb => [0, 1, 2].map((i) => Math.round(a[i]! + (b[i]! - a[i]!) * t)) as Rgb;

/** The colour at (x, y): a sky from violet to orange, the sun, and the sea with its reflection. */
function pixel(x: number, y: number): Rgb {
  if (y < HORIZON) {
    const sky = mix([72, 52, 128], [250, 150, 70], y / HORIZON);
    const d = Math.hypot(x - SUN.x, y - SUN.y);
    if (d <= SUN.r) return [255, 214, 120];
    // A glow around the sun.
    return d < SUN.r * 2 ? mix([255, 190, 110], sky, (d - SUN.r) / SUN.r) : sky;
  }
  const depth = (y - HORIZON) / (HEIGHT - HORIZON);
  const sea = mix([40, 70, 130], [16, 32, 72], depth);
  // The sun's path on the water: broken lines, wider nearer the viewer.
  const half = 10 + depth * 34;
  const glitter = Math.abs(x - SUN.x) < half && (y + Math.floor(x / 7)) % 5 < 2;
  return glitter ? mix(sea, [255, 200, 120], 0.75 - depth * 0.4) : sea;
}

function chunk(type: string, data: Buffer): Buffer {
  const head = Buffer.alloc(8);
  head.writeUInt32BE(data.length, 0);
  head.write(type, 4, 'ascii');
  const crc = Buffer.alloc(4);
  crc.writeUInt32BE(crc32(Buffer.concat([head.subarray(4), data])), 0);
  return Buffer.concat([head, data, crc]);
}

/** The sample image as PNG bytes (8-bit RGB, 320 x 180). */
export function sampleImagePng(): Buffer {
  const rows = Buffer.alloc(HEIGHT * (1 + WIDTH * 3));
  for (let y = 0; y < HEIGHT; y++) {
    const start = y * (1 + WIDTH * 3); // each row starts with its filter type, 0 (none)
    for (let x = 0; x < WIDTH; x++) rows.set(pixel(x, y), start + 1 + x * 3);
  }
  const header = Buffer.alloc(13);
  header.writeUInt32BE(WIDTH, 0);
  header.writeUInt32BE(HEIGHT, 4);
  header.set([8, 2, 0, 0, 0], 8); // bit depth 8, colour type 2 (RGB), deflate, filter 0, no interlace
  return Buffer.concat([
    Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]),
    chunk('IHDR', header),
    chunk('IDAT', deflateSync(rows, { level: 9 })),
    chunk('IEND', Buffer.alloc(0)),
  ]);
}
