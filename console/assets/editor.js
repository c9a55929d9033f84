// Herald's workflow editor: what the editor page adds beyond console.js.
// The page works without it (the Liquid fields are plain text, the skip
// condition raw JSON-logic); with it, Liquid fields offer the workflow's
// variables as the author types, and a skip condition is built as rules
// kept in sync with its JSON-logic (docs/editor.md, "The console's editor").
(function () {
  'use strict';

  var ops = ['==', '!=', '>', '>=', '<', '<='];
  var opNames = { '==': 'equals', '!=': 'does not equal', '>': 'is greater than', '>=': 'is at least', '<': 'is less than', '<=': 'is at most' };
  var uid = 0;

  function el(tag, attrs, text) {
    var e = document.createElement(tag);
    Object.keys(attrs || {}).forEach(function (k) { e.setAttribute(k, attrs[k]); });
    if (text) e.textContent = text;
    return e;
  }

  function changed(field) {
    field.dispatchEvent(new Event('input', { bubbles: true }));
  }

  // ---- Liquid variables, offered as the author types ----

  // fragment is the variable being typed at the caret of field: the text
  // after an open {{ up to the caret, or null outside one.
  function fragment(field) {
    var before = field.value.slice(0, field.selectionStart);
    var m = /\{\{-?\s*([A-Za-z0-9_.]*)$/.exec(before);
    return m ? m[1] : null;
  }

  function suggest(field, vars) {
    var list = el('ul', { id: 'liquid-suggest-' + (++uid), role: 'listbox', class: 'liquid-suggest', hidden: '' });
    list.setAttribute('aria-label', 'Variables');
    field.insertAdjacentElement('afterend', list);
    field.setAttribute('aria-autocomplete', 'list');
    field.setAttribute('aria-controls', list.id);
    field.setAttribute('aria-expanded', 'false');
    var active = -1;

    function close() {
      list.hidden = true;
      active = -1;
      field.setAttribute('aria-expanded', 'false');
      field.removeAttribute('aria-activedescendant');
    }

    function highlight(i) {
      var items = list.children;
      if (!items.length) return;
      active = (i + items.length) % items.length;
      for (var k = 0; k < items.length; k++) items[k].setAttribute('aria-selected', k === active ? 'true' : 'false');
      field.setAttribute('aria-activedescendant', items[active].id);
    }

    function accept(name) {
      var end = field.selectionStart;
      var typed = fragment(field) || '';
      var start = end - typed.length;
      var after = field.value.slice(end);
      var tail = /^\s*-?\}\}/.test(after) ? '' : ' }}';
      field.value = field.value.slice(0, start) + name + tail + after;
      var caret = start + name.length + tail.length;
      field.setSelectionRange(caret, caret);
      close();
      changed(field);
    }

    function open() {
      var typed = fragment(field);
      if (typed === null) { close(); return; }
      var q = typed.toLowerCase();
      var found = vars.filter(function (v) { return v.toLowerCase().indexOf(q) === 0; });
      found = found.concat(vars.filter(function (v) { return q && v.toLowerCase().indexOf(q) > 0; }));
      found = found.filter(function (v) { return v !== typed; }).slice(0, 8);
      list.textContent = '';
      if (!found.length) { close(); return; }
      found.forEach(function (v, i) {
        var li = el('li', { role: 'option', id: list.id + '-' + i, 'aria-selected': 'false' }, v);
        li.addEventListener('mousedown', function (e) { e.preventDefault(); accept(v); });
        list.appendChild(li);
      });
      list.hidden = false;
      field.setAttribute('aria-expanded', 'true');
      highlight(0);
    }

    field.addEventListener('input', open);
    field.addEventListener('click', open);
    field.addEventListener('blur', close);
    field.addEventListener('keydown', function (e) {
      if (list.hidden) return;
      if (e.key === 'ArrowDown' || e.key === 'ArrowUp') {
        e.preventDefault();
        highlight(active + (e.key === 'ArrowDown' ? 1 : -1));
      } else if (e.key === 'Enter' || e.key === 'Tab') {
        e.preventDefault();
        accept(list.children[active].textContent);
      } else if (e.key === 'Escape') {
        e.stopPropagation();
        close();
      }
    });
  }

  // ---- Skip conditions as rules ----

  // parse reads JSON-logic as a group of rules, or null when it holds
  // logic the rules cannot show.
  function parse(logic) {
    if (!logic || typeof logic !== 'object' || Array.isArray(logic)) return null;
    var keys = Object.keys(logic);
    if (keys.length !== 1) return null;
    var op = keys[0], args = logic[op];
    if (op === 'and' || op === 'or') {
      if (!Array.isArray(args)) return null;
      var items = [];
      for (var i = 0; i < args.length; i++) {
        var item = parse(args[i]);
        if (!item) return null;
        items.push(item);
      }
      return { group: op, items: items };
    }
    if (ops.indexOf(op) < 0 || !Array.isArray(args) || args.length !== 2) return null;
    var v = args[0], value = args[1];
    if (!v || typeof v !== 'object' || Object.keys(v).length !== 1 || typeof v['var'] !== 'string') return null;
    if (value !== null && typeof value === 'object') return null;
    return { field: v['var'], op: op, value: value };
  }

  // logic writes a group of rules as JSON-logic; an empty group is none.
  function logic(node) {
    if (node.group) {
      var items = node.items.map(logic).filter(function (x) { return x !== null; });
      if (!items.length) return null;
      var out = {};
      out[node.group] = items;
      return out;
    }
    if (!node.field) return null;
    var r = {};
    r[node.op] = [{ 'var': node.field }, node.value];
    return r;
  }

  // typed reads a rule's value as the author wrote it: a number, true,
  // false or null as JSON, anything else as text.
  function typed(s) {
    var t = s.trim();
    if (t === 'true') return true;
    if (t === 'false') return false;
    if (t === 'null') return null;
    if (t !== '' && !isNaN(Number(t))) return Number(t);
    if (/^".*"$/.test(t)) { try { return JSON.parse(t); } catch (e) { /* text */ } }
    return s;
  }

  // shown is a value as its field holds it: text as it is, unless it would
  // read back as something else ("12", "true"), then quoted.
  function shown(v) {
    return typeof v === 'string' && typed(v) === v ? v : JSON.stringify(v);
  }

  function rules(raw, listID) {
    var box = el('div', { class: 'rules', 'data-rules': '' });
    var note = el('p', { class: 'muted rules-fallback', hidden: '' },
      'This condition uses logic the rules cannot show: edit it as JSON-logic below.');
    raw.insertAdjacentElement('beforebegin', box);
    raw.insertAdjacentElement('beforebegin', note);
    var off = raw.readOnly || raw.disabled;
    var tree = null;

    function write() {
      var l = logic(tree);
      raw.value = l === null ? '' : JSON.stringify(l);
      raw.dataset.fromRules = '1';
      changed(raw);
      delete raw.dataset.fromRules;
    }

    function control(node, parent) {
      if (node.group) return groupView(node, parent);
      var row = el('div', { class: 'rule' });
      var f = el('input', { 'aria-label': 'Field', placeholder: 'payload.field', list: listID, class: 'rule-field' });
      f.value = node.field || '';
      var o = el('select', { 'aria-label': 'Operator', class: 'rule-op' });
      ops.forEach(function (op) {
        var opt = el('option', { value: op }, opNames[op]);
        if (op === node.op) opt.selected = true;
        o.appendChild(opt);
      });
      var v = el('input', { 'aria-label': 'Value', class: 'rule-value' });
      v.value = node.value === undefined ? '' : shown(node.value);
      var rm = el('button', { type: 'button', class: 'btn btn-sm', 'aria-label': 'Remove rule' }, '×');
      [f, o, v, rm].forEach(function (c) { if (off) c.disabled = true; row.appendChild(c); });
      function read() { node.field = f.value.trim(); node.op = o.value; node.value = typed(v.value); write(); }
      f.addEventListener('input', read);
      f.addEventListener('change', read);
      o.addEventListener('change', read);
      v.addEventListener('input', read);
      rm.addEventListener('click', function () { parent.items.splice(parent.items.indexOf(node), 1); write(); draw(); });
      return row;
    }

    function groupView(g, parent) {
      var box = el('fieldset', { class: 'rule-group' });
      var head = el('legend', {});
      var pick = el('select', { 'aria-label': 'Match', class: 'rule-match' });
      [['and', 'all of these'], ['or', 'any of these']].forEach(function (m) {
        var opt = el('option', { value: m[0] }, m[1]);
        if (m[0] === g.group) opt.selected = true;
        pick.appendChild(opt);
      });
      pick.addEventListener('change', function () { g.group = pick.value; write(); });
      head.appendChild(document.createTextNode(parent ? 'A group: ' : 'Skip when '));
      head.appendChild(pick);
      box.appendChild(head);
      g.items.forEach(function (item) { box.appendChild(control(item, g)); });
      var actions = el('div', { class: 'actions' });
      var addRule = el('button', { type: 'button', class: 'btn btn-sm' }, 'Add rule');
      addRule.addEventListener('click', function () { g.items.push({ field: '', op: '==', value: '' }); draw(); });
      actions.appendChild(addRule);
      var addGroup = el('button', { type: 'button', class: 'btn btn-sm' }, 'Add group');
      addGroup.addEventListener('click', function () { g.items.push({ group: g.group === 'and' ? 'or' : 'and', items: [{ field: '', op: '==', value: '' }] }); draw(); });
      actions.appendChild(addGroup);
      if (parent) {
        var rm = el('button', { type: 'button', class: 'btn btn-sm', 'aria-label': 'Remove group' }, 'Remove group');
        rm.addEventListener('click', function () { parent.items.splice(parent.items.indexOf(g), 1); write(); draw(); });
        actions.appendChild(rm);
      }
      if (off) [].forEach.call(actions.children, function (b) { b.disabled = true; });
      if (off) pick.disabled = true;
      box.appendChild(actions);
      return box;
    }

    function draw() {
      box.textContent = '';
      box.appendChild(groupView(tree, null));
    }

    // read takes the raw view as the rules, or shows why it cannot.
    function read() {
      var text = raw.value.trim();
      var parsed = { group: 'and', items: [] };
      if (text) {
        try { parsed = parse(JSON.parse(text)); } catch (e) { parsed = null; }
        if (parsed && !parsed.group) parsed = { group: 'and', items: [parsed] };
      }
      box.hidden = !parsed;
      note.hidden = !!parsed;
      if (parsed) { tree = parsed; draw(); }
    }

    raw.addEventListener('input', function () { if (!raw.dataset.fromRules) read(); });
    read();
  }

  function start() {
    var form = document.getElementById('editor');
    if (!form || form.dataset.ready) return;
    form.dataset.ready = '1';
    var vars = [];
    try { vars = JSON.parse(form.getAttribute('data-variables') || '[]') || []; } catch (e) { vars = []; }
    var list = el('datalist', { id: 'editor-variables' });
    vars.forEach(function (v) { list.appendChild(el('option', { value: v })); });
    form.appendChild(list);
    form.querySelectorAll('[data-liquid]').forEach(function (f) { if (!f.readOnly) suggest(f, vars); });
    form.querySelectorAll('[data-control="skip"] textarea').forEach(function (raw) { rules(raw, list.id); });
  }

  document.addEventListener('DOMContentLoaded', start);
})();
