// Page-wide pieces: error toasts that show the API's own error text, the confirm dialog, and the
// relative times that age in place.
import { h, setText, relativeTime, ageText } from './dom.js';

const toasts = () => document.getElementById('toasts');

// A toast; errors stay until closed (or 12 s), confirmations go after 4 s.
export function toast(text, { ok = false } = {}) {
  const close = h('button.btn', { type: 'button', 'aria-label': 'Dismiss' }, '×');
  const el = h(ok ? 'div.toast.ok' : 'div.toast', { role: ok ? 'status' : 'alert' }, h('span.grow', null, text), close);
  close.addEventListener('click', () => el.remove());
  toasts().append(el);
  setTimeout(() => el.remove(), ok ? 4000 : 12000);
  // No more than five at once.
  while (toasts().children.length > 5) toasts().firstElementChild.remove();
}

export function toastError(e) {
  toast(e?.message ?? String(e));
}

// Asks before something that cannot be undone; resolves true when the person confirmed.
export function confirmAction(title, text, okLabel) {
  const dialog = document.getElementById('confirm');
  setText(document.getElementById('confirm-title'), title);
  setText(document.getElementById('confirm-text'), text);
  setText(document.getElementById('confirm-ok'), okLabel);
  dialog.returnValue = '';
  dialog.showModal();
  return new Promise((resolve) => {
    dialog.addEventListener('close', () => resolve(dialog.returnValue === 'ok'), { once: true });
  });
}

// An element showing "3 min ago" for `iso`, kept fresh by tickTimes(); the exact time on hover.
export function timeEl(iso, tag = 'span.when') {
  const el = h(tag, { title: iso ?? '' }, relativeTime(iso));
  if (iso) el.dataset.at = iso;
  return el;
}

export function setTime(el, iso) {
  if (iso) el.dataset.at = iso;
  else delete el.dataset.at;
  el.title = iso ?? '';
  setText(el, relativeTime(iso));
}

// An age ("4 min", no "ago": how long a state has lasted) that tickTimes() keeps fresh too.
export function setAge(el, iso) {
  if (iso) el.dataset.since = iso;
  else delete el.dataset.since;
  setText(el, ageText(iso));
}

export function tickTimes() {
  const now = Date.now();
  for (const el of document.querySelectorAll('[data-at]')) setText(el, relativeTime(el.dataset.at, now));
  for (const el of document.querySelectorAll('[data-since]')) setText(el, ageText(el.dataset.since, now));
}
