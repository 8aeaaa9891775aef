import { ADJECTIVES, ORIGINS, SENTENCES, type Department, type FilterKey, type ParameterKey, type PowerSource, type ProductKind } from './catalog.ts';
import type { Random } from './random.ts';

/** A category products are seeded into, with the kinds of product it holds. */
export interface Leaf {
  id: number;
  department: Department | undefined;
  kinds: ProductKind[];
}

/** One seeded product: its columns (without ids and times), and its parameter and filter values by key. */
export interface MadeProduct {
  name: string;
  description: string;
  price: string;
  weight: number;
  parameters: Array<{ key: ParameterKey; value: string }>;
  filters: Array<{ key: FilterKey; value: string }>;
}

const BANDS = ['budget', 'standard', 'premium'] as const;
const ELECTRIC: PowerSource[] = ['battery', 'mains', 'petrol', 'solar'];

/** A number as a data sheet writes it: no trailing zeros, `digits` decimals at most. */
const decimal = (x: number, digits: number): string => String(Number(x.toFixed(digits)));
const between = (rng: Random, [min, max]: [number, number]): number => min + rng.next() * (max - min);

/** A shop's price: 149, 1 299, 12 990 (whole crowns ending in 9 or 90), inside the kind's range. */
function shopPrice(min: number, max: number, position: number): number {
  const raw = min + position * (max - min);
  const step = raw < 1000 ? 10 : raw < 10_000 ? 100 : 1000;
  const rounded = Math.round(raw / step) * step - (step === 1000 ? 10 : 1);
  return Math.min(max, Math.max(min, rounded));
}

function watts(rng: Random, range: [number, number]): string {
  const w = between(rng, range);
  const step = w >= 1000 ? 100 : w >= 100 ? 50 : 1;
  return String(Math.max(range[0], Math.round(w / step) * step));
}

/**
 * A product of a kind: a position in the kind's price range decides its model word ("Basic" … "Pro"), its price
 * band and, for tools, its use; a power source decides which electrical parameters it has (a manual tool none,
 * a battery tool voltage and capacity, a mains one wattage and 230 V); the description says only what is true of it.
 */
export function makeProduct(rng: Random, leaf: Leaf, brand: string | undefined): MadeProduct {
  const kind = rng.pick(leaf.kinds);
  const tier = rng.int(0, 2);
  const position = (tier + rng.next()) / 3;
  const equipment = kind.power !== undefined;
  const adjective = rng.pick(ADJECTIVES[equipment ? 'tools' : 'other'][tier]);
  const code = `${String.fromCharCode(65 + rng.int(0, 25))}${rng.int(10, 990)}`;
  const name = [brand, adjective, kind.noun, code].filter(Boolean).join(' ');
  const source = kind.power ? rng.pick(kind.power) : undefined;

  const weight = Number(decimal(between(rng, kind.weight), kind.weight[1] < 1 ? 2 : 1));
  const parameters: MadeProduct['parameters'] = [{ key: 'weight', value: String(weight) }];
  if (source && source !== 'battery' && source !== 'manual' && kind.watts) parameters.push({ key: 'power', value: watts(rng, kind.watts) });
  if (source === 'mains' && kind.watts) parameters.push({ key: 'voltage', value: '230' });
  if (source === 'battery' && kind.volts) {
    parameters.push({ key: 'voltage', value: String(rng.pick(kind.volts)) }, { key: 'battery', value: rng.pick(kind.ah ?? [2]).toFixed(1) });
  }
  if (kind.length) parameters.push({ key: 'length', value: String(Math.round(between(rng, kind.length))) });
  if (kind.noise && source && ELECTRIC.includes(source)) parameters.push({ key: 'noise', value: String(Math.round(between(rng, kind.noise))) });
  parameters.push({ key: 'material', value: rng.pick(kind.materials) });
  const warranty = tier === 2 && equipment ? rng.pick(['3', '5']) : rng.chance(0.85) ? '2' : '3';
  if (rng.chance(0.95)) parameters.push({ key: 'warranty', value: warranty });
  if (rng.chance(0.75)) parameters.push({ key: 'origin', value: rng.pick(ORIGINS) });

  const filters: MadeProduct['filters'] = [{ key: 'priceBand', value: BANDS[tier] }];
  if (rng.chance(0.9)) filters.push({ key: 'colour', value: rng.pick(['black', 'red', 'blue', 'green', 'yellow', 'grey', 'orange', 'white']) });
  if (source) filters.push({ key: 'powerSource', value: source });
  if (equipment && (leaf.department === 'tools' || leaf.department === 'garden')) {
    filters.push({ key: 'use', value: adjective === 'Heavy-Duty' ? 'industrial' : tier === 2 ? 'professional' : 'hobby' });
  }

  const traits = {
    department: leaf.department,
    powered: source !== undefined && ELECTRIC.includes(source),
    batteryPlatform: source === 'battery' && kind.volts !== undefined,
    noisy: parameters.some((p) => p.key === 'noise'),
    handHeld: kind.weight[1] <= 8,
  };
  const fitting = SENTENCES.filter((s) => s.fits(traits)).map((s) => s.text);
  return {
    name,
    description: `${name}. ${rng.sample(fitting, rng.int(2, 4)).join(' ')}`,
    price: `${shopPrice(kind.price[0], kind.price[1], position)}.00`,
    weight,
    parameters,
    filters,
  };
}
