import type { NewEvent } from '../events/log.ts';
import type { Resource } from './types.ts';

/**
 * The one way an event of a resource is made: `<event>.<action>` about item `id`, with `data` (the item as
 * the API shows it, `{ id }` for a deletion). The action must be one the resource declares, so a misspelt
 * type fails at once instead of reaching the feed and every webhook.
 */
export function eventFor(r: Pick<Resource, 'event' | 'eventTypes'>, action: string, id: number, data: unknown): NewEvent {
  const type = `${r.event}.${action}`;
  if (!r.eventTypes.includes(type)) throw new Error(`${type} is not an event type of ${r.event} (${r.eventTypes.join(', ')})`);
  return { type, resource: r.event, resourceId: id, data };
}
