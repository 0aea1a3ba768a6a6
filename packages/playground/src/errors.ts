import { codedError, type CodedErrorOptions } from '@yomiage/coded-error';

// Errors of the playground (the bot's docs/architecture.md, "Errors"): what the page's API answers a request it cannot serve.

/** The HTTP status the page server answers each code with. */
const STATUS: Readonly<Record<PageRequestErrorCode, number>> = {
  bad_request: 400,
  forbidden: 403,
  not_found: 404,
  unsupported_media_type: 415,
  too_large: 413,
};

/** A request to the playground page's API that it refuses; `status` is the HTTP answer. */
export class PageRequestError extends codedError({
  bad_request: 'the request is not one the page sends',
  forbidden: 'this page is served for http://127.0.0.1 only',
  not_found: 'no such route',
  unsupported_media_type: 'send JSON (content-type: application/json)',
  too_large: 'request too large',
}) {
  override name = 'PageRequestError';
  readonly status: number;
  constructor(code: PageRequestErrorCode, options: CodedErrorOptions = {}) {
    super(code, options);
    this.status = STATUS[code];
  }
}

type PageRequestErrorCode = PageRequestError['code'];
