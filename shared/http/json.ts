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
