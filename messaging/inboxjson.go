package messaging

import "strconv"

// An inbox page is read as often as the feed, by every open <Inbox/>, so
// it is written here field by field as feedjson.go writes the feed, not
// through encoding/json's reflection. The shape is inboxNotification's,
// field for field and in its order; inboxjson_test.go checks it against
// encoding/json's rendering of the same notifications.

// appendInboxNotification appends n as encoding/json would marshal it.
func appendInboxNotification(b []byte, n *inboxNotification) []byte {
	b = appendField(b, `{"id":`, n.ID)
	b = appendField(b, `,"transactionId":`, n.TransactionID)
	if n.Subject != nil {
		b = appendField(b, `,"subject":`, *n.Subject)
	}
	b = appendField(b, `,"body":`, n.Body)
	b = appendField(b, `,"to":{"id":`, n.To.ID)
	b = appendField(b, `,"subscriberId":`, n.To.SubscriberID)
	b = appendUnlessEmpty(b, `,"firstName":`, n.To.FirstName)
	b = appendUnlessEmpty(b, `,"lastName":`, n.To.LastName)
	b = appendUnlessEmpty(b, `,"avatar":`, n.To.Avatar)
	b = appendBool(b, `},"isRead":`, n.IsRead)
	b = appendBool(b, `,"isSeen":`, n.IsSeen)
	b = appendBool(b, `,"isArchived":`, n.IsArchived)
	b = appendBool(b, `,"isSnoozed":`, n.IsSnoozed)
	if n.SnoozedUntil != nil {
		b = appendField(b, `,"snoozedUntil":`, *n.SnoozedUntil)
	}
	if len(n.DeliveredAt) > 0 {
		b = appendStrings(append(b, `,"deliveredAt":`...), n.DeliveredAt)
	}
	b = appendField(b, `,"createdAt":`, n.CreatedAt)
	b = appendOptional(b, `,"readAt":`, n.ReadAt)
	b = appendOptional(b, `,"firstSeenAt":`, n.FirstSeenAt)
	b = appendOptional(b, `,"archivedAt":`, n.ArchivedAt)
	if n.Avatar != nil {
		b = appendField(b, `,"avatar":`, *n.Avatar)
	}
	b = appendButton(b, `,"primaryAction":`, n.PrimaryAction)
	b = appendButton(b, `,"secondaryAction":`, n.SecondaryAction)
	b = appendField(b, `,"channelType":`, n.ChannelType)
	b = appendStrings(append(b, `,"tags":`...), n.Tags)
	b = appendRedirect(b, `,"redirect":`, n.Redirect)
	if len(n.Data) > 0 {
		b = appendRaw(b, `,"data":`, n.Data)
	}
	if wf := n.Workflow; wf != nil {
		b = appendField(b, `,"workflow":{"id":`, wf.ID)
		b = appendField(b, `,"identifier":`, wf.Identifier)
		b = appendField(b, `,"name":`, wf.Name)
		b = appendBool(b, `,"critical":`, wf.Critical)
		b = appendStrings(append(b, `,"tags":`...), wf.Tags)
		b = appendField(b, `,"severity":`, wf.Severity)
		b = append(b, '}')
	}
	b = appendField(b, `,"severity":`, n.Severity)
	return append(b, '}')
}

func appendButton(b []byte, key string, btn *inboxButton) []byte {
	if btn == nil {
		return b
	}
	b = appendField(append(b, key...), `{"label":`, btn.Label)
	b = appendBool(b, `,"isCompleted":`, btn.IsCompleted)
	b = appendRedirect(b, `,"redirect":`, btn.Redirect)
	return append(b, '}')
}

func appendRedirect(b []byte, key string, r *inboxRedirect) []byte {
	if r == nil {
		return b
	}
	b = appendField(append(b, key...), `{"url":`, r.URL)
	b = appendUnlessEmpty(b, `,"target":`, r.Target)
	return append(b, '}')
}

// appendStrings writes a list of strings; nil is null, as encoding/json
// writes a nil slice.
func appendStrings(b []byte, list []string) []byte {
	if list == nil {
		return append(b, "null"...)
	}
	b = append(b, '[')
	for i, s := range list {
		if i > 0 {
			b = append(b, ',')
		}
		b = appendString(b, s)
	}
	return append(b, ']')
}

// appendUnlessEmpty writes an omitempty string field.
func appendUnlessEmpty(b []byte, key, v string) []byte {
	if v == "" {
		return b
	}
	return appendField(b, key, v)
}

func appendBool(b []byte, key string, v bool) []byte {
	return strconv.AppendBool(append(b, key...), v)
}
