/**
 * `npm run emulator`: runs the TTS service emulator until SIGINT/SIGTERM.
 * Flags win over environment variables: --port/EMULATOR_PORT (8787), --host/EMULATOR_HOST
 * (127.0.0.1), --control/EMULATOR_CONTROL, --trust-proxy/EMULATOR_TRUST_PROXY,
 * --plan/EMULATOR_PLAN (free|paid), --token/EMULATOR_TOKEN (64 chars), --allowance/EMULATOR_ALLOWANCE,
 * --speech/EMULATOR_SPEECH (auto: espeak-ng's real words when it is installed, else tones).
 */
import { parseArgs } from 'node:util';
import { z } from 'zod';
import { DEFAULT_TOKEN, PLAN_ALLOWANCE, startEmulator } from './index.ts';

const flag = z.enum(['1', '0', 'true', 'false', '']).transform((v) => v === '1' || v === 'true');

const configSchema = z.object({
  EMULATOR_PORT: z.coerce.number().int().min(0).max(65535).default(8787),
  EMULATOR_HOST: z.string().min(1).default('127.0.0.1'),
  EMULATOR_CONTROL: flag.default(false),
  EMULATOR_TRUST_PROXY: flag.default(false),
  EMULATOR_PLAN: z.enum(['free', 'paid']).default('free'),
  EMULATOR_TOKEN: z.string().length(64, 'must be 64 characters').default(DEFAULT_TOKEN),
  EMULATOR_ALLOWANCE: z.coerce.number().int().min(0).optional(),
  EMULATOR_SPEECH: z.enum(['auto', 'espeak', 'tones']).default('auto'),
});

function usageError(message: string): never {
  process.stderr.write(`emulator: ${message}\n`);
  process.exit(2);
}

const { values } = (() => {
  try {
    return parseArgs({
      options: {
        port: { type: 'string' },
        host: { type: 'string' },
        control: { type: 'boolean' },
        'trust-proxy': { type: 'boolean' },
        plan: { type: 'string' },
        token: { type: 'string' },
        allowance: { type: 'string' },
        speech: { type: 'string' },
        help: { type: 'boolean', short: 'h' },
      },
    });
  } catch (error) {
    return usageError((error as Error).message);
  }
})();

if (values.help) {
  process.stdout.write(
    'usage: npm run emulator -- [--port 8787] [--host 127.0.0.1] [--control] [--trust-proxy]\n' +
      '                          [--plan free|paid] [--token <64 chars>] [--allowance <chars>]\n' +
      '                          [--speech auto|espeak|tones]\n',
  );
  process.exit(0);
}

// Flags override the environment; both go through one schema so errors name the variable.
const env = { ...process.env };
if (values.port !== undefined) env.EMULATOR_PORT = values.port;
if (values.host !== undefined) env.EMULATOR_HOST = values.host;
if (values.control) env.EMULATOR_CONTROL = '1';
if (values['trust-proxy']) env.EMULATOR_TRUST_PROXY = '1';
if (values.plan !== undefined) env.EMULATOR_PLAN = values.plan;
if (values.token !== undefined) env.EMULATOR_TOKEN = values.token;
if (values.allowance !== undefined) env.EMULATOR_ALLOWANCE = values.allowance;
if (values.speech !== undefined) env.EMULATOR_SPEECH = values.speech;

const parsed = configSchema.safeParse(env);
if (!parsed.success) {
  usageError(parsed.error.issues.map((i) => `${i.path.join('.')} (or its --flag): ${i.message}`).join('; '));
}
const config = parsed.data;

const emulator = await startEmulator({
  speech: config.EMULATOR_SPEECH,
  port: config.EMULATOR_PORT,
  host: config.EMULATOR_HOST,
  control: config.EMULATOR_CONTROL,
  trustProxy: config.EMULATOR_TRUST_PROXY,
  accounts: [
    {
      token: config.EMULATOR_TOKEN,
      plan: config.EMULATOR_PLAN,
      allowance: config.EMULATOR_ALLOWANCE ?? PLAN_ALLOWANCE[config.EMULATOR_PLAN],
    },
  ],
});

const body = JSON.stringify({ voice: 'ja-JP-Wavenet-B', text: 'こんにちは、読み上げのテストです。', speed: 1.0, pitch: 0 });
process.stdout.write(
  [
    `TTS emulator listening on ${emulator.baseUrl}`,
    `  token: ${config.EMULATOR_TOKEN} (${config.EMULATOR_PLAN} plan)`,
    `  control API: ${config.EMULATOR_CONTROL ? `${emulator.baseUrl}/__emulator/` : 'off (--control)'}`,
    `  audio: ${emulator.speech === 'espeak' ? 'espeak-ng reads the text' : 'tones (install espeak-ng to hear the words)'}`,
    'try:',
    `  curl -s -X POST ${emulator.baseUrl}/text_to_speech_api/ -H 'Content-Type: application/json' -H 'token: ${config.EMULATOR_TOKEN}' -d '${body}'`,
    '',
  ].join('\n'),
);

let stopping = false;
const stop = (signal: string) => {
  if (stopping) return;
  stopping = true;
  process.stdout.write(`${signal}: stopping\n`);
  emulator.close().then(
    () => process.exit(0),
    () => process.exit(1),
  );
};
process.on('SIGINT', () => stop('SIGINT'));
process.on('SIGTERM', () => stop('SIGTERM'));
