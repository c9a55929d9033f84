package messaging

import (
	"bytes"
	"strconv"
	"sync"
	"unicode/utf8"
)

// The feed is the hottest read: every open inbox polls it. Its page is
// written here field by field instead of through encoding/json, which
// reflects over every item and re-validates each stored JSON column on
// every request. The stored columns (payload, cta, actor, …) are JSON
// Herald wrote at delivery and are copied as they are. The shape is that of
// docs/api.md, "The feed", field for field; feedjson_test.go checks it
// against the encoding/json rendering of the same rows, and
// BenchmarkReads/feed measures what the writer saves.

// pageBodies holds the buffers feed and inbox pages are written into,
// each reused once its response is written: a page is a read's largest
// allocation, and every open inbox reads one on each focus.
var pageBodies = sync.Pool{New: func() any { b := make([]byte, 0, 32<<10); return &b }}

// appendFeedPage appends the feed's envelope around rows; sum is the
// subscriber's current summary, or nil for the one each row stored.
func appendFeedPage(b []byte, total int, hasMore bool, rows []*message, sum []byte, page int) []byte {
	b = append(b, `{"totalCount":`...)
	b = strconv.AppendInt(b, int64(total), 10)
	b = append(b, `,"hasMore":`...)
	b = strconv.AppendBool(b, hasMore)
	b = append(b, `,"data":[`...)
	for i, m := range rows {
		if i > 0 {
			b = append(b, ',')
		}
		b = appendFeedItem(b, m, sum)
	}
	b = append(b, `],"pageSize":`...)
	b = strconv.AppendInt(b, int64(len(rows)), 10)
	b = append(b, `,"page":`...)
	b = strconv.AppendInt(b, int64(page), 10)
	return append(b, '}')
}

// appendFeedItem appends m as a feed item; sum is the subscriber's current
// summary, or nil for the one stored at delivery.
func appendFeedItem(b []byte, m *message, sum []byte) []byte {
	if sum == nil {
		sum = m.SubscriberSummary
	}
	b = appendField(b, `{"_environmentId":`, m.EnvironmentID)
	b = appendField(b, `,"_organizationId":`, m.OrganizationID)
	b = appendField(b, `,"_subscriberId":`, m.SubscriberID)
	b = appendField(b, `,"channel":`, m.Channel)
	// archived is an inbox state, changed after delivery (migration 000030).
	b = append(b, `,"_feedId":null,"archived":`...)
	b = strconv.AppendBool(b, m.Archived)
	b = appendField(b, `,"updatedAt":`, m.UpdatedAt)
	b = append(b, `,"deliveredAt":`...)
	if startsWith(m.DeliveredAt, '[') {
		b = append(b, m.DeliveredAt...)
	} else {
		b = append(b, `[]`...)
	}
	b = appendOptional(b, `,"lastSeenDate":`, m.LastSeenDate)
	b = appendOptional(b, `,"lastReadDate":`, m.LastReadDate)
	b = appendRaw(b, `,"subscriber":`, sum)
	b = appendNullable(b, `,"providerId":`, m.ProviderID)
	b = append(b, `,"read":`...)
	b = strconv.AppendBool(b, m.Read)
	b = append(b, `,"seen":`...)
	b = strconv.AppendBool(b, m.Seen)
	b = appendField(b, `,"status":`, m.Status)
	b = appendRaw(b, `,"payload":`, m.Payload)
	b = appendField(b, `,"_id":`, m.ID)
	b = appendField(b, `,"_templateId":`, m.TemplateID)
	if m.MessageTemplateID != "" {
		b = appendField(b, `,"_messageTemplateId":`, m.MessageTemplateID)
	}
	b = appendField(b, `,"_notificationId":`, m.NotificationID)
	b = appendField(b, `,"_jobId":`, m.JobID)
	b = appendField(b, `,"createdAt":`, m.CreatedAt)
	b = appendRaw(b, `,"actor":`, m.Actor)
	b = appendField(b, `,"transactionId":`, m.TransactionID)
	b = appendNullable(b, `,"templateIdentifier":`, m.TemplateIdentifier)
	// content is stored as JSON: a string, or an EmailBlock array that the
	// feed shows as its JSON text.
	b = append(b, `,"content":`...)
	if startsWith(m.Content, '"') {
		b = append(b, m.Content...)
	} else {
		b = appendString(b, string(m.Content))
	}
	b = appendOptional(b, `,"subject":`, m.Subject)
	if m.Avatar != nil {
		b = appendField(b, `,"avatar":`, *m.Avatar)
	}
	b = appendRaw(b, `,"cta":`, m.CTA)
	b = appendRaw(b, `,"data":`, m.Data)
	b = appendRaw(b, `,"overrides":`, m.Overrides)
	b = appendRaw(b, `,"tags":`, m.Tags)
	return append(b, '}')
}

func appendField(b []byte, key, v string) []byte {
	return appendString(append(b, key...), v)
}

// appendNullable writes "" as null.
func appendNullable(b []byte, key, v string) []byte {
	if v == "" {
		return append(append(b, key...), "null"...)
	}
	return appendField(b, key, v)
}

func appendOptional(b []byte, key string, v *string) []byte {
	if v == nil {
		return append(append(b, key...), "null"...)
	}
	return appendField(b, key, *v)
}

// appendRaw writes stored JSON as it is, and a missing value as null.
func appendRaw(b []byte, key string, raw []byte) []byte {
	b = append(b, key...)
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 {
		return append(b, "null"...)
	}
	return append(b, raw...)
}

func startsWith(raw []byte, c byte) bool {
	raw = bytes.TrimSpace(raw)
	return len(raw) > 0 && raw[0] == c
}

// appendString writes s as a JSON string, escaped as encoding/json escapes
// it: quotes, backslashes, control characters, <, > and & (so the body is
// safe inside HTML), U+2028 and U+2029, and invalid UTF-8 as U+FFFD.
func appendString(b []byte, s string) []byte {
	const hex = "0123456789abcdef"
	b = append(b, '"')
	start := 0
	for i := 0; i < len(s); {
		c := s[i]
		if c < utf8.RuneSelf {
			if c >= 0x20 && c != '"' && c != '\\' && c != '<' && c != '>' && c != '&' {
				i++
				continue
			}
			b = append(b, s[start:i]...)
			switch c {
			case '"', '\\':
				b = append(b, '\\', c)
			case '\n':
				b = append(b, '\\', 'n')
			case '\r':
				b = append(b, '\\', 'r')
			case '\t':
				b = append(b, '\\', 't')
			default:
				b = append(b, '\\', 'u', '0', '0', hex[c>>4], hex[c&0xF])
			}
			i++
			start = i
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		if r == utf8.RuneError && size == 1 {
			b = append(b, s[start:i]...)
			b = append(b, `\ufffd`...)
			i += size
			start = i
			continue
		}
		if r == '\u2028' || r == '\u2029' {
			b = append(b, s[start:i]...)
			b = append(b, '\\', 'u', '2', '0', '2', hex[r&0xF])
			i += size
			start = i
			continue
		}
		i += size
	}
	b = append(b, s[start:]...)
	return append(b, '"')
}
