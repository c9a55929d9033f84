package platform

import (
	"context"
	"fmt"
	"math"
	"strconv"
)

// DefaultMaxPayload is a trigger payload's limit when HERALD_MAX_PAYLOAD is
// not set: far above what a notification's template reads, far below what
// would let one request fill the disk through a broadcast (docs/security.md,
// "Bounded payloads").
const DefaultMaxPayload = 512 << 10

type payloadLimitKey struct{}

// PayloadProblem says what is wrong with a trigger's payload, raw JSON the
// decoder has already accepted, for the 422 of the trigger (docs/api.md,
// "Errors"), or "" when nothing is: larger than the server's payload limit,
// or a number JSON can write but a float64 cannot hold (1e309), which would
// otherwise fail the steps that render it long after the trigger was
// accepted.
func PayloadProblem(ctx context.Context, raw []byte) string {
	limit, _ := ctx.Value(payloadLimitKey{}).(int64)
	if limit <= 0 {
		limit = DefaultMaxPayload
	}
	if int64(len(raw)) > limit {
		return fmt.Sprintf("is %d bytes, over the limit of %d (HERALD_MAX_PAYLOAD)", len(raw), limit)
	}
	if n, ok := hugeNumber(raw); ok {
		return fmt.Sprintf("holds the number %s, past the range of a 64-bit float", truncateNumber(n))
	}
	return ""
}

// hugeNumber finds a number in doc, valid JSON, whose magnitude a float64
// cannot hold. Only a number with an exponent or 309 characters can be one,
// so the rest are skipped without parsing.
func hugeNumber(doc []byte) (string, bool) {
	inString := false
	for i := 0; i < len(doc); i++ {
		c := doc[i]
		switch {
		case inString:
			if c == '\\' {
				i++
			} else if c == '"' {
				inString = false
			}
		case c == '"':
			inString = true
		case c == '-' || c >= '0' && c <= '9':
			start, exp := i, false
			for i < len(doc) && isNumberByte(doc[i]) {
				exp = exp || doc[i] == 'e' || doc[i] == 'E'
				i++
			}
			n := doc[start:i]
			i--
			if !exp && len(n) < 309 {
				continue
			}
			if f, _ := strconv.ParseFloat(string(n), 64); math.IsInf(f, 0) {
				return string(n), true
			}
		}
	}
	return "", false
}

func isNumberByte(c byte) bool {
	return c >= '0' && c <= '9' || c == '-' || c == '+' || c == '.' || c == 'e' || c == 'E'
}

func truncateNumber(n string) string {
	if len(n) > 40 {
		return n[:20] + "…" + n[len(n)-10:]
	}
	return n
}
