/*
 * The listing engine's view of a resource is the kernel's declaration (src/resources/types.ts); these names stay
 * for the engine's formats and routes.
 */
export type { Field, FieldType, Filter, FilterContext, JsonSchema, LooseQuery, Row, SortKey } from '../resources/types.ts';
export type { Resource as ResourceDef } from '../resources/types.ts';
export { SORT_COLUMNS } from '../resources/types.ts';
