import type { Random } from './random.ts';

/**
 * Customers of the demo store, each of one country: a name of that country (Czech and Slovak women's surnames
 * in their feminine form, Novák → Nováková, Černý → Černá, and Polish ones too, Kowalski → Kowalska), a city
 * with its own postal code format, a street of that city, a phone number with the country's prefix, and a
 * company of that country's legal form.
 */
export interface Country {
  code: string;
  /** How often its customers order, relative to the others. */
  weight: number;
  men: string[];
  women: string[];
  /** [man's form, woman's form]; the same twice where the language does not change it. */
  surnames: Array<[string, string]>;
  cities: Array<{ city: string; postalCode: string; streets: string[] }>;
  /** A phone number in international format. */
  phone: (rng: Random) => string;
  company: string;
}

const digits = (rng: Random, n: number): string => Array.from({ length: n }, () => rng.int(0, 9)).join('');
const same = (names: string[]): Array<[string, string]> => names.map((n) => [n, n]);

export const COUNTRIES: Country[] = [
  {
    code: 'CZ', weight: 60, company: 's.r.o.',
    men: ['Jan', 'Tomáš', 'Martin', 'Petr', 'Jakub', 'Lukáš', 'David', 'Ondřej', 'Jiří', 'Pavel'],
    women: ['Petra', 'Eva', 'Jana', 'Klára', 'Tereza', 'Lucie', 'Kateřina', 'Markéta', 'Hana', 'Veronika'],
    surnames: [['Novák', 'Nováková'], ['Svoboda', 'Svobodová'], ['Dvořák', 'Dvořáková'], ['Černý', 'Černá'], ['Procházka', 'Procházková'],
      ['Kučera', 'Kučerová'], ['Veselý', 'Veselá'], ['Horák', 'Horáková'], ['Němec', 'Němcová'], ['Marek', 'Marková'], ['Pokorný', 'Pokorná'], ['Král', 'Králová']],
    cities: [
      { city: 'Praha', postalCode: '110 00', streets: ['Václavské náměstí', 'Národní', 'Vodičkova'] },
      { city: 'Praha', postalCode: '120 00', streets: ['Vinohradská', 'Belgická'] },
      { city: 'Brno', postalCode: '602 00', streets: ['Masarykova', 'Kounicova', 'Údolní'] },
      { city: 'Ostrava', postalCode: '702 00', streets: ['Nádražní', 'Českobratrská'] },
      { city: 'Plzeň', postalCode: '301 00', streets: ['Americká', 'Klatovská'] },
      { city: 'Olomouc', postalCode: '779 00', streets: ['Horní náměstí', 'Palackého'] },
      { city: 'Liberec', postalCode: '460 01', streets: ['Pražská', 'Moskevská'] },
      { city: 'České Budějovice', postalCode: '370 01', streets: ['Lannova třída', 'Krajinská'] },
    ],
    phone: (rng) => `+420 ${rng.pick(['6', '7'])}${digits(rng, 2)} ${digits(rng, 3)} ${digits(rng, 3)}`,
  },
  {
    code: 'SK', weight: 20, company: 's.r.o.',
    men: ['Ján', 'Peter', 'Marek', 'Martin', 'Tomáš', 'Juraj', 'Michal', 'Lukáš'],
    women: ['Zuzana', 'Mária', 'Jana', 'Katarína', 'Lucia', 'Monika', 'Veronika', 'Simona'],
    surnames: [['Horváth', 'Horváthová'], ['Kováč', 'Kováčová'], ['Varga', 'Vargová'], ['Tóth', 'Tóthová'], ['Nagy', 'Nagyová'], ['Baláž', 'Balážová'],
      ['Molnár', 'Molnárová'], ['Lukáč', 'Lukáčová'], ['Šimko', 'Šimková'], ['Krajčír', 'Krajčírová'], ['Hudák', 'Hudáková'], ['Kollár', 'Kollárová']],
    cities: [
      { city: 'Bratislava', postalCode: '811 01', streets: ['Obchodná', 'Laurinská', 'Štúrova'] },
      { city: 'Košice', postalCode: '040 01', streets: ['Hlavná', 'Mlynská'] },
      { city: 'Žilina', postalCode: '010 01', streets: ['Národná', 'Hurbanova'] },
      { city: 'Nitra', postalCode: '949 01', streets: ['Štefánikova trieda', 'Farská'] },
      { city: 'Banská Bystrica', postalCode: '974 01', streets: ['Dolná', 'Horná'] },
      { city: 'Trnava', postalCode: '917 01', streets: ['Hlavná', 'Hornopotočná'] },
    ],
    phone: (rng) => `+421 9${rng.pick(['0', '1', '4'])}${digits(rng, 1)} ${digits(rng, 3)} ${digits(rng, 3)}`,
  },
  {
    code: 'DE', weight: 8, company: 'GmbH',
    men: ['Lukas', 'Jonas', 'Felix', 'Maximilian', 'Paul', 'Leon', 'Tobias'],
    women: ['Lena', 'Sophie', 'Anna', 'Laura', 'Marie', 'Hannah', 'Julia'],
    surnames: same(['Müller', 'Schmidt', 'Schneider', 'Fischer', 'Weber', 'Meyer', 'Wagner', 'Becker', 'Hoffmann', 'Koch']),
    cities: [
      { city: 'Berlin', postalCode: '10115', streets: ['Invalidenstraße', 'Torstraße'] },
      { city: 'München', postalCode: '80331', streets: ['Kaufingerstraße', 'Sendlinger Straße'] },
      { city: 'Hamburg', postalCode: '20095', streets: ['Mönckebergstraße', 'Spitalerstraße'] },
      { city: 'Dresden', postalCode: '01067', streets: ['Prager Straße', 'Wilsdruffer Straße'] },
      { city: 'Leipzig', postalCode: '04109', streets: ['Grimmaische Straße', 'Petersstraße'] },
      { city: 'Köln', postalCode: '50667', streets: ['Hohe Straße', 'Schildergasse'] },
    ],
    phone: (rng) => `+49 1${rng.pick(['5', '6', '7'])}${digits(rng, 1)} ${digits(rng, 7)}`,
  },
  {
    code: 'AT', weight: 7, company: 'GmbH',
    men: ['Florian', 'Tobias', 'David', 'Lukas', 'Stefan', 'Markus'],
    women: ['Katharina', 'Julia', 'Sarah', 'Lisa', 'Anna', 'Theresa'],
    surnames: same(['Gruber', 'Huber', 'Bauer', 'Wagner', 'Pichler', 'Steiner', 'Moser', 'Mayer', 'Hofer', 'Leitner']),
    cities: [
      { city: 'Wien', postalCode: '1010', streets: ['Kärntner Straße', 'Graben', 'Rotenturmstraße'] },
      { city: 'Graz', postalCode: '8010', streets: ['Herrengasse', 'Sporgasse'] },
      { city: 'Linz', postalCode: '4020', streets: ['Landstraße', 'Herrenstraße'] },
      { city: 'Salzburg', postalCode: '5020', streets: ['Getreidegasse', 'Linzer Gasse'] },
      { city: 'Innsbruck', postalCode: '6020', streets: ['Maria-Theresien-Straße', 'Museumstraße'] },
    ],
    phone: (rng) => `+43 6${rng.pick(['6', '7', '9'])}${digits(rng, 1)} ${digits(rng, 7)}`,
  },
  {
    code: 'PL', weight: 5, company: 'sp. z o.o.',
    men: ['Piotr', 'Krzysztof', 'Tomasz', 'Paweł', 'Michał', 'Marcin'],
    women: ['Anna', 'Katarzyna', 'Magdalena', 'Agnieszka', 'Joanna', 'Monika'],
    surnames: [['Kowalski', 'Kowalska'], ['Nowak', 'Nowak'], ['Wiśniewski', 'Wiśniewska'], ['Wójcik', 'Wójcik'], ['Kamiński', 'Kamińska'],
      ['Lewandowski', 'Lewandowska'], ['Zieliński', 'Zielińska'], ['Woźniak', 'Woźniak']],
    cities: [
      { city: 'Kraków', postalCode: '31-019', streets: ['Floriańska', 'Grodzka'] },
      { city: 'Warszawa', postalCode: '00-024', streets: ['Nowy Świat', 'Marszałkowska'] },
      { city: 'Wrocław', postalCode: '50-101', streets: ['Świdnicka', 'Oławska'] },
      { city: 'Katowice', postalCode: '40-098', streets: ['Mariacka', 'Stawowa'] },
    ],
    phone: (rng) => `+48 ${rng.pick(['5', '6', '7', '8'])}${digits(rng, 2)} ${digits(rng, 3)} ${digits(rng, 3)}`,
  },
];

export interface Address {
  name: string;
  company: string | null;
  street: string;
  city: string;
  postalCode: string;
  country: string;
  phone: string | null;
}

export interface Customer {
  first: string;
  last: string;
  woman: boolean;
  address: Address;
}

const totalWeight = COUNTRIES.reduce((s, c) => s + c.weight, 0);

function countryOf(rng: Random): Country {
  let r = rng.next() * totalWeight;
  for (const c of COUNTRIES) if ((r -= c.weight) < 0) return c;
  return COUNTRIES[0];
}

/** A customer of one country; every part of the address agrees with it. */
export function customer(rng: Random): Customer {
  const country = countryOf(rng);
  const woman = rng.chance(0.5);
  const first = rng.pick(woman ? country.women : country.men);
  const last = rng.pick(country.surnames)[woman ? 1 : 0];
  const place = rng.pick(country.cities);
  return {
    first, last, woman,
    address: {
      name: `${first} ${last}`,
      company: rng.chance(0.2) ? `${last} ${country.company}` : null,
      street: `${rng.pick(place.streets)} ${rng.int(1, 180)}`,
      city: place.city,
      postalCode: place.postalCode,
      country: country.code,
      phone: rng.chance(0.7) ? country.phone(rng) : null,
    },
  };
}
