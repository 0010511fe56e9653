// A tiny terminal-output renderer: ANSI SGR escapes (colours, bold, dim, italic, underline,
// inverse; 16, 256 and 24-bit colours) become spans with classes; every other escape sequence
// (cursor moves, OSC titles…) and control character is dropped. Text goes into text nodes, so
// nothing from a pane can become markup. parseAnsi is pure (tested in node); renderAnsi builds DOM.

const ESC = '\x1b';

function blank() {
  return { fg: null, bg: null, bold: false, dim: false, italic: false, underline: false, inverse: false };
}

// Applies one SGR parameter list to `st`.
function applySgr(st, params) {
  const p = params.length ? params : [0];
  for (let i = 0; i < p.length; i++) {
    const n = p[i];
    if (n === 0) Object.assign(st, blank());
    else if (n === 1) st.bold = true;
    else if (n === 2) st.dim = true;
    else if (n === 3) st.italic = true;
    else if (n === 4) st.underline = true;
    else if (n === 7) st.inverse = true;
    else if (n === 22) st.bold = st.dim = false;
    else if (n === 23) st.italic = false;
    else if (n === 24) st.underline = false;
    else if (n === 27) st.inverse = false;
    else if (n >= 30 && n <= 37) st.fg = n - 30;
    else if (n >= 90 && n <= 97) st.fg = n - 90 + 8;
    else if (n === 39) st.fg = null;
    else if (n >= 40 && n <= 47) st.bg = n - 40;
    else if (n >= 100 && n <= 107) st.bg = n - 100 + 8;
    else if (n === 49) st.bg = null;
    else if (n === 38 || n === 48) {
      // 38;5;N (256 colours) or 38;2;R;G;B (24-bit)
      let colour = null;
      if (p[i + 1] === 5 && p[i + 2] !== undefined) {
        colour = p[i + 2] & 255;
        i += 2;
      } else if (p[i + 1] === 2 && p[i + 4] !== undefined) {
        colour = [p[i + 2], p[i + 3], p[i + 4]].map((v) => Math.max(0, Math.min(255, v)));
        i += 4;
      } else {
        break; // malformed: ignore the rest
      }
      if (n === 38) st.fg = colour;
      else st.bg = colour;
    }
  }
}

// Keeps what a terminal would show of a line that a carriage return rewrote (progress bars).
function lastRewrite(line) {
  const at = line.lastIndexOf('\r');
  return at < 0 ? line : line.slice(at + 1);
}

// Text with escapes -> [{text, fg, bg, bold, dim, italic, underline, inverse}], adjacent runs of
// one style merged. fg/bg: null (default), 0-255, or [r, g, b].
export function parseAnsi(input) {
  const text = String(input).replace(/\r+\n/g, '\n').split('\n').map(lastRewrite).join('\n');
  const out = [];
  const st = blank();
  let run = '';
  const flush = () => {
    if (!run) return;
    const last = out[out.length - 1];
    const style = { ...st };
    if (last && sameStyle(last, style)) last.text += run;
    else out.push({ text: run, ...style });
    run = '';
  };
  for (let i = 0; i < text.length; i++) {
    const c = text[i];
    if (c === ESC) {
      const next = text[i + 1];
      if (next === '[') {
        // CSI: parameters, intermediates, one final byte in @..~
        let j = i + 2;
        while (j < text.length && !(text.charCodeAt(j) >= 0x40 && text.charCodeAt(j) <= 0x7e)) j++;
        if (text[j] === 'm') {
          const body = text.slice(i + 2, j);
          if (/^[0-9;:]*$/.test(body)) {
            flush();
            applySgr(st, body === '' ? [] : body.split(/[;:]/).map((v) => (v === '' ? 0 : Number(v))));
          }
        }
        i = j;
      } else if (next === ']') {
        // OSC: up to BEL or ESC \
        let j = i + 2;
        while (j < text.length && text[j] !== '\x07' && !(text[j] === ESC && text[j + 1] === '\\')) j++;
        i = text[j] === ESC ? j + 1 : j;
      } else {
        i += 1; // a two-byte escape (ESC =, ESC >, ESC ( B is close enough)
      }
      continue;
    }
    const code = text.charCodeAt(i);
    if ((code < 0x20 && c !== '\n' && c !== '\t') || code === 0x7f) continue;
    run += c;
  }
  flush();
  return out;
}

function sameStyle(a, b) {
  for (const k of ['bold', 'dim', 'italic', 'underline', 'inverse']) if (a[k] !== b[k]) return false;
  return String(a.fg) === String(b.fg) && String(a.bg) === String(b.bg);
}

// xterm's 256-colour palette above the 16 named ones, as rgb().
function rgbOf(colour) {
  if (Array.isArray(colour)) return `rgb(${colour.join(',')})`;
  if (colour < 232) {
    const n = colour - 16;
    const level = (v) => (v === 0 ? 0 : 55 + v * 40);
    return `rgb(${level(Math.trunc(n / 36))},${level(Math.trunc(n / 6) % 6)},${level(n % 6)})`;
  }
  const grey = 8 + (colour - 232) * 10;
  return `rgb(${grey},${grey},${grey})`;
}

// The segments as DOM: a text node per plain run, a span with classes per styled one. The 16 named
// colours are classes (the palette follows the light or dark theme); others are set through the
// CSSOM, which the page's Content-Security-Policy allows (a style attribute in markup it would not).
export function renderAnsi(input, doc = document) {
  const frag = doc.createDocumentFragment();
  for (const s of parseAnsi(input)) {
    const styled = s.fg !== null || s.bg !== null || s.bold || s.dim || s.italic || s.underline || s.inverse;
    if (!styled) {
      frag.append(doc.createTextNode(s.text));
      continue;
    }
    const span = doc.createElement('span');
    const classes = [];
    let [fg, bg] = s.inverse ? [s.bg, s.fg] : [s.fg, s.bg];
    if (s.inverse) classes.push('ansi-inverse');
    for (const [kind, colour] of [['fg', fg], ['bg', bg]]) {
      if (colour === null) continue;
      if (typeof colour === 'number' && colour < 16) classes.push(`ansi-${kind}${colour}`);
      else span.style[kind === 'fg' ? 'color' : 'backgroundColor'] = rgbOf(colour);
    }
    if (s.bold) classes.push('ansi-bold');
    if (s.dim) classes.push('ansi-dim');
    if (s.italic) classes.push('ansi-italic');
    if (s.underline) classes.push('ansi-underline');
    span.className = classes.join(' ');
    span.textContent = s.text;
    frag.append(span);
  }
  return frag;
}
