import { codedError } from '@yomiage/coded-error';

// Errors of the web dashboard (docs/architecture.md, "Errors"): never a token, a code or a secret in a message.

/** Discord's OAuth2 did not give what the sign-in needs. */
export class DashboardError extends codedError({
  oauth_rejected: "Discord refused the sign-in (the code, the verifier or the client's credentials)",
  oauth_unavailable: "Discord's OAuth2 endpoint did not answer as expected",
  body_too_large: 'the request body is larger than the dashboard accepts',
  body_invalid: 'the request body is not the JSON object the endpoint expects',
}) {
  override name = 'DashboardError';
}

/** A request the API refuses as it stands: the code the page shows (localised as dashboard.error_<code>) and its HTTP status. */
export class ApiRefusal extends codedError({
  bad_request: 'a field of the request is not of the type the endpoint takes',
  not_found: 'no such dashboard endpoint',
  unknown_guild: 'the bot or the signed-in member is not in that server',
  not_manager: 'the signed-in member lacks Manage Server in that server',
}) {
  override name = 'ApiRefusal';
  /** 404 for what is not there (or not theirs to know about), 403 for what they may not do, 400 for a malformed request. */
  get status(): number {
    return this.code === 'not_manager' ? 403 : this.code === 'bad_request' ? 400 : 404;
  }
}
