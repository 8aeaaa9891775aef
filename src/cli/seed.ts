import type { Command } from 'commander';
import { SeedError, seedStore } from '../seed/seed.ts';
import { fail, printResult } from './output.ts';
import { progress } from './progress.ts';
import { withStore, type GlobalOptions } from './store.ts';
import { count } from './words.ts';

const wholeNumber = (name: string) => (raw: string): number => {
  if (!/^\d+$/.test(raw)) fail(`--${name} must be a whole number, got "${raw}"`);
  return Number(raw);
};

export function registerSeed(program: Command): void {
  program
    .command('seed')
    .description('Write realistic demo data: brands, a category tree, products with parameters and filter values, orders')
    .requiredOption('--products <n>', 'how many products', wholeNumber('products'))
    .option('--orders <n>', 'how many orders', wholeNumber('orders'), 0)
    .option('--seed <n>', 'random seed: the same seed gives the same data', wholeNumber('seed'), 1)
    .option('--json', 'machine-readable output')
    .action(async (o: { products: number; orders: number; seed: number; json?: boolean }) => {
      await withStore(program.opts<GlobalOptions>(), async (store) => {
        const bar = progress('seeding');
        const started = Date.now();
        const result = await seedStore(store, { products: o.products, orders: o.orders, seed: o.seed, onProgress: (d, t) => bar.update(d, t) }).catch((error: unknown) => {
          bar.stop();
          return error instanceof SeedError ? fail(error.message) : Promise.reject(error);
        });
        bar.stop();
        const seconds = (Date.now() - started) / 1000;
        printResult(Boolean(o.json), { ...result, seconds }, () =>
          `Seeded ${count(result.products, 'product')} (${count(result.productParameters, 'parameter value')}, ${count(result.productFilters, 'filter value')}), ${count(result.orders, 'order')}, ${count(result.brands, 'brand')}, ${count(result.categories, 'category', 'categories')} in ${seconds.toFixed(1)} s.`);
      });
    });
}
