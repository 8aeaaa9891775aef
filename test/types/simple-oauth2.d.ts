// The part of simple-oauth2 (which ships no types) that the OAuth client tests use.
declare module 'simple-oauth2' {
  export interface ModuleOptions {
    client: { id: string; secret: string };
    auth: { tokenHost: string; tokenPath?: string };
    options?: { authorizationMethod?: 'header' | 'body'; bodyFormat?: 'form' | 'json'; credentialsEncodingMode?: 'strict' | 'loose' };
  }
  export interface AccessToken {
    token: { access_token: string; token_type: string; expires_in: number; scope: string; expires_at: Date };
    expired(windowSeconds?: number): boolean;
  }
  export class ClientCredentials {
    constructor(options: ModuleOptions);
    getToken(params: { scope?: string | string[] }): Promise<AccessToken>;
  }
}
