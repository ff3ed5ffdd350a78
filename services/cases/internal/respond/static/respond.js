// The hosted respondent page's only script. The one-time login token
// arrives in the URL fragment (#login=…), which a browser never sends to a
// server, so no log, proxy or Referer header has seen it. This module takes
// it out of the address bar and the history entry, then posts it, in a
// form body, to the case's preview route. The preview spends nothing: it
// answers a page saying which case and respondent the link signs in as,
// and only a click on that page's "Sign in as …" button exchanges the
// token. Exchanging on load would sign whoever opens someone else's link
// into the sender's case, and the same-origin check could not stop it: the
// post would come from this page.
const preview = document.getElementById('preview');
const login = new URLSearchParams(location.hash.slice(1)).get('login');
if (location.hash !== '') {
  history.replaceState(null, '', location.pathname + location.search);
}
if (preview && login) {
  const signingIn = document.getElementById('signing-in');
  if (signingIn) signingIn.hidden = false;
  preview.elements.namedItem('login').value = login;
  preview.submit();
} else {
  const noLink = document.getElementById('no-link');
  if (noLink) noLink.hidden = false;
}
