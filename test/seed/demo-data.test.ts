import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { BRANDS, CATEGORY_TREE, type CategorySeed, type Department, type ProductKind } from '../../src/seed/catalog.ts';
import { COUNTRIES } from '../../src/seed/customers.ts';
import { createTestApp, type TestApp } from '../helpers/app.ts';
import { dialects } from '../helpers/databases.ts';

/**
 * The demo store reads true (issue 14): what each product's page says fits what it is, and each customer
 * is of one country. Read back through the API, as a client sees the store.
 */
interface Product { id: number; name: string; price: string; weight: number | null; brandId: number | null; categoryId: number; description: string }
interface Value { productId: number; parameterName?: string; filterName?: string; value: string; unit?: string | null }
interface Address { name: string; company: string | null; street: string; city: string; postalCode: string; country: string; phone: string | null }
interface Order { customerName: string; email: string; billingAddress: Address; shippingAddress: Address | null; shippingTotal: string }

const kinds = new Map<string, ProductKind>();
const departmentOf = new Map<string, Department>();
const walk = (nodes: CategorySeed[], department?: Department): void => {
  for (const n of nodes) {
    for (const k of n.kinds ?? []) {
      kinds.set(k.noun, k);
      departmentOf.set(k.noun, (n.department ?? department)!);
    }
    if (n.children) walk(n.children, n.department ?? department);
  }
};
walk(CATEGORY_TREE);
const kindOf = (name: string): ProductKind => [...kinds.values()].find((k) => name.includes(` ${k.noun} `))!;

// Independent of the catalogue: what real products of these kinds have and have not.
const NEVER_ELECTRIC = ['Garden Fork', 'Spade', 'Hoe', 'Claw Hammer', 'Sledgehammer', 'Rubber Mallet', 'Combination Pliers', 'Garden Chair', 'Patio Table', 'Tent', 'Sleeping Bag', 'Bike Lock', 'Helmet', 'Garden Hose'];
const ALWAYS_ELECTRIC = ['Cordless Drill', 'Hammer Drill', 'Impact Driver', 'Angle Grinder', 'Circular Saw', 'Vacuum Cleaner', 'Kettle', 'Robotic Mower'];
const POSTAL: Record<string, RegExp> = { CZ: /^\d{3} \d{2}$/, SK: /^\d{3} \d{2}$/, DE: /^\d{5}$/, AT: /^\d{4}$/, PL: /^\d{2}-\d{3}$/ };
const PHONE: Record<string, RegExp> = { CZ: /^\+420 [67]\d{2} \d{3} \d{3}$/, SK: /^\+421 9\d{2} \d{3} \d{3}$/, DE: /^\+49 1[567]\d \d{7}$/, AT: /^\+43 6\d{2} \d{7}$/, PL: /^\+48 [5-8]\d{2} \d{3} \d{3}$/ };

