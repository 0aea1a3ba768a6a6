/**
 * The voice gateway's TLS certificate: self-signed for IP 127.0.0.1. @discordjs/voice always opens
 * `wss://${endpoint}` with the default CA store, so the process that joins must trust it first.
 */
import { execFile } from 'node:child_process';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { getCACertificates, setDefaultCACertificates } from 'node:tls';
import { LocalDiscordError } from '../errors.ts';

/**
 * Makes a self-signed certificate for IP 127.0.0.1 with the openssl CLI (node:crypto cannot issue
 * X.509 certificates). Cached: one certificate per process, so trusting it once is enough.
 */
let certificatePromise: Promise<{ key: string; cert: string }> | undefined;
export function loopbackCertificate(): Promise<{ key: string; cert: string }> {
  certificatePromise ??= (async () => {
    const dir = await mkdtemp(join(tmpdir(), 'fake-voice-cert-'));
    try {
      const keyPath = join(dir, 'key.pem');
      const certPath = join(dir, 'cert.pem');
      await new Promise<void>((resolve, reject) => {
        execFile(
          'openssl',
          [
            'req',
            '-x509',
            '-newkey',
            'ec',
            '-pkeyopt',
            'ec_paramgen_curve:prime256v1',
            '-nodes',
            '-keyout',
            keyPath,
            '-out',
            certPath,
            '-days',
            '2',
            '-subj',
            '/CN=fake-discord-voice',
            '-addext',
            'subjectAltName=IP:127.0.0.1',
          ],
          (error) => (error ? reject(new LocalDiscordError('certificate_failed', { cause: error })) : resolve()),
        );
      });
      return { key: await readFile(keyPath, 'utf8'), cert: await readFile(certPath, 'utf8') };
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  })();
  certificatePromise.catch(() => {
    certificatePromise = undefined;
  });
  return certificatePromise;
}

/**
 * Adds `pem` to this process's default CA store (Node >= 24.5), so TLS clients that pass no `ca`,
 * such as @discordjs/voice's `ws`, accept the fake's certificate. Idempotent.
 */
export function trustCertificate(pem: string): void {
  const current = getCACertificates('default');
  if (current.some((c) => c.trim() === pem.trim())) return;
  setDefaultCACertificates([...current, pem]);
}
