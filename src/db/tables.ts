import type { Generated } from 'kysely';

/** Row types as stored. Timestamps are ISO 8601 UTC strings with milliseconds in both dialects, so they sort as text. */
export interface BrandTable { id: Generated<number>; name: string; name_lc: string; slug: string; description: string | null; website: string | null; created_at: string; updated_at: string }
export interface CategoryTable { id: Generated<number>; parent_id: number | null; name: string; slug: string; position: number; created_at: string; updated_at: string }
export interface ProductTable {
  id: Generated<number>; article_number: string; article_number_lc: string; name: string; name_lc: string; description: string | null;
  status: string; brand_id: number | null; category_id: number | null; ean: string | null; price: string; currency: string;
  vat_rate: number; stock: number; weight: number | null; url: string | null; created_at: string; updated_at: string;
}
export interface ParameterTable { id: Generated<number>; name: string; unit: string | null; created_at: string }
export interface ProductParameterTable { id: Generated<number>; product_id: number; parameter_id: number; value: string; created_at: string; updated_at: string }
export interface FilterTable { id: Generated<number>; name: string; created_at: string }
export interface FilterValueTable { id: Generated<number>; filter_id: number; value: string; created_at: string }
export interface ProductFilterTable { id: Generated<number>; product_id: number; filter_id: number; value_id: number; created_at: string; updated_at: string }
export interface OrderTable {
  id: Generated<number>; number: string; status: string; email: string; email_lc: string; customer_name: string;
  billing_address: string; shipping_address: string | null; currency: string; subtotal: string; shipping_total: string;
  tax_total: string; total: string; created_at: string; updated_at: string;
}
export interface OrderItemTable {
  id: Generated<number>; order_id: number; position: number; product_id: number | null; article_number: string | null; name: string;
  quantity: number; unit_price: string; vat_rate: number; total: string;
}
export interface EventTable { seq: Generated<number>; type: string; resource: string; resource_id: number; occurred_at: string; data: string }
export interface CredentialTable {
  id: Generated<number>; name: string; client_id: string; secret_hash: string; scopes: string; enabled: number;
  created_at: string; updated_at: string; last_used_at: string | null;
}
export interface TokenTable { token_hash: string; credential_id: number; scopes: string; expires_at: string; created_at: string }
export interface SettingTable { key: string; value: string }
export interface RateBucketTable { key: string; tokens: number; ts: number; allowed: number }
export interface WebhookTable {
  id: Generated<number>; url: string; events: string; description: string | null; secret: string; previous_secret: string | null;
  previous_secret_expires_at: string | null; enabled: number; disabled_reason: string | null; disabled_at: string | null; from_seq: number;
  created_at: string; updated_at: string;
}
export interface WebhookDeliveryTable {
  id: Generated<number>; msg_id: string; webhook_id: number; event_seq: number; event_type: string; payload: string; status: string;
  attempts: number; next_attempt_at: string; locked_until: string | null; locked_by: string | null; last_status: number | null;
  last_error: string | null; delivered_at: string | null; created_at: string; updated_at: string;
}
export interface WebhookAttemptTable {
  id: Generated<number>; delivery_id: number; webhook_id: number; attempt: number; started_at: string; duration_ms: number;
  status_code: number | null; error: string | null; response: string | null; node: string;
}
/** A console sign-in (migration 2026-11-23-001-console); the session id itself is only in the administrator's cookie. */
export interface ConsoleSessionTable { id_hash: string; created_at: string; expires_at: string }
/** Requests of one credential in one hour, added to by every node's flushes. */
export interface CredentialUsageTable { credential_id: number; hour: string; requests: number; rate_limited: number; last_request_at: string }

export interface Database {
  brands: BrandTable;
  categories: CategoryTable;
  products: ProductTable;
  parameters: ParameterTable;
  product_parameters: ProductParameterTable;
  filters: FilterTable;
  filter_values: FilterValueTable;
  product_filters: ProductFilterTable;
  orders: OrderTable;
  order_items: OrderItemTable;
  events: EventTable;
  credentials: CredentialTable;
  tokens: TokenTable;
  settings: SettingTable;
  rate_buckets: RateBucketTable;
  webhooks: WebhookTable;
  webhook_deliveries: WebhookDeliveryTable;
  webhook_attempts: WebhookAttemptTable;
  console_sessions: ConsoleSessionTable;
  credential_usage: CredentialUsageTable;
}
