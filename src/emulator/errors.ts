/**
 * Errors the emulator raises inside itself (their messages: messages.ts). Clients never see them:
 * an endpoint that fails this way answers the spec's 500 (standard) or fails the job (advanced).
 */
import { codedError } from '../util/coded-error.ts';
import { EMULATOR_ERROR_MESSAGES } from './messages.ts';

/** The emulator could not make an audio file. */
export class EmulatorError extends codedError(EMULATOR_ERROR_MESSAGES) {
  override name = 'EmulatorError';
}
