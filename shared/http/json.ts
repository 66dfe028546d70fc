/**
 * JSON serialization that writes each frozen object once: immutable snapshots (items served from the
 * in-process store, their wire views) are serialized on first use and their text reused after that.
 * Output is byte-for-byte what JSON.stringify writes.
 */
const serialized = new WeakMap<object, string>();

export const toJson = (value: unknown): string => {
  if (value === null || typeof value !== 'object') return JSON.stringify(value) ?? 'null';
  if (Object.isFrozen(value)) {
    let text = serialized.get(value);
    if (text === undefined) serialized.set(value, (text = JSON.stringify(value)));
    return text;
  }
  if (Array.isArray(value)) return `[${value.map((element) => (element === undefined || typeof element === 'function' ? 'null' : toJson(element))).join(',')}]`;
  if (typeof (value as { toJSON?: unknown }).toJSON === 'function') return JSON.stringify(value);
  const members: string[] = [];
  for (const [key, member] of Object.entries(value)) {
    if (member === undefined || typeof member === 'function' || typeof member === 'symbol') continue;
    members.push(`${JSON.stringify(key)}:${toJson(member)}`);
  }
  return `{${members.join(',')}}`;
};

/** How deeply a request body may nest objects and arrays; deeper bodies are refused before parsing. */
export const MAX_JSON_DEPTH = 32;

/**
 * The deepest nesting of objects and arrays in a JSON text, counted without parsing it (strings
 * skipped), stopping as soon as it passes `limit`: so nothing recursive ever sees a hostile depth.
 */
export const jsonDepthExceeds = (text: string, limit = MAX_JSON_DEPTH): boolean => {
  let depth = 0;
  let inString = false;
  for (let index = 0; index < text.length; index++) {
    const code = text.charCodeAt(index);
    if (inString) {
      if (code === 92 /* \\ */) index++;
      else if (code === 34 /* " */) inString = false;
    } else if (code === 34) inString = true;
    else if (code === 123 /* { */ || code === 91 /* [ */) {
      if (++depth > limit) return true;
    } else if (code === 125 /* } */ || code === 93 /* ] */) depth--;
  }
  return false;
};
