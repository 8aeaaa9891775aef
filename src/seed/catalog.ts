/**
 * The demo store: a hardware, garden and home retailer in Czechia. Each kind of product says what a buyer
 * would find on its page (its price range, weight, power sources and what they imply, length, noise,
 * materials), so the seeded data and the texts written from it read like a real shop: a garden fork has no
 * battery and no wattage, a drill has one or the other.
 */

export type PowerSource = 'battery' | 'mains' | 'petrol' | 'manual' | 'solar';
export type Department = 'tools' | 'garden' | 'home' | 'outdoor';

export interface ProductKind {
  noun: string;
  /** CZK including VAT. */
  price: [number, number];
  /** Kilograms. */
  weight: [number, number];
  /** The power sources it is sold with; absent for things that need none (a chair, a tent, a hose). */
  power?: PowerSource[];
  /** Input power in W of mains, petrol and solar models. */
  watts?: [number, number];
  /** System voltages of battery models; absent when it takes ordinary cells (a headlamp). */
  volts?: number[];
  /** Battery capacities (Ah) of battery models with `volts`. */
  ah?: number[];
  /** Centimetres, where a buyer compares it (a handle, a blade, a bag). */
  length?: [number, number];
  /** dB of powered models. */
  noise?: [number, number];
  materials: string[];
}

export interface CategorySeed {
  name: string;
  department?: Department;
  children?: CategorySeed[];
  kinds?: ProductKind[];
}

const BATTERY_AH = [2.0, 4.0, 5.0];
const k = (noun: string, price: [number, number], weight: [number, number], rest: Omit<ProductKind, 'noun' | 'price' | 'weight'>): ProductKind =>
  ({ noun, price, weight, ...(rest.volts && !rest.ah ? { ah: BATTERY_AH } : {}), ...rest });

