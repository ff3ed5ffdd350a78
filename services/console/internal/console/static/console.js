// The console's one script on every page. A one-time link token arrives
// in the URL fragment (#link=…), which a browser never sends to a server,
// so no log, proxy or Referer header has seen it. This module takes it out
// of the address bar and the history entry, then posts it, in a form body,
// to /console/session/preview. The preview spends nothing: it answers a
// page saying which partner, tenant and environment the link signs in as
// (and which session this browser holds now), and only a click on that
// page's "Sign in as …" button exchanges the token. Exchanging on load
// would sign whoever opens someone else's link into the sender's console,
// and the same-origin check could not stop it: the post would come from
// this page.
const preview = document.getElementById('preview');
const link = new URLSearchParams(location.hash.slice(1)).get('link');
if (location.hash.startsWith('#link=')) {
  history.replaceState(null, '', location.pathname + location.search);
}
if (preview && link) {
  const signingIn = document.getElementById('signing-in');
  if (signingIn) signingIn.hidden = false;
  preview.elements.namedItem('link').value = link;
  preview.submit();
} else {
  const noLink = document.getElementById('no-link');
  if (noLink) noLink.hidden = false;
}
