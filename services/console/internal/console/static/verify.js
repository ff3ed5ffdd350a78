// verify.js checks a pc-webhook-ed25519-v1 delivery in the browser, step by
// step in the order of libs/webhook/signature's Verify, and names the first
// step that fails with the same reason names as the conformance vectors
// (docs/webhook-signature-vectors.json). It uses WebCrypto only: SHA-256
// for the content digest and Ed25519 for the signature, against the public
// keys of the JWKS. No secret is involved and nothing leaves the page.
// A delivery is signed for one endpoint (x-pc-endpoint-id, in the signed
// input): it verifies only as the receiver of that endpoint id.

export const HEADER_NAMES = [
  'content-digest', 'x-pc-event-id', 'x-pc-event-timestamp', 'x-pc-key-id',
  'x-pc-schema-version', 'x-pc-signature-version', 'x-pc-signature',
  'x-pc-endpoint-id', 'x-pc-test',
];
export const SCHEMA_VERSION = 'case-event-v2';
export const SIGNATURE_VERSION = 'pc-webhook-ed25519-v1';
export const DEFAULT_TOLERANCE_MS = 5 * 60 * 1000;

// STEPS names each reason's verification step for a reader.
export const STEPS = {
  header_missing: 'header format', header_format: 'header format', signature_version: 'header format',
  body_format: 'body format', schema_version: 'schema version', event_id_mismatch: 'event id',
  recipient_mismatch: 'recipient', timestamp_format: 'timestamp format', timestamp_window: 'timestamp window', digest_mismatch: 'digest',
  unknown_key: 'key id', bad_signature: 'signature',
};

const ID = /^[A-Za-z0-9._:-]{1,160}$/;
const TIMESTAMP = /^[0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9]{2}:[0-9]{2}:[0-9]{2}\.[0-9]{3}Z$/;

function refuse(reason, header, detail) {
  return { ok: false, reason, step: STEPS[reason], header: header || '', detail: detail || '' };
}

// decodeCanonicalBase64 decodes standard padded base64 of exactly n bytes
// and refuses any other spelling of those bytes.
export function decodeCanonicalBase64(s, n) {
  if (s.length !== 4 * Math.ceil(n / 3) || !/^[A-Za-z0-9+/]*={0,2}$/.test(s)) return null;
  let bin;
  try { bin = atob(s); } catch { return null; }
  if (bin.length !== n || btoa(bin) !== s) return null;
  return Uint8Array.from(bin, (c) => c.charCodeAt(0));
}

function base64url(s) {
  if (!/^[A-Za-z0-9_-]*$/.test(s)) return null;
  const std = s.replace(/-/g, '+').replace(/_/g, '/');
  try {
    return Uint8Array.from(atob(std + '='.repeat((4 - (std.length % 4)) % 4)), (c) => c.charCodeAt(0));
  } catch { return null; }
}

function between(v, prefix, n) {
  if (!v.startsWith(prefix) || !v.endsWith(':') || v.length < prefix.length + 1) return null;
  return decodeCanonicalBase64(v.slice(prefix.length, -1), n);
}

