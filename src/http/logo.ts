/**
 * This service's mark, drawn here: a stack of three records (the store's data) with an arrow out (the API
 * serving it). One SVG for the /docs top bar and favicon; colours readable on Swagger UI's dark bar and on a tab.
 */
export const LOGO_SVG = `<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 64 64" width="64" height="64" role="img" aria-label="Store Data API">
<rect width="64" height="64" rx="12" fill="#0b6e4f"/>
<g fill="#ffffff"><rect x="10" y="14" width="30" height="9" rx="3"/><rect x="10" y="27" width="30" height="9" rx="3" opacity="0.85"/><rect x="10" y="40" width="30" height="9" rx="3" opacity="0.7"/></g>
<path d="M44 24 L55 32 L44 40 Z" fill="#f6c343"/>
</svg>
`;
