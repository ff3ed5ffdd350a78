// The account pages' only script: the WebAuthn ceremonies, and the list of
// the account's cases on its page. Each is two
// JSON posts to this site (the page names them in data attributes): the
// options, which the server keeps the challenge of, then the browser's
// answer, which the server verifies once. The challenge and the session
// ride in HttpOnly cookies this script never reads. Errors are the
// server's problem details, shown beside the control that failed.

const b64url = (buf) => {
  const bytes = new Uint8Array(buf);
  let s = '';
  for (const b of bytes) s += String.fromCharCode(b);
  return btoa(s).replace(/\+/g, '-').replace(/\//g, '_').replace(/=+$/, '');
};

const unb64url = (s) => {
  const pad = s.length % 4 === 0 ? '' : '='.repeat(4 - (s.length % 4));
  const bin = atob(s.replace(/-/g, '+').replace(/_/g, '/') + pad);
  return Uint8Array.from(bin, (c) => c.charCodeAt(0)).buffer;
};

class Refused extends Error {}

// post sends JSON (or nothing) and returns the answer's data, or throws
// the problem's title and detail.
const post = async (url, body) => {
  const init = { method: 'POST', credentials: 'same-origin', headers: { Accept: 'application/json' } };
  if (body !== undefined) {
    init.headers['Content-Type'] = 'application/json';
    init.body = JSON.stringify(body);
  }
  const resp = await fetch(url, init);
  let answer = null;
  try {
    answer = await resp.json();
  } catch {
    // not JSON: a proxy's page
  }
  if (!resp.ok) {
    const p = answer || {};
    throw new Refused(p.title ? `${p.title}. ${p.detail || ''}`.trim() : `The server answered ${resp.status}. Try again.`);
  }
  return answer.data;
};

const creationOptions = (o) => {
  const pk = { ...o.publicKey };
  pk.challenge = unb64url(pk.challenge);
  pk.user = { ...pk.user, id: unb64url(pk.user.id) };
  if (pk.excludeCredentials) {
    pk.excludeCredentials = pk.excludeCredentials.map((c) => ({ ...c, id: unb64url(c.id) }));
  }
  return { publicKey: pk };
};

const requestOptions = (o) => {
  const pk = { ...o.publicKey };
  pk.challenge = unb64url(pk.challenge);
  if (pk.allowCredentials) {
    pk.allowCredentials = pk.allowCredentials.map((c) => ({ ...c, id: unb64url(c.id) }));
  }
  return { publicKey: pk };
};

const common = (cred) => ({
  id: cred.id,
  rawId: b64url(cred.rawId),
  type: cred.type,
  authenticatorAttachment: cred.authenticatorAttachment || undefined,
  clientExtensionResults: cred.getClientExtensionResults(),
});

const attestation = (cred) => ({
  ...common(cred),
  response: {
    clientDataJSON: b64url(cred.response.clientDataJSON),
    attestationObject: b64url(cred.response.attestationObject),
    transports: cred.response.getTransports ? cred.response.getTransports() : [],
  },
});

const assertion = (cred) => {
  const r = cred.response;
  const response = {
    clientDataJSON: b64url(r.clientDataJSON),
    authenticatorData: b64url(r.authenticatorData),
    signature: b64url(r.signature),
  };
  if (r.userHandle) response.userHandle = b64url(r.userHandle);
  return { ...common(cred), response };
};

// explain turns a failure into what the person reads.
const explain = (err) => {
  if (err instanceof Refused) return err.message;
  if (err && err.name === 'NotAllowedError') return 'The passkey request was cancelled or timed out. Try again.';
  if (err && err.name === 'InvalidStateError') return 'This device holds a passkey of this account already.';
  return 'Something went wrong talking to your passkey. Try again.';
};

const show = (el, message) => {
  el.textContent = message;
  el.hidden = message === '';
};

const supported = typeof window.PublicKeyCredential === 'function' && navigator.credentials;

const signup = document.getElementById('signup');
const signin = document.getElementById('passkey-signin');
if (!supported && (signup || signin)) {
  const note = document.getElementById('no-passkeys');
  if (note) note.hidden = false;
}

if (signup && supported) {
  const error = document.getElementById('signup-error');
  const button = document.getElementById('signup-button');
  signup.addEventListener('submit', async (event) => {
    event.preventDefault();
    show(error, '');
    button.disabled = true;
    try {
      const options = await post(signup.dataset.options, {
        displayName: signup.elements.namedItem('displayName').value.trim(),
        email: signup.elements.namedItem('email').value.trim(),
      });
      const cred = await navigator.credentials.create(creationOptions(options));
      const done = await post(signup.dataset.finish, attestation(cred));
      location.assign(done.next);
    } catch (err) {
      show(error, explain(err));
      button.disabled = false;
    }
  });
}

if (signin && supported) {
  const error = document.getElementById('passkey-error');
  const button = document.getElementById('passkey-button');
  button.addEventListener('click', async () => {
    show(error, '');
    button.disabled = true;
    try {
      const options = await post(signin.dataset.options);
      const cred = await navigator.credentials.get(requestOptions(options));
      const done = await post(signin.dataset.finish, assertion(cred));
      location.assign(done.next);
    } catch (err) {
      show(error, explain(err));
      button.disabled = false;
    }
  });
}

// The account's cases: the website route of the cases service lists them
// to this session's cookie (same origin), each linking to its hosted page,
// which acts with the account. Without the list (the cases service away)
// the page says so; nothing else on it depends on it.
const cases = document.getElementById('cases');
if (cases) {
  const loading = document.getElementById('cases-loading');
  const list = document.getElementById('cases-list');
  const empty = document.getElementById('cases-empty');
  const failed = document.getElementById('cases-error');
  fetch(cases.dataset.list, { credentials: 'same-origin', headers: { Accept: 'application/json' } })
    .then(async (res) => {
      const body = await res.json().catch(() => null);
      if (!res.ok || !body || !body.ok) throw new Error('not listed');
      return body.data.cases;
    })
    .then((items) => {
      loading.hidden = true;
      if (items.length === 0) {
        empty.hidden = false;
        return;
      }
      for (const c of items) {
        const item = document.createElement('li');
        const link = document.createElement('a');
        link.href = cases.dataset.case + encodeURIComponent(c.caseId);
        link.textContent = c.externalCaseId || c.caseId;
        item.append(link, ' · ' + c.status.replaceAll('_', ' '));
        list.append(item);
      }
      list.hidden = false;
    })
    .catch(() => {
      loading.hidden = true;
      show(failed, 'Your cases cannot be listed right now; reload the page to try again.');
    });
}
