/**
 * The decoder of a field stored as JSON text, as define.ts stores `object` and `array` inputs (JSON.stringify):
 * being this function is what tells PostgreSQL's export lines that the stored text is the value's JSON, to be
 * written as it is (listing/formats/pg-nested-lines.ts).
 */
export const decodeJsonText = (value: unknown): unknown => (typeof value === 'string' ? JSON.parse(value) : value);