for (const dialect of await dialects()) {
  describe(`the demo store reads true (${dialect})`, () => {
    let t: TestApp;
    let token: string;
    let products: Product[];
    const parameters = new Map<number, Map<string, Value>>();
    const filters = new Map<number, Map<string, string>>();

    const all = async <T>(path: string): Promise<T[]> => {
      const out: T[] = [];
      for (let url: string | null = `${path}?limit=1000`; url; ) {
        const page = (await t.get(url, token)).json() as { data: T[]; pagination: { nextCursor: string | null } };
        out.push(...page.data);
        url = page.pagination.nextCursor ? `${path}?cursor=${page.pagination.nextCursor}&limit=1000` : null;
      }
      return out;
    };

    before(async () => {
      t = await createTestApp(dialect, { seed: { products: 400, orders: 300, seed: 3 } });
      token = (await t.credential(['products:read', 'categories:read', 'brands:read', 'product-parameters:read', 'product-filters:read', 'orders:read'])).token;
      products = await all<Product>('/api/v2/products');
      for (const v of await all<Value>('/api/v2/product-parameters')) {
        if (!parameters.has(v.productId)) parameters.set(v.productId, new Map());
        assert.ok(!parameters.get(v.productId)!.has(v.parameterName!), `one value per parameter: ${v.productId} ${v.parameterName}`);
        parameters.get(v.productId)!.set(v.parameterName!, v);
      }
      for (const v of await all<Value>('/api/v2/product-filters')) {
        if (!filters.has(v.productId)) filters.set(v.productId, new Map());
        filters.get(v.productId)!.set(v.filterName!, v.value);
      }
    });
    after(() => t.close());

    it('gives each product the parameters of its kind: a garden fork no battery and no wattage, a drill one or the other', async () => {
      assert.equal(products.length, 400);
      const seen = new Set<string>();
      for (const p of products) {
        const kind = kindOf(p.name);
        assert.ok(kind, `a kind of product: ${p.name}`);
        seen.add(kind.noun);
        const params = parameters.get(p.id) ?? new Map<string, Value>();
        const has = (name: string) => params.has(name);
        const source = filters.get(p.id)?.get('Power source');
        const electric = has('Power') || has('Voltage') || has('Battery capacity');
        if (NEVER_ELECTRIC.includes(kind.noun)) {
          assert.ok(!electric && !has('Noise level'), `${p.name} has no battery, wattage or noise: ${[...params.keys()]}`);
          assert.ok(source === undefined || source === 'manual', `${p.name} is powered by hand if at all: ${source}`);
        }
        if (ALWAYS_ELECTRIC.includes(kind.noun)) assert.ok(has('Power') || (has('Voltage') && has('Battery capacity')), `${p.name} has a wattage or a battery: ${[...params.keys()]}`);
        // The power source and the electrical parameters agree.
        if (source === 'battery' && has('Voltage')) assert.ok(has('Battery capacity') && !has('Power'), `${p.name}: a battery model has voltage and capacity`);
        if (source === 'mains') assert.equal(params.get('Voltage')?.value, '230', `${p.name}: a mains model runs on 230 V`);
        if (source === 'manual' || source === undefined) assert.ok(!electric, `${p.name}: nothing electric without power`);
        if (source === 'petrol') assert.ok(has('Power') && !has('Voltage'), `${p.name}: a petrol model has a power, not a voltage`);
        // The product's weight is its Weight parameter, within the kind's range.
        const weight = Number(params.get('Weight')!.value);
        assert.equal(p.weight, weight);
        assert.ok(weight >= kind.weight[0] && weight <= kind.weight[1], `${p.name} weighs ${weight} kg`);
        for (const sentence of p.description.split('. ').slice(1)) {
          if (/battery platform/.test(sentence)) assert.equal(source, 'battery', `${p.name}: ${sentence}`);
          if (/job site|carrying case|Tool-free/.test(sentence)) assert.ok(!['Garden Chair', 'Tent', 'Kettle', 'LED Bulb'].includes(kind.noun), `${p.name}: ${sentence}`);
        }
      }
      assert.ok(seen.size >= 40, `many kinds of product: ${seen.size}`);
    });

    it('prices each product in its kind\'s range, as a shop writes prices, with a price band that matches', async () => {
      const bands = new Map<string, number[]>();
      for (const p of products) {
        const kind = kindOf(p.name);
        const price = Number(p.price);
        assert.ok(price >= kind.price[0] && price <= kind.price[1], `${p.name} costs ${price}, not within ${kind.price}`);
        assert.match(p.price, /^\d*90?\.00$/, `a shop's price ends in 9 or 90: ${p.price}`);
        const band = filters.get(p.id)!.get('Price band')!;
        const position = (price - kind.price[0]) / (kind.price[1] - kind.price[0]);
        bands.set(band, [...(bands.get(band) ?? []), position]);
      }
      const mean = (xs: number[]) => xs.reduce((a, b) => a + b, 0) / xs.length;
      assert.ok(mean(bands.get('budget')!) < mean(bands.get('standard')!) && mean(bands.get('standard')!) < mean(bands.get('premium')!), 'budget below standard below premium');
      assert.ok(Math.max(...bands.get('budget')!) < 0.4 && Math.min(...bands.get('premium')!) > 0.6, 'each band is its third of the range');
    });

    it('sells each brand in its own departments only (a garden brand makes no drills), and names a product by its brand', async () => {
      const brands = new Map((await all<{ id: number; name: string }>('/api/v2/brands')).map((b) => [b.id, b.name]));
      let branded = 0;
      for (const p of products) {
        if (p.brandId === null) {
          assert.ok(![...brands.values()].some((b) => p.name.startsWith(`${b} `)), `an unbranded product has no brand in its name: ${p.name}`);
          continue;
        }
        branded++;
        const brand = brands.get(p.brandId)!;
        assert.ok(p.name.startsWith(`${brand} `), `${p.name} is named by its brand ${brand}`);
        const makes = BRANDS.find((b) => b.name === brand)!.departments;
        assert.ok(makes.includes(departmentOf.get(kindOf(p.name).noun)!), `${brand} (${makes}) does not make ${p.name}`);
      }
      assert.ok(branded > 300);
    });

    it('gives each customer one country: name, city, postal code, phone and company of that country', async () => {
      const orders = await all<Order>('/api/v2/orders');
      assert.equal(orders.length, 300);
      const countries = new Set<string>();
      let women = 0;
      for (const o of orders) {
        const a = o.billingAddress;
        const country = COUNTRIES.find((c) => c.code === a.country)!;
        assert.ok(country, `a country of the demo store: ${a.country}`);
        countries.add(a.country);
        assert.equal(o.customerName, a.name);
        if (o.shippingAddress) assert.deepEqual(o.shippingAddress, a, 'one customer, one address');
        assert.match(a.postalCode, POSTAL[a.country], `${a.country} postal code ${a.postalCode}`);
        if (a.phone !== null) assert.match(a.phone, PHONE[a.country], `${a.country} phone ${a.phone}`);
        assert.ok(country.cities.some((c) => c.city === a.city && c.postalCode === a.postalCode && c.streets.some((s) => a.street.startsWith(`${s} `))), `${a.street}, ${a.postalCode} ${a.city} is in ${a.country}`);
        const [first, ...rest] = a.name.split(' ');
        const last = rest.join(' ');
        const woman = country.women.includes(first);
        assert.ok(woman || country.men.includes(first), `${first} is a first name of ${a.country}`);
        const pair = country.surnames.find(([m, f]) => m === last || f === last);
        assert.ok(pair, `${last} is a surname of ${a.country}`);
        assert.equal(last, pair[woman ? 1 : 0], `${a.name}: the surname's form fits the person`);
        if (woman && (a.country === 'CZ' || a.country === 'SK')) {
          women++;
          assert.match(last, /(ová|á)$/, `a Czech or Slovak woman's surname is feminine: ${a.name}`);
        }
        if (!woman && (a.country === 'CZ' || a.country === 'SK')) assert.doesNotMatch(last, /ová$/, `a man's surname is not feminine: ${a.name}`);
        if (a.company !== null) assert.ok(a.company.endsWith({ CZ: 's.r.o.', SK: 's.r.o.', DE: 'GmbH', AT: 'GmbH', PL: 'sp. z o.o.' }[a.country]!), a.company);
        assert.match(o.email, /^[a-z-]+\.[a-z-]+\d+@example\.com$/);
        if (a.country !== 'CZ') assert.notEqual(o.shippingTotal, '0.00', 'shipping abroad is never free');
      }
      assert.ok(countries.has('CZ') && countries.has('SK') && countries.has('DE') && countries.has('AT'), [...countries].join());
      assert.ok(women > 20);
    });
  });
}
