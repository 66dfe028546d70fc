/**
 * The one escaping of text into HTML, for every page the service renders (server side and in the
 * browser): merchant-supplied names, brand strings and messages are always text, never markup.
 */
const ENTITIES: Record<string, string> = { '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;', '`': '&#96;' };

export const escapeHtml = (text: unknown): string => String(text ?? '').replace(/[&<>"'`]/g, (char) => ENTITIES[char]!);
