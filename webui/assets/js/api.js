// The client of Quiver's HTTP API (docs/http-api.md). Every request sends
// the browser's IANA timezone; unsafe ones send the session's CSRF token.
import { t } from './i18n.js';

// ApiError is a failed request: the HTTP status and the API's
// {"error": {"code", "message"}}.
export class ApiError extends Error {
  constructor(status, code, message) {
    super(message);
    this.status = status;
    this.code = code;
  }

  // offline tells a request that never reached the server (status 0: the
  // connection failed or was lost) from one the server refused.
  get offline() {
    return this.status === 0;
  }
}

// reach sends one request with the browser's fetch. A request that
// cannot reach the server becomes an ApiError with status 0 and code
// "network" that says so in words people can act on (never the browser's
// bare "Failed to fetch"); an aborted one stays an AbortError.
async function reach(path, init) {
  try {
    return await fetch(path, init);
  } catch (err) {
    if (init.signal?.aborted || err?.name === 'AbortError') throw err;
    throw new ApiError(0, 'network', t('error.network'));
  }
}

const SAFE = new Set(['GET', 'HEAD', 'OPTIONS']);

export class Api {
  constructor() {
    // csrf is set from GET /api/me once signed in.
    this.csrf = '';
    // timezone goes with every request as X-Timezone; "" sends none (the
    // server then uses the user's stored zone). ICU says Etc/Unknown when
    // it cannot tell.
    const zone = Intl.DateTimeFormat().resolvedOptions().timeZone;
    this.timezone = zone && zone !== 'Etc/Unknown' ? zone : '';
    // onUnauthorized runs when a request answers 401 (the session ended).
    this.onUnauthorized = null;
  }

  // headers are a request's headers; zone false leaves X-Timezone out.
  headers(method, extra, zone = true) {
    const hd = { Accept: 'application/json', ...extra };
    if (zone && this.timezone) hd['X-Timezone'] = this.timezone;
    if (!SAFE.has(method) && this.csrf) hd['X-CSRF-Token'] = this.csrf;
    return hd;
  }

  // request sends a JSON request and returns the decoded body (null when
  // there is none); a failure throws ApiError. opts.zone false sends no
  // X-Timezone, so /api/me answers with the user's stored zone instead of
  // the browser's.
  async request(method, path, body, opts) {
    const zone = opts?.zone ?? true;
    const res = await this.fetch(path, () => {
      const init = { method, headers: this.headers(method, undefined, zone), credentials: 'same-origin' };
      if (body !== undefined) {
        init.headers['Content-Type'] = 'application/json';
        init.body = JSON.stringify(body);
      }
      return init;
    });
    const text = await res.text();
    return text ? JSON.parse(text) : null;
  }

  // fetch sends a request built by init and returns the response, or
  // throws ApiError. A server that cannot read the browser's zone refuses
  // the request before acting on it; it is sent again without the zone.
  // The same code also refuses a zone in the body (PATCH /api/me): when
  // the request fails so without the header too, the header was not the
  // cause, and later requests send it again.
  async fetch(path, init) {
    const first = init();
    let res = await reach(path, first);
    if (!res.ok) {
      const err = await this.failure(res);
      if (err.code !== 'bad_timezone' || !first.headers['X-Timezone']) throw err;
      const zone = this.timezone;
      this.timezone = '';
      res = await reach(path, init());
      if (!res.ok) {
        const again = await this.failure(res);
        if (again.code === 'bad_timezone') this.timezone = zone;
        throw again;
      }
    }
    return res;
  }

  get(path, opts) { return this.request('GET', path, undefined, opts); }
  post(path, body) { return this.request('POST', path, body ?? {}); }
  put(path, body) { return this.request('PUT', path, body); }
  patch(path, body, opts) { return this.request('PATCH', path, body, opts); }
  del(path) { return this.request('DELETE', path); }

  // stream POSTs body and calls onEvent with each Server-Sent Event's JSON
  // and id as they arrive; it resolves when the stream ends. A refused
  // request throws ApiError before any event.
  async stream(path, body, onEvent, signal) {
    const res = await this.fetch(path, () => ({
      method: 'POST',
      headers: this.headers('POST', { Accept: 'text/event-stream', 'Content-Type': 'application/json' }),
      credentials: 'same-origin',
      body: JSON.stringify(body),
      signal,
    }));
    await readEvents(res.body, onEvent);
  }

