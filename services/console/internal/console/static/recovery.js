// Follows a recovery live on its page. The page is rendered from the
// webhooks API's report of the recovery (how far it has read its window,
// how many replays it queued, how many of them were delivered); while the
// report can still change, this module asks for the same page again every
// two seconds and copies its figures over: the progress bars, the facts and
// the sentence in the live region, which a screen reader announces when it
// changes. It stops once the recovery is over (data-finished), or on the
// first answer that is not the page (the session ended, say), and says so.
// Without script the page is the same, one reload at a time.
const section = document.getElementById('recovery-progress');
const every = 2000;
const texts = ['recovery-scan-text', 'recovery-sent-text', 'recovery-status', 'recovery-queued', 'recovery-delivered',
  'recovery-failed', 'recovery-cancelled', 'recovery-pending', 'recovery-updated', 'recovery-summary'];

const live = document.getElementById('recovery-live');
const say = (words) => { if (live) live.textContent = words; };

async function refresh() {
  const res = await fetch(location.href, { credentials: 'same-origin', cache: 'no-store', headers: { Accept: 'text/html' } });
  const doc = new DOMParser().parseFromString(await res.text(), 'text/html');
  const next = doc.getElementById('recovery-progress');
  if (!res.ok || !next) {
    const title = doc.querySelector('main h1');
    throw new Error(title ? title.textContent : `the console answered ${res.status}`);
  }
  for (const [k, v] of Object.entries(next.dataset)) section.dataset[k] = v;
  for (const id of ['recovery-scan', 'recovery-sent']) {
    const bar = document.getElementById(id);
    const now = doc.getElementById(id);
    bar.max = now.max;
    bar.value = now.value;
    bar.textContent = now.textContent;
  }
  for (const id of texts) {
    const el = document.getElementById(id);
    const now = doc.getElementById(id);
    // Only a changed sentence is written: the live region announces each
    // write, and the same figures need not be said twice.
    if (el && now && el.textContent !== now.textContent) el.textContent = now.textContent;
  }
  const limit = doc.getElementById('recovery-limit');
  if (limit && !document.getElementById('recovery-limit')) section.after(document.importNode(limit, true));
  return next.dataset.finished === 'true';
}

async function follow() {
  try {
    if (await refresh()) {
      say('The recovery is over: these figures will not change.');
      return;
    }
  } catch (err) {
    say(`Live figures stopped (${err.message}). Reload the page to see where the recovery stands.`);
    return;
  }
  setTimeout(follow, every);
}

if (section && section.dataset.finished !== 'true') {
  say('These figures follow the recovery live, every two seconds, until it is over.');
  setTimeout(follow, every);
}
