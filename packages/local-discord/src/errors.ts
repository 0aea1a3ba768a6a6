/**
 * Errors of the local Discord: the JSON errors it answers over REST (Discord's shape
 * `{message, code, errors?}`, https://discord.com/developers/docs/topics/opcodes-and-status-codes#json)
 * and the errors its test-facing API throws.
 */
import { codedError } from '@yomiage/coded-error';

interface DiscordErrorBody {
  message: string;
  code: number;
  errors?: unknown;
}

export interface ApiError {
  status: number;
  body: DiscordErrorBody;
}

/** Discord's JSON error codes the fake uses, with their real messages. */
export const API_ERRORS = {
  notFound: { status: 404, body: { message: '404: Not Found', code: 0 } },
  unauthorized: { status: 401, body: { message: '401: Unauthorized', code: 0 } },
  unknownChannel: { status: 404, body: { message: 'Unknown Channel', code: 10003 } },
  unknownGuild: { status: 404, body: { message: 'Unknown Guild', code: 10004 } },
  unknownMember: { status: 404, body: { message: 'Unknown Member', code: 10007 } },
  unknownMessage: { status: 404, body: { message: 'Unknown Message', code: 10008 } },
  unknownUser: { status: 404, body: { message: 'Unknown User', code: 10013 } },
  unknownWebhook: { status: 404, body: { message: 'Unknown Webhook', code: 10015 } },
  unknownCommand: { status: 404, body: { message: 'Unknown application command', code: 10063 } },
  unknownInteraction: { status: 404, body: { message: 'Unknown interaction', code: 10062 } },
  unknownVoiceState: { status: 404, body: { message: 'Unknown Voice State', code: 10065 } },
  alreadyAcknowledged: { status: 400, body: { message: 'Interaction has already been acknowledged.', code: 40060 } },
  entityTooLarge: { status: 413, body: { message: 'Request entity too large', code: 40005 } },
  missingAccess: { status: 403, body: { message: 'Missing Access', code: 50001 } },
  cannotEditOthers: { status: 403, body: { message: 'Cannot edit a message authored by another user', code: 50005 } },
  emptyMessage: { status: 400, body: { message: 'Cannot send an empty message', code: 50006 } },
  nonTextChannel: { status: 400, body: { message: 'Cannot send messages in a non-text channel', code: 50008 } },
  missingPermissions: { status: 403, body: { message: 'Missing Permissions', code: 50013 } },
  invalidBody: { status: 400, body: { message: '400: Bad Request', code: 0 } },
  invalidJson: { status: 400, body: { message: 'The request body contains invalid JSON.', code: 50109 } },
  internal: { status: 500, body: { message: '500: Internal Server Error', code: 0 } },
  invalidMultipart: { status: 400, body: { message: 'Invalid multipart body', code: 50109 } },
} as const satisfies Record<string, ApiError>;

/** A 400 "Invalid Form Body" (50035) with Discord's nested `_errors` shape for one field path. */
export function invalidFormBody(path: string, code: string, message: string): ApiError {
  let errors: Record<string, unknown> = { _errors: [{ code, message }] };
  for (const key of path.split('.').reverse()) errors = { [key]: errors };
  return { status: 400, body: { message: 'Invalid Form Body', code: 50035, errors } };
}

/** Thrown by the local Discord's test-facing API (misuse, or a wait that timed out). */
export class LocalDiscordError extends codedError({
  no_session: 'no client has identified with the local Discord',
  unknown_channel: 'the local Discord has no such channel',
  unknown_guild: 'the local Discord has no such guild',
  unknown_application: 'the local Discord serves no such bot application',
  bad_option: 'an option of the local Discord is inconsistent',
  unknown_message: 'the local Discord has no such bot message or component',
  not_offered: "a member's Discord client does not offer that value for the command's option",
  no_voice_connection: 'the voice server has no open voice websocket for that guild',
  certificate_failed: "openssl could not make the voice server's certificate",
  dave_misuse: 'the DAVE gateway was asked for a call or member it does not have',
  mls_malformed: 'an MLS message could not be read',
  timeout: 'timed out waiting for the local Discord',
}) {
  override name = 'LocalDiscordError';
}
