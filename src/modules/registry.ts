import type { ResourceDef } from '../listing/resource.ts';
import { brands } from './brands/resource.ts';
import { categories } from './categories/resource.ts';
import { orders } from './orders/resource.ts';
import { productFilters } from './product-filters/resource.ts';
import { productParameters } from './product-parameters/resource.ts';
import { products } from './products/resource.ts';

/** Every collection of the API. A new resource is a folder under modules/ and one line here. */
export const RESOURCES: ResourceDef[] = [products, categories, brands, productParameters, productFilters, orders];

export const resourceByCollection = new Map(RESOURCES.map((r) => [r.collection, r]));
export const resourceByEvent = new Map(RESOURCES.map((r) => [r.event, r]));
