import { createRegistry, type Registry } from '../resources/registry.ts';
import type { Resource } from '../resources/types.ts';
import { brands } from './brands/resource.ts';
import { categories } from './categories/resource.ts';
import { orders } from './orders/resource.ts';
import { productFilters } from './product-filters/resource.ts';
import { productParameters } from './product-parameters/resource.ts';
import { products } from './products/resource.ts';

/** Every collection of the API, declared in its folder. A new resource is a folder under modules/ and one line here. */
export const RESOURCES: readonly Resource[] = [products, categories, brands, productParameters, productFilters, orders];

let own: Registry | undefined;

/** The store's registry (what the server's context carries as `ctx.resources`, and the CLI uses); with `extra`, a new one that adds them. */
export const appRegistry = (extra: readonly Resource[] = []): Registry =>
  extra.length ? createRegistry([...RESOURCES, ...extra]) : (own ??= createRegistry(RESOURCES));
