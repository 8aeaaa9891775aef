import { AppError, invalidParameter } from '../errors/app-error.ts';
import type { Field, IncludeDeclaration, Resource as ResourceDef } from '../resources/types.ts';

/**
 * What an answer carries, as a client asks for it (`fields=`, `include=`); the same in every format and for
 * a page, an export and a single item. Nothing given: every field and nested value, no related data.
 */
export interface Shape {
  /**
   * Field names (nested values such as order `items` count as fields); `id` always comes too. A dotted name
   * `<include>.<field>` (`brand.name`) trims an included object to those fields (and its id).
   */
  fields?: readonly string[];
  /** Related data to embed, by the resource's include names (`brand`, `parameters`). */
  include?: readonly string[];
}

export interface ResolvedInclude {
  name: string;
  declaration: IncludeDeclaration;
  /** The target's fields embedded, in its declaration order (its `id` always). */
  fields: Field[];
}

/** A shape checked against a resource: what the query selects and what the answer shows. */
export interface ResolvedShape {
  /** Tells shapes apart in the compiled-query and layout caches. */
  key: string;
  /** The fields shown, in declaration order. */
  shown: Field[];
  /** Fields selected for the engine's own use (the keyset's sort key, the id an include follows), never shown. */
  hidden: Field[];
  /** The `nested` values asked (order `items`): `attach` runs only when there is one. */
  nested: string[];
  includes: ResolvedInclude[];
  /** The shape as asked (what a cursor carries), undefined for the full one. */
  asked: Shape | undefined;
}

const MAX_NAMES = 200;

/** `fields=` and `include=` as the query string has them; undefined when neither is given. */
export function parseShape(fields: string | undefined, include: string | undefined): Shape | undefined {
  if (fields === undefined && include === undefined) return undefined;
  const list = (name: string, raw: string): string[] => {
    const parts = raw.split(',').map((s) => s.trim());
    if (parts.length > MAX_NAMES) throw invalidParameter(name, `must list at most ${MAX_NAMES} names`);
    if (parts.some((p) => p === '')) throw invalidParameter(name, 'must be a comma-separated list of names');
    return [...new Set(parts)];
  };
  const shape: Shape = {};
  if (fields !== undefined) shape.fields = list('fields', fields);
  if (include !== undefined) shape.include = list('include', include);
  return shape;
}

/** The include of that name; own properties only, so that `include=__proto__` or `constructor` is just unknown. */
const includeOf = (def: ResourceDef, name: string): IncludeDeclaration | undefined => (Object.hasOwn(def.includes, name) ? def.includes[name] : undefined);

const fieldNamesOf = (def: ResourceDef): string[] => [...def.fields.map((f) => f.name), ...Object.keys(def.nested ?? {})];

function unknownField(def: ResourceDef, name: string, reason?: string): AppError {
  return invalidParameter('fields', reason ?? `has unknown field "${name}"; the fields of ${def.collection} are ${fieldNamesOf(def).join(', ')}`);
}

/**
 * Checks a shape against the resource and decides the select list. `need` names fields the caller needs
 * whatever is shown (the keyset's sort key; `updatedAt` for Last-Modified): they are selected hidden.
 * Unknown names are a `400 invalid_parameter` naming `fields` or `include` and listing the valid names.
 */
export function resolveShape(def: ResourceDef, shape: Shape | undefined, need: readonly string[] = []): ResolvedShape {
  const includeNames = Object.keys(def.includes);
  const asked = shape?.include ?? [];
  for (const name of asked) {
    if (!includeOf(def, name)) {
      throw invalidParameter('include', includeNames.length
        ? `has unknown include "${name}"; ${def.collection} can include ${includeNames.join(', ')}`
        : `has unknown include "${name}"; ${def.collection} has nothing to include`);
    }
  }
  const top = new Set<string>();
  const sub = new Map<string, Set<string>>();
  for (const name of shape?.fields ?? []) {
    const dot = name.indexOf('.');
    if (dot < 0) {
      if (!fieldNamesOf(def).includes(name) && !asked.includes(name)) throw unknownField(def, name);
      top.add(name);
      continue;
    }
    const [head, tail] = [name.slice(0, dot), name.slice(dot + 1)];
    const inc = includeOf(def, head);
    if (!inc) throw unknownField(def, name);
    if (!asked.includes(head)) throw unknownField(def, name, `names "${name}" of ${head}, which is not included; add include=${head}`);
    if (!inc.target.fields.some((f) => f.name === tail)) {
      throw unknownField(def, name, `has unknown field "${name}"; the fields of ${head} are ${inc.target.fields.map((f) => f.name).join(', ')}`);
    }
    let set = sub.get(head);
    if (!set) sub.set(head, (set = new Set()));
    set.add(tail);
  }
  // Only dotted names (`fields=brand.name`) trim the included objects and keep every field of the item itself.
  const all = shape?.fields === undefined || top.size === 0;
  const shown = all ? def.fields : def.fields.filter((f) => f.name === 'id' || top.has(f.name));
  const nested = Object.keys(def.nested ?? {}).filter((k) => all || top.has(k));
  const includes: ResolvedInclude[] = includeNames.filter((n) => asked.includes(n)).map((name) => {
    const declaration = def.includes[name];
    const trim = sub.get(name);
    return { name, declaration, fields: declaration.target.fields.filter((f) => !trim || f.name === 'id' || trim.has(f.name)) };
  });
  const needed = new Set(need);
  for (const inc of includes) if (inc.declaration.kind === 'one') needed.add(inc.declaration.field);
  const hidden = def.fields.filter((f) => needed.has(f.name) && !shown.includes(f));
  const names = (fields: Field[]) => fields.map((f) => f.name).join(',');
  const key = all && hidden.length === 0 && includes.length === 0
    ? ''
    : `${names(shown)}|${names(hidden)}|${nested.join(',')}|${includes.map((i) => `${i.name}(${names(i.fields)})`).join(',')}`;
  return { key, shown, hidden, nested, includes, asked: shape };
}

/**
 * Each included relation needs the read scope of what it embeds: a `403 insufficient_scope` naming the first
 * one the token lacks (the route's own scope reads the listing; `include=brand` also reads brands).
 */
export function requireIncludeScopes(def: ResourceDef, shape: Shape | undefined, granted: ReadonlySet<string>): void {
  for (const name of shape?.include ?? []) {
    const scope = includeOf(def, name)?.target.scope;
    if (scope && !granted.has(scope)) {
      throw new AppError('insufficient_scope', `include=${name} needs the scope "${scope}" as well.`, {
        errors: [{ name: 'include', reason: `${name} needs the scope ${scope}` }],
        headers: { 'www-authenticate': `Bearer realm="store-api", error="insufficient_scope", scope="${scope}"` },
      });
    }
  }
}
