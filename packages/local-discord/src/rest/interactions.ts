/**
 * Interaction responses: the callback, then the interaction's webhook for edits and follow-ups
 * (https://discord.com/developers/docs/interactions/receiving-and-responding). Neither takes an
 * Authorization header: the interaction token in the path is the credential.
 */
import { API_ERRORS, invalidFormBody } from '../errors.ts';
import { EPHEMERAL, LOADING, validateMessageBody, type FakeMessage } from '../messages.ts';
import { snapshot, type DiscordState, type InteractionRecord } from '../state.ts';
import type { InteractionResponse } from '../types.ts';
import { validateModal } from '../modals.ts';
import { NO_CONTENT, ok, type RequestContext, type RouteResult, type Router } from './router.ts';

export function interactionRoutes(router: Router, state: DiscordState): void {
  router.on('POST', '/interactions/:id/:token/callback', (ctx) => callback(state, ctx), false);
  router.on('POST', '/webhooks/:app/:token', (ctx) => followUp(state, ctx), false);
  router.on('GET', '/webhooks/:app/:token/messages/:message', (ctx) => webhookMessage(state, ctx, 'get'), false);
  router.on('PATCH', '/webhooks/:app/:token/messages/:message', (ctx) => webhookMessage(state, ctx, 'edit'), false);
  router.on('DELETE', '/webhooks/:app/:token/messages/:message', (ctx) => webhookMessage(state, ctx, 'delete'), false);
}

function callback(state: DiscordState, { params, query, json, files }: RequestContext): RouteResult {
  const record = state.interactions.get(params.id as string);
  if (!record || record.token !== params.token) return API_ERRORS.unknownInteraction;
  const deadline = state.options.interactionCallbackDeadlineMs;
  if (deadline !== null && state.now() - record.createdAt > deadline) return API_ERRORS.unknownInteraction;
  if (record.callbackType !== undefined) return API_ERRORS.alreadyAcknowledged;
  const body = (json ?? {}) as { type?: unknown; data?: Record<string, unknown> };
  const type = body.type;
  // Autocomplete (4) takes only choices (8); a command takes a message (4), a deferral (5) or a modal (9);
  // a component (3) also a deferred update (6) or an update of its message (7).
  // A modal submit (5) takes a message or a deferral, never another modal.
  const allowed = record.type === 4 ? [8] : record.type === 3 ? [4, 5, 6, 7, 9] : record.type === 5 ? [4, 5] : [4, 5, 9];
  if (typeof type !== 'number' || !allowed.includes(type))
    return invalidFormBody(
      'type',
      'INTERACTION_CALLBACK_TYPE_INVALID',
      `Interaction callback type ${String(type)} is not valid for this interaction`,
    );
  const data = body.data ?? null;
  if (type === 9) {
    const refused = validateModal(data);
    if (refused) return refused;
  }
  const response: InteractionResponse = { kind: 'callback', type, data, files };
  let message: FakeMessage | undefined;
  if (type === 4 || type === 5) {
    const payload = data ?? {};
    if (type === 4) {
      const valid = validateMessageBody(payload, files, true, state.options.maxUploadBytes);
      if (!valid.ok) return valid.error;
    }
    const flags = Number(payload.flags ?? 0);
    message = state.createMessage(type === 4 ? payload : { flags }, type === 4 ? files : [], {
      source: 'interaction',
      channelId: record.channelId,
      interactionId: record.id,
      flags: type === 5 ? (flags & EPHEMERAL) | LOADING : flags,
    });
    record.originalMessageId = message.id;
    response.messageId = message.id;
    response.message = snapshot(message);
  } else if (type === 7 || type === 6) {
    const target = state.original(record);
    if (!target || target.deleted) return API_ERRORS.unknownMessage;
    if (type === 7) {
      const refused = state.editMessage(target, data ?? {}, files);
      if (refused) return refused;
    }
    response.messageId = target.id;
    response.message = snapshot(target);
  } else if (type === 8) {
    const choices = data?.choices;
    if (!Array.isArray(choices)) return invalidFormBody('data.choices', 'BASE_TYPE_REQUIRED', 'This field is required');
    if (choices.length > 25) return invalidFormBody('data.choices', 'BASE_TYPE_MAX_LENGTH', 'Must be 25 or fewer in length.');
  }
  record.callbackType = type;
  state.recordResponse(record, response);
  if (query.get('with_response') !== 'true') return NO_CONTENT;
  return ok({
    interaction: {
      id: record.id,
      type: record.type,
      ...(message
        ? {
            response_message_id: message.id,
            response_message_loading: type === 5,
            response_message_ephemeral: (message.flags & EPHEMERAL) !== 0,
          }
        : {}),
    },
    ...(message ? { resource: { type, message: state.apiMessage(message) } } : type === 8 ? {} : { resource: { type } }),
  });
}

