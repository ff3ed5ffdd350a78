// The Verify page: reads the pasted delivery and shows the result of
// verify.js, naming the first failing step.
import { verify, parseHeaderLines, STEPS } from './verify.js';

const MAX_BODY = 256 * 1024;
const form = document.getElementById('verify-form');
const result = document.getElementById('v-result');
const steps = document.getElementById('v-steps');
// The key sets: the deployment's (published) and the conformance vectors',
// which sign the Events page's examples; the form chooses.
const keySets = {
  jwks: JSON.parse(document.getElementById('jwks').textContent),
  'jwks-conformance': JSON.parse(document.getElementById('jwks-conformance').textContent),
};
const ORDER = ['header format', 'body format', 'schema version', 'event id', 'recipient', 'timestamp format', 'timestamp window', 'digest', 'key id', 'signature'];

function show(outcome) {
  result.className = outcome.ok ? 'pass' : 'fail';
  result.dataset.reason = outcome.ok ? 'ok' : outcome.reason;
  result.textContent = outcome.ok
    ? 'Verified: signed by ' + outcome.keyId + ' for event ' + outcome.eventId + ' to endpoint ' + outcome.endpointId +
      (outcome.test ? ', a test event (x-pc-test: true), not a case fact.' : ', a case fact.')
    : 'Refused at the ' + outcome.step + ' step (' + outcome.reason + ')' + (outcome.header ? ', header ' + outcome.header : '') + ': ' + outcome.detail;
  steps.replaceChildren();
  const failedAt = outcome.ok ? ORDER.length : ORDER.indexOf(outcome.step);
  ORDER.forEach((name, k) => {
    const li = document.createElement('li');
    li.textContent = name + ': ' + (k < failedAt ? 'passed' : k === failedAt ? 'FAILED' : 'not reached');
    li.className = k < failedAt ? 'pass' : k === failedAt ? 'fail' : '';
    steps.append(li);
  });
}

form.addEventListener('submit', async (ev) => {
  ev.preventDefault();
  const bodyText = document.getElementById('v-body').value;
  let body;
  if (document.getElementById('v-encoding').value === 'base64') {
    const compact = bodyText.replace(/\s+/g, '');
    let bin;
    try { bin = atob(compact); } catch { bin = null; }
    if (bin === null) { show({ ok: false, reason: 'body_format', step: STEPS.body_format, header: '', detail: 'the body is not valid base64' }); return; }
    body = Uint8Array.from(bin, (c) => c.charCodeAt(0));
  } else {
    body = new TextEncoder().encode(bodyText);
  }
  if (body.length > MAX_BODY) {
    show({ ok: false, reason: 'body_format', step: STEPS.body_format, header: '', detail: 'the pasted body is larger than 256 KiB; a case event is far smaller' });
    return;
  }
  let headers;
  try { headers = parseHeaderLines(document.getElementById('v-headers').value); } catch (e) {
    show({ ok: false, reason: 'header_format', step: STEPS.header_format, header: '', detail: e.message });
    return;
  }
  const nowText = document.getElementById('v-now').value.trim();
  const now = nowText === '' ? Date.now() : Date.parse(nowText);
  if (Number.isNaN(now)) { result.className = 'fail'; result.dataset.reason = 'bad_clock'; result.textContent = 'The time to check against is not a date-time.'; return; }
  const endpointId = document.getElementById('v-endpoint').value.trim();
  show(await verify(headers, body, keySets[document.getElementById('v-keyset').value], now, endpointId));
});
