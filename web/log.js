// An agent's log, following live while the panel is open: fetched again when an event touches the
// agent and on a modest interval (output is not an event). Asks for the rendered screen with its
// colours (?screen=1) and falls back to the plain log when the server does not offer it.
import { api, teamPath } from './api.js';
import { setText } from './dom.js';
import { renderAnsi } from './ansi.js';
import { toastError } from './ui.js';

const $ = (id) => document.getElementById(id);
const LINES = 500;
const INTERVAL_MS = 2000;

export class LogPanel {
  constructor(ctx) {
    this.ctx = ctx; // {team(), onClose()}
    this.name = null;
    this.last = null;
    this.inFlight = false;
    this.timer = null;
    $('log-close').addEventListener('click', () => this.close());
    $('log-screen').addEventListener('change', () => {
      this.last = null;
      this.refresh();
    });
  }

  open(name) {
    this.name = name;
    this.last = null;
    $('log-panel').hidden = false;
    setText($('log-agent'), name);
    $('log-body').replaceChildren();
    clearInterval(this.timer);
    this.timer = setInterval(() => this.refresh(), INTERVAL_MS);
    this.refresh();
  }

  close() {
    this.name = null;
    clearInterval(this.timer);
    $('log-panel').hidden = true;
    this.ctx.onClose();
  }

  async fetchLog() {
    const base = teamPath(this.ctx.team(), 'agents', this.name, 'logs') + `?lines=${LINES}`;
    const wantScreen = $('log-screen');
    if (wantScreen.checked) {
      try {
        return { doc: await api(base + '&screen=1'), mode: 'screen' };
      } catch (e) {
        if (e.status === 400) {
          // this server has no screen view (an unknown parameter): the log it is, from now on
          wantScreen.checked = false;
          wantScreen.disabled = true;
          wantScreen.parentElement.title = 'This server has no screen view';
        } else if (e.status !== 404 && e.status !== 409) {
          throw e;
        }
        // 404/409: the pane is gone; its log still says what it showed
      }
    }
    return { doc: await api(base), mode: 'log' };
  }

  async refresh() {
    if (!this.name || this.inFlight) return;
    this.inFlight = true;
    const name = this.name;
    try {
      const { doc, mode } = await this.fetchLog();
      if (name !== this.name) return;
      const text = typeof doc === 'string' ? doc : (doc?.output ?? doc?.screen ?? '');
      setText($('log-mode'), mode === 'screen' ? 'screen' : doc?.logFile ?? 'log');
      if (text === this.last) return;
      this.last = text;
      const body = $('log-body');
      const atBottom = body.scrollHeight - body.scrollTop - body.clientHeight < 24;
      body.replaceChildren(renderAnsi(text || '(nothing yet)'));
      if ($('log-follow').checked && (atBottom || mode === 'screen')) body.scrollTop = body.scrollHeight;
    } catch (e) {
      if (name === this.name) {
        toastError(e);
        this.close();
      }
    } finally {
      this.inFlight = false;
    }
  }
}
