// The console's one script on every page. A one-time link token arrives
// in the URL fragment (#link=…), which a browser never sends to a server,
// so no log, proxy or Referer header has seen it. This module takes it out
// of the address bar and the history entry, then posts it once, in a form
// body, to /console/session, which spends it and sets the session cookie.
const exchange = document.getElementById('exchange');
const link = new URLSearchParams(location.hash.slice(1)).get('link');
if (location.hash.startsWith('#link=')) {
  history.replaceState(null, '', location.pathname + location.search);
}
if (exchange && link) {
  const signingIn = document.getElementById('signing-in');
  if (signingIn) signingIn.hidden = false;
  exchange.elements.namedItem('link').value = link;
  exchange.submit();
} else {
  const noLink = document.getElementById('no-link');
  if (noLink) noLink.hidden = false;
}