export const CATEGORY_TREE: CategorySeed[] = [
  { name: 'Power Tools', department: 'tools', children: [
    { name: 'Drills', kinds: [
      k('Cordless Drill', [1290, 6990], [1.1, 2.0], { power: ['battery'], volts: [12, 18], noise: [70, 85], materials: ['plastic'] }),
      k('Hammer Drill', [1490, 8990], [1.8, 3.2], { power: ['mains', 'battery'], watts: [600, 1100], volts: [18], noise: [90, 102], materials: ['plastic', 'aluminium'] }),
      k('Impact Driver', [1690, 7490], [1.0, 1.7], { power: ['battery'], volts: [12, 18], noise: [85, 98], materials: ['plastic'] }),
      k('Rotary Hammer', [2990, 14990], [2.6, 6.5], { power: ['mains', 'battery'], watts: [800, 1500], volts: [18, 36], noise: [95, 105], materials: ['plastic', 'aluminium'] }),
    ] },
    { name: 'Saws', kinds: [
      k('Circular Saw', [1790, 9990], [3.0, 5.5], { power: ['mains', 'battery'], watts: [1200, 1800], volts: [18, 36], noise: [95, 105], materials: ['aluminium', 'plastic'] }),
      k('Jigsaw', [990, 5990], [1.8, 3.0], { power: ['mains', 'battery'], watts: [450, 800], volts: [18], noise: [85, 98], materials: ['plastic', 'aluminium'] }),
      k('Mitre Saw', [3490, 19990], [10, 25], { power: ['mains'], watts: [1400, 2000], noise: [95, 105], materials: ['aluminium', 'steel'] }),
      k('Reciprocating Saw', [1990, 8990], [2.5, 4.5], { power: ['mains', 'battery'], watts: [900, 1500], volts: [18, 36], noise: [92, 102], materials: ['plastic'] }),
    ] },
    { name: 'Grinders', kinds: [
      k('Angle Grinder', [790, 5990], [1.6, 3.0], { power: ['mains', 'battery'], watts: [700, 2200], volts: [18], noise: [90, 100], materials: ['plastic', 'aluminium'] }),
      k('Bench Grinder', [1490, 6490], [8, 20], { power: ['mains'], watts: [250, 600], noise: [75, 88], materials: ['steel', 'cast iron'] }),
      k('Die Grinder', [990, 4990], [0.6, 1.8], { power: ['mains', 'battery'], watts: [250, 600], volts: [12, 18], noise: [80, 92], materials: ['aluminium', 'plastic'] }),
    ] },
    { name: 'Sanders', kinds: [
      k('Orbital Sander', [990, 5490], [1.2, 2.4], { power: ['mains', 'battery'], watts: [200, 450], volts: [18], noise: [78, 90], materials: ['plastic'] }),
      k('Belt Sander', [1690, 6990], [2.8, 5.0], { power: ['mains'], watts: [750, 1200], noise: [88, 100], materials: ['plastic', 'aluminium'] }),
      k('Detail Sander', [590, 2990], [0.9, 1.6], { power: ['mains', 'battery'], watts: [100, 250], volts: [12, 18], noise: [75, 88], materials: ['plastic'] }),
    ] },
  ] },
  { name: 'Hand Tools', department: 'tools', children: [
    { name: 'Hammers', kinds: [
      k('Claw Hammer', [190, 890], [0.4, 0.8], { power: ['manual'], length: [28, 34], materials: ['steel', 'fibreglass', 'wood'] }),
      k('Sledgehammer', [390, 1490], [2.0, 5.5], { power: ['manual'], length: [70, 90], materials: ['steel', 'fibreglass', 'wood'] }),
      k('Rubber Mallet', [149, 490], [0.3, 0.9], { power: ['manual'], length: [28, 35], materials: ['rubber', 'wood', 'fibreglass'] }),
    ] },
    { name: 'Screwdrivers', kinds: [
      k('Screwdriver Set', [290, 1990], [0.4, 1.2], { power: ['manual'], materials: ['steel'] }),
      k('Precision Screwdriver', [149, 790], [0.05, 0.3], { power: ['manual'], length: [14, 18], materials: ['steel', 'plastic'] }),
      k('Ratchet Screwdriver', [249, 990], [0.2, 0.5], { power: ['manual'], length: [18, 26], materials: ['steel'] }),
    ] },
    { name: 'Pliers', kinds: [
      k('Combination Pliers', [190, 890], [0.2, 0.4], { power: ['manual'], length: [16, 22], materials: ['steel'] }),
      k('Long-Nose Pliers', [190, 790], [0.15, 0.3], { power: ['manual'], length: [16, 20], materials: ['steel'] }),
      k('Wire Stripper', [249, 1290], [0.15, 0.35], { power: ['manual'], length: [16, 20], materials: ['steel', 'plastic'] }),
    ] },
    { name: 'Measuring', kinds: [
      k('Tape Measure', [99, 590], [0.15, 0.5], { power: ['manual'], materials: ['plastic', 'steel'] }),
      k('Spirit Level', [190, 1490], [0.3, 1.8], { power: ['manual'], length: [40, 200], materials: ['aluminium'] }),
      k('Laser Distance Meter', [990, 4990], [0.1, 0.3], { power: ['battery'], materials: ['plastic'] }),
    ] },
  ] },
  { name: 'Garden', department: 'garden', children: [
    { name: 'Lawn Mowers', kinds: [
      k('Lawn Mower', [2990, 19990], [12, 35], { power: ['petrol', 'mains', 'battery'], watts: [1200, 3500], volts: [36], noise: [88, 98], materials: ['steel', 'plastic'] }),
      k('Robotic Mower', [7990, 39990], [7, 14], { power: ['battery'], volts: [18], noise: [55, 65], materials: ['plastic'] }),
      k('Ride-On Mower', [39990, 129990], [150, 250], { power: ['petrol'], watts: [7000, 13000], noise: [95, 105], materials: ['steel'] }),
    ] },
    { name: 'Watering', kinds: [
      k('Garden Hose', [290, 2490], [1.5, 6], { materials: ['plastic', 'rubber'] }),
      k('Sprinkler', [149, 1490], [0.2, 1.5], { materials: ['plastic', 'aluminium'] }),
      k('Pressure Sprayer', [290, 1990], [0.5, 3.5], { power: ['manual', 'battery'], volts: [12, 18], ah: [1.5, 2.0], materials: ['plastic'] }),
      k('Rain Barrel', [490, 3490], [4, 15], { materials: ['plastic', 'wood'] }),
    ] },
    { name: 'Garden Tools', children: [
      { name: 'Pruning', kinds: [
        k('Pruning Shears', [190, 1290], [0.2, 0.35], { power: ['manual'], length: [18, 23], materials: ['steel', 'aluminium'] }),
        k('Hedge Trimmer', [1290, 7990], [2.5, 5.5], { power: ['mains', 'battery', 'petrol'], watts: [450, 900], volts: [18, 36], noise: [90, 102], length: [45, 75], materials: ['plastic', 'steel'] }),
        k('Lopper', [290, 1490], [0.8, 1.8], { power: ['manual'], length: [60, 90], materials: ['steel', 'aluminium'] }),
      ] },
      { name: 'Digging', kinds: [
        k('Spade', [290, 1490], [1.5, 2.5], { power: ['manual'], length: [100, 125], materials: ['steel', 'stainless steel'] }),
        k('Garden Fork', [290, 1290], [1.5, 2.5], { power: ['manual'], length: [100, 125], materials: ['steel', 'stainless steel'] }),
        k('Hoe', [190, 890], [0.8, 1.6], { power: ['manual'], length: [120, 160], materials: ['steel'] }),
      ] },
    ] },
    { name: 'Outdoor Furniture', kinds: [
      k('Garden Chair', [490, 3990], [3, 9], { materials: ['wood', 'aluminium', 'plastic'] }),
      k('Patio Table', [1490, 12990], [8, 35], { materials: ['wood', 'aluminium', 'steel'] }),
      k('Sun Lounger', [990, 6990], [5, 18], { length: [180, 200], materials: ['wood', 'aluminium'] }),
      k('Parasol', [590, 4990], [3, 12], { materials: ['aluminium', 'steel', 'wood'] }),
    ] },
  ] },
  { name: 'Home', department: 'home', children: [
    { name: 'Lighting', kinds: [
      k('LED Bulb', [59, 349], [0.03, 0.1], { power: ['mains'], watts: [4, 15], materials: ['glass', 'plastic'] }),
      k('Ceiling Light', [490, 4990], [0.8, 4], { power: ['mains'], watts: [12, 60], materials: ['aluminium', 'glass', 'plastic'] }),
      k('Desk Lamp', [390, 2490], [0.6, 2], { power: ['mains'], watts: [5, 12], materials: ['aluminium', 'plastic'] }),
      k('Floodlight', [390, 3490], [0.5, 3], { power: ['mains', 'solar'], watts: [10, 100], materials: ['aluminium'] }),
    ] },
    { name: 'Cleaning', kinds: [
      k('Vacuum Cleaner', [1490, 12990], [2.5, 7], { power: ['mains', 'battery'], watts: [600, 900], volts: [18, 36], noise: [68, 82], materials: ['plastic'] }),
      k('Steam Mop', [1290, 4490], [2, 4], { power: ['mains'], watts: [1200, 1600], noise: [60, 75], materials: ['plastic'] }),
      k('Window Cleaner', [990, 3490], [0.5, 1], { power: ['battery'], volts: [3.6], ah: [1.5, 2.0], materials: ['plastic'] }),
      k('Pressure Washer', [1990, 14990], [5, 25], { power: ['mains', 'petrol'], watts: [1400, 3000], noise: [80, 95], materials: ['plastic', 'steel'] }),
    ] },
    { name: 'Kitchen', kinds: [
      k('Kettle', [390, 2490], [0.8, 1.6], { power: ['mains'], watts: [1800, 2400], materials: ['stainless steel', 'plastic', 'glass'] }),
      k('Toaster', [490, 2990], [1, 2.5], { power: ['mains'], watts: [700, 1100], materials: ['stainless steel', 'plastic'] }),
      k('Blender', [690, 5990], [1.5, 5], { power: ['mains'], watts: [350, 1500], noise: [80, 92], materials: ['plastic', 'glass', 'stainless steel'] }),
      k('Coffee Grinder', [490, 3990], [0.6, 2.5], { power: ['mains'], watts: [100, 250], noise: [75, 88], materials: ['stainless steel', 'plastic'] }),
    ] },
    { name: 'Storage', kinds: [
      k('Storage Box', [99, 690], [0.5, 3], { materials: ['plastic'] }),
      k('Shelving Unit', [790, 4990], [8, 30], { materials: ['steel', 'wood', 'plastic'] }),
      k('Tool Chest', [990, 9990], [10, 60], { materials: ['steel'] }),
    ] },
  ] },
  { name: 'Outdoor & Sports', department: 'outdoor', children: [
    { name: 'Camping', kinds: [
      k('Tent', [990, 12990], [1.5, 9], { length: [200, 240], materials: ['polyester'] }),
      k('Sleeping Bag', [590, 5990], [0.8, 2.2], { length: [200, 230], materials: ['polyester'] }),
      k('Camping Stove', [390, 2990], [0.3, 2.5], { materials: ['steel', 'aluminium'] }),
      k('Headlamp', [249, 1990], [0.05, 0.2], { power: ['battery'], materials: ['plastic'] }),
    ] },
    { name: 'Cycling', kinds: [
      k('Bike Pump', [249, 1490], [0.1, 1.2], { power: ['manual'], length: [20, 65], materials: ['aluminium', 'plastic', 'steel'] }),
      k('Bike Light', [199, 1490], [0.05, 0.25], { power: ['battery'], materials: ['aluminium', 'plastic'] }),
      k('Bike Lock', [290, 2490], [0.4, 2], { materials: ['steel'] }),
      k('Helmet', [590, 3990], [0.25, 0.45], { materials: ['plastic'] }),
    ] },
  ] },
];

