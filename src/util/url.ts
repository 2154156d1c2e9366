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

/** Every `scheme://…` in a text, shown as displayUrl shows it. */
export function scrubUrls(text: string): string {
  return text.replace(/\b[a-z][a-z0-9+.-]*:\/\/[^\s"'),]+/gi, (m) => displayUrl(m));
}