  // follow GETs an event stream (a turn's recorded events, GET
  // …/events) and calls onEvent as stream does. It resolves false when
  // the server says nothing more will come (204: the turn stopped at the
  // cursor), true once the stream ends.
  async follow(path, onEvent, signal) {
    const res = await this.fetch(path, () => ({
      method: 'GET',
      headers: this.headers('GET', { Accept: 'text/event-stream' }),
      credentials: 'same-origin',
      signal,
    }));
    if (res.status === 204) return false;
    await readEvents(res.body, onEvent);
    return true;
  }

  // upload POSTs form (a FormData of files) with XMLHttpRequest, which
  // reports the upload's progress: onProgress(sent, total) as the body
  // goes out. It resolves the decoded JSON answer; a refusal throws
  // ApiError with the API's code and message, a request that did not
  // reach the server ApiError's network failure, an aborted one (signal)
  // an AbortError.
  upload(path, form, onProgress, signal) {
    return new Promise((resolve, reject) => {
      const xhr = new XMLHttpRequest();
      xhr.open('POST', path);
      xhr.withCredentials = true;
      for (const [k, v] of Object.entries(this.headers('POST'))) xhr.setRequestHeader(k, v);
      xhr.upload.addEventListener('progress', (e) => onProgress?.(e.loaded, e.lengthComputable ? e.total : 0));
      xhr.addEventListener('load', () => {
        let body = null;
        try {
          body = xhr.responseText ? JSON.parse(xhr.responseText) : null;
        } catch {
          body = null;
        }
        if (xhr.status >= 200 && xhr.status < 300) {
          resolve(body);
          return;
        }
        if (xhr.status === 401 && this.onUnauthorized) this.onUnauthorized();
        const e = body?.error;
        reject(new ApiError(xhr.status, e?.code ?? 'http_' + xhr.status, e?.message || xhr.statusText || `HTTP ${xhr.status}`));
      });
      xhr.addEventListener('error', () => reject(new ApiError(0, 'network', t('error.network'))));
      xhr.addEventListener('abort', () => reject(new DOMException('upload aborted', 'AbortError')));
      signal?.addEventListener('abort', () => xhr.abort(), { once: true });
      xhr.send(form);
    });
  }

  async failure(res) {
    let code = 'http_' + res.status;
    let message = res.statusText || `HTTP ${res.status}`;
    try {
      const e = (await res.json())?.error;
      if (e?.message) {
        code = e.code ?? code;
        message = e.message;
      }
    } catch {
      // not our error shape: keep the status line
    }
    if (res.status === 401 && this.onUnauthorized) this.onUnauthorized();
    return new ApiError(res.status, code, message);
  }
}

// broken turns a stream that broke (the connection lost mid-stream) into
// ApiError's network failure; an abort stays an AbortError.
function broken(err) {
  if (err?.name === 'AbortError') throw err;
  throw new ApiError(0, 'network', t('error.network'));
}

// readEvents parses a text/event-stream body (the WHATWG rules: lines end
// in \n, \r\n or \r; "data:" lines join with \n; ":" starts a comment; a
// blank line ends an event). An event's data is JSON; its "type" comes
// from the data, else from the "event:" field. onEvent gets the event and
// its id ('' when it has none).
export async function readEvents(body, onEvent) {
  const reader = body.pipeThrough(new TextDecoderStream()).getReader();
  let buf = '';
  let data = [];
  let name = '';
  let id = '';
  const line = (l) => {
    if (l === '') {
      if (data.length) {
        const ev = JSON.parse(data.join('\n'));
        if (ev && typeof ev === 'object' && !ev.type && name) ev.type = name;
        onEvent(ev, id);
      }
      data = [];
      name = '';
      id = '';
      return;
    }
    if (l.startsWith(':')) return;
    const colon = l.indexOf(':');
    const field = colon < 0 ? l : l.slice(0, colon);
    let value = colon < 0 ? '' : l.slice(colon + 1);
    if (value.startsWith(' ')) value = value.slice(1);
    if (field === 'data') data.push(value);
    else if (field === 'event') name = value;
    else if (field === 'id') id = value;
  };
  for (;;) {
    const { value, done } = await reader.read().catch(broken);
    if (done) break;
    buf += value;
    for (;;) {
      const i = buf.search(/[\r\n]/);
      // A trailing \r may be the first half of \r\n: wait for more.
      if (i < 0 || (buf[i] === '\r' && i === buf.length - 1)) break;
      const step = buf[i] === '\r' && buf[i + 1] === '\n' ? 2 : 1;
      line(buf.slice(0, i));
      buf = buf.slice(i + step);
    }
  }
  if (buf !== '') line(buf);
  line('');
}