// readBodyIdentity parses the body strictly: valid UTF-8 holding exactly one
// JSON object, no object at any depth repeating a member name, and
// schemaVersion and eventId, when present, strings.
export function readBodyIdentity(bytes) {
  let text;
  try { text = new TextDecoder('utf-8', { fatal: true }).decode(bytes); } catch { throw new Error('body is not valid UTF-8'); }
  let i = 0;
  const ws = () => { while (i < text.length && ' \t\n\r'.includes(text[i])) i++; };
  const fail = (msg) => { throw new Error(msg + ' at offset ' + i); };
  const str = () => {
    if (text[i] !== '"') fail('want a string');
    let out = '';
    i++;
    for (;;) {
      if (i >= text.length) fail('unterminated string');
      const ch = text[i];
      if (ch === '"') { i++; return out; }
      if (ch < ' ') fail('control character in string');
      if (ch === '\\') {
        const e = text[i + 1];
        const simple = { '"': '"', '\\': '\\', '/': '/', b: '\b', f: '\f', n: '\n', r: '\r', t: '\t' };
        if (e in simple) { out += simple[e]; i += 2; continue; }
        if (e === 'u' && /^[0-9a-fA-F]{4}$/.test(text.slice(i + 2, i + 6))) {
          out += String.fromCharCode(parseInt(text.slice(i + 2, i + 6), 16)); i += 6; continue;
        }
        fail('bad escape');
      }
      out += ch; i++;
    }
  };
  const value = (top) => {
    ws();
    const ch = text[i];
    if (ch === '{') {
      i++;
      const seen = new Set();
      const members = {};
      ws();
      if (text[i] === '}') { i++; return { kind: 'object', members }; }
      for (;;) {
        ws();
        const name = str();
        if (seen.has(name)) throw new Error('body repeats member "' + name + '"');
        seen.add(name);
        ws();
        if (text[i] !== ':') fail('want :');
        i++;
        const v = value(false);
        if (top) members[name] = v;
        ws();
        if (text[i] === ',') { i++; continue; }
        if (text[i] === '}') { i++; return { kind: 'object', members }; }
        fail('want , or }');
      }
    }
    if (ch === '[') {
      i++; ws();
      if (text[i] === ']') { i++; return { kind: 'array' }; }
      for (;;) {
        value(false); ws();
        if (text[i] === ',') { i++; continue; }
        if (text[i] === ']') { i++; return { kind: 'array' }; }
        fail('want , or ]');
      }
    }
    if (ch === '"') return { kind: 'string', value: str() };
    const m = /^(-?(0|[1-9][0-9]*)(\.[0-9]+)?([eE][+-]?[0-9]+)?|true|false|null)/.exec(text.slice(i));
    if (!m) fail('not JSON');
    i += m[0].length;
    return { kind: 'literal' };
  };
  const top = value(true);
  ws();
  if (top.kind !== 'object') throw new Error('body is not a JSON object');
  if (i !== text.length) throw new Error('body has data after the JSON object');
  const id = {};
  for (const name of ['schemaVersion', 'eventId']) {
    const v = top.members[name];
    if (v === undefined) continue;
    if (v.kind !== 'string') throw new Error('body member "' + name + '" is not a string');
    id[name] = v.value;
  }
  return id;
}

function parseTimestamp(s) {
  if (!TIMESTAMP.test(s)) return null;
  const t = new Date(s);
  if (Number.isNaN(t.getTime()) || t.toISOString() !== s) return null;
  return t.getTime();
}

export function canonicalInput(eventId, timestamp, keyId, endpointId, test, digestHeader) {
  return 'x-pc-event-id: ' + eventId + '\n' +
    'x-pc-event-timestamp: ' + timestamp + '\n' +
    'x-pc-key-id: ' + keyId + '\n' +
    'x-pc-schema-version: ' + SCHEMA_VERSION + '\n' +
    'x-pc-endpoint-id: ' + endpointId + '\n' +
    'x-pc-test: ' + test + '\n' +
    'content-digest: ' + digestHeader;
}

