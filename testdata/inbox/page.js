// The page the browser test opens: @novu/js's own Inbox component,
// unmodified, pointed at Herald. window.HERALD is set by the page the Go
// test serves. The bell is rendered with the unread count the component
// hands it, so the test can read it. A headless Novu client beside it is
// what a page calls to set the subscriber's schedule; the test drives it
// as window.novu.
import { Novu } from '@novu/js';
import { NovuUI } from '@novu/js/ui';

const cfg = window.HERALD;
window.novu = new Novu({
  applicationIdentifier: cfg.applicationIdentifier,
  subscriber: cfg.subscriberId,
  apiUrl: cfg.apiUrl,
  socketUrl: cfg.apiUrl,
});
const ui = new NovuUI({
  options: {
    applicationIdentifier: cfg.applicationIdentifier,
    subscriber: cfg.subscriberId,
    apiUrl: cfg.apiUrl,
    socketUrl: cfg.apiUrl,
  },
});
ui.mountComponent({
  name: 'Inbox',
  element: document.getElementById('inbox'),
  props: {
    renderBell: (el, unreadCount) => {
      const n = typeof unreadCount === 'number' ? unreadCount : unreadCount.total;
      el.innerHTML = `<button id="bell" data-count="${n}">Notifications: ${n}</button>`;
      return () => {};
    },
  },
});
