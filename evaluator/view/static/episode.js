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

  /* One signature per shown message (an assistant message with its calls' results), to
     line two episodes up message by message in the side-by-side view. */
  function signatures(rec) {
    const results = {};
    for (const m of rec.messages || []) if (m.role === 'tool' && m.tool_call_id) results[m.tool_call_id] = text(m.content);
    const calls = new Set();
    const out = [];
    for (const m of rec.messages || []) {
      if (m.role === 'tool' && calls.has(m.tool_call_id)) continue;
      const tcs = (m.tool_calls || []).map((tc) => { calls.add(tc.id); return [tc.function && tc.function.name, tc.function && tc.function.arguments, results[tc.id]]; });
      out.push(JSON.stringify([m.role, text(m.content), tcs]));
    }
    return out;
  }

  function conversation(rec, simView, differs) {
    const {h} = AS;
    const calls = {}, results = {}, shown = new Set();
    for (const c of rec.tool_calls || []) calls[c.call_id] = c;
    for (const m of rec.messages || []) if (m.role === 'tool' && m.tool_call_id) results[m.tool_call_id] = m;
    const out = [];
    let users = 0, n = -1;
    const mark = (cls) => { n += 1; return differs ? cls + (differs.has(n) ? ' differs' : ' same') : cls; };
    for (const m of rec.messages || []) {
      if (m.role === 'system') {
        const t = text(m.content);
        out.push(h('details', {class: mark('sys'), 'data-n': n}, h('summary', {}, 'system prompt (' + t.length + ' characters)'), h('pre', {}, t)));
      } else if (m.role === 'user') {
        users += 1;
        const sim = users > 1;
        out.push(h('div', {class: mark('msg user' + (sim ? ' sim' : '')), 'data-n': n},
          h('div', {class: 'who'}, simView ? 'agent (as the simulator sees it)' : sim ? 'user (simulator)' : 'user (task)'),
          h('div', {class: 'text'}, text(m.content))));
      } else if (m.role === 'assistant') {
        const parts = [h('div', {class: 'who'}, simView ? 'user simulator' : 'agent')];
        if (m.content) parts.push(h('div', {class: 'text'}, text(m.content)));
        for (const tc of m.tool_calls || []) {
          shown.add(tc.id);
          parts.push(toolCall(tc, calls[tc.id], results[tc.id]));
        }
        out.push(h('div', {class: mark('msg assistant'), 'data-n': n}, parts));
      } else if (m.role === 'tool' && shown.has(m.tool_call_id)) {
        continue;  // shown with its call
      } else {
        out.push(h('div', {class: mark('msg tool'), 'data-n': n}, h('div', {class: 'who'}, m.role + (m.name ? ' ' + m.name : '')), h('pre', {}, text(m.content))));
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
    const d = doc.score_detail;
    const used = (j) => d && j.kind === d.kind && j.judge_model === d.judge_model;
    const last = doc.judgements.reduce((m, j, i) => used(j) ? i : m, -1);  // the latest one counts
    return doc.judgements.map((j, i) => {
      const dims = Object.keys(Object.assign({}, j.scores || {}, j.reasoning || {}));
      return h('div', {class: 'card judgement' + (i === last ? ' used' : '')},
        h('h3', {}, j.kind, ' — ', j.judge_model, ' ', h('span', {class: 'muted'}, 'prompt ' + j.prompt_version),
          ' ', j.error ? badge('judge error', 'error') : null,
          i === last ? h('span', {class: 'muted'}, ' (gives the unit score above)') : null),
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

  /* How the unit score comes about: the judge's score, its audit's weight, the tool-error
     penalty, the pass line (the server's `score_detail`). */
  function scoreDetail(doc) {
    const {h, num, badge} = AS;
    const d = doc.score_detail;
    if (!d) return null;
    const rows = [['judgement', d.kind + ' — ' + d.judge_model],
      ['judge score', d.judge_error ? h('span', {class: 'err'}, 'judge error: no score') : num(d.judge_score, 3)]];
    let formula = num(d.judge_score, 3) + ' (' + d.kind + ')';
    if (d.weighted) {
      rows.push(['audit weight', d.audit ? num(d.audit_weight, 3) + ' (' + d.audit.kind + ' score' + (d.audit.score === null ? ': error, weight 1' : '') + ')' : '1 (no audit judgement)']);
      rows.push(['tool-error penalty', '1 − ' + d.tool_errors + ' / ' + d.tool_calls + ' tool calls with source error = ' + num(d.tool_weight, 3)]);
      formula += ' × ' + num(d.audit_weight, 3) + ' (audit) × ' + num(d.tool_weight, 3) + ' (tool errors)';
    }
    formula += ' = ' + num(d.score, 3);
    rows.push(['unit score', d.judge_error ? '—' : h('strong', {id: 'score-formula'}, formula)]);
    rows.push(['verdict', [badge(d.verdict, d.verdict === '-' ? 'none' : d.verdict),
      d.judge_error ? ' a judge error is neither pass nor fail' : ' pass when score ≥ ' + d.threshold + ' (' + d.threshold_from + ')']]);
    return h('div', {class: 'card score-detail'}, h('h3', {}, 'How the score is computed'),
      h('table', {class: 'kv'}, ...rows.map(([k, v]) => h('tr', {}, h('td', {class: 'muted'}, k), h('td', {}, v)))));
  }

  function bar(left, width) {
    const el = AS.h('div', {class: 'tl-bar'});
    el.style.marginLeft = left;  // CSSOM, not a style attribute: allowed by the page's CSP
    el.style.width = width;
    return el;
  }

  /* Model calls (their start after the episode began, duration, tokens) with each agent
     call's tool calls after it, as bars on one time axis. */
  function timeline(rec) {
    const {h} = AS;
    const calls = rec.calls || [];
    if (!calls.length) return null;
    const byStep = {};
    for (const t of rec.tool_calls || []) (byStep[t.step || 0] = byStep[t.step || 0] || []).push(t);
    const rows = [];
    let agent = 0;
    for (const c of calls) {
      rows.push({kind: c.role, label: c.role + ' call', start: c.start, dur: c.seconds,
        info: (c.prompt_tokens || 0) + ' prompt / ' + (c.completion_tokens || 0) + ' completion tokens' + (c.cached_tokens ? ', ' + c.cached_tokens + ' cached' : '')});
      if (c.role === 'agent') {
        for (const t of byStep[agent] || []) {
          rows.push({kind: 'tool', label: '  tool ' + t.name, start: c.start + c.seconds, dur: t.latency_s || 0,
            info: t.source + (t.error_category ? ' (' + t.error_category + ')' : '')});
        }
        agent += 1;
      }
    }
    const end = Math.max(...rows.map((r) => r.start + r.dur), (rec.timings || {}).total || 0, 1e-6);
    const pct = (x) => (100 * x / end).toFixed(2) + '%';
    const ms = (x) => x >= 1 ? x.toFixed(2) + ' s' : Math.round(x * 1000) + ' ms';
    return h('details', {class: 'fold timeline', open: true},
      h('summary', {}, 'timeline: ' + calls.length + ' model calls, ' + (rec.tool_calls || []).length + ' tool calls over ' + ms(end)),
      h('table', {class: 'timeline'}, ...rows.map((r) => h('tr', {class: 't-' + r.kind},
        h('td', {class: 'tl-label'}, r.label), h('td', {class: 'num'}, '+' + ms(r.start)), h('td', {class: 'num'}, ms(r.dur)),
        h('td', {class: 'tl-track'}, bar(pct(r.start), pct(Math.max(r.dur, end / 400)))),
        h('td', {class: 'muted'}, r.info)))));
  }

  /* What a running (or interrupted) unit has done so far: its journaled responses. */
  function journal(doc) {
    const {h} = AS;
    if (!doc.journal || !doc.journal.length) return null;
    return h('div', {class: 'card'}, h('h3', {}, 'responses so far (' + doc.journal.length + ', from the run\'s response journal)'),
      ...doc.journal.map((j) => {
        const msg = j.resp && j.resp.choices && j.resp.choices[0] ? j.resp.choices[0].message || {} : {};
        const tcs = (msg.tool_calls || []).map((tc) => tc.function ? tc.function.name + ' ' + tc.function.arguments : '').join('\n');
        return h('div', {class: 'msg ' + (j.r === 'agent' ? 'assistant' : 'user sim')},
          h('div', {class: 'who'}, j.r + ' · call ' + j.i), msg.content ? h('div', {class: 'text'}, text(msg.content)) : null,
          tcs ? h('pre', {class: 'args'}, tcs) : null);
      }));
  }

  function episodeBody(doc, compact, differs) {
    const {h} = AS;
    const r = doc.record;
    return [summary(doc), scoreDetail(doc), r ? timeline(r) : null,
      h('h2', {}, 'Conversation'),
      r ? conversation(r, false, differs) : [h('p', {class: 'muted'}, doc.row.running ? 'running: no episode record yet' : 'no episode record (the unit did not finish)'), journal(doc)],
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

  /* The two episodes' figures side by side, the differing ones marked. */
  function compareTable(a, b) {
    const {h, num} = AS;
    const fig = (d) => {
      const r = d.record || {};
      const tok = Object.values(r.usage || {}).reduce((s, u) => s + (u.prompt_tokens || 0) + (u.completion_tokens || 0), 0);
      return {termination: d.row.termination, verdict: d.row.verdict, score: num(d.row.score, 3),
        'agent calls': String(r.n_agent_calls || 0), 'tool calls': String((r.tool_calls || []).length),
        'tool errors': String(d.row.tool_errors), tokens: String(tok), 'messages': String((r.messages || []).length),
        'final answer': r.final_answer || ''};
    };
    const fa = fig(a), fb = fig(b);
    return h('table', {class: 'compare'}, h('tr', {}, h('th', {}, ''), h('th', {}, a.run + ' · ' + a.row.key), h('th', {}, b.run + ' · ' + b.row.key)),
      ...Object.keys(fa).map((k) => h('tr', {class: fa[k] === fb[k] ? 'same' : 'differs'},
        h('td', {class: 'muted'}, k), h('td', {class: 'text'}, fa[k]), h('td', {class: 'text'}, fb[k]))));
  }

  AS.showDiff = async function (params) {
    const {h, link, get} = AS;
    const p = Object.fromEntries(params.entries());
    const doc = await get('diff', p);
    const sa = doc.a.record ? signatures(doc.a.record) : [], sb = doc.b.record ? signatures(doc.b.record) : [];
    const differs = new Set();
    for (let i = 0; i < Math.max(sa.length, sb.length); i++) if (sa[i] !== sb[i]) differs.add(i);
    const first = differs.size ? Math.min(...differs) : -1;
    const side = (d) => h('div', {class: 'side'},
      h('div', {class: 'nav'}, h('a', {href: link('/ep', {run: d.run, key: d.row.key})}, d.run + ' · ' + d.row.key)),
      ...episodeBody(d, true, differs));
    const swap = link('/diff', {a_run: p.b_run, a_key: p.b_key, b_run: p.a_run, b_key: p.a_key});
    const note = first < 0 ? 'the two conversations are identical'
      : 'conversations differ from message ' + (first + 1) + ' on (' + differs.size + ' of ' + Math.max(sa.length, sb.length) + ' messages differ, marked)';
    AS.fill(document.getElementById('main'),
      h('div', {class: 'nav'}, h('a', {href: link('/list', {run: doc.a.run})}, '← list'), h('a', {href: swap}, 'swap sides'),
        first >= 0 ? h('a', {href: '#', id: 'first-diff', onclick: (e) => { e.preventDefault(); const el = document.querySelector('.cols .differs[data-n="' + first + '"]'); if (el) el.scrollIntoView({block: 'center'}); }}, 'first difference') : null),
      h('p', {class: 'diff-note', id: 'diff-note'}, note), compareTable(doc.a, doc.b),
      h('div', {class: 'cols'}, side(doc.a), side(doc.b)));
  };
})();
