/**
 * Every error the emulated service can answer with, in one place (spec: Errors), and the messages
 * of its own internal errors. Standard endpoint errors are identified by their exact English
 * message; advanced ones by `code`, each with the Japanese message the live service currently sends.
 */

/** Standard endpoint `error` strings, verbatim from the spec's table. */
export const STANDARD_ERRORS = {
  tokenMissing: 'Token does not exists',
  tokenMismatch: 'Token does not match',
  voiceRequired: 'voice parameter is required',
  unsupportedVoice: 'Unsupported voice requested.',
  missingField: 'Please set "voice", "speed", "pitch", "text"',
  notFinite: '"speed" and "pitch" must be finite numbers',
  rateLimited: 'Rate limit exceeded',
  internal: 'Internal server error',
} as const;

export type StandardError = (typeof STANDARD_ERRORS)[keyof typeof STANDARD_ERRORS];

/** Advanced job creation error codes with their HTTP status (spec: Errors, Advanced job creation). */
export const ADVANCED_ERRORS = {
  invalid_token: { status: 400, error: 'トークンが無効です。' },
  invalid_json: { status: 400, error: 'リクエストのJSONを解析できませんでした。' },
  validation_error: { status: 400, error: '入力内容に誤りがあります。' },
  invalid_speed: { status: 400, error: '話速は0.5から1.5の範囲の数値で指定してください。' },
  invalid_pitch: { status: 400, error: 'ピッチは-1.0から1.0の範囲の数値で指定してください。' },
  invalid_temperature: { status: 400, error: 'temperatureの値が不正です。' },
  invalid_seed: { status: 400, error: 'シード値は-2147483648から2147483647の整数で指定してください。' },
  invalid_model: { status: 400, error: 'モデルはflashまたはproを指定してください。' },
  client_ip_unresolved: { status: 400, error: 'クライアントのIPアドレスを特定できませんでした。' },
  text_too_long: { status: 400, error: 'テキストが長すぎます。' },
  invalid_voice: { status: 400, error: '指定された音声は存在しません。' },
  content_policy_violation: { status: 400, error: 'このテキストはコンテンツポリシーにより読み上げできません。' },
  invalid_request: { status: 400, error: 'リクエストの内容が不正です。' },
  quota_exceeded: { status: 429, error: '利用可能な文字数が不足しています。' },
  rate_limited: { status: 429, error: 'リクエストが多すぎます。しばらく待ってから再度お試しください。' },
  service_not_configured: { status: 500, error: 'サービスが正しく設定されていません。' },
  internal_error: { status: 500, error: 'サーバーエラーが発生しました。時間をおいて再度お試しください。' },
  unsupported_location: { status: 503, error: 'この地域では音声合成を提供できません。' },
  tts_retry_exhausted: { status: 503, error: '一時的に音声を生成できません。時間をおいて再度お試しください。' },
} as const satisfies Record<string, { status: number; error: string }>;

export type AdvancedErrorCode = keyof typeof ADVANCED_ERRORS;

/** More precise messages for the three causes of `validation_error`. */
export const VALIDATION_MESSAGES = {
  short: 'テキストは10文字以上で入力してください。',
  emoji: '絵文字のみのテキストは読み上げできません。',
  repeated: '同じ文字を20回以上続けて使用することはできません。',
} as const;

/** Polling error codes (spec: Errors, Advanced polling). */
export const POLL_ERRORS = {
  forbidden: { status: 403, error: 'このジョブを参照する権限がありません。' },
  not_found: { status: 404, error: 'ジョブが見つかりません。' },
} as const satisfies Record<string, { status: number; error: string }>;

/** Job failure codes (spec: Errors, Job failure codes) and their messages. */
export const JOB_FAILURES: Record<string, string> = {
  content_policy_violation: 'このテキストはポリシーにより読み上げできません。テキストを変更して再度お試しください。',
  unsupported_location: 'この地域では音声合成を提供できません。',
  tts_retry_exhausted: '一時的に音声を生成できません。時間をおいて再度お試しください。',
  invalid_request: '生成中に入力エラーが発生しました。',
  job_timeout: '生成に時間がかかりすぎたため中断しました。再度お試しください。',
  enqueue_failed: 'ジョブを登録できませんでした。',
  user_unavailable: 'アカウントが利用できません。',
  internal_error: 'サーバーエラーが発生しました。',
};

/** Message for a job failure code, including codes the spec does not list. */
export function jobFailureMessage(code: string): string {
  return JOB_FAILURES[code] ?? '音声の生成に失敗しました。';
}

/** What the standard endpoint reads out instead when the monthly allowance is insufficient. */
export const NOTICE_TEXT = '今月の利用可能文字数が不足しているため、音声を生成できませんでした。プランをご確認ください。';

/** Django's CSRF failure page, abridged: the 403 HTML body of session authentication failures. */
export const FORBIDDEN_HTML =
  '<!DOCTYPE html>\n<html lang="en"><head><meta charset="utf-8"><title>403 Forbidden</title></head>' +
  '<body><h1>Forbidden <span>(403)</span></h1><p>CSRF verification failed. Request aborted.</p></body></html>\n';
