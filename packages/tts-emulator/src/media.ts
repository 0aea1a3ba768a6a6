/** GET /media/<hash>.mp3 and /signed/<hash>.mp3: the audio bucket (spec: the signed URL expires). */
import { safeEqual, type Reply, type RequestContext } from './http.ts';
import { storageError } from './replies.ts';
import type { ServiceState } from './service.ts';

const AUDIO_PATH = /^\/(media|signed)\/([0-9a-f]{56})\.mp3$/;

export async function audioFile(service: ServiceState, ctx: RequestContext): Promise<Reply> {
  if (ctx.method !== 'GET' && ctx.method !== 'HEAD') return { status: 405, headers: { Allow: 'GET, HEAD' } };
  const match = AUDIO_PATH.exec(ctx.path);
  if (!match) return noSuchKey();
  const [, kind, hash] = match as unknown as [string, 'media' | 'signed', string];
  if (kind === 'signed') {
    const query = new URL(ctx.req.url ?? '/', 'http://emulator.invalid').searchParams;
    const expires = Number(query.get('expires'));
    const sig = query.get('sig') ?? '';
    if (!Number.isInteger(expires) || !safeEqual(sig, service.sign(hash, expires))) {
      return storageError(403, 'SignatureDoesNotMatch', 'The request signature we calculated does not match the signature you provided.');
    }
    if (service.now() >= expires * 1000) return storageError(403, 'ExpiredToken', 'The provided token has expired.');
  }
  const input = service.audio.lookup(hash);
  // Standard audio is public under /media/, advanced audio only under a signed URL.
  if (!input || (input.kind === 'advanced') !== (kind === 'signed')) return noSuchKey();
  const bytes = await service.audio.bytes(input);
  return {
    status: 200,
    bytes,
    contentType: 'audio/mpeg',
    headers: { 'Cache-Control': kind === 'media' ? 'public, max-age=3600' : 'private, max-age=0' },
    omitBody: ctx.method === 'HEAD',
  };
}

function noSuchKey(): Reply {
  return storageError(404, 'NoSuchKey', 'The specified key does not exist.');
}
