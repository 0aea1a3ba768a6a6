import { describe, expect, it } from 'vitest';
import { bool, definedOnly, json, rowMapping, type RowOf } from '../../src/db/rows.ts';

// Rows are mapped snake_case <-> camelCase in one place per table.

interface Thing {
  thingId: string;
  createdAt: number;
  enabled: boolean;
  payload: unknown;
  lang?: string;
  extra?: unknown;
}
type Row = RowOf<Thing, { enabled: number; payload: string; extra: string | null }>;
const rows = rowMapping<Thing, Row>({ codecs: { enabled: bool, payload: json, extra: json }, optional: ['lang', 'extra'] });

describe('rowMapping', () => {
  it('GIVEN a record THEN the row has its snake_case columns, 0/1 for booleans, JSON text, NULL for absent optional fields', () => {
    expect(rows.toRow({ thingId: 't1', createdAt: 5, enabled: true, payload: { a: [1] } })).toEqual({
      thing_id: 't1',
      created_at: 5,
      enabled: 1,
      payload: '{"a":[1]}',
      lang: null,
      extra: null,
    });
  });

  it('GIVEN a row THEN the record back, with NULL optional columns left out (not undefined)', () => {
    const record = rows.fromRow({ thing_id: 't1', created_at: 5, enabled: 0, payload: 'null', lang: null, extra: '{"b":2}' });
    expect(record).toEqual({ thingId: 't1', createdAt: 5, enabled: false, payload: null, extra: { b: 2 } });
    expect('lang' in record).toBe(false);
  });

  it('GIVEN any record THEN toRow then fromRow gives it back', () => {
    const record: Thing = { thingId: 'x', createdAt: 1, enabled: false, payload: ['ok'], lang: 'ja', extra: { deep: { n: 1 } } };
    expect(rows.fromRow(rows.toRow(record))).toEqual(record);
  });
});

describe('definedOnly', () => {
  it('GIVEN a patch with undefined values THEN they are left out; null stays (it clears a setting)', () => {
    expect(definedOnly({ voice: undefined, speed: 1.2, pitch: null })).toEqual({ speed: 1.2, pitch: null });
  });
});
