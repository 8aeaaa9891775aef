import { AppError } from '../../errors/app-error.ts';

export type Format = 'json' | 'ndjson' | 'csv' | 'xlsx';
/** The formats that stream rows (every matching one without `limit`/`cursor`). */
export type ExportFormat = Exclude<Format, 'json'>;

export interface FormatInfo {
  mediaType: string;
  /** The Content-Type sent (with parameters). */
  contentType: string;
  extension: string;
}

/** In server preference order: when the client likes several equally (as `*` + `/*` does), JSON wins, then NDJSON, then CSV. */
export const FORMATS: Record<Format, FormatInfo> = {
  json: { mediaType: 'application/json', contentType: 'application/json; charset=utf-8', extension: 'json' },
  // One JSON object per line (ndjson.org); no registered type exists, application/x-ndjson is the common one.
  ndjson: { mediaType: 'application/x-ndjson', contentType: 'application/x-ndjson; charset=utf-8', extension: 'ndjson' },
  // RFC 4180 §3 registers the `header` parameter; ours always has the header row.
  csv: { mediaType: 'text/csv', contentType: 'text/csv; charset=utf-8; header=present', extension: 'csv' },
  xlsx: {
    mediaType: 'application/vnd.openxmlformats-officedocument.spreadsheetml.sheet',
    contentType: 'application/vnd.openxmlformats-officedocument.spreadsheetml.sheet',
    extension: 'xlsx',
  },
};

export const FORMAT_NAMES = Object.keys(FORMATS) as Format[];
export const EXPORT_FORMATS = FORMAT_NAMES.filter((f): f is ExportFormat => f !== 'json');

interface MediaRange {
  type: string;
  subtype: string;
  q: number;
  /** Position in the header: among equally specific ranges of equal q, the earlier one is preferred. */
  order: number;
}

/**
 * Parses an Accept header (RFC 9110 §12.5.1). Media type parameters other than q are ignored: none of our
 * formats has variants. Hand-written (40 lines) because no negotiation package is a dependency of the project.
 */
export function parseAccept(header: string): MediaRange[] {
  const ranges: MediaRange[] = [];
  header.split(',').forEach((part, order) => {
    const [range, ...params] = part.trim().split(';');
    const m = /^([!#$%&'*+.^_`|~0-9A-Za-z-]+)\/([!#$%&'*+.^_`|~0-9A-Za-z-]+)$/.exec(range.trim());
    if (!m) return;
    let q = 1;
    for (const p of params) {
      const [k, v] = p.split('=').map((s) => s.trim());
      if (k.toLowerCase() === 'q') q = /^(0(\.\d{0,3})?|1(\.0{0,3})?)$/.test(v ?? '') ? Number(v) : 0;
    }
    ranges.push({ type: m[1].toLowerCase(), subtype: m[2].toLowerCase(), q, order });
  });
  return ranges;
}

const specificity = (r: MediaRange): number => (r.type === '*' ? 0 : r.subtype === '*' ? 1 : 2);

/** The q-value the client gives a media type: that of the most specific range matching it (RFC 9110 §12.5.1). */
function quality(ranges: MediaRange[], mediaType: string): { q: number; specificity: number; order: number } | undefined {
  const [type, subtype] = mediaType.split('/');
  let best: MediaRange | undefined;
  for (const r of ranges) {
    const matches = (r.type === '*' || r.type === type) && (r.subtype === '*' || r.subtype === subtype);
    if (matches && (!best || specificity(r) > specificity(best))) best = r;
  }
  return best && { q: best.q, specificity: specificity(best), order: best.order };
}

/**
 * The format of an answer. `format=` (already validated against FORMAT_NAMES) wins over Accept, so a plain
 * link works; no Accept, or one that allows everything, means JSON. An Accept that allows none of the
 * offered formats is a 406.
 */
export function chooseFormat(formatParam: string | undefined, accept: string | undefined, offered: readonly Format[] = FORMAT_NAMES): Format {
  if (formatParam !== undefined) return formatParam as Format;
  if (accept === undefined || accept.trim() === '') return offered[0];
  const ranges = parseAccept(accept);
  let chosen: { format: Format; q: number; specificity: number; order: number } | undefined;
  for (const format of offered) {
    const match = quality(ranges, FORMATS[format].mediaType);
    if (!match || match.q <= 0) continue;
    const better =
      !chosen ||
      match.q > chosen.q ||
      (match.q === chosen.q && (match.specificity > chosen.specificity || (match.specificity === chosen.specificity && match.order < chosen.order)));
    if (better) chosen = { format, ...match };
  }
  if (!chosen) {
    throw new AppError('not_acceptable', `The Accept header allows none of the formats of this endpoint: ${offered.map((f) => FORMATS[f].mediaType).join(', ')}.`, {
      headers: { vary: 'Accept' },
    });
  }
  return chosen.format;
}
