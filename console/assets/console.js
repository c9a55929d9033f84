// Herald's console: the little the pages need beyond htmx. Every page works
// without it; with it, times read in the viewer's zone, forms submit on
// change, and the keyboard moves around (docs/console.md).
(function () {
  'use strict';
  document.documentElement.classList.add('js');

  var units = [
    ['year', 31536000], ['month', 2592000], ['week', 604800], ['day', 86400],
    ['hour', 3600], ['minute', 60], ['second', 1]
  ];
  var relative = window.Intl && Intl.RelativeTimeFormat ? new Intl.RelativeTimeFormat(undefined, { numeric: 'auto' }) : null;
  var absolute = window.Intl ? new Intl.DateTimeFormat(undefined, { dateStyle: 'medium', timeStyle: 'medium' }) : null;

  // ago says how long ago t was, in the viewer's language.
  function ago(t) {
    var secs = Math.round((t.getTime() - Date.now()) / 1000);
    if (!relative) return t.toLocaleString();
    for (var i = 0; i < units.length; i++) {
      var u = units[i];
      if (Math.abs(secs) >= u[1] || u[0] === 'second') {
        return relative.format(Math.round(secs / u[1]), u[0]);
      }
    }
    return '';
  }

  // localize shows each time under root in the viewer's zone: how long ago
  // in the text, the full local date and time in its title.
  function localize(root) {
    root.querySelectorAll('time[datetime]').forEach(function (el) {
      var t = new Date(el.getAttribute('datetime'));
      if (isNaN(t)) return;
      var full = absolute ? absolute.format(t) : t.toLocaleString();
      el.title = full;
      el.textContent = el.hasAttribute('data-ago') ? ago(t) : full;
    });
  }

  // A datetime-local field picks a time in the viewer's zone; the filter
  // it feeds (its data-utc names the hidden field) takes UTC.
  function utcFields(root) {
    root.querySelectorAll('input[data-utc]').forEach(function (el) {
      var hidden = el.form && el.form.elements[el.getAttribute('data-utc')];
      if (!hidden) return;
      if (hidden.value && !el.value) {
        var t = new Date(hidden.value);
        if (!isNaN(t)) el.value = new Date(t.getTime() - t.getTimezoneOffset() * 60000).toISOString().slice(0, 16);
      }
      el.addEventListener('change', function () {
        hidden.value = el.value ? new Date(el.value).toISOString() : '';
      });
    });
  }

  function ready(root) {
    localize(root);
    utcFields(root);
    root.querySelectorAll('[data-autosubmit]').forEach(function (el) {
      el.addEventListener('change', function () {
        if (el.form) el.form.requestSubmit ? el.form.requestSubmit() : el.form.submit();
      });
    });
  }

  document.addEventListener('DOMContentLoaded', function () {
    ready(document);
    setInterval(function () { localize(document); }, 60000);
  });
  // Content htmx swaps in gets the same treatment.
  document.addEventListener('htmx:load', function (e) { ready(e.target); });

  // A change htmx could not save is said, and the page read again, so
  // what it shows is what is stored.
  document.addEventListener('htmx:responseError', function (e) {
    var xhr = e.detail.xhr;
    var toast = document.createElement('div');
    toast.className = 'flash flash-error toast';
    toast.setAttribute('role', 'alert');
    toast.textContent = 'Not saved: ' + (xhr.status === 403 ? 'your role cannot do this' : xhr.status + ' ' + xhr.statusText) + '. Reloading…';
    document.body.appendChild(toast);
    setTimeout(function () { window.location.reload(); }, 1500);
  });

  // A form marked data-confirm asks first.
  document.addEventListener('submit', function (e) {
    var msg = e.target.getAttribute && e.target.getAttribute('data-confirm');
    if (msg && !window.confirm(msg)) e.preventDefault();
  }, true);

  // Copy buttons copy their target's text.
  document.addEventListener('click', function (e) {
    var btn = e.target.closest && e.target.closest('[data-copy]');
    if (btn) {
      var target = document.getElementById(btn.getAttribute('data-copy'));
      if (target && navigator.clipboard) {
        navigator.clipboard.writeText(target.textContent.trim()).then(function () {
          btn.textContent = 'Copied';
        });
      }
      return;
    }
    if (e.target.closest && e.target.closest('[data-shortcuts]')) {
      showShortcuts();
      return;
    }
    // A click outside an open menu closes it.
    document.querySelectorAll('details[open].user-menu, details[open].mobile-nav').forEach(function (d) {
      if (!d.contains(e.target)) d.removeAttribute('open');
    });
  });

  function showShortcuts() {
    var d = document.getElementById('shortcuts');
    if (d && d.showModal && !d.open) d.showModal();
  }

  // The keyboard: / searches, g then a letter goes to a section, ? lists
  // them, Escape closes menus.
  var pendingG = false;
  document.addEventListener('keydown', function (e) {
    var tag = (e.target.tagName || '').toLowerCase();
    if (e.key === 'Escape') {
      document.querySelectorAll('details[open]').forEach(function (d) { d.removeAttribute('open'); });
      return;
    }
    if (tag === 'input' || tag === 'textarea' || tag === 'select' || e.target.isContentEditable || e.metaKey || e.ctrlKey || e.altKey) return;
    if (pendingG) {
      pendingG = false;
      var link = document.querySelector('.sidebar a[data-key="' + e.key + '"]') || document.querySelector('a[data-key="' + e.key + '"]');
      if (link) { e.preventDefault(); link.click(); }
      return;
    }
    if (e.key === 'g') { pendingG = true; setTimeout(function () { pendingG = false; }, 1500); return; }
    if (e.key === '/') {
      var field = document.querySelector('[data-search]') || document.querySelector('.filters input, .filters select');
      if (field) { e.preventDefault(); field.focus(); if (field.select) field.select(); }
      return;
    }
    if (e.key === '?') { e.preventDefault(); showShortcuts(); }
  });
})();
