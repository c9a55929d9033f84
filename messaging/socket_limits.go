package messaging

// What bounds a subscriber token's sockets: how many one token may hold
// open, and that none outlives its token's revocation.

import (
	"context"
	"strings"
)

// admit counts one more socket of token, which Authenticate accepted, and
// returns the key to release it by; false when the token has as many
// sockets open as InboxConfig.SocketsPerToken allows. The key is the
// token's signature, copied: unique to the token, and a map key that does
// not keep the request's query alive.
func (ls *liveSockets) admit(token string) (string, bool) {
	key := strings.Clone(token[strings.LastIndexByte(token, '.')+1:])
	limit := ls.store.inbox.SocketsPerToken
	ls.mu.Lock()
	defer ls.mu.Unlock()
	if limit > 0 && ls.byToken[key] >= limit {
		return "", false
	}
	ls.byToken[key]++
	return key, true
}

// release uncounts a socket admit counted, once it has closed.
func (ls *liveSockets) release(key string) {
	ls.mu.Lock()
	defer ls.mu.Unlock()
	if ls.byToken[key]--; ls.byToken[key] <= 0 {
		delete(ls.byToken, key)
	}
}

// revoked disconnects a socket whose token was revoked after it opened
// (platform.RevokeSubscriberTokens), before it hears another event; the
// client does not reconnect after a DISCONNECT.
func (ls *liveSockets) revoked(ctx context.Context, k *socket) {
	k.wmu.Lock()
	k.write(ctx, "41")
	k.wmu.Unlock()
	k.conn.CloseNow() // its reader sees the close and unregisters it
}
