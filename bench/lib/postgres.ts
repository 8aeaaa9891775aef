import { randomBytes } from 'node:crypto';
import pg from 'pg';

export const PG_ADMIN_URL = process.env.BENCH_PG_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres';

/** Runs `work` on a connection to the benchmark's PostgreSQL server's admin database. */
export async function admin<T>(work: (c: pg.Client) => Promise<T>): Promise<T> {
  const client = new pg.Client({ connectionString: PG_ADMIN_URL });
  await client.connect();
  try {
    return await work(client);
  } finally {
    await client.end();
  }
}

/**
 * CREATE DATABASE … TEMPLATE fails while anyone is connected to the template; the connections of the processes
 * that seeded it can take a moment to go after those exit.
 */
export async function copyDatabase(c: pg.Client, name: string, template: string): Promise<void> {
  for (let attempt = 1; ; attempt++) {
    try {
      await c.query(`create database ${name} template ${template}`);
      return;
    } catch (error) {
      if (attempt >= 20 || !/being accessed by other users/.test((error as Error).message)) throw error;
      await new Promise((r) => setTimeout(r, 500));
    }
  }
}

/** A fresh database `bench_<random>` on the benchmark's PostgreSQL server (a copy of `template` if given); its URL. */
export async function createBenchDatabase(template?: string): Promise<{ name: string; url: string }> {
  const name = `bench_${randomBytes(4).toString('hex')}`;
  await admin(async (c) => {
    if (template) await copyDatabase(c, name, template);
    else await c.query(`create database ${name}`);
  });
  const url = new URL(PG_ADMIN_URL);
  url.pathname = `/${name}`;
  return { name, url: url.toString() };
}

export async function dropBenchDatabase(name: string): Promise<void> {
  await admin((c) => c.query(`drop database if exists ${name} with (force)`));
}

export async function postgresVersion(): Promise<string> {
  return admin(async (c) => String((await c.query('show server_version')).rows[0].server_version));
}
