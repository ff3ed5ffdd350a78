// The hosted respondent page's only script. The one-time login token
// arrives in the URL fragment (#login=…), which a browser never sends to a
// server, so no log, proxy or Referer header has seen it. This module takes
// it out of the address bar and the history entry, then posts it once, in
// a form body, to the case's exchange route, which spends it and sets the
// session cookie.
const exchange = document.getElementById('exchange');
const login = new URLSearchParams(location.hash.slice(1)).get('login');
if (location.hash !== '') {
  history.replaceState(null, '', location.pathname + location.search);
}
if (exchange && login) {
  const signingIn = document.getElementById('signing-in');
  if (signingIn) signingIn.hidden = false;
  exchange.elements.namedItem('login').value = login;
  exchange.submit();
} else {
  const noLink = document.getElementById('no-link');
  if (noLink) noLink.hidden = false;
}
