/* agentsweep view: one episode (conversation as chat bubbles, tool calls with their results,
   judge ratings, termination, retries, links to the other trials) and the side-by-side view.
   Loaded before app.js; uses the helpers app.js puts on window.AS at call time. */
'use strict';
(function () {
  const AS = window.AS = window.AS || {};
  const text = (v) => v === null || v === undefined ? '' : typeof v === 'string' ? v : JSON.stringify(v, null, 2);
  function pretty(args) {
    try { return JSON.stringify(JSON.parse(args), null, 2); } catch (e) { return text(args); }
  }
  const when = (t) => t ? new Date(t * 1000).toLocaleString() : '—';

  function kv(pairs) {
    const {h} = AS;
    return h('table', {class: 'kv'}, ...pairs.filter((p) => p[1] !== null && p[1] !== undefined && p[1] !== '')
      .map(([k, v]) => h('tr', {}, h('td', {class: 'muted'}, k), h('td', {}, v))));
  }

  function toolCall(tc, rec, result) {
    const {h, badge} = AS;
    const name = tc.function ? tc.function.name : rec ? rec.name : '?';
    const args = tc.function ? tc.function.arguments : rec ? rec.arguments : '';
    const marks = [];
    if (rec) {
      marks.push(badge(rec.source, rec.source));
      if (!rec.valid) marks.push(badge('invalid arguments', 'invalid'));
      if (rec.error_category) marks.push(badge(rec.error_category, 'error'));
      if (rec.latency_s) marks.push(h('span', {class: 'muted'}, (rec.latency_s * 1000).toFixed(0) + ' ms'));
    } else marks.push(h('span', {class: 'muted'}, 'no sandbox record'));
    const content = result ? result.content : rec ? rec.content : null;
    return h('div', {class: 'call', 'data-source': rec ? rec.source : ''},
      h('div', {}, h('span', {class: 'name'}, name), ' ', ...marks),
      h('div', {class: 'muted'}, 'arguments'), h('pre', {class: 'args'}, pretty(args)),
      h('div', {class: 'muted'}, 'result'),
      content === null || content === undefined ? h('div', {class: 'muted'}, '(none)') : h('pre', {class: 'result'}, text(content)));
  }

  function conversation(rec, simView) {
    const {h} = AS;
    const calls = {}, results = {}, shown = new Set();
    for (const c of rec.tool_calls || []) calls[c.call_id] = c;
    for (const m of rec.messages || []) if (m.role === 'tool' && m.tool_call_id) results[m.tool_call_id] = m;
    const out = [];
    let users = 0;
    for (const m of rec.messages || []) {
      if (m.role === 'system') {
        const t = text(m.content);
        out.push(h('details', {class: 'sys'}, h('summary', {}, 'system prompt (' + t.length + ' characters)'), h('pre', {}, t)));
      } else if (m.role === 'user') {
        users += 1;
        const sim = users > 1;
        out.push(h('div', {class: 'msg user' + (sim ? ' sim' : '')},
          h('div', {class: 'who'}, simView ? 'agent (as the simulator sees it)' : sim ? 'user (simulator)' : 'user (task)'),
          h('div', {class: 'text'}, text(m.content))));
      } else if (m.role === 'assistant') {
        const parts = [h('div', {class: 'who'}, simView ? 'user simulator' : 'agent')];
        if (m.content) parts.push(h('div', {class: 'text'}, text(m.content)));
        for (const tc of m.tool_calls || []) {
          shown.add(tc.id);
          parts.push(toolCall(tc, calls[tc.id], results[tc.id]));
        }
        out.push(h('div', {class: 'msg assistant'}, parts));
      } else if (m.role === 'tool' && shown.has(m.tool_call_id)) {
        continue;  // shown with its call
      } else {
        out.push(h('div', {class: 'msg tool'}, h('div', {class: 'who'}, m.role + (m.name ? ' ' + m.name : '')), h('pre', {}, text(m.content))));
      }
    }
    const loose = (rec.tool_calls || []).filter((c) => !shown.has(c.call_id));
    if (loose.length) {
      out.push(h('div', {class: 'card'}, h('h3', {}, 'tool calls not in the transcript'),
        ...loose.map((c) => toolCall({}, c, null))));
    }
    return h('div', {class: 'chat'}, out);
  }

  function judgements(doc) {
    const {h, num, badge} = AS;
    if (!doc.judgements.length) return h('p', {class: 'muted'}, 'not judged');
    return doc.judgements.map((j) => {
      const dims = Object.keys(Object.assign({}, j.scores || {}, j.reasoning || {}));
      const pass = j.score === null || j.score === undefined ? null : j.score >= doc.threshold;
      return h('div', {class: 'card judgement'},
        h('h3', {}, j.kind, ' — ', j.judge_model, ' ', h('span', {class: 'muted'}, 'prompt ' + j.prompt_version),
          ' ', j.error ? badge('judge error', 'error') : pass === null ? null : badge(pass ? 'pass' : 'fail', pass ? 'pass' : 'fail')),
        kv([['score', num(j.score, 3)], ['attempts', j.attempts], ['at', when(j.created_at)],
            ['judged on', j.unit && j.unit.task + '#' + j.unit.trial !== doc.row.key
              ? j.unit.task + '#' + j.unit.trial + ' (the same trajectory)' : null],
            ['error', j.error ? h('span', {class: 'err'}, j.error) : null]]),
        dims.length ? h('table', {class: 'dims'}, h('tr', {}, h('th', {}, 'dimension / rubric'), h('th', {}, 'rating'), h('th', {}, 'rationale')),
          ...dims.map((d) => h('tr', {}, h('td', {}, d), h('td', {}, j.scores && d in j.scores ? String(j.scores[d]) : '—'),
            h('td', {class: 'text'}, text(j.reasoning ? j.reasoning[d] : ''))))) : null,
        j.raw ? h('details', {class: 'fold'}, h('summary', {}, 'raw judge answer'), h('pre', {}, j.raw)) : null);
    });
  }

  function summary(doc) {
    const {h, badge, num} = AS;
    const r = doc.record, row = doc.row;
    const usage = r ? Object.entries(r.usage || {}).map(([role, u]) =>
      role + ': prompt ' + (u.prompt_tokens || 0) + ', completion ' + (u.completion_tokens || 0) + ', cached ' + (u.cached_tokens || 0)).join('; ') : '';
    const timings = r ? Object.entries(r.timings || {}).map(([k, v]) => k + ' ' + Number(v).toFixed(2) + 's').join(', ') : '';
    return h('div', {class: 'card summary'}, kv([
      ['unit', row.key], ['run', doc.run], ['termination', badge(row.termination, row.failed ? 'fail' : 'none')],
      ['verdict', [badge(row.verdict, row.verdict === '-' ? 'none' : row.verdict), ' score ', num(row.score, 3)]],
      ['final answer', r && r.final_answer ? h('div', {class: 'text'}, r.final_answer) : null],
      ['infra retries', String(r ? r.infra_retries || 0 : 0)],
      ['agent calls / user turns', r ? (r.n_agent_calls || 0) + ' / ' + (r.n_user_turns || 0) : null],
      ['tokens', usage], ['timings', timings], ['seed', r ? String(r.unit.seed) : null],
      ['finished', when(r ? r.finished_at : row.finished)],
    ]), doc.failures.length ? h('div', {class: 'failures'}, h('div', {class: 'muted'}, 'infrastructure failures / errors of this unit'),
      ...doc.failures.map((f) => h('div', {class: 'err'}, when(f.at) + ' ' + f.kind + ' after ' + f.attempts + ' attempts: ' + f.error))) : null);
  }

  function episodeBody(doc, compact) {
    const {h} = AS;
    const r = doc.record;
    return [summary(doc),
      h('h2', {}, 'Conversation'),
      r ? conversation(r) : h('p', {class: 'muted'}, 'no episode record (the unit did not finish)'),
      r && (r.user_messages || []).length ? h('details', {class: 'fold'}, h('summary', {}, "the user simulator's own view (" + r.user_messages.length + ' messages)'),
        conversation({messages: r.user_messages}, true)) : null,
      h('h2', {}, 'Judges'), judgements(doc),
      !compact && r && r.extra && Object.keys(r.extra).length ? h('details', {class: 'fold'}, h('summary', {}, 'extra'), h('pre', {}, text(r.extra))) : null];
  }

  function chips(doc) {
    const {h, link} = AS;
    const chip = (t, run) => t.key === doc.row.key && run === doc.run
      ? h('span', {class: 'cur'}, 'trial ' + t.trial)
      : h('span', {}, h('a', {href: link('/ep', {run, key: t.key}), class: 'b-' + (t.verdict === '-' ? 'none' : t.verdict.replace(' ', '-'))}, 'trial ' + t.trial),
        ' ', h('a', {href: link('/diff', {a_run: doc.run, a_key: doc.row.key, b_run: run, b_key: t.key}), title: 'side by side', class: 'cmp'}, '⇆'));
    return [h('div', {class: 'chips'}, h('span', {class: 'muted'}, 'trials of this task: '), ...doc.trials.map((t) => chip(t, doc.run))),
      ...doc.other_runs.map((o) => h('div', {class: 'chips'}, h('span', {class: 'muted'}, 'same task in ' + o.run + ': '), ...o.trials.map((t) => chip(t, o.run))))];
  }

  AS.showEpisode = async function (params) {
    const {h, link, get} = AS;
    const doc = await get('episode', {run: params.get('run') || '', key: params.get('key') || ''});
    const i = doc.trials.findIndex((t) => t.key === doc.row.key);
    const prev = i > 0 ? doc.trials[i - 1] : null, next = i >= 0 && i + 1 < doc.trials.length ? doc.trials[i + 1] : null;
    const nav = h('div', {class: 'nav'}, h('a', {href: link('/list', {run: doc.run})}, '← list'),
      prev ? h('a', {href: link('/ep', {run: doc.run, key: prev.key}), id: 'prev-trial'}, '‹ previous trial') : h('span', {class: 'muted'}, '‹ previous trial'),
      next ? h('a', {href: link('/ep', {run: doc.run, key: next.key}), id: 'next-trial'}, 'next trial ›') : h('span', {class: 'muted'}, 'next trial ›'),
      h('strong', {}, doc.row.task), h('span', {class: 'muted'}, doc.row.benchmark + '/' + doc.row.subset + ' #' + doc.row.trial));
    AS.fill(document.getElementById('main'), nav, chips(doc), episodeBody(doc, false));
  };

  AS.showDiff = async function (params) {
    const {h, link, get} = AS;
    const p = Object.fromEntries(params.entries());
    const doc = await get('diff', p);
    const side = (d) => h('div', {class: 'side'},
      h('div', {class: 'nav'}, h('a', {href: link('/ep', {run: d.run, key: d.row.key})}, d.run + ' · ' + d.row.key)),
      ...episodeBody(d, true));
    const swap = link('/diff', {a_run: p.b_run, a_key: p.b_key, b_run: p.a_run, b_key: p.a_key});
    AS.fill(document.getElementById('main'),
      h('div', {class: 'nav'}, h('a', {href: link('/list', {run: doc.a.run})}, '← list'), h('a', {href: swap}, 'swap sides')),
      h('div', {class: 'cols'}, side(doc.a), side(doc.b)));
  };
})();
