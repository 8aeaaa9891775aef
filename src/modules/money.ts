/** Decimal strings with two places, computed in integer hundredths: money never touches a float. */
export const MONEY_INPUT = { type: 'string', pattern: '^-?\\d{1,12}(\\.\\d{1,2})?$', description: 'Decimal string, e.g. "1299.00".', examples: ['1299.00'] } as const;

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
