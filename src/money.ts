/*
 * Money, in one place: the JSON schemas of amounts (as answers show them, as inputs accept them), how a schema
 * is known to be money, and exact arithmetic in integer hundredths. A leaf: it imports nothing, so every layer
 * (errors, listing, resources, import, sync, the seeder) may use it.
 */

type Schema = Record<string, unknown>;

/** Marks the schemas made here, so that consumers ask `isMoneySchema` rather than compare patterns. */
const MONEY = Symbol('money');

/** An amount as every answer shows it: a decimal string with two places. */
const VALUE_PATTERN = '^-?\\d+\\.\\d{2}$';
/** An amount as inputs accept it: up to twelve digits before the point (numeric(14, 2)), up to two after. */
const INPUT_PATTERN = '^-?\\d{1,12}(\\.\\d{1,2})?$';

const marked = (schema: Schema): Schema => Object.assign(schema, { [MONEY]: true });

/** The schema of an amount in an answer (item schemas, order items); `extra` adds a description and the like. */
export const moneySchema = (extra: Schema = {}): Schema => marked({ type: 'string', pattern: VALUE_PATTERN, examples: ['1299.00'], ...extra });

/** The schema of an amount given in a body or an imported record. */
export const moneyInputSchema = (extra: Schema = {}): Schema =>
  marked({ type: 'string', pattern: INPUT_PATTERN, description: 'Decimal string, e.g. "1299.00".', examples: ['1299.00'], ...extra });

/** Whether a schema (or a copy of one made by spreading it) is one of the money schemas above. */
export const isMoneySchema = (schema: Schema | undefined): boolean => schema !== undefined && (schema as { [MONEY]?: boolean })[MONEY] === true;

/** Whether a validator's failed `pattern` is the money input's (its error then says what an amount looks like). */
export const isMoneyInputPattern = (pattern: unknown): boolean => pattern === INPUT_PATTERN;

/** Decimal strings with two places, computed in integer hundredths: money never touches a float. */
export function toCents(value: string): bigint {
  const m = /^(-?)(\d+)(?:\.(\d{1,2}))?$/.exec(value.trim());
  if (!m) throw new Error(`not a money amount: ${value}`);
  const cents = BigInt(m[2]) * 100n + BigInt((m[3] ?? '0').padEnd(2, '0'));
  return m[1] ? -cents : cents;
}

export function fromCents(cents: bigint): string {
  const negative = cents < 0n;
  const abs = negative ? -cents : cents;
  return `${negative ? '-' : ''}${abs / 100n}.${String(abs % 100n).padStart(2, '0')}`;
}

/** numeric(14, 2), the column type of every amount: the largest magnitude both databases store exactly. */
export const MAX_CENTS = 99_999_999_999_999n;

export const fitsMoneyColumn = (cents: bigint): boolean => cents <= MAX_CENTS && cents >= -MAX_CENTS;

export const normalizeMoney = (value: string): string => fromCents(toCents(value));

/** The VAT contained in a VAT-inclusive amount, rounded half up to the cent. */
export function includedVat(grossCents: bigint, ratePercent: number): bigint {
  const rateBp = BigInt(Math.round(ratePercent * 100));
  const denominator = 10_000n + rateBp;
  return (grossCents * rateBp * 2n + denominator) / (denominator * 2n);
}
