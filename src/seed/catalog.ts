/** The vocabulary of the demo store: a hardware, garden and home retailer. */
export const BRANDS = [
  'Nordwerk', 'Astra Tools', 'Bohemia Garden', 'Kovex', 'Lumina', 'Vertex', 'Halden', 'Orion Home', 'Tatra Pro', 'Greenfield',
  'Makro', 'Ferrum', 'Polar', 'Summit', 'Brixton', 'Moravia', 'Elbe Works', 'Silverline', 'Danube', 'Karlstein',
  'Rhein Technik', 'Alpenkraft', 'Viking Outdoor', 'Corvus', 'Atlas', 'Zephyr', 'Granit', 'Aurora', 'Helios', 'Krone',
];

export interface CategorySeed {
  name: string;
  children?: CategorySeed[];
  nouns?: string[];
}

export const CATEGORY_TREE: CategorySeed[] = [
  { name: 'Power Tools', children: [
    { name: 'Drills', nouns: ['Cordless Drill', 'Hammer Drill', 'Impact Driver', 'Rotary Hammer'] },
    { name: 'Saws', nouns: ['Circular Saw', 'Jigsaw', 'Mitre Saw', 'Reciprocating Saw'] },
    { name: 'Grinders', nouns: ['Angle Grinder', 'Bench Grinder', 'Die Grinder'] },
    { name: 'Sanders', nouns: ['Orbital Sander', 'Belt Sander', 'Detail Sander'] },
  ] },
  { name: 'Hand Tools', children: [
    { name: 'Hammers', nouns: ['Claw Hammer', 'Sledgehammer', 'Rubber Mallet'] },
    { name: 'Screwdrivers', nouns: ['Screwdriver Set', 'Precision Screwdriver', 'Ratchet Screwdriver'] },
    { name: 'Pliers', nouns: ['Combination Pliers', 'Long-Nose Pliers', 'Wire Stripper'] },
    { name: 'Measuring', nouns: ['Tape Measure', 'Spirit Level', 'Laser Distance Meter'] },
  ] },
  { name: 'Garden', children: [
    { name: 'Lawn Mowers', nouns: ['Lawn Mower', 'Robotic Mower', 'Ride-On Mower'] },
    { name: 'Watering', nouns: ['Garden Hose', 'Sprinkler', 'Pressure Sprayer', 'Rain Barrel'] },
    { name: 'Garden Tools', children: [
      { name: 'Pruning', nouns: ['Pruning Shears', 'Hedge Trimmer', 'Lopper'] },
      { name: 'Digging', nouns: ['Spade', 'Garden Fork', 'Hoe'] },
    ] },
    { name: 'Outdoor Furniture', nouns: ['Garden Chair', 'Patio Table', 'Sun Lounger', 'Parasol'] },
  ] },
  { name: 'Home', children: [
    { name: 'Lighting', nouns: ['LED Bulb', 'Ceiling Light', 'Desk Lamp', 'Floodlight'] },
    { name: 'Cleaning', nouns: ['Vacuum Cleaner', 'Steam Mop', 'Window Cleaner', 'Pressure Washer'] },
    { name: 'Kitchen', nouns: ['Kettle', 'Toaster', 'Blender', 'Coffee Grinder'] },
    { name: 'Storage', nouns: ['Storage Box', 'Shelving Unit', 'Tool Chest'] },
  ] },
  { name: 'Outdoor & Sports', children: [
    { name: 'Camping', nouns: ['Tent', 'Sleeping Bag', 'Camping Stove', 'Headlamp'] },
    { name: 'Cycling', nouns: ['Bike Pump', 'Bike Light', 'Bike Lock', 'Helmet'] },
  ] },
];

