import { describe, expect, it } from 'vitest';
import { CodedError, codedError } from '../src/index.ts';

class WidgetError extends codedError({
  widget_missing: 'no such widget',
  widget_broken: 'the widget is broken',
}) {
  override name = 'WidgetError';
}

describe('an error class declared from its table of codes', () => {
  it('GIVEN a code THEN its default message, its code and its name; an Error and a CodedError', () => {
    const e = new WidgetError('widget_missing');
    expect([e.code, e.message, e.name]).toEqual(['widget_missing', 'no such widget', 'WidgetError']);
    expect(e).toBeInstanceOf(Error);
    expect(e).toBeInstanceOf(CodedError);
    expect(WidgetError.messages).toEqual({ widget_missing: 'no such widget', widget_broken: 'the widget is broken' });
  });

  it('GIVEN a message and a cause in the options THEN the message replaces the default and the cause is kept', () => {
    const cause = new Error('disk full');
    const e = new WidgetError('widget_broken', { message: 'broken while saving', cause });
    expect([e.message, e.cause]).toEqual(['broken while saving', cause]);
    expect(new WidgetError('widget_broken', { message: undefined }).message).toBe('the widget is broken');
  });
});