/** Brands and the departments they make things for: a garden brand sells no drills. */
export const BRANDS: Array<{ name: string; departments: Department[] }> = [
  { name: 'Nordwerk', departments: ['tools'] }, { name: 'Astra Tools', departments: ['tools'] }, { name: 'Bohemia Garden', departments: ['garden'] },
  { name: 'Kovex', departments: ['tools'] }, { name: 'Lumina', departments: ['home'] }, { name: 'Vertex', departments: ['tools', 'outdoor'] },
  { name: 'Halden', departments: ['tools', 'garden'] }, { name: 'Orion Home', departments: ['home'] }, { name: 'Tatra Pro', departments: ['tools'] },
  { name: 'Greenfield', departments: ['garden'] }, { name: 'Makro', departments: ['tools', 'home'] }, { name: 'Ferrum', departments: ['tools'] },
  { name: 'Polar', departments: ['home', 'outdoor'] }, { name: 'Summit', departments: ['outdoor'] }, { name: 'Brixton', departments: ['tools', 'home'] },
  { name: 'Moravia', departments: ['garden', 'home'] }, { name: 'Elbe Works', departments: ['garden', 'tools'] }, { name: 'Silverline', departments: ['home'] },
  { name: 'Danube', departments: ['garden'] }, { name: 'Karlstein', departments: ['tools'] }, { name: 'Rhein Technik', departments: ['tools', 'home'] },
  { name: 'Alpenkraft', departments: ['tools', 'garden'] }, { name: 'Viking Outdoor', departments: ['outdoor'] }, { name: 'Corvus', departments: ['outdoor', 'home'] },
  { name: 'Atlas', departments: ['tools', 'outdoor'] }, { name: 'Zephyr', departments: ['outdoor', 'garden'] }, { name: 'Granit', departments: ['tools'] },
  { name: 'Aurora', departments: ['home'] }, { name: 'Helios', departments: ['home', 'garden'] }, { name: 'Krone', departments: ['tools'] },
];