export const PARAMETERS: Array<{ name: string; unit: string | null; values: () => string[] }> = [
  { name: 'Weight', unit: 'kg', values: () => ['0.4', '0.8', '1.2', '1.6', '2.3', '3.5', '5.0', '7.8', '12.0'] },
  { name: 'Power', unit: 'W', values: () => ['250', '400', '600', '750', '900', '1200', '1800', '2200'] },
  { name: 'Voltage', unit: 'V', values: () => ['3.6', '12', '18', '36', '230'] },
  { name: 'Warranty', unit: 'years', values: () => ['1', '2', '3', '5'] },
  { name: 'Material', unit: null, values: () => ['steel', 'aluminium', 'plastic', 'wood', 'fibreglass', 'stainless steel'] },
  { name: 'Length', unit: 'cm', values: () => ['12', '20', '35', '50', '80', '120', '200'] },
  { name: 'Noise level', unit: 'dB', values: () => ['58', '72', '85', '94', '101'] },
  { name: 'Battery capacity', unit: 'Ah', values: () => ['1.5', '2.0', '4.0', '5.0', '8.0'] },
  { name: 'Country of origin', unit: null, values: () => ['CZ', 'DE', 'PL', 'SK', 'AT', 'CN', 'TW'] },
];

export const FILTERS: Array<{ name: string; values: string[] }> = [
  { name: 'Colour', values: ['black', 'red', 'blue', 'green', 'yellow', 'grey', 'orange', 'white'] },
  { name: 'Power source', values: ['battery', 'mains', 'petrol', 'manual', 'solar'] },
  { name: 'Use', values: ['hobby', 'professional', 'industrial'] },
  { name: 'Price band', values: ['budget', 'standard', 'premium'] },
];

export const ADJECTIVES = ['Compact', 'Pro', 'Heavy-Duty', 'Lightweight', 'Classic', 'Ultra', 'Eco', 'Smart', 'Max', 'Precision'];

export const SENTENCES = [
  'Built for daily use on the job site and at home.',
  'The ergonomic grip reduces fatigue during long sessions.',
  'Every unit is tested before it leaves the factory.',
  'Spare parts are available for at least ten years.',
  'A robust housing protects the mechanism from dust and splashes.',
  'Easy to store thanks to its compact design.',
  'Comes with a carrying case and a quick-start guide.',
  'Designed in Europe with recycled packaging.',
  'Tool-free adjustment makes switching tasks quick.',
  'Suitable for beginners and experienced users alike.',
  'The low-vibration design keeps noise to a minimum.',
  'Compatible with the whole battery platform of the brand.',
];

export const FIRST_NAMES = ['Jan', 'Petra', 'Tomáš', 'Eva', 'Lukas', 'Anna', 'Martin', 'Jana', 'Jonas', 'Lena', 'Peter', 'Zuzana', 'Marek', 'Sophie', 'David', 'Klára'];
export const LAST_NAMES = ['Novák', 'Svobodová', 'Dvořák', 'Müller', 'Schmidt', 'Horváth', 'Kovács', 'Novotná', 'Weber', 'Černý', 'Procházka', 'Fischer', 'Kučera', 'Wagner'];
export const CITIES: Array<{ city: string; country: string; postalCode: string; street: string }> = [
  { city: 'Praha', country: 'CZ', postalCode: '110 00', street: 'Václavské náměstí' },
  { city: 'Brno', country: 'CZ', postalCode: '602 00', street: 'Masarykova' },
  { city: 'Ostrava', country: 'CZ', postalCode: '702 00', street: 'Nádražní' },
  { city: 'Bratislava', country: 'SK', postalCode: '811 01', street: 'Obchodná' },
  { city: 'Wien', country: 'AT', postalCode: '1010', street: 'Kärntner Straße' },
  { city: 'Berlin', country: 'DE', postalCode: '10115', street: 'Invalidenstraße' },
  { city: 'München', country: 'DE', postalCode: '80331', street: 'Kaufingerstraße' },
  { city: 'Kraków', country: 'PL', postalCode: '31-001', street: 'Floriańska' },
];
