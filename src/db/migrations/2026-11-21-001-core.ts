import { sql, type CreateTableBuilder } from 'kysely';
import { isPostgres, typesFor, type MigrationDb } from './column-types.ts';

export async function up(db: MigrationDb): Promise<void> {
  const t = typesFor(await isPostgres(db));
  const stamps = <T extends string, C extends string>(b: CreateTableBuilder<T, C>) =>
    b.addColumn('created_at', 'text', (c) => c.notNull()).addColumn('updated_at', 'text', (c) => c.notNull());

  await stamps(
    t.id(db.schema.createTable('brands'))
      .addColumn('name', 'text', (c) => c.notNull())
      .addColumn('name_lc', 'text', (c) => c.notNull())
      .addColumn('slug', 'text', (c) => c.notNull().unique())
      .addColumn('description', 'text')
      .addColumn('website', 'text'),
  ).execute();

  await stamps(
    t.id(db.schema.createTable('categories'))
      .addColumn('parent_id', t.bigId, (c) => c.references('categories.id'))
      .addColumn('name', 'text', (c) => c.notNull())
      .addColumn('slug', 'text', (c) => c.notNull().unique())
      .addColumn('position', 'integer', (c) => c.notNull().defaultTo(0)),
  ).execute();

  await stamps(
    t.id(db.schema.createTable('products'))
      .addColumn('article_number', 'text', (c) => c.notNull().unique())
      .addColumn('article_number_lc', 'text', (c) => c.notNull())
      .addColumn('name', 'text', (c) => c.notNull())
      .addColumn('name_lc', 'text', (c) => c.notNull())
      .addColumn('description', 'text')
      .addColumn('status', 'text', (c) => c.notNull())
      .addColumn('brand_id', t.bigId, (c) => c.references('brands.id'))
      .addColumn('category_id', t.bigId, (c) => c.references('categories.id'))
      .addColumn('ean', 'text')
      .addColumn('price', t.money, (c) => c.notNull())
      .addColumn('currency', 'text', (c) => c.notNull())
      .addColumn('vat_rate', t.real, (c) => c.notNull())
      .addColumn('stock', 'integer', (c) => c.notNull().defaultTo(0))
      .addColumn('weight', t.real)
      .addColumn('url', 'text'),
  ).execute();

  await t.id(db.schema.createTable('parameters'))
    .addColumn('name', 'text', (c) => c.notNull().unique())
    .addColumn('unit', 'text')
    .addColumn('created_at', 'text', (c) => c.notNull())
    .execute();

  await stamps(
    t.id(db.schema.createTable('product_parameters'))
      .addColumn('product_id', t.bigId, (c) => c.notNull().references('products.id').onDelete('cascade'))
      .addColumn('parameter_id', t.bigId, (c) => c.notNull().references('parameters.id'))
      .addColumn('value', 'text', (c) => c.notNull())
      .addUniqueConstraint('product_parameters_product_parameter', ['product_id', 'parameter_id']),
  ).execute();

  await t.id(db.schema.createTable('filters'))
    .addColumn('name', 'text', (c) => c.notNull().unique())
    .addColumn('created_at', 'text', (c) => c.notNull())
    .execute();

  await t.id(db.schema.createTable('filter_values'))
    .addColumn('filter_id', t.bigId, (c) => c.notNull().references('filters.id').onDelete('cascade'))
    .addColumn('value', 'text', (c) => c.notNull())
    .addColumn('created_at', 'text', (c) => c.notNull())
    .addUniqueConstraint('filter_values_filter_value', ['filter_id', 'value'])
    .execute();

  await stamps(
    t.id(db.schema.createTable('product_filters'))
      .addColumn('product_id', t.bigId, (c) => c.notNull().references('products.id').onDelete('cascade'))
      .addColumn('filter_id', t.bigId, (c) => c.notNull().references('filters.id'))
      .addColumn('value_id', t.bigId, (c) => c.notNull().references('filter_values.id'))
      .addUniqueConstraint('product_filters_product_value', ['product_id', 'value_id']),
  ).execute();

  await stamps(
    t.id(db.schema.createTable('orders'))
      .addColumn('number', 'text', (c) => c.notNull().unique())
      .addColumn('status', 'text', (c) => c.notNull())
      .addColumn('email', 'text', (c) => c.notNull())
      .addColumn('email_lc', 'text', (c) => c.notNull())
      .addColumn('customer_name', 'text', (c) => c.notNull())
      .addColumn('billing_address', 'text', (c) => c.notNull())
      .addColumn('shipping_address', 'text')
      .addColumn('currency', 'text', (c) => c.notNull())
      .addColumn('subtotal', t.money, (c) => c.notNull())
      .addColumn('shipping_total', t.money, (c) => c.notNull())
      .addColumn('tax_total', t.money, (c) => c.notNull())
      .addColumn('total', t.money, (c) => c.notNull()),
  ).execute();

  await t.id(db.schema.createTable('order_items'))
    .addColumn('order_id', t.bigId, (c) => c.notNull().references('orders.id').onDelete('cascade'))
    .addColumn('position', 'integer', (c) => c.notNull())
    .addColumn('product_id', t.bigId)
    .addColumn('article_number', 'text')
    .addColumn('name', 'text', (c) => c.notNull())
    .addColumn('quantity', 'integer', (c) => c.notNull())
    .addColumn('unit_price', t.money, (c) => c.notNull())
    .addColumn('vat_rate', t.real, (c) => c.notNull())
    .addColumn('total', t.money, (c) => c.notNull())
    .execute();

  await db.schema.createTable('events')
    .addColumn('seq', t.pg ? 'bigint' : 'integer', (c) => (t.pg ? c.primaryKey().generatedByDefaultAsIdentity() : c.primaryKey().autoIncrement()))
    .addColumn('type', 'text', (c) => c.notNull())
    .addColumn('resource', 'text', (c) => c.notNull())
    .addColumn('resource_id', t.bigId, (c) => c.notNull())
    .addColumn('occurred_at', 'text', (c) => c.notNull())
    .addColumn('data', 'text', (c) => c.notNull())
    .execute();

  await stamps(
    t.id(db.schema.createTable('credentials'))
      .addColumn('name', 'text', (c) => c.notNull())
      .addColumn('client_id', 'text', (c) => c.notNull().unique())
      .addColumn('secret_hash', 'text', (c) => c.notNull())
      .addColumn('scopes', 'text', (c) => c.notNull())
      .addColumn('enabled', 'integer', (c) => c.notNull().defaultTo(1))
      .addColumn('last_used_at', 'text'),
  ).execute();

  await db.schema.createTable('tokens')
    .addColumn('token_hash', 'text', (c) => c.primaryKey())
    .addColumn('credential_id', t.bigId, (c) => c.notNull().references('credentials.id').onDelete('cascade'))
    .addColumn('scopes', 'text', (c) => c.notNull())
    .addColumn('expires_at', 'text', (c) => c.notNull())
    .addColumn('created_at', 'text', (c) => c.notNull())
    .execute();

  await db.schema.createTable('settings')
    .addColumn('key', 'text', (c) => c.primaryKey())
    .addColumn('value', 'text', (c) => c.notNull())
    .execute();

  // Rate-limit buckets are shared state of short life: on PostgreSQL they skip the WAL (UNLOGGED).
  await sql`create ${sql.raw(t.pg ? 'unlogged ' : '')}table rate_buckets (key text primary key, tokens ${sql.raw(t.real)} not null, ts ${sql.raw(t.real)} not null, allowed integer not null)`.execute(db);

  const index = (name: string, table: string, columns: string[]) => db.schema.createIndex(name).on(table).columns(columns).execute();
  await index('brands_updated', 'brands', ['updated_at', 'id']);
  await index('categories_parent', 'categories', ['parent_id', 'id']);
  await index('categories_updated', 'categories', ['updated_at', 'id']);
  await index('products_updated', 'products', ['updated_at', 'id']);
  await index('products_brand', 'products', ['brand_id', 'id']);
  await index('products_category', 'products', ['category_id', 'id']);
  await index('products_status', 'products', ['status', 'id']);
  await index('product_parameters_product', 'product_parameters', ['product_id', 'id']);
  await index('product_parameters_parameter', 'product_parameters', ['parameter_id', 'id']);
  await index('product_parameters_updated', 'product_parameters', ['updated_at', 'id']);
  await index('product_filters_product', 'product_filters', ['product_id', 'id']);
  await index('product_filters_filter', 'product_filters', ['filter_id', 'id']);
  await index('product_filters_value', 'product_filters', ['value_id']);
  await index('product_filters_updated', 'product_filters', ['updated_at', 'id']);
  await index('filter_values_filter', 'filter_values', ['filter_id', 'id']);
  await index('orders_created', 'orders', ['created_at', 'id']);
  await index('orders_updated', 'orders', ['updated_at', 'id']);
  await index('orders_status', 'orders', ['status', 'created_at', 'id']);
  await index('orders_email', 'orders', ['email_lc', 'created_at', 'id']);
  await index('order_items_order', 'order_items', ['order_id', 'position']);
  await index('events_occurred', 'events', ['occurred_at']);
  await index('events_resource', 'events', ['resource', 'seq']);
  await index('tokens_credential', 'tokens', ['credential_id']);
  await index('tokens_expires', 'tokens', ['expires_at']);
}

export async function down(db: MigrationDb): Promise<void> {
  for (const table of ['rate_buckets', 'settings', 'tokens', 'credentials', 'events', 'order_items', 'orders', 'product_filters', 'filter_values', 'filters', 'product_parameters', 'parameters', 'products', 'categories', 'brands']) {
    await db.schema.dropTable(table).ifExists().execute();
  }
}
