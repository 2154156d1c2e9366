/**
 * URLs as messages and logs show them: no user info, no query string (tokens and API keys travel
 * there, e.g. `?token=`, Gemini's `?key=`), no fragment. One rule for every peer and config message.
 */
export function displayUrl(url: string): string {
  try {
    const u = new URL(url);
    return `${u.protocol}//${u.host}${u.pathname === '/' ? '' : u.pathname}${u.search ? '?…' : ''}`;
  } catch {
    return '(an invalid url)';
  }
}

/**
 * A URL as an editor may be shown it (a provider's or MCP server's address): no user info, each
 * query value masked (`?api-key=…`: Azure and Gemini take keys there) but its name kept, no
 * fragment. Unlike displayUrl, the query's names stay: they tell apart two entries of one host.
 */
export function maskedUrl(url: string): string {
  let u: URL | undefined;
  try {
    u = new URL(url);
  } catch {
    u = undefined;
  }
  // Not a web URL (e.g. the built-in local provider's "local"; `me:pw@host` parses as scheme "me"
  // with the rest as an opaque path): shown only when it cannot hold a secret.
  if (!u || !/^(https?|wss?):$/.test(u.protocol)) return /^[A-Za-z0-9._-]*$/.test(url) ? url : '(an invalid url)';
  const query = [...u.searchParams.keys()].map((k) => `${encodeURIComponent(k)}=…`).join('&');
  return `${u.protocol}//${u.host}${u.pathname === '/' ? '' : u.pathname}${query ? `?${query}` : ''}`;
}

/** Every `scheme://…` in a text, shown as displayUrl shows it. */
export function scrubUrls(text: string): string {
  return text.replace(/\b[a-z][a-z0-9+.-]*:\/\/[^\s"'),]+/gi, (m) => displayUrl(m));
}
