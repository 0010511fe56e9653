// Small DOM helpers. Everything from the API reaches the page as text (textContent, attributes set
// one by one), never as markup, so a name like `<script>` shows as itself.

// h('tr.row.busy', {title: 'x', onclick: fn, dataset: {k: 'v'}}, child, 'text', …)
export function h(tag, props = null, ...children) {
  const [name, ...classes] = tag.split('.');
  const el = document.createElement(name || 'div');
  if (classes.length) el.className = classes.join(' ');
  if (props) {
    for (const [k, v] of Object.entries(props)) {
      if (v === undefined || v === null || v === false) continue;
      if (k.startsWith('on')) el.addEventListener(k.slice(2), v);
      else if (k === 'dataset') Object.assign(el.dataset, v);
      else if (k === 'class') el.className += (el.className ? ' ' : '') + v;
      else el.setAttribute(k, v === true ? '' : String(v));
    }
  }
  for (const c of children.flat()) {
    if (c === null || c === undefined || c === false) continue;
    el.append(c instanceof Node ? c : String(c));
  }
  return el;
}

// Sets text only when it changed (no layout work for the rows an event did not touch).
export function setText(el, text) {
  text = String(text);
  if (el.textContent !== text) el.textContent = text;
}

// Keyed list rendering: `container` shows `items` in order, one element per key. A row is made
// once by `create(item)` and brought up to date by `update(el, item)` only when `signature(item)`
// changed, so an event that touches one agent of 200 touches one row. Rows whose key is gone are
// removed; rows are moved only when the order changed.
export class KeyedList {
  constructor(container, { key, signature, create, update }) {
    Object.assign(this, { container, key, signature, create, update });
    this.rows = new Map(); // key -> {el, sig}
  }

  render(items) {
    const seen = new Set();
    const order = [];
    for (const item of items) {
      const k = this.key(item);
      seen.add(k);
      let row = this.rows.get(k);
      const sig = this.signature(item);
      if (!row) {
        row = { el: this.create(item), sig: null };
        this.rows.set(k, row);
      }
      if (row.sig !== sig) {
        this.update(row.el, item);
        row.sig = sig;
      }
      order.push(row.el);
    }
    for (const [k, row] of this.rows) {
      if (!seen.has(k)) {
        row.el.remove();
        this.rows.delete(k);
      }
    }
    // Put the rows in order, moving only those out of place.
    let at = this.container.firstElementChild;
    for (const el of order) {
      if (el !== at) this.container.insertBefore(el, at);
      else at = at.nextElementSibling;
    }
  }

  get(key) {
    return this.rows.get(key)?.el;
  }
}

// "just now", "42 s ago", "3 min ago", "2 h ago", "1 day ago": as the command line says it.
export function relativeTime(iso, now = Date.now()) {
  if (!iso) return '-';
  let delta = Math.trunc((now - Date.parse(iso)) / 1000);
  const future = delta < 0;
  if (future) delta = -delta;
  if (delta < 5) return 'just now';
  let amount;
  if (delta < 60) amount = `${delta} s`;
  else if (delta < 3600) amount = `${Math.trunc(delta / 60)} min`;
  else if (delta < 86400) amount = `${Math.trunc(delta / 3600)} h`;
  else {
    const days = Math.trunc(delta / 86400);
    amount = `${days} ${days === 1 ? 'day' : 'days'}`;
  }
  return future ? `in ${amount}` : `${amount} ago`;
}

// How long since `iso`, without "ago": "3 s", "4 min", "2 h", "1 day" (an activity's age).
export function ageText(iso, now = Date.now()) {
  if (!iso) return '';
  return relativeTime(iso, now).replace(/ ago$/, '').replace('just now', 'now');
}

// Coalesces a burst of calls into one call `ms` after the first, with the arguments of every call
// collected (events come in bursts; a steady stream still gets a refresh every `ms`).
export function coalesce(fn, ms) {
  let timer = null;
  let pending = [];
  return (arg) => {
    if (arg !== undefined) pending.push(arg);
    if (timer) return;
    timer = setTimeout(() => {
      timer = null;
      const args = pending;
      pending = [];
      fn(args);
    }, ms);
  };
}
