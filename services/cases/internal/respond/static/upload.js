// The exhibit upload with its progress. A large file takes a while to
// send, so this module sends the form itself, with XMLHttpRequest (fetch
// reports no upload progress), and shows the bytes sent of the total in a
// <progress> and in words in a live region, which a screen reader
// announces at each tenth of the way and when the file is in. The server
// answers the module in JSON (it asks with Accept: application/json): the
// exhibit's place on the page, or the refusal as a problem (RFC 9457),
// whose title and detail are shown inline beside the form, which stays as
// it was. Without script the browser posts the form itself, as before, and
// a refusal is a page of its own.
const form = document.getElementById('upload-exhibit');
const box = document.getElementById('upload-progress');
const bar = document.getElementById('upload-bar');
const status = document.getElementById('upload-status');
const error = document.getElementById('upload-error');

const size = (n) => {
  if (n < 1024) return `${n} bytes`;
  const units = ['KiB', 'MiB', 'GiB'];
  let v = n / 1024;
  let u = 0;
  while (v >= 1024 && u < units.length - 1) { v /= 1024; u++; }
  return `${v.toFixed(1)} ${units[u]}`;
};
const sent = (loaded, total) => `${size(loaded)} of ${size(total)} sent (${Math.floor((loaded / total) * 100)} %)`;

function show(problem) {
  error.textContent = '';
  const title = document.createElement('strong');
  title.textContent = problem.title || 'The upload was refused';
  error.append(title, ` ${problem.detail || ''}`);
  if (problem.code) {
    const code = document.createElement('code');
    code.textContent = problem.code;
    error.append(' (', code, ')');
  }
  error.hidden = false;
}

function done(button) {
  button.disabled = false;
  form.removeAttribute('aria-busy');
}

if (form && box && bar && status && error && window.XMLHttpRequest && window.FormData) {
  form.addEventListener('submit', (event) => {
    event.preventDefault();
    const button = form.querySelector('button[type=submit]');
    const body = new FormData(form);
    const xhr = new XMLHttpRequest();
    let said = -1; // the last tenth announced
    xhr.open('POST', form.action);
    xhr.setRequestHeader('Accept', 'application/json');
    xhr.responseType = 'json';
    xhr.upload.addEventListener('loadstart', () => {
      error.hidden = true;
      box.hidden = false;
      bar.max = 1;
      bar.value = 0;
      status.textContent = 'Sending the file…';
    });
    xhr.upload.addEventListener('progress', (e) => {
      if (!e.lengthComputable || e.total === 0) return;
      bar.max = e.total;
      bar.value = e.loaded;
      bar.dataset.loaded = String(e.loaded);
      bar.dataset.total = String(e.total);
      const tenth = Math.floor((e.loaded / e.total) * 10);
      if (tenth !== said) {
        said = tenth;
        status.textContent = sent(e.loaded, e.total);
      }
    });
    xhr.upload.addEventListener('load', () => {
      const total = Number(bar.dataset.total || 0);
      if (total) bar.value = total;
      status.textContent = `${total ? sent(total, total) : 'The file is sent'}. The page is checking it…`;
    });
    xhr.addEventListener('load', () => {
      const answer = xhr.response || {};
      if (xhr.status === 200 || xhr.status === 201) {
        status.textContent = `Uploaded ${answer.data ? answer.data.fileName : 'the file'}. Loading the case…`;
        // The exhibit's place is this very page: a new address differing
        // only by its fragment would not load it again.
        history.replaceState(null, '', answer.location || location.pathname);
        location.reload();
        return;
      }
      box.hidden = true;
      status.textContent = 'The upload was refused: nothing was filed.';
      show(answer.title ? answer : { title: 'The upload was refused', detail: `The page answered ${xhr.status}. Nothing was filed.` });
      done(button);
    });
    const broke = () => {
      box.hidden = true;
      status.textContent = 'The upload broke off: nothing was filed.';
      show({ title: 'The upload broke off', detail: 'The connection ended before the page answered. Nothing was filed: check the connection and try again.' });
      done(button);
    };
    xhr.addEventListener('error', broke);
    xhr.addEventListener('abort', broke);
    xhr.addEventListener('timeout', broke);
    button.disabled = true;
    form.setAttribute('aria-busy', 'true');
    xhr.send(body);
  });
}
