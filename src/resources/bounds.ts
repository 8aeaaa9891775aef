/**
 * Bounds of integer inputs. Ids are bigint in PostgreSQL but must also survive JSON (2^53); counts and
 * positions are 32-bit integer columns. A number past them would fail in the database as a 500.
 */
export const ID_BOUNDS = { minimum: 1, maximum: Number.MAX_SAFE_INTEGER } as const;
export const INT32_BOUNDS = { minimum: -2_147_483_648, maximum: 2_147_483_647 } as const;
