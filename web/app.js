// Dashboard entry point (skeleton): fetches the teams to prove the page and /api ride the cookie.
const main = document.getElementById('main');
const res = await fetch('/api/teams', { credentials: 'same-origin' });
main.textContent = res.ok ? 'teams: ' + JSON.stringify(await res.json()) : 'error ' + res.status;
