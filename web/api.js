// The dashboard's one door to the HTTP API (SPEC 13). Every request rides the session cookie set
// when the page was opened with ?token=…; a request that changes something carries X-Team-CSRF.
// Errors become ApiError with the API's own text ({"success": false, "error", "code"}) and the whole
// answer (a refused merge check answers 409 with the conflicting files in it).

export class ApiError extends Error {
  constructor(message, status, code, doc = null) {
    super(message);
    this.status = status;
    this.code = code;
    this.doc = doc;
  }
}

export async function api(path, { method = 'GET', body } = {}) {
  const init = { method, credentials: 'same-origin', headers: { Accept: 'application/json' } };
  if (method !== 'GET') {
    init.headers['X-Team-CSRF'] = '1';
    if (body !== undefined) {
      init.headers['Content-Type'] = 'application/json';
      init.body = JSON.stringify(body);
    }
  }
  let res;
  try {
    res = await fetch(path, init);
  } catch (e) {
    throw new ApiError(`cannot reach the server (${e.message})`, 0, 'network');
  }
  const text = await res.text();
  let doc = null;
  try {
    doc = text ? JSON.parse(text) : null;
  } catch {
    // not JSON: keep the text for the error below
  }
  if (!res.ok || (doc && doc.success === false)) {
    const what = doc?.error ?? (text.trim().slice(0, 200) || res.statusText);
    throw new ApiError(`${what} (HTTP ${res.status})`, res.status, doc?.code, doc);
  }
  return doc;
}

// /api/teams/{team}/… with every segment escaped.
export function teamPath(team, ...rest) {
  return ['/api/teams', team, ...rest].map((s, i) => (i === 0 ? s : encodeURIComponent(s))).join('/');
}
