import { brandWriter } from './brands/writer.ts';
import { categoryWriter } from './categories/writer.ts';
import { orderWriter } from './orders/writer.ts';
import { productFilterWriter } from './product-filters/writer.ts';
import { productParameterWriter } from './product-parameters/writer.ts';
import { productWriter } from './products/writer.ts';
import type { WritableResource } from './writer.ts';

/** How each collection is written, by its URL segment. */
export const WRITERS: WritableResource[] = [productWriter, categoryWriter, brandWriter, productParameterWriter, productFilterWriter, orderWriter];
export const writerByCollection = new Map(WRITERS.map((w) => [w.def.collection, w]));
