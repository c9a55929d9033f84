// The page the browser test opens: @novu/js's own Inbox component,
// unmodified, pointed at Herald. window.HERALD is set by the page the Go
// test serves. The bell is rendered with the unread count the component
// hands it, so the test can read it. window.newNovu makes a headless Novu
// client beside it, what a page calls to set the subscriber's schedule;
// it opens its own session, so only when the test asks for one.
import { Novu } from '@novu/js';
import { NovuUI } from '@novu/js/ui';

const cfg = window.HERALD;
window.newNovu = () => new Novu({
  applicationIdentifier: cfg.applicationIdentifier,
  subscriber: cfg.subscriberId,
  subscriberHash: cfg.subscriberHash,
  apiUrl: cfg.apiUrl,
  socketUrl: cfg.apiUrl,
});
const ui = new NovuUI({
  options: {
    applicationIdentifier: cfg.applicationIdentifier,
    subscriber: cfg.subscriberId,
    subscriberHash: cfg.subscriberHash,
    apiUrl: cfg.apiUrl,
    socketUrl: cfg.apiUrl,
    // A page opened for one of the team's customers: its inbox shows
    // only what was sent in that customer's context.
    ...(cfg.context ? { context: cfg.context, contextHash: cfg.contextHash } : {}),
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
