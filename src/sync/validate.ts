import { Ajv, type ValidateFunction } from 'ajv';
import { addFormats } from '../ajv-formats.ts';
import { validationReason } from '../errors/validation-reasons.ts';
import { itemSchema } from '../listing/schemas.ts';
import type { ChangeEvent, ChangesPage, ListingPage } from './client.ts';
import { SyncError } from './client.ts';
import type { Mirror, Mirrors } from './mirrors.ts';

// What the main store sends is checked against the very schemas this version's API answers with before a row
// is written: a main store that is broken, of another version, or not a store at all, cannot put into this
// database what its own API would never show. Nothing is coerced or filled in.
const ajv = new Ajv({ allErrors: true, coerceTypes: false, useDefaults: false, removeAdditional: false, strict: false });
addFormats(ajv);

const itemValidators = new WeakMap<Mirror, ValidateFunction>();

/** The item schema of a followed collection, compiled once. */
function itemValidator(m: Mirror): ValidateFunction {
  let validate = itemValidators.get(m);
  if (!validate) {
    const { $id: _id, ...schema } = itemSchema(m.def);
    itemValidators.set(m, (validate = ajv.compile(schema)));
  }
  return validate;
}

const pageShape = ajv.compile({
  type: 'object',
  required: ['data', 'pagination'],
  properties: {
    data: { type: 'array' },
    pagination: { type: 'object', required: ['hasMore', 'nextCursor'], properties: { hasMore: { type: 'boolean' }, nextCursor: { type: ['string', 'null'] } } },
  },
});

const eventShape = ajv.compile({
  type: 'object',
  required: ['seq', 'type', 'resource', 'resourceId', 'occurredAt', 'data'],
  properties: {
    seq: { type: 'integer', minimum: 1 },
    type: { type: 'string' },
    resource: { type: 'string' },
    resourceId: { type: 'integer', minimum: 1 },
    occurredAt: { type: 'string', format: 'date-time' },
    data: { type: 'object' },
  },
});

/** The first few problems of a failed validation, as `field reason` phrases. */
function reasons(validate: ValidateFunction): string {
  const list = (validate.errors ?? []).slice(0, 3).map((e) => {
    const { name, reason } = validationReason(e, 'is not a field of this resource');
    return name ? `${name} ${reason}` : reason;
  });
  return list.join('; ') || 'does not match the schema';
}

const refused = (what: string, detail: string) =>
  new SyncError(`the main store sent ${what} that this store's schema refuses (${detail}); nothing of the batch was applied`, 'permanent');

/** A listing page of a followed collection: its envelope, then every item against the collection's item schema. */
export function checkListingPage(m: Mirror, page: unknown): asserts page is ListingPage {
  const collection = m.def.collection;
  if (!pageShape(page)) throw refused(`a ${collection} page`, reasons(pageShape));
  const validate = itemValidator(m);
  for (const item of (page as ListingPage).data) {
    if (!validate(item)) throw refused(`${collection} item ${JSON.stringify((item as { id?: unknown } | null)?.id ?? null)}`, reasons(validate));
  }
}

/**
 * A page of the changes feed: its envelope, every event's own fields, and the item of every creation or
 * change of a followed collection (deletions carry only the id; collections not followed are left out unread).
 */
export function checkChangesPage(page: unknown, mirrors: Mirrors): asserts page is ChangesPage {
  if (!pageShape(page)) throw refused('a page of the changes feed', reasons(pageShape));
  for (const event of (page as ChangesPage).data as unknown[]) {
    if (!eventShape(event)) throw refused('an event', reasons(eventShape));
    const e = event as ChangeEvent;
    const mirror = mirrors.byEvent.get(e.resource);
    if (!mirror || e.type === `${e.resource}.deleted`) continue;
    const validate = itemValidator(mirror);
    if (!validate({ ...e.data, id: e.resourceId })) throw refused(`${mirror.def.collection} item ${e.resourceId} in event ${e.seq}`, reasons(validate));
  }
}