// verify checks headers ([[name, value], …], as received), the exact body
// bytes (a Uint8Array), against jwks ({keys: [...]}) at nowMs, as the
// receiver of endpointId. It resolves to {ok: true, eventId, keyId,
// endpointId, test} or to the first refusal: {ok: false, reason, step,
// header, detail}.
export async function verify(headers, body, jwks, nowMs, endpointId, toleranceMs = DEFAULT_TOLERANCE_MS) {
  const lines = HEADER_NAMES.map(() => []);
  for (const [name, value] of headers) {
    const k = HEADER_NAMES.indexOf(String(name).toLowerCase());
    if (k >= 0) lines[k].push(value);
  }
  for (let k = 0; k < HEADER_NAMES.length; k++) {
    if (lines[k].length === 0) return refuse('header_missing', HEADER_NAMES[k], 'header is absent');
  }
  for (let k = 0; k < HEADER_NAMES.length; k++) {
    if (lines[k].length !== 1) return refuse('header_format', HEADER_NAMES[k], 'header has ' + lines[k].length + ' field lines');
  }
  const [digestHeader, eventId, timestamp, keyId, schemaVersion, signatureVersion, signatureHeader, sentTo, test] = lines.map((l) => l[0]);
  const wantDigest = between(digestHeader, 'sha-256=:', 32);
  if (!wantDigest) return refuse('header_format', 'content-digest', 'want sha-256=:<base64 of 32 bytes>:');
  if (!ID.test(eventId)) return refuse('header_format', 'x-pc-event-id', 'want 1 to 160 of A-Z a-z 0-9 . _ : -');
  if (!ID.test(keyId)) return refuse('header_format', 'x-pc-key-id', 'want 1 to 160 of A-Z a-z 0-9 . _ : -');
  const sig = between(signatureHeader, 'ed25519=:', 64);
  if (!sig) return refuse('header_format', 'x-pc-signature', 'want ed25519=:<base64 of 64 bytes>:');
  if (!ID.test(sentTo)) return refuse('header_format', 'x-pc-endpoint-id', 'want 1 to 160 of A-Z a-z 0-9 . _ : -');
  if (test !== 'true' && test !== 'false') return refuse('header_format', 'x-pc-test', 'want true or false');
  if (signatureVersion !== SIGNATURE_VERSION) return refuse('signature_version', 'x-pc-signature-version', 'want ' + SIGNATURE_VERSION);

  let ident;
  try { ident = readBodyIdentity(body); } catch (e) { return refuse('body_format', '', e.message); }
  if (schemaVersion !== SCHEMA_VERSION) return refuse('schema_version', 'x-pc-schema-version', 'want ' + SCHEMA_VERSION);
  if (ident.schemaVersion !== schemaVersion) return refuse('schema_version', 'x-pc-schema-version', 'body schemaVersion differs from the header');
  if (ident.eventId !== eventId) return refuse('event_id_mismatch', 'x-pc-event-id', 'body eventId differs from the header');
  if (sentTo !== endpointId) {
    return refuse('recipient_mismatch', 'x-pc-endpoint-id', 'signed for endpoint ' + sentTo + ', not for ' + (endpointId ? endpointId : 'the endpoint id given (none)'));
  }

  const at = parseTimestamp(timestamp);
  if (at === null) return refuse('timestamp_format', 'x-pc-event-timestamp', 'want YYYY-MM-DDTHH:MM:SS.mmmZ, a real instant');
  const skew = nowMs - at;
  if (skew > toleranceMs || skew < -toleranceMs) {
    return refuse('timestamp_window', 'x-pc-event-timestamp', 'timestamp is ' + (skew / 1000).toFixed(3) + ' s from the clock, more than ' + toleranceMs / 1000 + ' s');
  }

  const sum = new Uint8Array(await crypto.subtle.digest('SHA-256', body));
  if (sum.length !== wantDigest.length || sum.some((b, k) => b !== wantDigest[k])) {
    return refuse('digest_mismatch', 'content-digest', 'digest of the body is sha-256=:' + btoa(String.fromCharCode(...sum)) + ':');
  }

  const jwk = (jwks && Array.isArray(jwks.keys) ? jwks.keys : []).find((k) => k.kid === keyId);
  const x = jwk && jwk.kty === 'OKP' && jwk.crv === 'Ed25519' ? base64url(jwk.x || '') : null;
  if (!x || x.length !== 32) return refuse('unknown_key', 'x-pc-key-id', keyId + ' is not an Ed25519 key of the published set');

  const key = await crypto.subtle.importKey('raw', x, { name: 'Ed25519' }, false, ['verify']);
  const input = new TextEncoder().encode(canonicalInput(eventId, timestamp, keyId, sentTo, test, digestHeader));
  if (!(await crypto.subtle.verify({ name: 'Ed25519' }, key, sig, input))) {
    return refuse('bad_signature', 'x-pc-signature', 'signature does not verify with key ' + keyId);
  }
  return { ok: true, eventId, keyId, timestamp, endpointId: sentTo, test: test === 'true' };
}

// parseHeaderLines reads pasted "name: value" lines; a line that is not
// one is a header format refusal.
export function parseHeaderLines(text) {
  const out = [];
  const lines = text.split(/\r?\n/);
  for (let n = 0; n < lines.length; n++) {
    const line = lines[n];
    if (line.trim() === '') continue;
    const c = line.indexOf(':');
    if (c <= 0) throw new Error('line ' + (n + 1) + ' is not "name: value"');
    out.push([line.slice(0, c).trim(), line.slice(c + 1).trim()]);
  }
  return out;
}
