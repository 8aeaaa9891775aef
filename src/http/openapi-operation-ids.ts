// Operation ids derived from method and path, so that every route, including ones added later, gets a stable,
// unique, camelCase name that generators (openapi-typescript, openapi-generator, Spectral) can rely on.

/** Path prefixes and the word their operations' ids start with (the admin API's are `adminCreateProduct`…). */
const PREFIXES: ReadonlyArray<readonly [string, string]> = [
  ['/api/v2', ''],
  ['/admin/api', 'admin'],
];

/** A last path segment that names an action on what precedes it (`/credentials/{id}/rotate` → `rotateCredential`), not a thing. */
const ACTIONS = new Set(['export', 'rotate', 'replay', 'generate', 'restore', 'retry', 'revoke', 'cancel', 'download', 'search', 'import', 'refresh']);

const VERBS: Readonly<Record<string, string>> = { post: 'create', put: 'replace', patch: 'update', delete: 'delete', get: 'get', head: 'get' };

const isParam = (segment: string): boolean => segment.startsWith('{');
const capital = (word: string): string => word.charAt(0).toUpperCase() + word.slice(1);
const pascal = (segment: string): string => segment.split(/[^A-Za-z0-9]+/).filter(Boolean).map(capital).join('');

/** The singular of an English collection name's last word: `product-parameters` → `product-parameter`, `deliveries` → `delivery`. */
export function singular(segment: string): string {
  if (/ies$/.test(segment)) return segment.replace(/ies$/, 'y');
  if (/(ss|us|is)$/.test(segment)) return segment;
  if (/(x|ch|sh|sses)es$/.test(segment)) return segment.replace(/es$/, '');
  return segment.replace(/s$/, '');
}

/**
 * The operation id of `method path`. `collections(path)` says whether a path names a collection (a listing
 * that has items under it, or a declared resource's); then `GET` lists and `POST` creates. Otherwise the
 * verb follows the method, literal segments followed by an id are singular (`/webhooks/{id}/deliveries/{delivery}`
 * → `getWebhookDelivery`), and an action segment leads (`GET /products/export` → `exportProducts`).
 */
export function deriveOperationId(method: string, path: string, isCollection: (path: string) => boolean): string {
  const [prefix, first] = PREFIXES.find(([p]) => path === p || path.startsWith(`${p}/`)) ?? ['', ''];
  const segments = path.slice(prefix.length).split('/').filter(Boolean);
  const last = segments.at(-1) ?? '';
  let verb = VERBS[method] ?? method;
  let words = segments;
  if (!isParam(last) && ACTIONS.has(last.split('-')[0]) && segments.length > 1) {
    // The action's first word is the verb; the rest of it names what it acts on (`rotate-secret` → `rotate…Secret`).
    verb = last.split('-')[0];
    words = [...segments.slice(0, -1), last.split('-').slice(1).join('-')].filter(Boolean);
  } else if (!isParam(last) && isCollection(path)) {
    if (method === 'get' || method === 'head') verb = 'list';
    else if (method === 'post') words = [...segments.slice(0, -1), singular(last)];
  }
  const nouns = words.flatMap((segment, i) => {
    if (isParam(segment)) return [];
    return [pascal(i + 1 < words.length && isParam(words[i + 1]) ? singular(segment) : segment)];
  });
  const name = [verb, ...nouns].join('');
  return first ? `${first}${capital(name)}` : name;
}
