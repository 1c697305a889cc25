/* agentsweep view: routing, data access (the local server or a static export), the run
   header with live progress, and the episode list. Every text that comes from a run is put
   into the page as a text node or attribute value, never parsed as HTML. */
'use strict';
(function () {
  const AS = window.AS = window.AS || {};
  const errors = [];
  function noteError(msg) {
    errors.push(String(msg));
    if (document.body) document.body.dataset.errors = errors.join(' | ');
  }
  window.addEventListener('error', (e) => noteError(e.message || e));
  window.addEventListener('unhandledrejection', (e) => noteError(e.reason && e.reason.message || e.reason));

  function add(el, kids) {
    for (const k of kids.flat(Infinity)) {
      if (k === null || k === undefined || k === false) continue;
      el.append(k instanceof Node ? k : document.createTextNode(String(k)));
    }
    return el;
  }
  function h(tag, attrs, ...kids) {
    const el = document.createElement(tag);
    for (const [k, v] of Object.entries(attrs || {})) {
      if (v === null || v === undefined || v === false) continue;
      if (k.startsWith('on')) el.addEventListener(k.slice(2), v);
      else if (k === 'class') el.className = v;
      else el.setAttribute(k, v === true ? '' : String(v));
    }
    return add(el, kids);
  }
  function fill(el, ...kids) { el.replaceChildren(); return add(el, kids); }
  function link(path, params) {
    const p = new URLSearchParams();
    for (const [k, v] of Object.entries(params || {})) {
      if (v !== '' && v !== null && v !== undefined && v !== false) p.set(k, v);
    }
    const s = p.toString();
    return '#' + path + (s ? '?' + s : '');
  }
  function route() {
    const hash = location.hash.replace(/^#/, '') || '/';
    const i = hash.indexOf('?');
    return {path: i < 0 ? hash : hash.slice(0, i),
            params: new URLSearchParams(i < 0 ? '' : hash.slice(i + 1))};
  }
  const num = (x, d) => (x === null || x === undefined) ? '—' : Number(x).toFixed(d);
  const badge = (text, kind) => h('span', {class: 'badge b-' + String(kind || text).replace(/[^a-z]+/gi, '-').toLowerCase()}, text);
  Object.assign(AS, {h, add, fill, link, route, num, badge});

  /* ---- data: the server's JSON API, or the static export's data files ---- */
  const STATIC = window.AGENTSWEEP_STATIC || null;
  AS.isStatic = !!STATIC;
  async function get(path, params) {
    if (STATIC) return staticApi[path](params || {});
    const qs = new URLSearchParams(params || {}).toString();
    const r = await fetch('/api/' + path + (qs ? '?' + qs : ''), {cache: 'no-store'});
    if (!r.ok) throw new Error(path + ': ' + r.status + ' ' + (await r.text()));
    return r.json();
  }
  AS.get = get;

  const staticRows = {}, chunks = {}, waiting = {};
  window.AGENTSWEEP_CHUNK = (n, c, docs) => { const w = waiting[n + '/' + c]; if (w) w(docs); };
  function rowsOf(run) {
    if (!staticRows[run]) {
      const cols = STATIC.columns;
      staticRows[run] = (STATIC.rows[run] || []).map((a) => Object.fromEntries(cols.map((c, i) => [c, a[i]])));
    }
    return staticRows[run];
  }
  function loadChunk(n, c) {
    const id = n + '/' + c;
    if (!chunks[id]) {
      chunks[id] = new Promise((resolve, reject) => {
        waiting[id] = resolve;
        const s = document.createElement('script');
        s.src = 'data/' + n + '/' + c + '.js';
        s.onerror = () => reject(new Error('cannot load ' + s.src));
        document.head.append(s);
      });
    }
    return chunks[id];
  }
  const staticRun = (run) => STATIC.runs.find((r) => r.run === run) || STATIC.runs[0];
  async function staticEpisode(run, key) {
    const r = staticRun(run);
    const row = rowsOf(r.run).find((x) => x.key === key);
    if (!row) throw new Error('no unit ' + key + ' in run ' + r.run);
    return (await loadChunk(r.data, row.chunk))[key];
  }
  const VERDICTS = ['-', 'pass', 'fail', 'judge error'];
  const STRING_COLS = ['benchmark', 'subset', 'task', 'termination'];
  function strTest(expr) {
    let e = expr.trim(); const neg = e[0] === '!'; if (neg) e = e.slice(1);
    const exact = e[0] === '='; const needle = (exact ? e.slice(1) : e).toLowerCase();
    return (v) => { const t = String(v).toLowerCase(); const m = exact ? t === needle : t.includes(needle); return neg ? !m : m; };
  }
  function numTest(expr) {
    const e = expr.trim();
    if (e.includes('..')) {
      const [lo, hi] = e.split('..'); const a = lo ? +lo : -Infinity, b = hi ? +hi : Infinity;
      return (v) => v !== null && v >= a && v <= b;
    }
    const m = /^(>=|<=|!=|>|<|=)?\s*(.+)$/.exec(e); const op = m[1] || '='; const s = m[2].trim();
    if (['none', 'nan', '-'].includes(s)) return op === '=' ? (v) => v === null : (v) => v !== null;
    const x = Number(s); if (Number.isNaN(x)) throw new Error('bad filter ' + expr);
    return (v) => v !== null && {'>': v > x, '>=': v >= x, '<': v < x, '<=': v <= x, '=': v === x, '!=': v !== x}[op];
  }
  async function staticList(p) {
    const r = staticRun(p.run);
    let rows = rowsOf(r.run).slice();
    if (p.failed === '1') rows = rows.filter((x) => x.failed);
    for (const [k, expr] of Object.entries(p)) {
      if (!k.startsWith('f.') || !expr.trim()) continue;
      const col = k.slice(2);
      if (col === 'verdict') {
        const w = expr.trim().replace(/^=/, '').toLowerCase();
        rows = rows.filter((x) => x.verdict.includes(w) || (w === 'none' && x.verdict === '-'));
      } else {
        const test = STRING_COLS.includes(col) ? strTest(expr) : numTest(expr);
        rows = rows.filter((x) => test(x[col]));
      }
    }
    if (p.q && p.q.trim()) {
      const needle = JSON.stringify(p.q.trim()).slice(1, -1).toLowerCase();
      const nChunks = Math.max(0, ...rowsOf(r.run).map((x) => x.chunk + 1));
      const docs = Object.assign({}, ...(await Promise.all([...Array(nChunks).keys()].map((c) => loadChunk(r.data, c)))));
      rows = rows.filter((x) => { const d = docs[x.key]; return d && d.record && JSON.stringify(d.record).toLowerCase().includes(needle); });
    }
    const sort = p.sort || '#', dir = p.desc === '1' ? -1 : 1;
    if (sort !== '#' || dir < 0) {
      const val = (x) => sort === 'verdict' ? VERDICTS.indexOf(x.verdict) : x[sort];
      rows.sort((a, b) => {
        const x = val(a), y = val(b);
        if (x === null || y === null) return (x === null) - (y === null);
        if (typeof x === 'string') return dir * x.toLowerCase().localeCompare(y.toLowerCase());
        return dir * (x - y);
      });
    }
    const per = Math.min(500, Math.max(1, +(p.per || 50))), page = Math.max(0, +(p.page || 0));
    return {run: r.run, total: rows.length, all: rowsOf(r.run).length, page, per,
            pages: Math.max(1, Math.ceil(rows.length / per)), rows: rows.slice(page * per, (page + 1) * per),
            generation: r.generation, summary: summarize(rows)};
  }
  const staticApi = {
    runs: async () => STATIC.runs,
    list: staticList,
    episode: (p) => staticEpisode(p.run, p.key),
    diff: async (p) => ({a: await staticEpisode(p.a_run, p.a_key), b: await staticEpisode(p.b_run, p.b_key)}),
  };

  /* ---- header: runs and the progress figures (polled while a run is live) ---- */
  const state = {runs: [], shown: null};
  AS.state = state;
  const currentRun = () => route().params.get('run') || (state.runs[0] && state.runs[0].run);
  function renderHeader() {
    const cur = currentRun();
    fill(document.getElementById('runs'), state.runs.map((r) =>
      h('a', {href: link('/list', {run: r.run}), class: r.run === cur ? 'sel' : null, title: r.dir}, r.label)));
    const r = state.runs.find((x) => x.run === cur);
    const box = document.getElementById('progress');
    if (!r) { box.replaceChildren(); return; }
    const p = r.progress;
    box.replaceChildren();
    add(box, [
      p.live ? h('span', {class: 'live'}, '● live  ') : null,
      h('span', {id: 'run-line', title: 'episodes recorded / units of the run; rates over the last minute while the run is live, else over the whole run; infra failures: units in failures.jsonl (infrastructure retries exhausted), run again by --resume'}, p.line),
      ' | ', h('span', {id: 'verdict-line', title: 'verdicts: pass / fail by the judges (or a bad ending: agent_error, context_overflow, unfinished, or an unjudged episode that did not end normally); a judge error is not a score'}, p.verdict_line),
      p.updated_s_ago !== null && !STATIC ? ' | file updated ' + Math.round(p.updated_s_ago) + 's ago' : '',
      p.bad_lines ? h('span', {class: 'err'}, ' | ' + p.bad_lines + ' undecodable lines skipped') : null,
      r.report && !STATIC ? [' | ', h('a', {href: '/runs/' + encodeURIComponent(r.run) + '/report.html'}, 'report')] : null]);
  }
  async function poll() {
    try {
      state.runs = await get('runs');
    } catch (e) { return; }
    renderHeader();
    const {path} = route();
    const r = state.runs.find((x) => x.run === currentRun());
    const busy = document.activeElement && document.activeElement.closest && document.activeElement.closest('main input, main select');
    if ((path === '/' || path === '/list') && r && state.shown && state.shown.run === r.run
        && state.shown.generation !== r.generation && !busy) render();
  }

  /* ---- the episode list ---- */
  const COLS = [['#', '#'], ['benchmark', 'benchmark'], ['subset', 'subset'], ['task', 'task'],
    ['trial', 'trial'], ['termination', 'termination'], ['score', 'score'], ['verdict', 'verdict'],
    ['judgements', 'judg.'], ['tokens', 'tokens'], ['tools', 'tool calls'], ['tool_errors', 'tool err'],
    ['duration', 'dur s'], ['retries', 'infra retries']];
  const NUMERIC = new Set(['#', 'trial', 'score', 'judgements', 'tokens', 'tools', 'tool_errors', 'duration', 'retries']);

  /* the score summary of the matching rows (the server's, or computed here for an export) */
  function summarize(rows) {
    const groups = {};
    for (const r of rows) (groups[r.benchmark + '/' + r.subset] = groups[r.benchmark + '/' + r.subset] || []).push(r);
    const names = Object.keys(groups).sort();
    const out = names.map((n) => [n, groups[n]]);
    if (names.length !== 1) out.push(['all', rows]);
    return out.map(([name, rs]) => {
      const scored = rs.filter((r) => r.score !== null);
      const count = (f) => rs.filter(f).length;
      return {subset: name, units: rs.length, running: count((r) => r.running), scored: scored.length,
        mean_score: scored.length ? scored.reduce((a, r) => a + r.score, 0) / scored.length : null,
        passed: count((r) => r.verdict === 'pass'), fail: count((r) => r.verdict === 'fail'),
        judge_error: count((r) => r.verdict === 'judge error'),
        not_judged: count((r) => r.verdict === '-' && !r.running && !r.unfinished),
        not_passed: count((r) => r.failed),
        bad_ending: count((r) => r.failed && (r.verdict === '-' || r.verdict === 'pass'))};
    });
  }
  AS.summarize = summarize;
  function summaryTable(summary, total) {
    if (!summary || !summary.length) return null;
    const pct = (a, b) => b ? ' (' + Math.round(100 * a / b) + '%)' : '';
    return h('table', {class: 'summary-table'},
      h('caption', {}, 'score summary of the ' + total + ' matching units'),
      h('tr', {}, ...['subset', 'units', 'running', 'scored', 'mean score', 'passed', 'not passed', 'of which fail', 'judge error', 'bad ending', 'not judged'].map((x) => h('th', {}, x))),
      ...summary.map((g) => h('tr', {class: g.subset === 'all' ? 'all' : null},
        h('td', {}, g.subset), h('td', {class: 'num'}, g.units), h('td', {class: 'num'}, g.running),
        h('td', {class: 'num' + (g.scored < g.units - g.running ? ' warn' : '')}, g.scored),
        h('td', {class: 'num'}, num(g.mean_score, 3)),
        h('td', {class: 'num'}, g.passed + pct(g.passed, g.scored)), h('td', {class: 'num'}, g.not_passed),
        h('td', {class: 'num'}, g.fail), h('td', {class: 'num' + (g.judge_error ? ' warn' : '')}, g.judge_error),
        h('td', {class: 'num'}, g.bad_ending), h('td', {class: 'num'}, g.not_judged))));
  }

  function cell(row, col) {
    const v = row[col];
    if (col === 'task') return h('a', {class: 'ep', href: link('/ep', {run: row.run, key: row.key})}, v);
    if (col === 'score') return num(v, 3);
    if (col === 'verdict') return badge(v, v === '-' ? 'none' : v);
    if (col === 'termination' && row.running) return badge(v, 'running');
    if (col === 'duration') return num(v, 1);
    if (col === 'tokens') return Number(v).toLocaleString('en');
    return v;
  }
  async function showList(params) {
    const run = params.get('run') || (state.runs[0] && state.runs[0].run);
    const q = Object.fromEntries(params.entries());
    q.run = run;
    const data = await get('list', q);
    state.shown = {run: data.run, generation: data.generation};
    const go = (changes) => { location.hash = link('/list', Object.assign({}, q, {page: 0}, changes)); };
    const search = h('input', {type: 'search', placeholder: 'search conversations, tool calls, answers', value: q.q || ''});
    search.addEventListener('change', () => go({q: search.value}));
    const failed = h('input', {type: 'checkbox', checked: q.failed === '1'});
    failed.addEventListener('change', () => go({failed: failed.checked ? '1' : ''}));
    const per = h('select', {}, ...[50, 100, 200, 500].map((n) => h('option', {value: n, selected: +(q.per || 50) === n}, n + ' per page')));
    per.addEventListener('change', () => go({per: per.value}));
    const clear = {};
    for (const k of Object.keys(q)) if (k.startsWith('f.') || k === 'q' || k === 'failed') clear[k] = '';
    const bar = h('div', {class: 'bar'}, search, h('label', {}, failed, ' failed only'), per,
      h('a', {href: link('/list', {run})}, 'clear filters'),
      h('span', {class: 'muted', id: 'count'}, data.total + ' of ' + data.all + ' units'));
    const head = h('tr', {}, ...COLS.map(([c, label]) => {
      const cur = (q.sort || '#') === c;
      const arrow = cur ? (q.desc === '1' ? ' ▾' : ' ▴') : '';
      return h('th', {title: 'sort by ' + c, onclick: () => go({sort: c, desc: cur && q.desc !== '1' ? '1' : ''})}, label + arrow);
    }));
    const filters = h('tr', {class: 'filters'}, ...COLS.map(([c]) => {
      if (c === '#') return h('th', {});
      const inp = h('input', {name: 'f.' + c, value: q['f.' + c] || '', placeholder: NUMERIC.has(c) ? '>0.5' : 'filter'});
      inp.addEventListener('change', () => go({['f.' + c]: inp.value}));
      return h('th', {}, inp);
    }));
    const body = h('tbody', {}, ...data.rows.map((row) => h('tr', {class: row.failed ? 'failed' : row.running ? 'running' : null, 'data-key': row.key},
      ...COLS.map(([c]) => h('td', {class: (NUMERIC.has(c) ? 'num ' : '') + c}, cell(row, c))))));
    const page = data.page;
    const pager = h('div', {class: 'pager'},
      page > 0 ? h('a', {href: link('/list', Object.assign({}, q, {page: page - 1}))}, '« prev') : h('span', {class: 'muted'}, '« prev'),
      h('span', {}, 'page ' + (page + 1) + ' of ' + data.pages),
      page + 1 < data.pages ? h('a', {href: link('/list', Object.assign({}, q, {page: page + 1})), id: 'next-page'}, 'next »') : h('span', {class: 'muted'}, 'next »'));
    fill(document.getElementById('main'), bar, summaryTable(data.summary, data.total),
      h('table', {class: 'list'}, h('thead', {}, head, filters), body), pager,
      data.rows.length ? null : h('p', {class: 'muted'}, 'no units match'));
    renderHeader();
  }

  async function render() {
    const {path, params} = route();
    document.body.dataset.view = 'loading';
    try {
      if (path === '/ep') await AS.showEpisode(params);
      else if (path === '/diff') await AS.showDiff(params);
      else await showList(params);
      renderHeader();
      document.body.dataset.view = path === '/ep' ? 'episode' : path === '/diff' ? 'diff' : 'list';
    } catch (e) {
      fill(document.getElementById('main'), h('p', {class: 'err'}, String(e.message || e)));
      document.body.dataset.view = 'error';
    }
  }
  AS.render = render;
  window.addEventListener('hashchange', () => { window.scrollTo(0, 0); render(); });
  document.addEventListener('DOMContentLoaded', async () => {
    try { state.runs = await get('runs'); } catch (e) { noteError(e.message); }
    await render();
    if (!STATIC) setInterval(poll, 2000);
    document.body.dataset.ok = '1';
  });
})();
