import type { Input } from '../resources/types.ts';

/** A problem found in the file, by the line it is on. */
export interface LineIssue {
  line: number;
  field?: string;
  reason: string;
}

/** One record of the file (an API object), or the problems that kept it from being one. */
export interface SourceRecord {
  /** The line the record starts on (1-based, the CSV header being line 1). */
  line: number;
  record?: Input;
  issues: LineIssue[];
  /** The line a field path (`items.2.quantity`) came from, for records built from several lines (orders in CSV). */
  lineOf?(field: string): number;
  /** A problem with the file as a whole (a broken header, unparsable CSV): reading stops. */
  fatal?: boolean;
}