/** Parameter definitions (one unit each); which a product has follows from its kind. */
export const PARAMETERS = {
  weight: { name: 'Weight', unit: 'kg' },
  power: { name: 'Power', unit: 'W' },
  voltage: { name: 'Voltage', unit: 'V' },
  warranty: { name: 'Warranty', unit: 'years' },
  material: { name: 'Material', unit: null },
  length: { name: 'Length', unit: 'cm' },
  noise: { name: 'Noise level', unit: 'dB' },
  battery: { name: 'Battery capacity', unit: 'Ah' },
  origin: { name: 'Country of origin', unit: null },
} as const;
export type ParameterKey = keyof typeof PARAMETERS;

export const FILTERS = {
  colour: { name: 'Colour', values: ['black', 'red', 'blue', 'green', 'yellow', 'grey', 'orange', 'white'] },
  powerSource: { name: 'Power source', values: ['battery', 'mains', 'petrol', 'manual', 'solar'] },
  use: { name: 'Use', values: ['hobby', 'professional', 'industrial'] },
  priceBand: { name: 'Price band', values: ['budget', 'standard', 'premium'] },
} as const;
export type FilterKey = keyof typeof FILTERS;

/** Where products are made, the likelier first. */
export const ORIGINS = ['CN', 'CN', 'CZ', 'DE', 'PL', 'CN', 'TW', 'SK', 'AT', 'DE'];

