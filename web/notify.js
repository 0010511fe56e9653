// Browser notifications (SPEC 17's attention, on the page): one for each agent that starts
// waiting for a person, the moment the event stream says so (an `agent_state` entry whose state is
// `waiting`: the server writes one exactly when the leader gets a needs_input message), for any
// team of the home. Only with the browser's permission, asked for by the button in the top bar;
// the same button then turns them off and on for this browser (kept in localStorage). Never for a
// wait that was open before the page was loaded (the stream starts at the newest entry), never
// twice for the same wait (an entry replayed after a reconnect is recognised).
import { setText } from './dom.js';
import { waitParts } from './activity.js';

const OFF_KEY = 'team.notifications';

export class Notifier {
  // ctx: {show(team, name): brings that agent's row on screen}
  constructor(ctx) {
    this.ctx = ctx;
    this.button = document.getElementById('notify');
    this.shown = new Set(); // `${agentId} ${since}` of each wait told of
  }

  supported() {
    return typeof window.Notification === 'function';
  }

  muted() {
    try {
      return localStorage.getItem(OFF_KEY) === 'off';
    } catch {
      return false;
    }
  }

  wire() {
    if (!this.supported()) return; // the button stays hidden
    this.button.hidden = false;
    this.button.addEventListener('click', () => this.click());
    this.sync();
    // A permission changed in the browser's own settings.
    navigator.permissions?.query({ name: 'notifications' }).then((status) => {
      status.onchange = () => this.sync();
    }, () => {});
  }

  // The button says what a click does, and is off when the browser blocks notifications.
  sync() {
    const permission = Notification.permission;
    const b = this.button;
    b.dataset.permission = permission;
    b.classList.toggle('notify-on', permission === 'granted' && !this.muted());
    b.disabled = permission === 'denied';
    if (permission === 'granted') {
      const on = !this.muted();
      setText(b, on ? 'notifications on' : 'notifications off');
      b.title = on
        ? 'A notification when an agent waits for a person. Click to turn them off in this browser.'
        : 'Click for a notification when an agent waits for a person.';
      b.setAttribute('aria-pressed', String(on));
    } else if (permission === 'denied') {
      setText(b, 'notifications blocked');
      b.title = "The browser blocks this page's notifications: allow them in its site settings.";
      b.removeAttribute('aria-pressed');
    } else {
      setText(b, 'notify me');
      b.title = 'Ask the browser to show a notification when an agent waits for a person.';
      b.removeAttribute('aria-pressed');
    }
  }

  // Acts on what the button shows (the permission may have changed since, unannounced).
  async click() {
    if (this.button.dataset.permission === 'granted') {
      try {
        localStorage.setItem(OFF_KEY, this.muted() ? 'on' : 'off');
      } catch {
        // no storage: nothing to remember
      }
    } else {
      await Notification.requestPermission();
      try {
        localStorage.removeItem(OFF_KEY); // asking for them means wanting them
      } catch {
        // no storage
      }
    }
    this.sync();
  }

  // An entry of the event stream, of any team.
  event(row, team) {
    if (row.type !== 'agent_state' || row.details?.state !== 'waiting') return;
    const agentId = String(row.details.agentId ?? '');
    const key = `${agentId} ${row.at}`;
    if (this.shown.has(key)) return;
    this.shown.add(key);
    if (this.shown.size > 1000) this.shown.delete(this.shown.values().next().value);
    if (!this.supported() || Notification.permission !== 'granted' || this.muted()) return;
    const name = agentId.split('@')[0];
    const on = row.details.waitingOn ?? {};
    const [kind, tool, what] = waitParts(on);
    const answer = on.answer || `team attach ${name} --team ${team}`;
    const body = [tool && what ? `${tool}: ${what}` : tool || what, `answer: ${answer}`].filter(Boolean).join('\n');
    try {
      // One per agent on screen at a time (its tag): a newer wait replaces an older one.
      const n = new Notification(`${name} (${team}) waits for ${kind}`,
        { body, tag: `team-wait ${agentId}`, icon: '/favicon.svg' });
      n.onclick = () => {
        window.focus();
        this.ctx.show(team, name);
        n.close();
      };
    } catch {
      // a browser that wants notifications from a service worker only: the page shows the wait
    }
  }
}