/** The interaction whose token names this webhook, while the token lives. */
function webhookRecord(state: DiscordState, params: Record<string, string>): InteractionRecord | undefined {
  if (params.app !== state.applicationId) return undefined;
  for (const record of state.interactions.values()) {
    if (record.token !== params.token) continue;
    // An expired interaction token no longer names a webhook.
    return state.now() - record.createdAt > state.options.interactionTokenLifetimeMs ? undefined : record;
  }
  return undefined;
}

function followUp(state: DiscordState, ctx: RequestContext): RouteResult {
  const record = webhookRecord(state, ctx.params);
  // Follow-ups need an acknowledged interaction; before that the webhook does not exist.
  if (!record || record.callbackType === undefined) return API_ERRORS.unknownWebhook;
  const payload = (ctx.json ?? {}) as Record<string, unknown>;
  const valid = validateMessageBody(payload, ctx.files, true, state.options.maxUploadBytes);
  if (!valid.ok) return valid.error;
  const original = state.original(record);
  let message: FakeMessage;
  if (original && original.flags & LOADING) {
    // After a deferred reply the first follow-up replaces the "thinking..." message, keeping its
    // ephemeral flag (https://discord.com/developers/docs/interactions/receiving-and-responding#followup-messages).
    state.applyEdit(original, payload, ctx.files);
    message = original;
  } else {
    message = state.createMessage(payload, ctx.files, {
      source: 'followup',
      channelId: record.channelId,
      interactionId: record.id,
      flags: Number(payload.flags ?? 0),
    });
  }
  state.recordResponse(record, { kind: 'followup', data: payload, files: ctx.files, messageId: message.id, message: snapshot(message) });
  return ctx.query.get('wait') === 'true' ? ok(state.apiMessage(message)) : NO_CONTENT;
}

function webhookMessage(state: DiscordState, ctx: RequestContext, action: 'get' | 'edit' | 'delete'): RouteResult {
  const record = webhookRecord(state, ctx.params);
  if (!record) return API_ERRORS.unknownWebhook;
  const isOriginal = ctx.params.message === '@original';
  const message = isOriginal
    ? state.original(record)
    : state.messages.find((m) => m.id === ctx.params.message && m.interactionId === record.id);
  if (!message || message.deleted) return API_ERRORS.unknownMessage;
  if (action === 'get') return ok(state.apiMessage(message));
  if (action === 'delete') {
    message.deleted = true;
    state.deletions.push({ channelId: message.channelId, messageId: message.id });
    state.recordResponse(record, { kind: isOriginal ? 'deleteOriginal' : 'deleteFollowup', data: null, files: [], messageId: message.id });
    if (!(message.flags & EPHEMERAL))
      state.dispatchBotEvent(
        'MESSAGE_DELETE',
        { id: message.id, channel_id: message.channelId, ...state.guildIdOf(message.channelId) },
        message.channelId,
      );
    state.touch(message);
    return NO_CONTENT;
  }
  const payload = (ctx.json ?? {}) as Record<string, unknown>;
  const refused = state.editMessage(message, payload, ctx.files);
  if (refused) return refused;
  state.recordResponse(record, {
    kind: isOriginal ? 'editOriginal' : 'editFollowup',
    data: payload,
    files: ctx.files,
    messageId: message.id,
    message: snapshot(message),
  });
  return ok(state.apiMessage(message));
}