/** Words of a model's name by its place in the range (cheapest third, middle, dearest). */
export const ADJECTIVES: Record<'tools' | 'other', [string[], string[], string[]]> = {
  tools: [['Classic', 'Basic', 'Compact'], ['Compact', 'Precision', 'Plus'], ['Pro', 'Max', 'Heavy-Duty']],
  other: [['Basic', 'Eco', 'Classic'], ['Comfort', 'Plus', 'Smart'], ['Premium', 'Deluxe', 'Ultra']],
};

/** What a product page may say, and of which products it is true. */
export interface Traits {
  department: Department | undefined;
  powered: boolean;
  batteryPlatform: boolean;
  noisy: boolean;
  handHeld: boolean;
}
export const SENTENCES: Array<{ text: string; fits: (t: Traits) => boolean }> = [
  { text: 'Built for daily use on the job site and at home.', fits: (t) => t.department === 'tools' },
  { text: 'The ergonomic grip reduces fatigue during long sessions.', fits: (t) => t.department === 'tools' && t.handHeld },
  { text: 'Every unit is tested before it leaves the factory.', fits: () => true },
  { text: 'Spare parts are available for at least ten years.', fits: (t) => t.powered },
  { text: 'A robust housing protects the mechanism from dust and splashes.', fits: (t) => t.powered },
  { text: 'Easy to store thanks to its compact design.', fits: (t) => t.handHeld },
  { text: 'Comes with a carrying case and a quick-start guide.', fits: (t) => t.department === 'tools' && t.powered },
  { text: 'Designed in Europe with recycled packaging.', fits: () => true },
  { text: 'Tool-free adjustment makes switching tasks quick.', fits: (t) => t.department === 'tools' && t.powered },
  { text: 'Suitable for beginners and experienced users alike.', fits: () => true },
  { text: 'The low-vibration design keeps noise to a minimum.', fits: (t) => t.noisy },
  { text: 'Compatible with the whole battery platform of the brand.', fits: (t) => t.batteryPlatform },
  { text: 'Weather-resistant materials keep it in shape outdoors for years.', fits: (t) => t.department === 'garden' || t.department === 'outdoor' },
  { text: 'Easy to clean after use.', fits: (t) => t.department === 'home' },
];
