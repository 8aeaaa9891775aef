import { EventEmitter } from 'node:events';

/**
 * In-process signal that events were committed, so waiters (webhook dispatcher, long-polling changes
 * readers) wake at once instead of at their next poll. It carries no data: the event log is the truth.
 */
export class EventBus extends EventEmitter {
  appended(): void {
    this.emit('appended');
  }
}
