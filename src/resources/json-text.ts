/** The decoder of a field stored as JSON text, as define.ts stores `object` and `array` inputs (JSON.stringify; `Field.jsonText`). */
export const decodeJsonText = (value: unknown): unknown => (typeof value === 'string' ? JSON.parse(value) : value);
